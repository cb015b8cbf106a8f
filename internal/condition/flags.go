package condition

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/pflag"

	"github.com/kubectl-deltas/kubectl-deltas/internal/flaghelp"
)

// Flags are the flags of when a run stops: --until, --until-any and
// --fail-when (the Waiter), --quiet, --timeout, --count and
// --until-synced.
type Flags struct {
	Until       []string
	UntilAny    []string
	FailWhen    []string
	Quiet       bool
	Timeout     time.Duration
	Count       int
	UntilSynced bool
	// StableFor is --stable-for: --until holds only once it has held
	// that long without a break.
	StableFor time.Duration
	// Logs is --logs: how many lines of a failing container's log a
	// failure or a timeout is explained with (0: none).
	Logs int

	// until, untilAny and failWhen are the conditions parsed by Validate.
	until, untilAny, failWhen []*Condition
}

// maxLogLines bounds --logs: a verdict explains, it does not page a log.
const maxLogLines = 1000

// NewFlags returns the flags with their defaults: run until interrupted.
func NewFlags() *Flags { return &Flags{Logs: DefaultLogLines} }

// AddFlags declares the flags on fs.
func (f *Flags) AddFlags(fs *pflag.FlagSet) {
	fs.StringArrayVar(&f.Until, "until", f.Until, "Exit 0 once every watched object meets `COND` (repeatable: all must hold)")
	fs.StringArrayVar(&f.UntilAny, "until-any", f.UntilAny, "Exit 0 once one watched object meets `COND` (repeatable)")
	fs.StringArrayVar(&f.FailWhen, "fail-when", f.FailWhen, "Exit 2 as soon as any watched object meets `COND` (repeatable)")
	fs.DurationVar(&f.StableFor, "stable-for", f.StableFor, "With --until: exit once the conditions held this long")
	fs.DurationVar(&f.Timeout, "timeout", f.Timeout, "Exit after this long (1 if an --until condition is unmet)")
	fs.IntVar(&f.Count, "count", f.Count, "Exit after printing `N` deltas")
	fs.BoolVar(&f.UntilSynced, "until-synced", f.UntilSynced, "Print the initial list, then exit")
	fs.BoolVarP(&f.Quiet, "quiet", "q", f.Quiet, "Print no deltas: only the outcome on stderr, and the exit code")
	fs.IntVar(&f.Logs, "logs", f.Logs, "A failing container's last `N` log lines in the verdict (0: none)")
	flaghelp.File(fs, flaghelp.Wait, "until", "until-any", "fail-when", "stable-for", "timeout", "count", "until-synced", "quiet", "logs")
	flaghelp.Pair(fs, "until", "until-any", "Exit 0 once every / one watched object meets COND (repeatable)")
	flaghelp.Pair(fs, "timeout", "count", "Exit after a duration (1 if --until is unmet), or N deltas")
}

// Validate checks the values and parses the conditions, so that a mistake
// fails before any request.
func (f *Flags) Validate() error {
	switch {
	case f.Count < 0:
		return fmt.Errorf("invalid --count %d: must be 0 (no limit) or more", f.Count)
	case f.Timeout < 0:
		return fmt.Errorf("invalid --timeout %s: must be 0 (no limit) or more", f.Timeout)
	case f.UntilSynced && f.Waits():
		return errors.New("--until-synced cannot be used with --until, --until-any or --fail-when: use one way to stop")
	case f.Logs < 0 || f.Logs > maxLogLines:
		return fmt.Errorf("invalid --logs %d: must be 0 (no logs) to %d lines", f.Logs, maxLogLines)
	case f.StableFor < 0:
		return fmt.Errorf("invalid --stable-for %s: must be 0 (as soon as it holds) or more", f.StableFor)
	case f.StableFor > 0 && len(f.Until) == 0:
		return errors.New("--stable-for says how long --until must hold: add --until=COND")
	}
	var err error
	if f.until, err = parseAll("--until", f.Until); err != nil {
		return err
	}
	if f.untilAny, err = parseAll("--until-any", f.UntilAny); err != nil {
		return err
	}
	f.failWhen, err = parseAll("--fail-when", f.FailWhen)
	return err
}

// Waits reports whether a condition was given.
func (f *Flags) Waits() bool { return len(f.Until)+len(f.UntilAny)+len(f.FailWhen) > 0 }

// OnHealth reports whether a condition is on health (status=…); call it
// after Validate.
func (f *Flags) OnHealth() bool { return onHealth(f.until, f.untilAny, f.failWhen) }

// ToWaiter returns the Waiter of the conditions, which writes "… condition
// met" to errOut; metadataOnly says the objects carry no status (its
// messages then name them without their health); failAfter is how long a
// transient failure lasts before it counts as Failed
// (health.Judge.SetFailAfter); now is the stream's clock (nil: time.Now).
// Call it after Validate.
func (f *Flags) ToWaiter(errOut io.Writer, metadataOnly bool, failAfter time.Duration, now func() time.Time) *Waiter {
	w := NewWaiter(f.until, f.untilAny, f.failWhen, errOut)
	if metadataOnly {
		w.SetMetadataOnly()
	}
	if now != nil {
		w.SetNow(now)
	}
	w.SetFailAfter(failAfter)
	w.stableFor = f.StableFor
	w.SetLogLines(f.Logs)
	return w
}

// parseAll parses the values of one condition flag.
func parseAll(flag string, values []string) ([]*Condition, error) {
	out := make([]*Condition, 0, len(values))
	for _, v := range values {
		c, err := Parse(flag, v)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// ValidateQuiet checks -q: it only applies when the run waits for a
// condition, or records (recording says so), and prints nothing else.
func (f *Flags) ValidateQuiet(recording bool) error {
	if f.Quiet && !f.Waits() && !recording {
		return errors.New("--quiet only applies when waiting for a condition or recording: add --until, --until-any, --fail-when or --record")
	}
	return nil
}
