package live

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/kubectl-deltas/kubectl-deltas/internal/flaghelp"
	"github.com/kubectl-deltas/kubectl-deltas/internal/printer"
)

// Flags are the flags of the live view: --live.
type Flags struct {
	// Live is "" or "false" (lines), "true" (the view; stdout must be a
	// terminal) or "auto" (the view on a terminal, else lines).
	Live string
}

// NewFlags returns the flags with their defaults: lines.
func NewFlags() *Flags { return &Flags{} }

// AddFlags declares --live on fs: alone it means true.
func (f *Flags) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.Live, "live", f.Live, "One view redrawn in place on a terminal (`WHEN`: true or auto)")
	fs.Lookup("live").NoOptDefVal = "true"
	flaghelp.File(fs, flaghelp.Output, "live")
}

// Validate checks --live's value and what it cannot go with: a format
// other than text (the view is its own), -q (it prints nothing) and
// --queue (its reconciles are lines); and that stdout is a terminal for
// --live=true. It sends no request.
func (f *Flags) Validate(output string, quiet, queue bool, stdout io.Writer) error {
	switch f.Live {
	case "", "false":
		return nil
	case "true", "auto":
	default:
		return fmt.Errorf("invalid --live value %q: must be true, false or auto", f.Live)
	}
	if !f.on(stdout) {
		if f.Live == "true" {
			return errors.New("--live needs a terminal on stdout; without it the stream prints lines (--live=auto chooses)")
		}
		return nil
	}
	switch name, _, _ := strings.Cut(output, "="); {
	case name != "" && name != "text":
		return fmt.Errorf("--live draws its own view and -o %s prints records: drop one of them", output)
	case quiet:
		return errors.New("--live draws the stream and -q prints nothing of it: drop one of them")
	case queue:
		return errors.New("--live draws objects and --queue prints reconciles as lines: drop one of them")
	}
	return nil
}

// on reports whether the view is drawn on stdout.
func (f *Flags) on(stdout io.Writer) bool {
	if f.Live != "true" && f.Live != "auto" {
		return false
	}
	file, ok := stdout.(*os.File)
	return ok && term.IsTerminal(int(file.Fd()))
}

// ToRun returns the live view of a run drawn on stdout, or nil without
// --live (or with --live=auto off a terminal). stderr is the run's: what
// the run writes there while the view is drawn is held and written below
// the last frame (Run.Stderr), and what says the state of its data — a
// watch failing and its recovery, an object waited for — is shown in
// the view meanwhile (View.Note). color is --color; title says what is
// watched; diff is --diff; now is the run's clock (a replay's; nil: the
// real one).
func (f *Flags) ToRun(stdout, stderr io.Writer, color, title string, diff bool, now func() time.Time) *Run {
	if !f.on(stdout) {
		return nil
	}
	view := NewView(title, diff)
	if now == nil {
		now = time.Now
	} else {
		view.replay = true
	}
	file := stdout.(*os.File)
	_, noColor := os.LookupEnv("NO_COLOR")
	return &Run{
		View:   view,
		screen: NewScreen(stdout, int(file.Fd()), view, color == "always" || color == "auto" && !noColor, now),
		stderr: &heldWriter{out: stderr, holding: true, line: func(l string) { view.Note(l, now()) }},
	}
}

// Run is the live view of one run: its View, the Screen that draws it,
// and the run's stderr, held while it draws.
type Run struct {
	View   *View
	screen *Screen
	stderr *heldWriter
}

// Stderr is the writer the run writes its messages to: held while the
// view is drawn (a line written amid a frame would be drawn over), then
// written below the last frame.
func (r *Run) Stderr() io.Writer { return r.stderr }

// Start starts drawing; the returned stop draws the last frame, leaves it
// on screen with the cursor shown below it, and writes what the run wrote
// to stderr meanwhile.
func (r *Run) Start() (stop func()) {
	r.View.begin(r.screen.now())
	r.screen.Start()
	return func() {
		r.screen.Close()
		r.stderr.release()
	}
}

// Discard is the printer of a live run: the view draws the records, no
// line is printed.
type Discard struct{}

// Print prints nothing.
func (Discard) Print(io.Writer, *printer.Record) error { return nil }
