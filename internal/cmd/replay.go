package cmd

import (
	"errors"
	"fmt"
	"time"

	"github.com/kubectl-deltas/kubectl-deltas/internal/events"
	"github.com/kubectl-deltas/kubectl-deltas/internal/history"
	"github.com/kubectl-deltas/kubectl-deltas/internal/history/replay"
	"github.com/kubectl-deltas/kubectl-deltas/internal/informer"
	"github.com/kubectl-deltas/kubectl-deltas/internal/targets"
)

// validateReplay checks a replay against the other groups' flags: those
// that only mean something to a server, --record, and a --tree with
// nothing to follow.
func (o *DeltasOptions) validateReplay() error {
	serverOnly := o.ListWatch.ServerOnly()
	if o.Clusters.AllContexts {
		serverOnly = append(serverOnly, "--all-contexts")
	}
	named := len(o.resourceArgs) > 0 && o.resourceArgs[0].Name != ""
	given := history.ReplayGiven{ServerOnly: serverOnly, Tree: o.Targets.Tree && !named && o.ListWatch.LabelSelector == ""}
	if err := o.History.ValidateReplay(given); err != nil {
		return err
	}
	for _, a := range o.resourceArgs {
		if a.Name != "" && o.Targets.AllNamespaces {
			return errors.New("a resource cannot be watched by name across all namespaces: drop -A or the name")
		}
	}
	return nil
}

// openReplay opens the recording of --replay: o.player, whose contexts
// name the records' clusters.
func (r *run) openReplay() error {
	p, err := r.History.OpenReplay(r.In, r.ErrOut)
	if err != nil {
		return err
	}
	r.player, r.contextNames = p, p.Contexts()
	if r.asRecorded {
		// Played as recorded: the objects its trees held, its Events.
		r.Targets.Tree, r.Targets.Events = p.RecordedTree(), p.RecordedEvents()
	}
	if r.Output.TableRows() && !r.Wait.Quiet {
		fmt.Fprintln(r.ErrOut, "info: a recording keeps no server-side columns: -o wide shows the generic ones")
	}
	return nil
}

// replayEngine is the engine of a replay: the recorded collections the
// arguments, -n, --context and -l pick, each listed and watched from the
// recording.
func (r *run) replayEngine() (*informer.Engine, error) {
	args := make([]replay.Asked, len(r.resourceArgs))
	for i, a := range r.resourceArgs {
		args[i] = replay.Asked{Type: a.Type, Name: a.Name}
	}
	sel := replay.EngineOptions{
		Args: args, Namespace: r.replayNamespace(), Contexts: r.Clusters.Contexts, Selector: r.ListWatch.LabelSelector,
		Tree: r.Targets.Tree, Events: r.Targets.Events, FIFO: r.ListWatch.FIFOKind(),
	}
	engine, ts, err := r.player.Engine(sel, r.ErrOut)
	if err != nil {
		return nil, err
	}
	if left := r.player.LeftOut(sel, ts); left != "" && !r.Wait.Quiet {
		fmt.Fprintf(r.ErrOut, "info: the replay leaves out what the recording also holds: %s\n", left)
	}
	if r.Targets.Events {
		r.join = events.NewJoin(engine, r.player.Now)
		for _, t := range r.player.Events() {
			if err := r.join.Watch(t); err != nil {
				return nil, err
			}
		}
	}
	if m, ok := r.printer.(interface{ SetMultiType(bool) }); ok {
		m.SetMultiType(r.Targets.Tree || targets.DistinctResources(ts) > 1)
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

// replayClock is a replay's time, the recording's (nil for a live run,
// whose time is the clock's).
func (r *run) replayClock() func() time.Time {
	if r.player == nil {
		return nil
	}
	return r.player.Now
}
