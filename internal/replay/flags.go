package replay

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/kubectl-deltas/kubectl-deltas/internal/flaghelp"
	"github.com/kubectl-deltas/kubectl-deltas/internal/recording"
)

// Flags are the flags of a replay: the recording to play instead of a
// cluster.
type Flags struct {
	Files []string
	// At, From and To look back in the recording: the state at a time,
	// or the part between two (ParseTime).
	At, From, To string
}

// NewFlags returns the flags with their defaults: no replay.
func NewFlags() *Flags { return &Flags{Files: []string{}} }

// AddFlags declares the flags on fs.
func (f *Flags) AddFlags(fs *pflag.FlagSet) {
	fs.StringArrayVar(&f.Files, "replay", f.Files, "Play the recording `FILE` instead of watching a cluster (- for stdin)")
	fs.StringVar(&f.At, "at", f.At, "With --replay: print the state at `TIME` (10:40, +5m, -5m), then exit")
	fs.StringVar(&f.From, "from", f.From, "With --replay: start at `TIME`, its state as the initial list")
	fs.StringVar(&f.To, "to", f.To, "With --replay: stop at `TIME`")
	flaghelp.File(fs, flaghelp.History, "replay", "at", "from", "to")
	flaghelp.Pair(fs, "from", "to", "With --replay: play from / stop at TIME (as --at takes it)")
}

// Active reports whether the run replays a recording.
func (f *Flags) Active() bool { return len(f.Files) > 0 }

// Validate checks the values.
func (f *Flags) Validate() error {
	for _, given := range []struct{ flag, value string }{{"--at", f.At}, {"--from", f.From}, {"--to", f.To}} {
		if given.value != "" && !f.Active() {
			return fmt.Errorf("%s looks back in a recording: give it --replay=FILE (recorded with --record)", given.flag)
		}
	}
	if f.At != "" && (f.From != "" || f.To != "") {
		return errors.New("--at is the state at one time: drop --from and --to, or --at")
	}
	stdin := 0
	for _, name := range f.Files {
		if name == "-" {
			stdin++
		}
		if name == "" {
			return errors.New("--replay needs a file (or - for standard input)")
		}
	}
	if stdin > 1 {
		return errors.New("--replay=- reads standard input, which holds one recording: give it once")
	}
	return nil
}

// Looking reports whether a window of the recording is asked for.
func (f *Flags) Looking() bool { return f.At != "" || f.From != "" || f.To != "" }

// Window reads --at, --from and --to against the recording's span
// (hasEnd: its end is known): the times the replay starts and stops at,
// zero for as recorded. A time outside the span is an error saying it.
func (f *Flags) Window(span recording.Span, hasEnd bool) (from, to time.Time, err error) {
	parse := func(flag, s string) (time.Time, error) {
		if s == "" {
			return time.Time{}, nil
		}
		t, err := ParseTime(flag, s, span, hasEnd)
		if err != nil {
			return t, err
		}
		switch {
		case t.Before(span.Start):
			return t, fmt.Errorf("%s %s is before the recording's start: it spans %s", flag, t.UTC().Format(time.RFC3339Nano), spanText(span, hasEnd))
		case hasEnd && t.After(span.End):
			return t, fmt.Errorf("%s %s is after the recording's end: it spans %s", flag, t.UTC().Format(time.RFC3339Nano), spanText(span, hasEnd))
		}
		return t, nil
	}
	if f.At != "" {
		at, err := parse("--at", f.At)
		return at, at, err
	}
	if from, err = parse("--from", f.From); err != nil {
		return from, to, err
	}
	if to, err = parse("--to", f.To); err != nil {
		return from, to, err
	}
	if !from.IsZero() && !to.IsZero() && to.Before(from) {
		return from, to, fmt.Errorf("--to %s is before --from %s", to.UTC().Format(time.RFC3339Nano), from.UTC().Format(time.RFC3339Nano))
	}
	return from, to, nil
}

// spanText is a span as errors say it.
func spanText(span recording.Span, hasEnd bool) string {
	if !hasEnd {
		return "from " + span.Start.UTC().Format(time.RFC3339Nano) + " (its end is not known on standard input)"
	}
	return span.String()
}
