package stage

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/kubectl-deltas/kubectl-deltas/internal/celexpr"
	"github.com/kubectl-deltas/kubectl-deltas/internal/flaghelp"
	"github.com/kubectl-deltas/kubectl-deltas/internal/health"
)

// Flags are the flags of what a record holds and which are printed: the
// delta types, the initial list, relists, --where, diffs and their noise
// control, Secrets and health. ToStage builds the Stage they describe.
type Flags struct {
	Types          []string
	WatchOnly      bool
	Relist         string
	Where          []string
	Diff           bool
	ChangedOnly    bool
	Status         bool
	IgnorePaths    []string
	ShowSecretData bool
	// Health is --health (HealthSet: whether it was given).
	Health bool
	// FailAfter is --fail-after: how long a transient failure lasts
	// before it counts as Failed (health.Judge.SetFailAfter).
	FailAfter time.Duration

	// flags is the set AddFlags declared on, to tell a --health given
	// from the default.
	flags *pflag.FlagSet
}

// NewFlags returns the flags with their defaults.
func NewFlags() *Flags {
	return &Flags{Types: []string{}, Relist: "changed", Status: true, IgnorePaths: []string{}, FailAfter: health.DefaultFailAfter}
}

// AddFlags declares the flags on fs.
func (f *Flags) AddFlags(fs *pflag.FlagSet) {
	f.flags = fs
	fs.StringSliceVar(&f.Types, "types", f.Types, "Print only these delta `TYPES`: "+TypeList())
	fs.BoolVar(&f.WatchOnly, "watch-only", f.WatchOnly, "Do not print the initial list (it is still listed)")
	fs.StringArrayVar(&f.Where, "where", f.Where, "Print only the deltas for which the CEL `EXPR` is true (docs/waiting.md)")
	fs.BoolVar(&f.Diff, "diff", f.Diff, "Show what changed in each update, field by field")
	fs.BoolVar(&f.ChangedOnly, "changed-only", f.ChangedOnly, "Drop updates whose diff is empty once ignored paths are left out")
	fs.BoolVar(&f.Status, "status", f.Status, "Include status in diffs")
	fs.StringArrayVar(&f.IgnorePaths, "ignore-path", f.IgnorePaths, "Leave `PATH` (/a/b or a.b) out of diffs")
	fs.BoolVar(&f.ShowSecretData, "show-secret-data", f.ShowSecretData, "Print the values of Secrets (redacted by default)")
	fs.BoolVar(&f.Health, "health", f.Health, "Judge each object's health as kstatus does (docs/waiting.md)")
	fs.StringVar(&f.Relist, "relist", f.Relist, "After a relist, print the changed or all objects")
	fs.DurationVar(&f.FailAfter, "fail-after", f.FailAfter, "Grace for a pull error or a stuck Pod before Failed")
	flaghelp.File(fs, flaghelp.Filter, "types", "watch-only", "where", "changed-only", "diff", "status", "ignore-path")
	flaghelp.File(fs, flaghelp.Filter, "show-secret-data")
	flaghelp.File(fs, flaghelp.Output, "health")
	flaghelp.File(fs, flaghelp.Tuning, "relist")
	flaghelp.File(fs, flaghelp.Wait, "fail-after")
	// --logs (the waiter's) is read beside it: both are about a failing container.
	flaghelp.Pair(fs, "logs", "fail-after", "Failing container: N log lines (10), grace before Failed (30s)")
}

// Validate checks the values that ToStage does not: the relist mode, and
// the diff options given without a diff.
func (f *Flags) Validate() error {
	if f.FailAfter < 0 {
		return fmt.Errorf("invalid --fail-after %s: must be 0 (Failed at first sight) or more", f.FailAfter)
	}
	if f.Relist != "changed" && f.Relist != "all" {
		return fmt.Errorf("invalid --relist value %q: must be changed or all", f.Relist)
	}
	if !f.Diff && !f.ChangedOnly {
		if len(f.IgnorePaths) > 0 {
			return errors.New("--ignore-path only applies to diffs: add --diff or --changed-only")
		}
		if !f.Status {
			return errors.New("--status=false only applies to diffs: add --diff or --changed-only")
		}
	}
	return nil
}

// HealthSet reports whether --health was given (true or false).
func (f *Flags) HealthSet() bool { return f.flags != nil && f.flags.Changed("health") }

// Judges reports whether records carry the objects' health: as --health
// says when given, else byDefault (the output format's choice); never
// without status to judge (metadataOnly).
func (f *Flags) Judges(byDefault, metadataOnly bool) bool {
	switch {
	case metadataOnly:
		return false
	case f.HealthSet():
		return f.Health
	}
	return byDefault
}

// FailAfterSet reports whether --fail-after was given.
func (f *Flags) FailAfterSet() bool { return f.flags != nil && f.flags.Changed("fail-after") }

// AsksHealth reports whether --health=true was given.
func (f *Flags) AsksHealth() bool { return f.HealthSet() && f.Health }

// ToStage builds the Stage of the flags: rows gives records their Table
// rows (-o wide), health judges every object, handler makes records of
// handler calls (--handler). It parses --types and
// compiles --where and --ignore-path: a mistake is an error naming the
// flag, before any request.
func (f *Flags) ToStage(rows, health, handler bool) (*Stage, error) {
	types, err := ParseTypes(f.Types)
	if err != nil {
		return nil, err
	}
	where := make([]*celexpr.Program, 0, len(f.Where))
	for _, expr := range f.Where {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(expr), "cel="); ok {
			expr = celexpr.Unquote(rest) // --where=cel='EXPR', as --until=cel='EXPR'
		}
		p, err := celexpr.Compile("--where", expr)
		if err != nil {
			return nil, err
		}
		where = append(where, p)
	}
	return NewStage(Options{
		Types:          types,
		WatchOnly:      f.WatchOnly,
		RelistAll:      f.Relist == "all",
		ShowSecretData: f.ShowSecretData,
		Where:          where,
		Health:         health,
		FailAfter:      f.FailAfter,
		Rows:           rows,
		Handler:        handler,
		Diff: DiffOptions{
			Show:         f.Diff,
			ChangedOnly:  f.ChangedOnly,
			IgnoreStatus: !f.Status,
			IgnorePaths:  f.IgnorePaths,
		},
	})
}

// ToObserverStage builds the Stage of a page of the stream (--timeline):
// every record it is handed carries its health (when health asks it) and
// its changes (as --ignore-path and --status say), whatever the run
// prints; the run's own filters have kept it already.
func (f *Flags) ToObserverStage(health bool) (*Stage, error) {
	return NewStage(Options{
		ShowSecretData: f.ShowSecretData,
		RelistAll:      true,
		Health:         health,
		FailAfter:      f.FailAfter,
		Diff: DiffOptions{
			Show:         true,
			IgnoreStatus: !f.Status,
			IgnorePaths:  f.IgnorePaths,
		},
	})
}

// ToRecordStage returns the stage that fills the records of --record
// (recording.Recorder's Filler). Its records carry health when the run
// judges (health), and changes with --diff (as --ignore-path and --status
// say); nothing else of the flags filters them.
func (f *Flags) ToRecordStage(health bool) (*Stage, error) {
	return NewStage(Options{
		ShowSecretData: f.ShowSecretData,
		Health:         health,
		FailAfter:      f.FailAfter,
		Diff: DiffOptions{
			Show:         f.Diff,
			IgnoreStatus: !f.Status,
			IgnorePaths:  f.IgnorePaths,
		},
	})
}
