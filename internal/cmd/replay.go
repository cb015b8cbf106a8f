package cmd

import (
	"errors"
	"fmt"
	"time"

	"github.com/kubectl-deltas/kubectl-deltas/internal/events"
	"github.com/kubectl-deltas/kubectl-deltas/internal/informer"
	"github.com/kubectl-deltas/kubectl-deltas/internal/replay"
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
	given := replay.Given{ServerOnly: serverOnly, Record: o.Records.Record != "", Tree: o.Targets.Tree && !named && o.ListWatch.LabelSelector == ""}
	if err := o.Replay.ValidateWith(given); err != nil {
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
func (o *DeltasOptions) openReplay() error {
	p, err := replay.OpenFlags(o.Replay, o.In, o.ErrOut)
	if err != nil {
		return err
	}
	o.player, o.contextNames = p, p.Contexts()
	if o.asRecorded {
		// Played as recorded: the objects its trees held, its Events.
		o.Targets.Tree, o.Targets.Events = p.RecordedTree(), p.RecordedEvents()
	}
	if o.Output.TableRows() && !o.Wait.Quiet {
		fmt.Fprintln(o.ErrOut, "info: a recording keeps no server-side columns: -o wide shows the generic ones")
	}
	return nil
}

// replayEngine is the engine of a replay: the recorded collections the
// arguments, -n, --context and -l pick, each listed and watched from the
// recording.
func (o *DeltasOptions) replayEngine() (*informer.Engine, error) {
	args := make([]replay.Arg, len(o.resourceArgs))
	for i, a := range o.resourceArgs {
		args[i] = replay.Arg{Type: a.Type, Name: a.Name}
	}
	sel := replay.Selection{
		Args: args, Namespace: o.replayNamespace(), Contexts: o.Clusters.Contexts, Selector: o.ListWatch.LabelSelector,
		Tree: o.Targets.Tree, Events: o.Targets.Events, FIFO: o.ListWatch.FIFOKind(o.Records.Handler),
	}
	engine, ts, err := o.player.Engine(sel, o.ErrOut)
	if err != nil {
		return nil, err
	}
	if left := o.player.LeftOut(sel, ts); left != "" && !o.Wait.Quiet {
		fmt.Fprintf(o.ErrOut, "info: the replay leaves out what the recording also holds: %s\n", left)
	}
	if o.Targets.Events {
		o.join = events.NewJoin(engine, o.player.Now)
		for _, t := range o.player.Events() {
			if err := o.join.Watch(t); err != nil {
				return nil, err
			}
		}
	}
	if m, ok := o.printer.(interface{ SetMultiType(bool) }); ok {
		m.SetMultiType(o.Targets.Tree || targets.DistinctResources(ts) > 1)
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
func (o *DeltasOptions) replayClock() func() time.Time {
	if o.player == nil {
		return nil
	}
	return o.player.Now
}
