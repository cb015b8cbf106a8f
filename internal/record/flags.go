package record

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/kubectl-deltas/kubectl-deltas/internal/celexpr"
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
	// Record is --record: the recording every record also goes to.
	Record string
	// Handler is --handler: records are the handler calls of the deltas.
	Handler bool

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
	fs.StringSliceVar(&f.Types, "types", f.Types, "Print only these delta types: "+TypeList()+" (default: all).")
	fs.BoolVar(&f.WatchOnly, "watch-only", f.WatchOnly, "Do not print the initial list (it is still listed, to know the starting state).")
	fs.StringVar(&f.Relist, "relist", f.Relist, "After a relist, print Replaced for: changed (objects whose resourceVersion changed) or all.")
	fs.StringArrayVar(&f.Where, "where", f.Where, "Print only the deltas for which this CEL expression is true (repeatable: all must be), over object, oldObject, deltaType, kind, apiVersion, resource and name, in the CEL environment of Kubernetes' admission policies, e.g. --where='object.metadata.?labels.tier.orValue(\"\") == \"web\"' (an optional cel= prefix is allowed). Everything is still watched.")
	fs.BoolVar(&f.Diff, "diff", f.Diff, "Show what changed in Updated deltas (and in Replaced deltas of objects that changed during a relist): indented lines in text, a \"changes\" JSON Patch in json/yaml, a CHANGES count in wide.")
	fs.BoolVar(&f.ChangedOnly, "changed-only", f.ChangedOnly, "Drop Updated deltas whose diff is empty once ignored paths (resourceVersion, managedFields, generation, --ignore-path) are left out.")
	fs.BoolVar(&f.Status, "status", f.Status, "Include status in diffs; --status=false ignores status changes (with --changed-only, status-only updates are dropped).")
	fs.StringArrayVar(&f.IgnorePaths, "ignore-path", f.IgnorePaths, "Leave this field out of diffs (repeatable): a JSON pointer (/metadata/labels/x) or a dotted path (metadata.labels.x).")
	fs.BoolVar(&f.ShowSecretData, "show-secret-data", f.ShowSecretData, "Print the values of Secrets (data, stringData, last-applied-configuration); redacted by default.")
	fs.StringVar(&f.Record, "record", f.Record, "Also write every record to this file, whatever -o prints and the filters keep (--types, --watch-only, --where, --changed-only): the JSON records of -o json, after a \"Recording\" line naming what was watched. FILE.zst is zstd, FILE.gz gzip, else plain JSON Lines; a killed run loses at most its last second. A FILE that holds a recording goes on where it stopped.")
	fs.DurationVar(&f.FailAfter, "fail-after", f.FailAfter, "How long an image pull error (ErrImagePull, ImagePullBackOff) or a CreateContainerConfigError must last before the Pod counts as Failed: until then it is InProgress, with the reason (0: Failed at first sight). An image that does not exist fails at once. Also how long an unschedulable Pod waits for a scale-up its TriggeredScaleUp Event announced (seen with --events).")
	fs.BoolVar(&f.Handler, "handler", f.Handler, "Print what a SharedIndexInformer's ResourceEventHandler is called with instead of the deltas: OnAdd (with isInInitialList), OnUpdate (old→new resourceVersion; equal on a resync or an unchanged relisted object) and OnDelete (a DeletedFinalStateUnknown tombstone after a relist), through the queue --fifo names.")
	fs.BoolVar(&f.Health, "health", f.Health, "Judge each object's health as kstatus does: text lines end with it (\"Updated: replicaset.apps web-7d4 InProgress: Ready: 1/3\"). JSON and YAML records carry it unless --health=false.")
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
// rows (-o wide), health judges every object. It parses --types and
// compiles --where and --ignore-path: a mistake is an error naming the
// flag, before any request.
func (f *Flags) ToStage(rows, health bool) (*Stage, error) {
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
		Handler:        f.Handler,
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

// ToRecorder creates the recording of --record, or returns nil without
// it. Its records carry health when the run judges (health), and changes
// with --diff (as --ignore-path and --status say); nothing else of the
// flags filters them. The file is created now, before any request: a path
// that cannot be written is an error here.
func (f *Flags) ToRecorder(health bool, warn io.Writer) (*Recorder, error) {
	if f.Record == "" {
		return nil, nil
	}
	stage, err := NewStage(Options{
		ShowSecretData: f.ShowSecretData,
		Health:         health,
		FailAfter:      f.FailAfter,
		Diff: DiffOptions{
			Show:         f.Diff,
			IgnoreStatus: !f.Status,
			IgnorePaths:  f.IgnorePaths,
		},
	})
	if err != nil {
		return nil, err
	}
	return CreateRecorder(f.Record, stage, warn)
}
