package cmd

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-deltas/kubectl-deltas/internal/informer"
	"github.com/kubectl-deltas/kubectl-deltas/internal/recording"
	"github.com/kubectl-deltas/kubectl-deltas/internal/replay"
	"github.com/kubectl-deltas/kubectl-deltas/internal/targets"
)

// validateReplay checks a replay's flags: those that only mean something
// to a server, and what a replay does not do yet.
func (o *DeltasOptions) validateReplay() error {
	for _, bad := range []struct {
		given bool
		flag  string
	}{
		{o.ListWatch.Resuming(), "--resource-version"},
		{o.ListWatch.WatchList != "auto", "--watch-list"},
		{o.ListWatch.ChunkSizeGiven(), "--chunk-size"},
		{o.ListWatch.Resync > 0, "--resync"},
		{o.ListWatch.FieldSelector != "", "--field-selector"},
		{o.Clusters.AllContexts, "--all-contexts"},
	} {
		if bad.given {
			return fmt.Errorf("%s asks a server, and --replay plays a recording: drop one of them (--context picks contexts of the recording)", bad.flag)
		}
	}
	switch {
	case o.Records.Record != "":
		return errors.New("--record cannot be used with --replay: the recording is already one")
	case o.Targets.Tree:
		return errors.New("--tree is not replayed yet: replay the recording without --tree (its records carry their owners)")
	case o.Targets.Events:
		return errors.New("--events is not replayed yet: the recorded Events are records of kind Event, replayed as such when the run watched them as a type")
	}
	for _, a := range o.resourceArgs {
		if a.Name != "" && o.Targets.AllNamespaces {
			return errors.New("a resource cannot be watched by name across all namespaces: drop -A or the name")
		}
	}
	return nil
}

// openReplay opens the recording of --replay and reads its header and
// initial lists: o.player. The contexts it recorded name the records'
// clusters.
func (o *DeltasOptions) openReplay() (func(), error) {
	name := o.Replay.Files[0]
	r, err := recording.Open(name, o.In)
	if err != nil {
		return nil, fmt.Errorf("--replay: %w", err)
	}
	p, err := replay.Open(r, o.ErrOut)
	if err != nil {
		_ = r.Close()
		return nil, err
	}
	o.player = p
	if o.Replay.Looking() {
		if err := o.replayWindow(name); err != nil {
			_ = r.Close()
			return nil, err
		}
	}
	if o.Output.TableRows() && !o.Wait.Quiet {
		fmt.Fprintln(o.ErrOut, "info: a recording keeps no server-side columns: -o wide shows the generic ones")
	}
	o.contextNames = nil
	for _, t := range p.Recorded() {
		if t.Context != "" && !slices.Contains(o.contextNames, t.Context) {
			o.contextNames = append(o.contextNames, t.Context)
		}
	}
	return func() { _ = r.Close() }, nil
}

// replayEngine is the engine of a replay: the recorded collections the
// arguments, -n, --context and -l pick, each listed and watched from the
// recording.
func (o *DeltasOptions) replayEngine() (*informer.Engine, error) {
	ts, err := replayTargets(o.player.Recorded(), o.resourceArgs, o.replayNamespace(), o.Clusters.Contexts, o.Replay.Files[0])
	if err != nil {
		return nil, err
	}
	var selector labels.Selector
	if o.ListWatch.LabelSelector != "" {
		if selector, err = labels.Parse(o.ListWatch.LabelSelector); err != nil {
			return nil, fmt.Errorf("invalid --selector %q: %w", o.ListWatch.LabelSelector, err)
		}
	}
	if err := o.player.Select(ts, selector); err != nil {
		return nil, err
	}
	engine := informer.New(informer.Config{
		NewListerWatcher: o.player.NewListerWatcher,
		Clock:            o.player.Clock(),
		NewBackoff:       o.player.NewBackoff,
	}, o.ErrOut)
	for _, t := range ts {
		if _, err := engine.Add(t); err != nil {
			return nil, err
		}
	}
	if m, ok := o.printer.(interface{ SetMultiType(bool) }); ok {
		m.SetMultiType(targets.DistinctResources(ts) > 1)
	}
	return engine, nil
}

// replayNamespace is the namespace a replay is narrowed to: -n's, when
// given; every namespace recorded otherwise (or with -A).
func (o *DeltasOptions) replayNamespace() string {
	ns := o.Clusters.ConfigFlags.Namespace
	if o.Targets.AllNamespaces || ns == nil {
		return ""
	}
	return *ns
}

// replayTargets picks, among the recorded collections, those of the
// arguments (all without), narrowed to namespace and to the names given,
// in the contexts given (all without).
func replayTargets(recorded []informer.Target, args []targets.Arg, namespace string, contexts []string, file string) ([]informer.Target, error) {
	var candidates []informer.Target
	for _, t := range recorded {
		if len(contexts) > 0 && !slices.Contains(contexts, t.Context) {
			continue
		}
		if namespace != "" {
			if t.Namespace != "" && t.Namespace != namespace {
				continue
			}
			t.Namespace = namespace
		}
		candidates = append(candidates, t)
	}
	if len(candidates) == 0 {
		return nil, fmt.Errorf("the recording %s has nothing %s: it recorded %s", file, where(namespace, contexts), describeRecorded(recorded))
	}
	if len(args) == 0 {
		return candidates, nil
	}
	var out []informer.Target
	for _, a := range args {
		found := false
		for _, t := range candidates {
			if !targets.NamesType(a.Type, t) || (a.Name != "" && t.Name != "" && t.Name != a.Name) {
				continue
			}
			found = true
			if a.Name != "" {
				t.Name = a.Name
			}
			if !slices.ContainsFunc(out, func(o informer.Target) bool { return o.ID() == t.ID() }) {
				out = append(out, t)
			}
		}
		if !found {
			return nil, fmt.Errorf("the recording %s has no %q %s: it recorded %s", file, a.Type, where(namespace, contexts), describeRecorded(recorded))
		}
	}
	return out, nil
}

// where says which part of a recording was looked in.
func where(namespace string, contexts []string) string {
	var parts []string
	if namespace != "" {
		parts = append(parts, "in namespace "+namespace)
	}
	if len(contexts) > 0 {
		parts = append(parts, "in context "+strings.Join(contexts, ", "))
	}
	if len(parts) == 0 {
		return "there"
	}
	return strings.Join(parts, " ")
}

// describeRecorded lists what a recording watched: "configmaps in demo,
// secrets".
func describeRecorded(recorded []informer.Target) string {
	if len(recorded) == 0 {
		return "no type"
	}
	var parts []string
	for _, t := range recorded {
		s := t.Resource.GroupResource().String()
		if t.Name != "" {
			s += "/" + t.Name
		}
		if t.Namespace != "" {
			s += " in " + t.Namespace
		}
		if t.Context != "" {
			s += " (" + t.Context + ")"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}

// replayWindow reads --at, --from and --to against the recording's span:
// a file is read through once more for its end; standard input's end is
// not known.
func (o *DeltasOptions) replayWindow(name string) error {
	span := replay.Span{Start: o.player.Header().Time, End: o.player.Header().Time}
	hasEnd := name != "-"
	if hasEnd {
		r, err := recording.Open(name, nil)
		if err != nil {
			return fmt.Errorf("--replay: %w", err)
		}
		span, err = replay.ReadSpan(r)
		_ = r.Close()
		if err != nil {
			return err
		}
	}
	from, to, err := o.Replay.Window(span, hasEnd)
	if err != nil {
		return err
	}
	o.player.SetWindow(from, to)
	return nil
}
