package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kubectl-deltas/kubectl-deltas/internal/condition"
	"github.com/kubectl-deltas/kubectl-deltas/internal/events"
	"github.com/kubectl-deltas/kubectl-deltas/internal/health"
	"github.com/kubectl-deltas/kubectl-deltas/internal/informer"
	"github.com/kubectl-deltas/kubectl-deltas/internal/printer"
	"github.com/kubectl-deltas/kubectl-deltas/internal/recording"
	"github.com/kubectl-deltas/kubectl-deltas/internal/stage"
	"github.com/kubectl-deltas/kubectl-deltas/internal/targets"
	"github.com/kubectl-deltas/kubectl-deltas/internal/tree"
	"github.com/kubectl-deltas/kubectl-deltas/internal/version"
)

// Run watches what the arguments resolve to until a stop condition, a
// signal or a fatal error: it prepares the clusters (each resolved and
// checked on its own), builds one engine for the informers of all of them,
// runs it into the chain of sinks (one stream, in pop order) and maps the
// outcome to the command's exit.
func (o *DeltasOptions) Run(ctx context.Context) (err error) {
	if ctx == nil {
		ctx = context.Background()
	}
	sigCtx, stopSignals := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stopSignals()

	if o.Replay.Active() {
		if err := o.openReplay(); err != nil {
			return err
		}
		defer func() { _ = o.player.Close() }()
	}
	if err := o.buildOutput(); err != nil { // a recorder made lets go of its lock and file
		return errors.Join(err, o.recorder.Close())
	}
	if o.recorder != nil {
		defer func() {
			if cerr := o.recorder.Close(); err == nil {
				err = cerr
			}
		}()
	}
	if o.page != nil {
		defer func() {
			if cerr := o.page.Close(); err == nil {
				err = cerr
			}
		}()
	}
	if o.player != nil {
		if o.page != nil {
			o.player.OnGap(func(g recording.Gap) { o.page.NoteGap(g.From, g.To) })
		}
		engine, err := o.replayEngine()
		if err != nil {
			return err
		}
		return o.exit(nil, engine, o.runStream(sigCtx, engine, nil))
	}
	if err := o.Clusters.CheckConfigPresent(); err != nil {
		return err
	}
	clusters, err := o.prepareClusters(ctx, sigCtx)
	if err != nil {
		return err
	}
	o.nameKinds(clusters)
	engine, follows, err := o.buildEngine(clusters)
	if err != nil {
		return err
	}
	if err := engine.CheckResumeFrom(sigCtx); err != nil {
		return err
	}
	if err := o.beginRecording(engine); err != nil {
		return err
	}
	return o.exit(clusters, engine, o.runStream(sigCtx, engine, follows))
}

// beginRecording writes the header of --record's recording: what the
// engine starts watching.
func (o *DeltasOptions) beginRecording(engine *informer.Engine) error {
	if o.recorder == nil {
		return nil
	}
	if err := o.recorder.Begin(engine.Targets(), version.Get().Version, o.ListWatch.LabelSelector, o.ListWatch.FieldSelector); err != nil {
		return err
	}
	if g := o.recorder.Gap(); g != nil && o.page != nil {
		o.page.NoteGap(g.From, g.To) // the page draws what the recording lacks
	}
	return nil
}

// nameKinds tells the printer whether records of several kinds may share
// the stream, so that human output names the kind on every line.
func (o *DeltasOptions) nameKinds(clusters []*targets.Cluster) {
	m, ok := o.printer.(printer.MultiTyper)
	if !ok {
		return
	}
	multi := o.Targets.Tree
	for _, cl := range clusters {
		multi = multi || cl.Resolution.Expanded || targets.DistinctResources(cl.Targets) > 1
	}
	m.SetMultiType(multi)
}

// buildEngine returns the engine of the run, with every cluster's targets
// added, and the followers of the clusters whose types were chosen by
// --all-types or a category: types appear and go away while the stream
// runs (not with --until-synced, a snapshot, nor --tree, whose scouts
// are fixed).
func (o *DeltasOptions) buildEngine(clusters []*targets.Cluster) (*informer.Engine, []*targets.Follower, error) {
	byContext := map[string]*targets.Cluster{}
	for _, cl := range clusters {
		byContext[cl.Conn.Context] = cl
	}
	clientOf := func(context string) rest.Interface { return byContext[context].Client }
	cfg := o.ListWatch.Config(clientOf, o.Output.TableRows(), o.ErrOut)
	cfg.FIFO = o.ListWatch.FIFOKind(o.Records.Handler)
	cfg.DescribeAPIService = func(t informer.Target) string {
		services := targets.ReadAPIServices(context.Background(), clientOf(t.Context), describeAPIServiceLimit)
		if s, ok := services.Down(t.Resource.GroupVersion()); ok {
			return s.Status()
		}
		return ""
	}
	if o.Targets.Tree {
		cfg.Indexers, cfg.KeepListed = tree.Indexers(), tree.KeepListed
	}
	if o.recorder != nil {
		cfg.Resume = o.recorder.Resume // an existing recording goes on
	}
	var follows []*targets.Follower
	for _, cl := range clusters {
		if !o.preparation().FollowsTypes(cl) {
			continue
		}
		f, err := cl.Follower()
		if err != nil {
			return nil, nil, err
		}
		follows = append(follows, f)
	}
	if len(follows) > 0 {
		// An informer whose type is gone asks its cluster's follower to
		// read discovery again.
		cfg.Gone = func(t informer.Target) {
			for _, f := range follows {
				if f.Context() == t.Context {
					f.Poke()
				}
			}
		}
	}
	engine := informer.New(cfg, o.ErrOut)
	for _, cl := range clusters {
		for _, t := range cl.Targets {
			if _, err := engine.Add(t); err != nil {
				return nil, nil, err
			}
		}
	}
	if o.Targets.Events {
		o.join = events.NewJoin(engine, nil)
		for _, cl := range clusters {
			for _, t := range cl.Events {
				if err := o.join.Watch(t); err != nil {
					return nil, nil, err
				}
			}
		}
	}
	return engine, follows, nil
}

// runStream runs the engine and the followers until the engine stops.
func (o *DeltasOptions) runStream(ctx context.Context, engine *informer.Engine, follows []*targets.Follower) error {
	followCtx, stopFollowing := context.WithCancel(ctx)
	var following sync.WaitGroup
	for _, f := range follows {
		following.Go(func() { f.Run(followCtx, engine) })
	}
	defer following.Wait()
	defer stopFollowing()

	stdoutClosed, stopWatching := printer.WatchClosed(o.Out)
	defer stopWatching()
	runOpts := informer.RunOptions{
		Timeout:      o.Wait.Timeout,
		UntilSynced:  o.Wait.UntilSynced,
		OutputClosed: stdoutClosed,
	}
	if !o.Wait.Quiet {
		waiting := "waiting for it to be created"
		if o.player != nil {
			waiting = "waiting for it to appear in the recording"
		}
		runOpts.InitialOut = engine.AnnounceMissing(o.ErrOut, waiting)
	}
	sink, printing := o.sinkChain(engine, &runOpts)
	defer o.Queue.Start(ctx, printing, o.replayClock())()
	if o.recorder != nil {
		o.beatWhileRecording(engine, &runOpts)
	}
	if o.page != nil {
		defer o.page.Start(o.ErrOut)()
	}
	if o.live != nil {
		defer o.live.Start()() // the last frame stays, the messages below it
	}
	if line := o.Progress.ForStream(o.ErrOut, o.Out, o.Wait.Quiet, !o.Records.WatchOnly, engine.Targets, strings.Join(o.Replay.Files, ","), o.replayClock()); line != nil {
		defer line.Stop()
		sink, runOpts.InitialOut = line.Sink(sink), line.Before(runOpts.InitialOut)
	}
	if o.player == nil {
		return engine.Run(ctx, sink, runOpts)
	}
	// A replay: the player feeds the recording once the engine runs, and
	// its gate, first in the chain, keeps the recording's order and time.
	runOpts.SourceDone, runOpts.Barrier = o.player.Done(), o.player.Barrier()
	playCtx, stopPlaying := context.WithCancel(ctx)
	var playing sync.WaitGroup
	playing.Go(func() { o.player.Play(playCtx) })
	err := engine.Run(ctx, o.player.Gate(sink), runOpts)
	stopPlaying()
	playing.Wait()
	if !o.Wait.Quiet && (err == nil || errors.Is(err, informer.ErrSourceEnded)) {
		for _, t := range o.player.NeverSeen() {
			fmt.Fprintf(o.ErrOut, "info: %s never appears in the recording %s: is the name right? (kubectl deltas --replay=%s -o name lists what it holds)\n",
				informer.Describe([]informer.Target{t}), strings.Join(o.Replay.Files, ", "), o.Replay.Files[0])
		}
	}
	if perr := o.player.Err(); perr != nil && (err == nil || errors.Is(err, informer.ErrSourceEnded)) {
		return perr
	}
	return err
}

// beatWhileRecording has --record's recorder write a Heartbeat once the
// initial lists are out, every recording.HeartbeatInterval, and as it
// ends, each saying where the roots and the Events stand. The Events'
// position is left out while the join parks an Event (it waits for its
// subject, and is in no record yet): a recorder that goes on from there
// relists them.
func (o *DeltasOptions) beatWhileRecording(engine *informer.Engine, runOpts *informer.RunOptions) {
	o.recorder.PositionsFrom(func() []informer.Position {
		parked := o.join != nil && o.join.Parked() > 0
		// The roots and the Events: what a recorder resumes (--tree's
		// scouts and owned types list again).
		return slices.DeleteFunc(engine.Positions(), func(p informer.Position) bool {
			role := p.Target.Role
			return !role.IsRoot() && (role != informer.RoleEvents || parked)
		})
	})
	beat := func() error { return o.recorder.Heartbeat(time.Now()) }
	runOpts.Tick, runOpts.TickEvery = beat, recording.HeartbeatInterval
	initialOut := runOpts.InitialOut
	runOpts.InitialOut = func(ending bool) {
		if initialOut != nil {
			initialOut(ending)
		}
		_ = beat() // a failed write shows at the next
	}
}

// sinkChain is what the engine hands its batches to: the tree (with
// --tree), which decides what is printed; the join (with --events), which
// adds the Events of what is printed; the waiter (with a condition),
// which sees what is printed and stops the run through runOpts.Check; the
// record sink, which prints, and which is returned too.
func (o *DeltasOptions) sinkChain(engine *informer.Engine, runOpts *informer.RunOptions) (sink informer.Sink, printing *stage.Sink) {
	out := o.Out
	if o.Wait.Quiet {
		out = io.Discard
	}
	printing = stage.NewSink(o.stage, o.printer, out, o.Wait.Count, o.replayClock())
	if o.recorder != nil {
		printing.RecordTo(o.recorder)
	}
	if o.observer != nil {
		printing.ObserveWith(o.observed, o.observer)
	}
	sink = printing
	if o.waiter.Active() {
		runOpts.Check, runOpts.CheckEvery = o.waiter.Check, o.waiter.CheckEvery()
		if o.live != nil {
			o.waiter.ReportStates(o.live.View.SetConditions)
		}
		sink = o.waiter.Sink(engine, sink)
		if o.Records.AsksHealth() { // a Pending Verdict record at each change; a failed write shows at the next
			o.waiter.ReportChanges(func(s health.Status, cause []condition.Held) {
				_ = printing.PrintVerdict(condition.Pending(o.waiter.Waited(), s, cause, o.waiter.Now()))
			})
		}
	}
	if o.join != nil {
		sink = o.join.Sink(sink)
	}
	if o.Targets.Tree {
		sink = tree.New(engine, sink, o.recorder.Members()...)
	}
	return sink, printing
}

// exit maps how the stream ended to the command's exit: 130 when
// interrupted, 2 when a --fail-when held, 1 when --timeout or a replay's
// end came while waiting for --until/--until-any or, with --until-synced,
// before every initial list was out or while API groups were down (an
// incomplete snapshot), 0 for a --timeout otherwise.
func (o *DeltasOptions) exit(clusters []*targets.Cluster, engine *informer.Engine, err error) error {
	var failed *condition.FailedError
	switch {
	case errors.Is(err, informer.ErrInterrupted):
		return &ExitError{Code: exitInterrupted}
	case errors.As(err, &failed):
		if o.explainsFromStream() {
			failed.ExplainFrom(o.join.LatestWarning)
		} else {
			failed.Explain(clientsOf(clusters), !o.Targets.Tree)
		}
		o.printVerdict("Failed", "--fail-when="+failed.Condition.String(), failed.All())
		return &ExitError{Code: exitConditionFailed, Err: failed}
	case (errors.Is(err, informer.ErrTimedOut) || errors.Is(err, informer.ErrSourceEnded)) && o.waiter.Waits():
		ended := errors.Is(err, informer.ErrSourceEnded)
		err = o.waiter.TimedOut()
		var timedOut *condition.TimeoutError
		if errors.As(err, &timedOut) {
			timedOut.SourceEnded = ended
			if o.explainsFromStream() {
				timedOut.ExplainFrom(o.join.LatestWarning)
			} else {
				timedOut.Explain(clientsOf(clusters), !o.Targets.Tree)
			}
			o.printVerdict("TimedOut", o.waiter.Waited(), timedOut.Held)
		}
		return err
	case errors.Is(err, informer.ErrTimedOut) && o.Wait.UntilSynced:
		return engine.SyncTimeout()
	case errors.Is(err, informer.ErrTimedOut), errors.Is(err, informer.ErrSourceEnded):
		return nil
	case err == nil && o.Wait.UntilSynced:
		return incompleteSnapshot(clusters)
	}
	if _, records := o.printer.(printer.VerdictPrinter); records && err == nil && !o.Wait.Quiet {
		if met, ok := o.waiter.Met(); ok { // each object described: only for a record
			o.printVerdict("Met", o.waiter.Waited(), met)
		}
	}
	return err
}

// explainsFromStream: what held a wait up is explained by the Events the
// stream showed (a replay with --events has no cluster to ask).
func (o *DeltasOptions) explainsFromStream() bool { return o.player != nil && o.join != nil }

// printVerdict ends a JSON or YAML stream stopped by a condition with its
// Verdict record (not with -q: stdout then carries nothing).
func (o *DeltasOptions) printVerdict(outcome, cond string, held []condition.Held) {
	if p, ok := o.printer.(printer.VerdictPrinter); ok && !o.Wait.Quiet {
		_ = p.PrintVerdict(o.Out, condition.Verdict(outcome, cond, held, o.waiter.Now()))
	}
}

// incompleteSnapshot is the error of an --until-synced run that listed
// every type it could while API groups were down (targets.Incomplete).
func incompleteSnapshot(clusters []*targets.Cluster) error {
	var down []string
	for _, cl := range clusters {
		for _, gv := range cl.Down {
			down = append(down, cl.Conn.Prefix()+gv)
		}
	}
	return targets.Incomplete(down)
}

// clientsOf finds the client of a cluster by its context (the only
// cluster's for any, when there is one); nil for none.
func clientsOf(clusters []*targets.Cluster) func(context string) rest.Interface {
	return func(context string) rest.Interface {
		for _, cl := range clusters {
			if len(clusters) == 1 || cl.Conn.Context == context {
				return cl.Client
			}
		}
		return nil
	}
}

// describeAPIServiceLimit bounds the look-up of an APIService whose
// aggregated API is down, for its warning.
const describeAPIServiceLimit = 3 * time.Second
