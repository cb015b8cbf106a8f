// Package progress draws one line on a terminal that says how far a long
// piece of work has come — an initial list of many objects, a replay —
// updated in place and cleared when the work is done. It draws nothing
// until the work has taken a while, and never on anything but a
// terminal: the caller decides that (IsTerminal).
package progress

import (
	"io"
	"os"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"golang.org/x/term"
)

// Interval is how often the line is redrawn.
const Interval = 250 * time.Millisecond

// clearLine moves to the start of the line and erases it.
const clearLine = "\r\x1b[K"

// IsTerminal reports whether w is a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// width is the terminal's width, 80 when it cannot be told.
func width(w io.Writer) int {
	if f, ok := w.(*os.File); ok {
		if cols, _, err := term.GetSize(int(f.Fd())); err == nil && cols > 0 {
			return cols
		}
	}
	return 80
}

// Meter is the progress line of one piece of work. Its goroutine draws;
// Stop ends it.
type Meter struct {
	out      io.Writer
	describe func() string
	width    int
	stop     chan struct{}
	done     chan struct{}
	once     sync.Once
	// drawn: something is on the line (only the drawing goroutine, and
	// Stop after it ended, touch it).
	drawn bool
}

// Start draws describe's text on out after delay, then every Interval,
// until Stop. describe is called from the Line's goroutine.
func Start(out io.Writer, delay time.Duration, describe func() string) *Meter {
	l := &Meter{out: out, describe: describe, width: width(out), stop: make(chan struct{}), done: make(chan struct{})}
	if delay <= 0 {
		l.draw()
	}
	go l.run(delay)
	return l
}

func (l *Meter) run(delay time.Duration) {
	defer close(l.done)
	if delay > 0 {
		t := time.NewTimer(delay)
		select {
		case <-l.stop:
			t.Stop()
			return
		case <-t.C:
		}
		l.draw()
	}
	tick := time.NewTicker(Interval)
	defer tick.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-tick.C:
			l.draw()
		}
	}
}

// draw writes the text over the line, cut to the terminal's width.
func (l *Meter) draw() {
	text := Fit(l.describe(), l.width-1)
	_, _ = io.WriteString(l.out, clearLine+text)
	l.drawn = true
}

// Stop ends the line and clears it, once; it returns when the line is
// gone.
func (l *Meter) Stop() {
	l.once.Do(func() {
		close(l.stop)
		<-l.done
		if l.drawn {
			_, _ = io.WriteString(l.out, clearLine)
		}
	})
}

// Fit cuts s to at most n runes, one line, with "…" where it was cut.
func Fit(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if n <= 0 || utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
