package live

import (
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"
)

// The terminal's control sequences a Screen writes.
const (
	syncBegin   = "\x1b[?2026h" // synchronized output (DEC mode 2026): ignored where unknown
	syncEnd     = "\x1b[?2026l"
	hideCursor  = "\x1b[?25l"
	showCursor  = "\x1b[?25h"
	clearScreen = "\x1b[2J"
	home        = "\x1b[H"
	clearLine   = "\x1b[K" // to the end of the line
	clearBelow  = "\x1b[J" // to the end of the screen
)

// frameInterval is the shortest time between two frames: at most ten a
// second.
const frameInterval = 100 * time.Millisecond

// Screen draws a View on a terminal: the first frame after clearing the
// screen, then each frame over the last from the top left, only when it
// differs, every frame written at once inside synchronized-output
// brackets, the cursor hidden meanwhile. Close draws the last frame,
// leaves it on screen and shows the cursor again.
type Screen struct {
	out   io.Writer
	fd    int
	view  *View
	color bool
	now   func() time.Time

	// mu guards what follows: the drawing, from the Screen's goroutine
	// and from Close.
	mu sync.Mutex
	// drawn: the first frame is out; last is the last frame written.
	drawn  bool
	last   []string
	closed bool

	resized chan os.Signal
	stop    chan struct{}
	done    chan struct{}
}

// NewScreen returns the Screen of view on out, a terminal (fd its file
// descriptor, for its size); color colours health; now is the clock the
// view's times are read against (a replay's).
func NewScreen(out io.Writer, fd int, view *View, color bool, now func() time.Time) *Screen {
	return &Screen{out: out, fd: fd, view: view, color: color, now: now}
}

// Start draws the first frame and then, until Close, a frame at most
// every frameInterval when the view changed, the clock's second moved or
// the terminal was resized.
func (s *Screen) Start() {
	s.stop, s.done = make(chan struct{}), make(chan struct{})
	s.resized = make(chan os.Signal, 1)
	stopResize := notifyResize(s.resized)
	s.draw()
	go func() {
		defer close(s.done)
		defer stopResize()
		ticker := time.NewTicker(frameInterval)
		defer ticker.Stop()
		second := s.now().Unix()
		for {
			select {
			case <-s.stop:
				return
			case <-s.resized:
				s.draw()
			case <-ticker.C:
				now := s.now()
				if s.view.Changed(now) || now.Unix() != second {
					second = now.Unix()
					s.draw()
				}
			}
		}
	}()
}

// size is the terminal's size, 80×24 when it cannot be read.
func (s *Screen) size() (int, int) {
	w, h, err := term.GetSize(s.fd)
	if err != nil || w <= 0 || h <= 0 {
		return 80, 24
	}
	return w, h
}

// draw writes the view's frame if it differs from the last one.
func (s *Screen) draw() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	s.drawLocked()
}

// drawLocked is draw with mu held.
func (s *Screen) drawLocked() {
	w, h := s.size()
	lines := s.view.Frame(w, h, s.now(), s.color)
	if s.drawn && slices.Equal(lines, s.last) {
		return
	}
	var b strings.Builder
	b.WriteString(syncBegin)
	if !s.drawn {
		b.WriteString(hideCursor + clearScreen)
	}
	b.WriteString(home)
	for i, l := range lines {
		b.WriteString(l)
		b.WriteString(clearLine)
		if i < len(lines)-1 {
			b.WriteString("\n")
		}
	}
	b.WriteString(clearBelow)
	b.WriteString(syncEnd)
	_, _ = io.WriteString(s.out, b.String()) // a terminal gone is the run's to notice
	s.drawn, s.last = true, lines
}

// Close stops the drawing, draws the last frame (with the outcome, when
// the view was told it) and leaves it on screen, the cursor on the line
// below it and shown again. It is safe to call more than once.
func (s *Screen) Close() {
	if s.stop != nil {
		select {
		case <-s.stop:
		default:
			close(s.stop)
			<-s.done
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	s.drawLocked()
	s.closed = true
	_, _ = io.WriteString(s.out, "\n"+showCursor)
}
