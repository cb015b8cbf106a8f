package condition

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/pflag"
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

	// until, untilAny and failWhen are the conditions parsed by Validate.
	until, untilAny, failWhen []*Condition
}

// NewFlags returns the flags with their defaults: run until interrupted.
func NewFlags() *Flags { return &Flags{} }

// AddFlags declares the flags on fs.
func (f *Flags) AddFlags(fs *pflag.FlagSet) {
	fs.StringArrayVar(&f.Until, "until", f.Until, "Exit 0 as soon as every watched object meets this condition (repeatable: all must hold), as kubectl wait --for: delete, create, condition=NAME[=VALUE] or jsonpath='{PATH}'[=VALUE], or cel='EXPR' (CEL, as --where). A named object that does not exist yet is waited for. With --timeout, running out of time exits 1.")
	fs.StringArrayVar(&f.UntilAny, "until-any", f.UntilAny, "Exit 0 as soon as one watched object meets this condition (repeatable: any may hold).")
	fs.StringArrayVar(&f.FailWhen, "fail-when", f.FailWhen, "Exit 2 as soon as any watched object meets this condition (repeatable), after printing the delta that made it hold, e.g. --fail-when=condition=Failed.")
	fs.BoolVarP(&f.Quiet, "quiet", "q", f.Quiet, "With --until, --until-any or --fail-when: print no deltas, only the outcome on stderr (and the exit code). With --record: record without printing.")
	fs.DurationVar(&f.Timeout, "timeout", f.Timeout, "Exit after this long: 0, or 1 while waiting for an --until condition (0 = run until interrupted).")
	fs.IntVar(&f.Count, "count", f.Count, "Exit (0) after printing this many deltas (0 = no limit).")
	fs.BoolVar(&f.UntilSynced, "until-synced", f.UntilSynced, "Print the initial list, then exit (0).")
	fs.DurationVar(&f.StableFor, "stable-for", f.StableFor, "With --until: exit 0 only once the conditions have held this long without a break (a tree Current for a second that then crash-loops does not pass); --fail-when still trips meanwhile.")
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
