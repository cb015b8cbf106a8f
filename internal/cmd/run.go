package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kubectl-deltas/kubectl-deltas/internal/condition"
	"github.com/kubectl-deltas/kubectl-deltas/internal/events"
	"github.com/kubectl-deltas/kubectl-deltas/internal/health"
	"github.com/kubectl-deltas/kubectl-deltas/internal/history"
	"github.com/kubectl-deltas/kubectl-deltas/internal/history/recording"
	"github.com/kubectl-deltas/kubectl-deltas/internal/history/replay"
	"github.com/kubectl-deltas/kubectl-deltas/internal/informer"
	"github.com/kubectl-deltas/kubectl-deltas/internal/live"
	"github.com/kubectl-deltas/kubectl-deltas/internal/otlp"
	"github.com/kubectl-deltas/kubectl-deltas/internal/printer"
	"github.com/kubectl-deltas/kubectl-deltas/internal/reconcile"
	"github.com/kubectl-deltas/kubectl-deltas/internal/stage"
	"github.com/kubectl-deltas/kubectl-deltas/internal/targets"
	"github.com/kubectl-deltas/kubectl-deltas/internal/timeline"
	"github.com/kubectl-deltas/kubectl-deltas/internal/tree"
)

// run is what Run builds of the options for one run, before any
// request: the record stage, the printer, the waiter, the recorder or the
// player, the page and the live view, and, once the engine is built, the
// Events' join. The options stay as Complete left them.
type run struct {
	*DeltasOptions
	printer printer.Printer
	stage   *stage.Stage
	waiter  *condition.Waiter
	join    *events.Join
	// player, with --replay, plays the recordings; recorder, with
	// --record, records what the stream is handed. Both are closed when
	// Run returns.
	player   *replay.Player
	recorder *recording.Recorder
	// servers are the API servers of the run's clusters (the header's).
	servers []recording.APIServer
	// page, with --timeline, draws the stream (its file written once when
	// built, again when Run returns); live, with --live, draws it on the
	// terminal. observer hands them the records the stream shows,
	// completed by observed.
	page     *timeline.Timeline
	live     *live.Run
	observer stage.Observer
	observed *stage.Stage
	// stopLive, once the live view draws, draws its last frame and
	// writes the messages held below it.
	stopLive func()
	// exporter, with --otlp, sends what exportFeed is handed.
	exporter *otlp.Exporter
}

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

	r := &run{DeltasOptions: o}
	if o.History.Replaying() {
		if err := r.openReplay(); err != nil {
			return err
		}
		defer func() { _ = r.player.Close() }()
	}
	if err := r.buildOutput(); err != nil { // a recorder made lets go of its lock and file
		return errors.Join(err, r.recorder.Close())
	}
	if r.recorder != nil {
		defer func() {
			if cerr := r.recorder.Close(); err == nil {
				err = cerr
			}
		}()
	}
	if r.exporter != nil {
		if err := r.exporter.Begin(sigCtx, r.History.Record, recording.IsDir(r.History.Record), r.resend); err != nil {
			return err
		}
		defer func() {
			if cerr := r.exporter.End(); err == nil {
				err = cerr
			}
		}()
	}
	if r.page != nil {
		defer func() {
			if cerr := r.page.Close(); err == nil {
				err = cerr
			}
		}()
	}
	defer func() {
		if r.stopLive != nil {
			r.stopLive()
		}
	}()
	if r.player != nil {
		if r.page != nil {
			r.player.OnGap(func(g recording.Gap) { r.page.NoteGap(g.From, g.To) })
		}
		engine, err := r.replayEngine()
		if err != nil {
			return err
		}
		return r.exit(nil, engine, r.runStream(sigCtx, engine, nil))
	}
	if err := o.Clusters.CheckConfigPresent(); err != nil {
		return err
	}
	clusters, err := o.prepareClusters(ctx, sigCtx)
	if err != nil {
		return err
	}
	r.nameKinds(clusters)
	engine, follows, err := r.buildEngine(clusters)
	if err != nil {
		return err
	}
	if err := engine.CheckResumeFrom(sigCtx); err != nil {
		return err
	}
	if r.recorder != nil {
		r.servers = o.apiServers(clusters) // the header's: read from the kubeconfig only to record
	}
	return r.exit(clusters, engine, r.runStream(sigCtx, engine, follows))
}

// nameKinds tells the printer whether records of several kinds may share
// the stream, so that human output names the kind on every line.
func (r *run) nameKinds(clusters []*targets.Cluster) {
	m, ok := r.printer.(printer.MultiTyper)
	if !ok {
		return
	}
	multi := r.Targets.Tree
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
func (r *run) buildEngine(clusters []*targets.Cluster) (*informer.Engine, []*targets.Follower, error) {
	byContext := map[string]*targets.Cluster{}
	for _, cl := range clusters {
		byContext[cl.Conn.Context] = cl
	}
	clientOf := func(context string) rest.Interface { return byContext[context].Client }
	cfg := r.ListWatch.Config(clientOf, r.Output.TableRows(), r.ErrOut)
	cfg.FIFO = r.ListWatch.FIFOKind()
	cfg.DescribeAPIService = func(t informer.Target) string {
		services := targets.ReadAPIServices(context.Background(), clientOf(t.Context), describeAPIServiceLimit)
		if s, ok := services.Down(t.Resource.GroupVersion()); ok {
			return s.Status()
		}
		return ""
	}
	if r.Targets.Tree {
		cfg.Indexers, cfg.KeepListed = tree.Indexers(), tree.KeepListed
	}
	if r.recorder != nil {
		cfg.Resume = r.recorder.Resume // an existing recording goes on
	}
	var follows []*targets.Follower
	for _, cl := range clusters {
		if !r.preparation().FollowsTypes(cl) {
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
	engine := informer.New(cfg, r.ErrOut)
	for _, cl := range clusters {
		for _, t := range cl.Targets {
			if _, err := engine.Add(t); err != nil {
				return nil, nil, err
			}
		}
	}
	if r.Targets.Events {
		r.join = events.NewJoin(engine, nil)
		for _, cl := range clusters {
			for _, t := range cl.Events {
				if err := r.join.Watch(t); err != nil {
					return nil, nil, err
				}
			}
		}
	}
	return engine, follows, nil
}

// runStream runs the engine and the followers until the engine stops.
func (r *run) runStream(ctx context.Context, engine *informer.Engine, follows []*targets.Follower) error {
	followCtx, stopFollowing := context.WithCancel(ctx)
	var following sync.WaitGroup
	for _, f := range follows {
		following.Go(func() { f.Run(followCtx, engine) })
	}
	defer following.Wait()
	defer stopFollowing()

	stdoutClosed, stopWatching := printer.WatchClosed(r.Out)
	defer stopWatching()
	runOpts := informer.RunOptions{
		Timeout:      r.Wait.Timeout,
		UntilSynced:  r.Wait.UntilSynced,
		OutputClosed: stdoutClosed,
	}
	if !r.Wait.Quiet {
		waiting := "waiting for it to be created"
		if r.player != nil {
			waiting = "waiting for it to appear in the recording"
		}
		runOpts.InitialOut = engine.AnnounceMissing(r.ErrOut, waiting)
	}
	sink, printing := r.sinkChain(engine, &runOpts)
	defer r.Queue.Start(ctx, printing, r.replayClock())()
	if r.recorder != nil {
		parked := func() bool { return r.join != nil && r.join.Parked() > 0 }
		run := history.Recorded{Engine: engine, LabelSelector: r.ListWatch.LabelSelector, FieldSelector: r.ListWatch.FieldSelector, Parked: parked, Servers: r.servers}
		gap, err := history.Attach(r.recorder, run, &runOpts)
		if err != nil {
			return err
		}
		if gap != nil && r.page != nil {
			r.page.NoteGap(gap.From, gap.To) // the page draws what the recording lacks
		}
	}
	if r.page != nil {
		defer r.page.Start(r.ErrOut)()
	}
	if r.live != nil {
		// Stopped when Run returns, the verdict explained: the last frame
		// stays, with the blocker's log lines, the messages below it.
		r.stopLive = r.live.Start()
	}
	if line := r.Progress.ForStream(r.ErrOut, r.Out, r.Wait.Quiet, !r.Records.WatchOnly, engine.Targets, strings.Join(r.History.Replay, ","), r.replayClock()); line != nil {
		defer line.Stop()
		sink, runOpts.InitialOut = line.Sink(sink), line.Before(runOpts.InitialOut)
	}
	if r.player == nil {
		return engine.Run(ctx, sink, runOpts)
	}
	// A replay: the player feeds the recording once the engine runs, and
	// its gate, first in the chain, keeps the recording's order and time.
	runOpts.SourceDone, runOpts.Barrier = r.player.Done(), r.player.Barrier()
	playCtx, stopPlaying := context.WithCancel(ctx)
	var playing sync.WaitGroup
	playing.Go(func() { r.player.Play(playCtx) })
	err := engine.Run(ctx, r.player.Gate(sink), runOpts)
	stopPlaying()
	playing.Wait()
	if !r.Wait.Quiet && (err == nil || errors.Is(err, informer.ErrSourceEnded)) {
		for _, t := range r.player.NeverSeen() {
			fmt.Fprintf(r.ErrOut, "info: %s never appears in the recording %s: is the name right? (kubectl deltas --replay=%s -o name lists what it holds)\n",
				informer.Describe([]informer.Target{t}), strings.Join(r.History.Replay, ", "), r.History.Replay[0])
		}
	}
	if perr := r.player.Err(); perr != nil && (err == nil || errors.Is(err, informer.ErrSourceEnded)) {
		return perr
	}
	return err
}

// sinkChain is what the engine hands its batches to: the tree (with
// --tree), which decides what is printed; the join (with --events), which
// adds the Events of what is printed; the waiter (with a condition),
// which sees what is printed and stops the run through runOpts.Check; the
// record sink, which prints, and which is returned too.
func (r *run) sinkChain(engine *informer.Engine, runOpts *informer.RunOptions) (sink informer.Sink, printing *stage.RecordSink) {
	out := r.Out
	if r.Wait.Quiet {
		out = io.Discard
	}
	printing = stage.NewRecordSink(r.stage, r.printer, out, r.Wait.Count, r.replayClock())
	if r.recorder != nil {
		printing.RecordTo(r.recorder)
	}
	if r.observer != nil {
		printing.ObserveWith(r.observed, r.observer)
	}
	if r.exportFeed != nil {
		printing.ExportTo(r.exportFeed)
	}
	sink = printing
	if r.waiter.Active() {
		runOpts.Check, runOpts.CheckEvery = r.waiter.Check, r.waiter.CheckEvery()
		if r.live != nil {
			r.waiter.ReportStates(r.live.View.SetConditions)
		}
		sink = r.waiter.Sink(engine, sink)
		if r.Records.AsksHealth() { // a Pending Verdict record at each change; a failed write shows at the next
			r.waiter.ReportChanges(func(s health.Status, cause []condition.Held) {
				_ = printing.PrintVerdict(condition.Pending(r.waiter.Waited(), s, cause, r.waiter.Now()))
			})
		}
	}
	if r.join != nil {
		sink = r.join.Sink(sink)
	}
	if r.Targets.Tree {
		sink = tree.New(engine, sink, r.recorder.Members()...)
	}
	return sink, printing
}

// exit maps how the stream ended to the command's exit: 130 when
// interrupted, 2 when a --fail-when held, 1 when --timeout or a replay's
// end came while waiting for --until/--until-any or, with --until-synced,
// before every initial list was out or while API groups were down (an
// incomplete snapshot), 0 for a --timeout otherwise.
func (r *run) exit(clusters []*targets.Cluster, engine *informer.Engine, err error) error {
	var failed *condition.FailedError
	switch {
	case errors.Is(err, informer.ErrInterrupted):
		return &ExitError{Code: exitInterrupted}
	case errors.As(err, &failed):
		if r.player != nil {
			failed.ExplainFrom(r.shownWarnings(), r.player.LogsOf)
		} else {
			failed.Explain(targets.ClientOf(clusters), !r.Targets.Tree)
		}
		r.printVerdict("Failed", "--fail-when="+failed.Condition.String(), failed.All())
		return &ExitError{Code: exitConditionFailed, Err: failed}
	case (errors.Is(err, informer.ErrTimedOut) || errors.Is(err, informer.ErrSourceEnded)) && r.waiter.Waits():
		ended := errors.Is(err, informer.ErrSourceEnded)
		err = r.waiter.TimedOut()
		var timedOut *condition.TimeoutError
		if errors.As(err, &timedOut) {
			timedOut.SourceEnded = ended
			if r.player != nil {
				timedOut.ExplainFrom(r.shownWarnings(), r.player.LogsOf)
			} else {
				timedOut.Explain(targets.ClientOf(clusters), !r.Targets.Tree)
			}
			r.printVerdict("TimedOut", r.waiter.Waited(), timedOut.Held)
		}
		return err
	case errors.Is(err, informer.ErrTimedOut) && r.Wait.UntilSynced:
		return engine.SyncTimeout()
	case errors.Is(err, informer.ErrTimedOut), errors.Is(err, informer.ErrSourceEnded):
		return nil
	case err == nil && r.Wait.UntilSynced:
		return targets.IncompleteSnapshot(clusters)
	}
	if _, records := r.printer.(printer.VerdictPrinter); (records && !r.Wait.Quiet || r.recorder != nil || r.exportFeed != nil) && err == nil {
		if met, ok := r.waiter.Met(); ok { // each object described: only for a record
			r.printVerdict("Met", r.waiter.Waited(), met)
		}
	}
	return err
}

// shownWarnings is, in a replay, where the latest Warning about an object
// comes from: the Events the stream showed (--events), nil without them.
func (r *run) shownWarnings() func(context, uid string) (events.Warning, bool) {
	if r.join == nil {
		return nil
	}
	return r.join.LatestWarning
}

// printVerdict ends a JSON or YAML stream stopped by a condition with its
// Verdict record (not with -q: stdout then carries nothing), writes it to
// --record's recording, whose replays have no cluster to ask for the logs
// it holds, and hands those logs to the page and the live view.
func (r *run) printVerdict(outcome, cond string, held []condition.Held) {
	for _, h := range held {
		if h.Logs == nil {
			continue
		}
		if r.page != nil {
			r.page.NoteLogs(h.Context, h.UID, *h.Logs) // on the blocker's lane
		}
		if r.live != nil {
			r.live.View.SetLogs(h.Context, h.UID, *h.Logs) // under it in the last frame
		}
	}
	p, prints := r.printer.(printer.VerdictPrinter)
	prints = prints && !r.Wait.Quiet
	if !prints && r.recorder == nil && r.exportFeed == nil {
		return
	}
	v := condition.Verdict(outcome, cond, held, r.waiter.Now())
	if r.recorder != nil {
		_ = r.recorder.Verdict(v) // a failed write shows when the recorder closes
	}
	if r.exportFeed != nil {
		_ = r.exportFeed.PrintVerdict(nil, v) // what is not sent is said when the exporter closes
	}
	if prints {
		_ = p.PrintVerdict(r.Out, v)
	}
}

// describeAPIServiceLimit bounds the look-up of an APIService whose
// aggregated API is down, for its warning.
const describeAPIServiceLimit = 3 * time.Second

// resend sends the collector, through feed, what the recording holds
// from from on that it had not taken (otlp.Exporter.Begin): a quiet
// replay of the recording. Its warnings (the recording's gaps) are not
// the run's; a replay that fails is a warning, and the stream goes on.
func (r *run) resend(ctx context.Context, feed *otlp.Feed, from time.Time) error {
	o := *r.DeltasOptions
	h := *o.History
	h.Replay, h.Record, h.At, h.From, h.To = []string{r.History.Record}, "", "", from.UTC().Format(time.RFC3339Nano), ""
	o.History, o.Wait = &h, condition.NewFlags()
	o.Wait.Quiet = true
	o.Live, o.Timeline, o.Queue, o.Export = live.NewFlags(), timeline.NewFlags(), reconcile.NewFlags(), otlp.NewFlags()
	o.exportTo, o.exportFeed, o.Out, o.ErrOut = nil, feed, io.Discard, io.Discard
	err := o.Run(ctx)
	var exit *ExitError
	if errors.As(err, &exit) && exit.Code == exitInterrupted {
		return err
	}
	if err != nil {
		fmt.Fprintf(r.ErrOut, "warning: could not send the collector again what it had not taken of %s: %v\n", r.History.Record, err)
	}
	return nil
}
