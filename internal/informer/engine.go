package informer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/clock"

	"github.com/kubectl-deltas/kubectl-deltas/internal/cache"
	"github.com/kubectl-deltas/kubectl-deltas/internal/textsafe"
)

// ErrInterrupted is returned by Run when its context was cancelled (a
// signal): the Sink was flushed, whole records only.
var ErrInterrupted = errors.New("interrupted")

// ErrTimedOut is returned by Run when RunOptions.Timeout elapsed: a normal
// end, unless the caller was waiting for a condition.
var ErrTimedOut = errors.New("timed out")

// ErrSourceEnded is returned by Run when RunOptions.SourceDone was closed:
// the source (a replayed recording) has nothing more, and everything it
// had was handed to the Sink. A normal end, unless the caller was waiting
// for a condition.
var ErrSourceEnded = errors.New("the source ended")

// ErrOutputClosed is wrapped by a Sink's error when the reader of the
// output went away (EPIPE): Run ends normally.
var ErrOutputClosed = errors.New("output closed")

// Sink takes the batches of a running Engine, one at a time, on Run's
// goroutine.
type Sink interface {
	// Handle takes one popped batch. done ends the run normally (a count
	// was reached, say).
	Handle(b Batch) (done bool, err error)
	// Flush writes out what Handle buffered. Run calls it whenever no
	// batch is waiting, and before it returns.
	Flush() error
}

// SyncedSink is a Sink that is told, on Run's goroutine, each time an
// informer's initial list may have come out, or an informer gone, without
// a batch to say so (an empty list, an optional type dropped): after each
// batch, each FIFO synced, each Check and each informer removed. done
// ends the run normally.
type SyncedSink interface {
	Sink
	Synced() (done bool, err error)
}

// RunOptions are the stop conditions of one Run.
type RunOptions struct {
	// Timeout, if positive, ends the run normally after this long.
	Timeout time.Duration
	// UntilSynced ends the run normally once every informer's initial list
	// has been handed to the Sink.
	UntilSynced bool
	// OutputClosed, if not nil, is closed when the reader of the output
	// went away: the run ends at once, normally, without a flush.
	OutputClosed <-chan struct{}
	// Check, if set, is called once every informer's initial list has been
	// handed to the Sink, and again after every later batch (and whenever
	// the set of informers changed): stop ends the run with err. It runs
	// on Run's goroutine. The informers' Stores may be ahead of what the
	// Sink was handed (a batch is applied when popped, and handed out
	// after): a Check that must agree with the printed stream keeps its
	// own view, from the batches its Sink sees.
	Check func() (stop bool, err error)
	// CheckEvery, when positive, also calls Check that often (on the
	// engine's clock) once the initial lists are out, for conditions whose
	// verdict changes with time alone, when no delta comes.
	CheckEvery time.Duration
	// InitialOut, if set, is called once, on Run's goroutine, when every
	// informer's initial list has first been handed to the Sink, after
	// Check: ending says that the run ends there (UntilSynced, or Check
	// said stop).
	InitialOut func(ending bool)
	// Tick, if set, is called every TickEvery (on the engine's clock)
	// while Run runs, on Run's goroutine, between batches: a recorder's
	// heartbeat. Its error ends the run.
	Tick      func() error
	TickEvery time.Duration
	// Barrier, if not nil, brings channels that the loop closes as it
	// takes them: a source that fired timers (a replay's clock) learns
	// that the loop has run what they woke.
	Barrier <-chan chan struct{}
	// SourceDone, if not nil, is closed by the source when it has handed
	// out everything it will (a replay's end): Run returns ErrSourceEnded,
	// the Sink flushed.
	SourceDone <-chan struct{}
}

// Engine runs a set of informers and merges their batches into one stream,
// in the order they are popped.
type Engine struct {
	cfg     Config
	outages *outages

	// batches carries every informer's popped batches to Run; synced
	// carries wake-ups when an informer's FIFO synced or an informer was
	// removed; fatal carries the first unrecoverable error.
	batches chan Batch
	synced  chan struct{}
	fatal   chan error
	// drop carries the IDs of optional informers the server forbade; Run's
	// loop removes them.
	drop chan string

	// lock guards informers, order, runCtx and done.
	lock sync.Mutex
	// informers holds the live informers by Target.ID; order is their IDs
	// in the order they were added.
	informers map[string]*Informer
	order     []string
	// runCtx is the context informers run in while Run runs; nil before.
	runCtx context.Context
	// done is set when Run has returned: no informer starts again.
	done bool
	// retiring counts the goroutines of Retire.
	retiring sync.WaitGroup
}

// New returns an Engine with no informers. errOut receives the one-line
// warnings of outages and notes; nil discards them.
func New(cfg Config, errOut io.Writer) *Engine {
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if errOut == nil {
		errOut = io.Discard
	}
	return &Engine{
		cfg:       cfg,
		outages:   newOutages(errOut, cfg.Clock.Now, cfg.DescribeAPIService),
		batches:   make(chan Batch, 64),
		synced:    make(chan struct{}, 1),
		fatal:     make(chan error, 1),
		drop:      make(chan string),
		informers: map[string]*Informer{},
	}
}

// Add adds the informer of t and, while Run runs, starts it. A target
// whose ID is already watched is an error. The initial list of an informer
// added while Run runs is news to the stream (Batch.Joined): its objects
// are shown as Added.
func (e *Engine) Add(t Target) (*Informer, error) {
	return e.add(t, nil)
}

// AddAdmitted is Add for an informer whose Store and stream keep only
// the objects a admits (see Admission).
func (e *Engine) AddAdmitted(t Target, a Admission) (*Informer, error) {
	return e.add(t, a)
}

// add adds t's informer; a, if not nil, is its Admission.
func (e *Engine) add(t Target, a Admission) (*Informer, error) {
	e.lock.Lock()
	defer e.lock.Unlock()
	id := t.ID()
	if _, ok := e.informers[id]; ok {
		return nil, fmt.Errorf("%s is already watched", describe(t))
	}
	if e.done {
		return nil, fmt.Errorf("cannot watch %s: the stream has ended", describe(t))
	}
	inf, err := newInformer(t, &e.cfg, e.reflectorError, e.outages.recovered)
	if err != nil {
		return nil, err
	}
	inf.admission = a
	e.informers[id] = inf
	e.order = append(e.order, id)
	if e.runCtx != nil {
		inf.joined = true
		inf.start(e.runCtx, e.batches, e.synced, e.fail)
	}
	return inf, nil
}

// Remove stops the informer of the target with this ID and waits for its
// goroutines. Batches it popped before are still handed to the Sink. It
// reports whether there was such an informer.
func (e *Engine) Remove(id string) bool {
	e.lock.Lock()
	inf, ok := e.informers[id]
	if ok {
		delete(e.informers, id)
		e.order = slices.DeleteFunc(e.order, func(s string) bool { return s == id })
	}
	e.lock.Unlock()
	if !ok {
		return false
	}
	inf.stop()
	e.outages.forget(inf)
	poke(e.synced)
	return true
}

// Retire ends the informer of the target with this ID because its
// resource is gone: objects still in its Store come out as Deleted (final
// state unknown), then it stops. It returns at once; the informer no longer
// counts for UntilSynced, and its ID may be added again at once. It reports
// whether there was such an informer.
func (e *Engine) Retire(id string) bool {
	e.lock.Lock()
	inf, ok := e.informers[id]
	ok = ok && !e.done
	if ok {
		delete(e.informers, id)
		e.order = slices.DeleteFunc(e.order, func(s string) bool { return s == id })
		e.retiring.Go(func() {
			inf.retire()
			e.outages.forget(inf)
		})
	}
	e.lock.Unlock()
	if ok {
		poke(e.synced)
	}
	return ok
}

// Informers returns the live informers in the order they were added.
func (e *Engine) Informers() []*Informer {
	e.lock.Lock()
	defer e.lock.Unlock()
	out := make([]*Informer, 0, len(e.order))
	for _, id := range e.order {
		out = append(out, e.informers[id])
	}
	return out
}

// Targets are the targets of Informers, in the same order.
func (e *Engine) Targets() []Target {
	e.lock.Lock()
	defer e.lock.Unlock()
	out := make([]Target, 0, len(e.order))
	for _, id := range e.order {
		out = append(out, e.informers[id].Target())
	}
	return out
}

// fail reports an unrecoverable error; the first one wins.
func (e *Engine) fail(err error) {
	select {
	case e.fatal <- err:
	default:
	}
}

// reflectorError sorts a reflector's report: fatal, a note, or part of an
// outage.
func (e *Engine) reflectorError(inf *Informer, err error) {
	inf.setLastError(err)
	var fallback *cache.WatchListFallbackError
	var rewritten *cache.HistoryRewrittenError
	switch {
	case errors.As(err, &fallback):
		e.outages.note(err)
	case errors.As(err, &rewritten):
		e.outages.rewritten(err)
	case inf.target.Optional && apierrors.IsNotFound(err) && e.cfg.Gone != nil:
		// The resource is gone (a CRD deleted, an APIService removed):
		// no warning; whoever follows discovery retires the informer.
		e.cfg.Gone(inf.target)
	case inf.target.Optional && apierrors.IsNotFound(err):
		// Gone, and nobody follows discovery (a --tree's scouts, a
		// snapshot): the informer retires, rather than retry quietly
		// forever and hold up the initial lists. Retire stops this
		// reflector from its own goroutine, once this handler returned.
		if e.Retire(inf.target.ID()) {
			e.outages.info(describe(inf.target) + " is no longer served: not watching it")
		}
	case IsFatal(err) && inf.target.Optional && apierrors.IsForbidden(err):
		e.outages.note(fmt.Errorf("no longer watching %s: %w", describe(inf.target), err))
		// Run's loop removes the informer; the send ends as soon as the
		// informer is stopped, so a second report cannot block Remove.
		select {
		case e.drop <- inf.target.ID():
		case <-inf.done:
		}
	case IsFatal(err):
		e.fail(ExplainFatal(err))
	case cache.IsExpired(err) && inf.resumedFrom != "" && !inf.gapSaid:
		// The recorded stream cannot go on where it stopped: the relist
		// that follows says what changed meanwhile, not each change.
		inf.gapSaid = true
		e.outages.info(fmt.Sprintf("%s%s: the server no longer has resourceVersion %s, where the recording stopped (compacted): relisting; what changed meanwhile is recorded as Replaced, what was deleted as Deleted with finalStateUnknown, the steps between are lost",
			textsafe.ContextPrefix(inf.target.Context), describe(inf.target), inf.resumedFrom))
	case cache.IsExpired(err):
		// A relist follows; its tombstones and Replaced deltas say what
		// happened while the watch was down.
	default:
		e.outages.failed(inf, err)
	}
}

// Run starts the informers and hands their batches to sink until a stop
// condition: it returns nil for a normal end (sink done, synced, output
// closed, Check satisfied), ErrTimedOut after the timeout, ErrInterrupted
// when ctx is cancelled, Check's error, or the first fatal error. Every informer has stopped, and its goroutines returned, when Run
// returns. Run can be called once.
func (e *Engine) Run(ctx context.Context, sink Sink, opts RunOptions) error {
	e.lock.Lock()
	if e.runCtx != nil || e.done {
		e.lock.Unlock()
		return errors.New("informer engine: Run called twice")
	}
	runCtx, cancel := context.WithCancel(ctx)
	e.runCtx = runCtx
	for _, id := range e.order {
		e.informers[id].start(runCtx, e.batches, e.synced, e.fail)
	}
	e.lock.Unlock()
	defer e.stopAll(cancel)
	if e.cfg.GCPercent > 0 {
		defer debug.SetGCPercent(debug.SetGCPercent(e.cfg.GCPercent))
	}

	var timeout <-chan time.Time
	if opts.Timeout > 0 {
		timer := e.cfg.Clock.NewTimer(opts.Timeout)
		defer timer.Stop()
		timeout = timer.C()
	}
	checks := newEvery(e.cfg.Clock, opts.CheckEvery, opts.Check != nil)
	defer checks.stop()
	beats := newEvery(e.cfg.Clock, opts.TickEvery, opts.Tick != nil)
	defer beats.stop()
	l := loop{e: e, sink: sink, untilSynced: opts.UntilSynced, check: opts.Check, initialOut: opts.InitialOut}
	l.syncedSink, _ = sink.(SyncedSink)
	for {
		select {
		case b := <-e.batches:
			done, err := l.handle(b)
			if err != nil || done {
				return l.finish(err)
			}
			if len(e.batches) == 0 {
				if err := sink.Flush(); err != nil {
					return l.finish(err)
				}
			}
			if stop, err := l.settled(); stop {
				return l.finish(err)
			}
		case <-e.synced:
			if stop, err := l.settled(); stop {
				return l.finish(err)
			}
		case <-checks.C():
			checks.again()
			if stop, err := l.settled(); stop {
				return l.finish(err)
			}
		case <-beats.C():
			beats.again()
			if err := opts.Tick(); err != nil {
				return l.finish(err)
			}
		case ack := <-opts.Barrier:
			stop, err := l.barrier(timeout, checks)
			close(ack)
			if stop {
				return err
			}
		case id := <-e.drop:
			e.Remove(id)
			if stop, err := l.settled(); stop {
				return l.finish(err)
			}
		case err := <-e.fatal:
			_ = sink.Flush()
			return err
		case <-timeout:
			return l.timedOut()
		case <-opts.OutputClosed:
			// The reader went away: a normal end, nothing left to say.
			return nil
		case <-opts.SourceDone:
			if err := l.finish(nil); err != nil {
				return err
			}
			return ErrSourceEnded
		case <-ctx.Done():
			_ = sink.Flush()
			return ErrInterrupted
		}
	}
}

// every is a timer of the engine's clock that fires every d while it is
// re-armed (again) as it fires; its channel is nil when it is off.
type every struct {
	clock clock.Clock
	d     time.Duration
	timer clock.Timer
}

// newEvery is an every of d, off unless d is positive and on.
func newEvery(c clock.Clock, d time.Duration, on bool) *every {
	t := &every{clock: c, d: d}
	if d > 0 && on {
		t.again()
	}
	return t
}

// C is the channel it fires on; nil when off.
func (t *every) C() <-chan time.Time {
	if t.timer == nil {
		return nil
	}
	return t.timer.C()
}

// again arms it for d from now: a new timer, not Reset, for the fake
// clocks of the tests forget a timer once it fired.
func (t *every) again() { t.timer = t.clock.NewTimer(t.d) }

func (t *every) stop() {
	if t.timer != nil {
		t.timer.Stop()
	}
}

// barrier is RunOptions.Barrier's turn: the source moved the clock, and
// the engine's own timers it fired — the timeout, a check — run before it
// hears back (select would take them in any order); with no check due, a
// check all the same where the time has come to (the end of a replay),
// for what changes with time alone. stop ends the run with err.
func (l *loop) barrier(timeout <-chan time.Time, checks *every) (stop bool, err error) {
	select {
	case <-timeout:
		return true, l.timedOut()
	default:
	}
	select {
	case <-checks.C():
		checks.again()
	default:
		if checks.timer == nil {
			return false, nil
		}
	}
	if stop, err := l.settled(); stop {
		return true, l.finish(err)
	}
	return false, nil
}

// timedOut ends a run whose RunOptions.Timeout ran out.
func (l *loop) timedOut() error {
	if err := l.finish(nil); err != nil {
		return err
	}
	return ErrTimedOut
}

// stopAll cancels every informer and waits for all of them; no informer
// starts after it.
func (e *Engine) stopAll(cancel context.CancelFunc) {
	cancel()
	e.lock.Lock()
	e.done = true
	infs := make([]*Informer, 0, len(e.informers))
	for _, inf := range e.informers {
		infs = append(infs, inf)
	}
	e.lock.Unlock()
	for _, inf := range infs {
		inf.stop()
	}
	e.retiring.Wait()
}

// loop is the state of Run's goroutine.
type loop struct {
	e           *Engine
	sink        Sink
	untilSynced bool
	check       func() (bool, error)
	// initialOut is RunOptions.InitialOut until it was called, then nil.
	initialOut func(ending bool)
	// syncedSink is sink as a SyncedSink, nil when it is not one.
	syncedSink SyncedSink
}

// handle hands b to the sink and counts what it handled of the initial
// list.
func (l *loop) handle(b Batch) (bool, error) {
	if b.Initial {
		b.Informer.handledInitial++
	}
	done, err := l.sink.Handle(b)
	b.Informer.handled++
	return done, err
}

// settled reports whether the run ends, once every informer's initial
// list is out: --until-synced, or the Check. A SyncedSink is told first:
// an informer may have synced, or gone, since it last handled a batch.
func (l *loop) settled() (bool, error) {
	if l.syncedSink != nil {
		if done, err := l.syncedSink.Synced(); done || err != nil {
			return true, err
		}
	}
	if !l.untilSynced && l.check == nil && l.initialOut == nil || !l.initialDone() {
		return false, nil
	}
	stop, err := l.untilSynced, error(nil)
	if !stop && l.check != nil {
		stop, err = l.check()
	}
	if l.initialOut != nil {
		l.initialOut(stop)
		l.initialOut = nil
	}
	return stop, err
}

// initialDone reports whether every live informer's initial list has been
// handed to the Sink.
func (l *loop) initialDone() bool {
	l.e.lock.Lock()
	defer l.e.lock.Unlock()
	for _, inf := range l.e.informers {
		if !inf.InitialDone() {
			return false
		}
	}
	return true
}

// finish flushes and says how the run ends; a reader that went away is a
// normal end.
func (l *loop) finish(err error) error {
	// Whole records only reach the Sink's buffer: flush them, also before
	// returning an error (the delta that made a Check fail is printed).
	if flushErr := l.sink.Flush(); err == nil {
		err = flushErr
	}
	if err == nil || errors.Is(err, ErrOutputClosed) {
		return nil
	}
	return err
}

// Position is where the stream of one collection stands: every change
// of it up to ResourceVersion has been handed to the Sink.
type Position struct {
	Target          Target
	ResourceVersion string
}

// Positions are the positions of the collections whose every change up
// to their reflector's last resourceVersion (of a list, an event or a
// bookmark) has been handed to the Sink: those with nothing queued and
// nothing on its way to the Sink. A collection with something still on
// its way has none now. Call it on Run's goroutine (RunOptions.Tick,
// InitialOut) or after Run returned.
//
// Why it holds: the reflector queues a change before it takes its
// resourceVersion as its last, so every change up to the resourceVersion
// read first is queued by then; Len sees it still queued, or popped — a
// Pop counts its batch under the FIFO's lock before it lets go — and
// popped == handled says the loop handed every popped batch to the Sink.
func (e *Engine) Positions() []Position {
	var out []Position
	for _, inf := range e.Informers() {
		rv := inf.reflector.LastSyncResourceVersion()
		if rv == "" || inf.fifo.Len() > 0 || inf.popped.Load() != inf.handled {
			continue
		}
		out = append(out, Position{Target: inf.target, ResourceVersion: rv})
	}
	return out
}

// CheckResumeFrom checks, before the run, that Config.ResumeFrom is not
// ahead of the server of each cluster: the server would wait for it to
// come and send nothing meanwhile, and then the changes made until then
// would be lost. It lists at most one object of the first target of each
// cluster, for the server's resourceVersion now. A list that fails says
// nothing here: the run's own requests say why.
func (e *Engine) CheckResumeFrom(ctx context.Context) error {
	from := e.cfg.ResumeFrom
	if from == "" {
		return nil
	}
	asked := map[string]bool{}
	for _, t := range e.Targets() {
		if asked[t.Context] {
			continue
		}
		asked[t.Context] = true
		if now := serverResourceVersion(ctx, e.cfg.NewListerWatcher(t)); now != "" && NewerResourceVersion(from, now) {
			return fmt.Errorf("--resource-version=%s is ahead of the server%s, whose resourceVersion is %s now: the watch would wait for it, and miss every change until then; give one the server has sent (a delta's \"resourceVersion\"), or leave it out to list", from, inContext(t.Context), now)
		}
	}
	return nil
}

// inContext names the cluster of context in a message, "" for one
// cluster.
func inContext(context string) string {
	if context == "" {
		return ""
	}
	return " of context " + strconv.Quote(context)
}

// SyncTimeout is, after Run returned ErrTimedOut, why a run that waited
// for the initial lists (--until-synced) is not a snapshot: a
// *SyncTimeoutError naming every informer whose initial list was not out,
// with its last error; nil when every list was out. Informers removed
// meanwhile (optional types the server forbade) do not count.
func (e *Engine) SyncTimeout() error {
	e.lock.Lock()
	defer e.lock.Unlock()
	var out SyncTimeoutError
	for _, id := range e.order {
		inf := e.informers[id]
		if !inf.InitialDone() {
			out.Unsynced = append(out.Unsynced, Unsynced{Target: inf.target, Err: inf.LastError()})
		}
	}
	if len(out.Unsynced) == 0 {
		return nil
	}
	return &out
}

// Unsynced is an informer whose initial list was not out, and the last
// error of its reflector (nil if it had none: the list was slow).
type Unsynced struct {
	Target Target
	Err    error
}

// SyncTimeoutError says which initial lists a timed-out --until-synced run
// did not get.
type SyncTimeoutError struct {
	Unsynced []Unsynced
}

func (e *SyncTimeoutError) Error() string {
	line := func(u Unsynced) string {
		why := "the list had not finished"
		if u.Err != nil {
			why = textsafe.OneLine(u.Err.Error())
		}
		return textsafe.ContextPrefix(u.Target.Context) + describe(u.Target) + ": " + why
	}
	if len(e.Unsynced) == 1 {
		return "timed out waiting for the initial list of " + line(e.Unsynced[0]) + "; the snapshot is incomplete (a longer --timeout, or check that type's API)"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "timed out waiting for the initial lists of %d types; the snapshot is incomplete (a longer --timeout, or check their APIs):", len(e.Unsynced))
	for _, u := range e.Unsynced {
		b.WriteString("\n  " + line(u))
	}
	return b.String()
}

// describe names a target in messages: "configmaps in namespace demo".
func describe(t Target) string {
	s := t.Resource.GroupResource().String()
	if t.Name != "" {
		s += " " + t.Name
	}
	if t.Namespace != "" {
		s += " in namespace " + t.Namespace
	}
	return s
}

// AnnounceMissing returns RunOptions.InitialOut for a stream that names
// objects: once the initial lists are out, one line on errOut for each
// named root object that does not exist, rather than silence: the stream
// waits for it to be created, or, ending there, did not find it.
func (e *Engine) AnnounceMissing(errOut io.Writer, waiting string) func(ending bool) {
	return func(ending bool) {
		for _, inf := range e.Informers() {
			t := inf.Target()
			if t.Name == "" || t.Role != RoleRoot {
				continue
			}
			key, where := t.Name, ""
			if t.Namespace != "" {
				key, where = t.Namespace+"/"+t.Name, fmt.Sprintf(" in namespace %q", t.Namespace)
			}
			if _, exists, _ := inf.Store().GetByKey(key); exists {
				continue
			}
			then := ": " + waiting
			if ending {
				then = ""
			}
			fmt.Fprintf(errOut, "info: %s%s %q not found%s%s\n", textsafe.ContextPrefix(t.Context), t.Resource.GroupResource(), t.Name, where, then)
		}
	}
}
