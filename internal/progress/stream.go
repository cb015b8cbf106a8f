package progress

import (
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"github.com/spf13/pflag"

	"github.com/kubectl-deltas/kubectl-deltas/internal/flaghelp"
	"github.com/kubectl-deltas/kubectl-deltas/internal/informer"
)

// Flags are the flags of the progress line.
type Flags struct {
	// Show is --progress; After, how long the work runs before the line
	// shows (a hidden flag, for tests).
	Show  bool
	After time.Duration
}

// NewFlags returns the flags with their defaults: a line after a second.
func NewFlags() *Flags { return &Flags{Show: true, After: time.Second} }

// AddFlags declares the flags on fs.
func (f *Flags) AddFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&f.Show, "progress", f.Show, "A long initial list or replay: one line on stderr")
	fs.DurationVar(&f.After, "progress-after", f.After, "How long work runs before the progress line shows.")
	flaghelp.File(fs, flaghelp.Output, "progress")
	_ = fs.MarkHidden("progress-after")
}

// Wanted reports whether a stream shows the line: asked for, not quiet,
// stderr a terminal, and nothing else on that terminal meanwhile (stdout
// elsewhere, or the initial list not printed).
func (f *Flags) Wanted(stderr, stdout io.Writer, quiet, initialPrinted bool) bool {
	return f.Show && !quiet && IsTerminal(stderr) && (!initialPrinted || !IsTerminal(stdout))
}

// StreamMeter is the progress line of a stream: a count of the deltas the
// engine hands out, shown as an initial list's or a replay's progress.
type StreamMeter struct {
	line    *Meter
	objects atomic.Int64
	start   time.Time
	// replay: the line goes on after the initial lists.
	replay bool
}

// ForStream starts the line of a stream, when Wanted (else nil), after
// f.After: how many objects the engine handed out, and how fast, while
// targets are listed; for a replay (now not nil), where in the recording
// named replay it is.
func (f *Flags) ForStream(stderr, stdout io.Writer, quiet, initialPrinted bool, targets func() []informer.Target, replay string, now func() time.Time) *StreamMeter {
	if !f.Wanted(stderr, stdout, quiet, initialPrinted) {
		return nil
	}
	s := &StreamMeter{start: time.Now(), replay: now != nil}
	s.line = Start(stderr, f.After, func() string {
		n := s.objects.Load()
		rate := float64(n) / max(time.Since(s.start).Seconds(), 1e-3)
		if now != nil {
			return fmt.Sprintf("replaying %s: at %s, %d records (%.0f/s)", replay, now().UTC().Format(time.RFC3339), n, rate)
		}
		types := len(targets())
		return fmt.Sprintf("listing %d %s: %d objects (%.0f/s)", types, plural(types, "type", "types"), n, rate)
	})
	return s
}

// Before returns initialOut (nil stays nil) with the line cleared first:
// a stream's line ends with its initial lists; a replay's goes on.
func (s *StreamMeter) Before(initialOut func(ending bool)) func(ending bool) {
	if initialOut == nil || s.replay {
		return initialOut
	}
	return func(ending bool) {
		s.Stop()
		initialOut(ending)
	}
}

// Sink counts what passes to next.
func (s *StreamMeter) Sink(next informer.Sink) informer.Sink { return &counting{s: s, next: next} }

// Stop clears the line.
func (s *StreamMeter) Stop() { s.line.Stop() }

type counting struct {
	s    *StreamMeter
	next informer.Sink
}

func (c *counting) Handle(b informer.Batch) (bool, error) {
	c.s.objects.Add(int64(len(b.Items)))
	return c.next.Handle(b)
}

func (c *counting) Flush() error { return c.next.Flush() }

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
