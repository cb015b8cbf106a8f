// Package replay plays a recording (--replay) through the same informer
// machinery as a live stream: a ListerWatcher per watched collection
// answers the reflector's list with the recording's state and its watch
// with its changes, and the Reflector, DeltaFIFO, Store and the engine's
// sinks do what they do live (--diff, --where, --health, --until, every
// output format). --tree plays every recorded collection as an owned type
// from the start; --events plays the recorded Events to the run's join.
//
// Its invariants, in full in docs/architecture.md ("Replay: order, time,
// memory"): the recording's order survives the concurrent informers (the
// Player waits on the Gate before it feeds another collection, another
// change of a key in flight, or a relist); a replay's time is the
// recording's (Clock), stopped at each timer due between two records; the
// Player keeps only the objects alive at the point it has reached.
package replay

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/clock"

	"github.com/kubectl-deltas/kubectl-deltas/internal/cache"
	"github.com/kubectl-deltas/kubectl-deltas/internal/history/recording"
	"github.com/kubectl-deltas/kubectl-deltas/internal/informer"
	"github.com/kubectl-deltas/kubectl-deltas/internal/printer"
	"github.com/kubectl-deltas/kubectl-deltas/internal/rawobj"
)

// Player plays one or more recordings as one stream. Open reads their
// headers and initial lists;
// Select says what the run watches; the engine is configured with
// NewListerWatcher, Clock and NewBackoff; Gate goes in front of the
// run's sinks; Play feeds the rest until the end (Done).
type Player struct {
	parts []*part
	warn  io.Writer
	// began is when the recordings began: their earliest header's time.
	// recorded are the collections their headers name whose records a
	// replay can play (the roots).
	began    time.Time
	recorded []informer.Target
	// collections are every collection the recordings watched, roots,
	// --tree's scouts and owned types alike (not Events), without names:
	// where a replay's tree looks for what the roots own.
	// eventCollections are the Events --events watched.
	collections, eventCollections []informer.Target
	// watched are every collection the headers name, as watched: with
	// their names, roles and field selectors (ReadEnd).
	watched []informer.Target
	// newest is the newest header read (ReadEnd: the servers and
	// selectors a recorder going on must keep); clusters, the distinct
	// clusters of the headers that name servers: a plain run's context,
	// "" for a run over several (Cluster).
	newest   *recording.Header
	clusters []string
	// gaps are the Gaps the replay has passed (passGap).
	gaps []recording.Gap
	// onGap, if set, is told of each Gap the replay passes (OnGap).
	onGap func(recording.Gap)
	// lastLine is the latest time of a line fastForward went past.
	lastLine time.Time
	// events are the Events collections of the run (Selection.Events),
	// which the run's join watches (Events).
	events []informer.Target
	// initial are the recordings' leading initial lists; heartbeats the
	// Heartbeats read among or right after them.
	initial    []*recording.Line
	heartbeats []*recording.Line
	// clock is the recording's time.
	clock *Clock
	// barriers carries, to the engine's loop, a channel for it to close
	// once it has run what the last timers fired woke (Barrier).
	barriers chan chan struct{}
	// torn: the recording ended inside a line or a frame (warned).
	torn bool
	// from and to bound what is played (SetWindow); zero: as recorded.
	from, to time.Time
	// checkpointed are, while Play passes the records of a checkpoint it
	// plays (after a segment missing from a recording directory), the
	// feeds they relisted; nil otherwise.
	checkpointed map[*feed]bool

	// Set by Select, read-only afterwards.
	feeds    []*feed
	byID     map[string]*feed
	selector labels.Selector
	// recordedBy say, for each recording, whether its roots' lists and
	// watches selected an object, by the selectors of its first header
	// (informer.SelectsBy). Set by open.
	recordedBy []func(informer.Target, *rawobj.Object) (bool, bool)

	// mu guards every feed's expected, inflight and watcher, the clock's
	// moves, err and logs; cond (on mu) is broadcast when any of them
	// changes.
	mu   sync.Mutex
	cond *sync.Cond
	err  error
	// logs are the logs of failing containers the recorded runs' Verdicts
	// hold, by context and UID: the latest read so far.
	logs map[string]printer.VerdictLogs
	// done is closed when the whole recording has been handed out.
	done chan struct{}
}

// noteLogs keeps the logs the Verdict line l holds.
func (p *Player) noteLogs(l *recording.Line) {
	if len(l.Logs) == 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.logs == nil {
		p.logs = map[string]printer.VerdictLogs{}
	}
	for _, o := range l.Logs {
		p.logs[o.Context+"|"+o.UID] = o.Logs
	}
}

// LogsOf are the logs of the failing container of the object uid in the
// cluster of context that the recording holds, as a recorded run read
// them when it ended; false when it holds none. Safe from any goroutine.
func (p *Player) LogsOf(context, uid string) (printer.VerdictLogs, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	l, ok := p.logs[context+"|"+uid]
	return l, ok
}

// feed is one collection the run watches: its state as far as the
// recording was fed, and what it owes the engine.
type feed struct {
	target informer.Target
	state  *state
	// rv is the resourceVersion its lists answer with: the latest
	// object's.
	rv string
	// pos is the collection's position as the recording has reached it:
	// the newest Heartbeat's, "" when none was, or a list came after it.
	// seen are, by key, the resourceVersion of the last record since the
	// first Heartbeat after the collection's last list: every record past
	// pos among them. Where a recorder that goes on with the recording
	// resumes from, and what it drops (ReadEnd).
	pos  string
	seen map[string]string
	// expected are the deltas fed and not yet handed out by the engine,
	// in order; inflight counts them by key. Guarded by Player.mu.
	expected []pending
	inflight map[string]int
	// watcher is the reflector's current watch, nil between a watch's end
	// and the next. Guarded by Player.mu.
	watcher *watcher
	// matched: a record of the recording was the feed's. Set by whoever
	// reads the recording (Select, Play), read after Done.
	matched bool
}

// pending is a delta fed to a feed's informer and not yet handed out:
// the time and key of its record ("" for a list's).
type pending struct {
	time time.Time
	key  string
}

// maxInflight bounds the watch events fed to one informer ahead of what
// the engine handed out.
const maxInflight = 1000

// part is one recording of a replay, read line by line.
type part struct {
	r *recording.Reader
	// ahead is its next line not yet played; nil at its end. gap is the
	// Gap its run began with (the run ahead belongs to); nil for a run
	// that began without one.
	ahead *recording.Line
	gap   *recording.Gap
	// ended: readRaw has met the recording's end (and warned of a torn
	// one).
	ended bool
	// reopen, if set, opens the recording again from its start, for a
	// look further ahead (caughtUpBefore); nil for standard input.
	reopen func() (*recording.Reader, error)
	// queued are lines read ahead and not yet played, in order, read
	// before r's; skip are the numbers of lines further in r that were
	// played already (applied by caughtUpBefore).
	queued []rawLine
	skip   map[int]bool
	// caughtUp are the caught-up records of the run whose Gap was just
	// played, in the order of their times, to be read before anything
	// else of the part (takeCaughtUp).
	caughtUp []*recording.Line
	// live: a recorder was writing the recording as the replay opened it
	// (recording.RecordedBy): its end is where the recorder is, not torn.
	live bool
}

// rawLine is a line of a recording as read, and its number.
type rawLine struct {
	data   []byte
	number int
}

// Open reads the recordings up to the end of their initial lists. With
// several, their initial lists are all listed first, then their records
// come in the order of their times (a tie in the order of the
// recordings). warn receives the warnings of the replay (a torn end).
func Open(warn io.Writer, recordings ...*recording.Reader) (*Player, error) {
	return open(warn, nil, nil, recordings...)
}

// open is Open, with the headers inferred (InferHeader) of the recordings
// that have none (plain -o json output), and those a recorder is writing
// (live).
func open(warn io.Writer, inferred map[*recording.Reader]*recording.Header, live map[*recording.Reader]bool, recordings ...*recording.Reader) (*Player, error) {
	p := &Player{warn: warn, done: make(chan struct{}), barriers: make(chan chan struct{})}
	p.cond = sync.NewCond(&p.mu)
	var start time.Time
	for _, r := range recordings {
		pt := &part{r: r, live: live[r]}
		p.parts = append(p.parts, pt)
		first, err := p.read(pt)
		if err != nil {
			return nil, err
		}
		if first == nil && p.torn {
			return nil, fmt.Errorf("%s: the recording is cut short before its first whole line: nothing to replay", r.Name())
		}
		var pending *recording.Line // a headerless recording's first record
		if first != nil && first.Header == nil && inferred[r] != nil {
			pending, first = first, &recording.Line{Header: inferred[r], Time: inferred[r].Time}
		}
		if first == nil || first.Header == nil {
			return nil, fmt.Errorf("%s:1: not a recording of kubectl deltas: it does not begin with a %q line (was it written by --record? plain -o json output replays from a file, not from standard input)", r.Name(), recording.HeaderType)
		}
		if p.began.IsZero() || first.Header.Time.Before(p.began) {
			p.began = first.Header.Time
		}
		if p.lastLine.Before(first.Header.Time) {
			p.lastLine = first.Header.Time
		}
		if err := p.addRoots(r.Name(), first.Header); err != nil {
			return nil, err
		}
		p.recordedBy = append(p.recordedBy, informer.SelectsBy(first.Header.LabelSelector, first.Header.FieldSelector))
		began := first.Header.Time
		for {
			l, err := pending, error(nil)
			if pending == nil {
				l, err = p.read(pt)
			}
			pending = nil
			if err != nil {
				return nil, err
			}
			if l != nil && (l.Heartbeat != nil || l.Initial) && p.lastLine.Before(l.Time) {
				p.lastLine = l.Time
			}
			if l != nil && l.Heartbeat != nil {
				// Written while a long initial list came in, or after it.
				p.heartbeats = append(p.heartbeats, l)
				continue
			}
			if l == nil || l.Header != nil || l.Gap != nil || !l.Initial {
				pt.ahead = l
				break
			}
			if len(p.initial) == 0 || l.Time.Before(began) {
				began = l.Time
			}
			p.initial = append(p.initial, l)
		}
		if start.IsZero() || began.Before(start) {
			start = began
		}
	}
	p.clock = NewClock(start)
	return p, nil
}

// addRoots adds the roots of a recording's header to the collections
// recorded (once each).
func (p *Player) addRoots(name string, h *recording.Header) error {
	for _, t := range h.Targets {
		watched, err := targetOf(t)
		if err != nil {
			return fmt.Errorf("%s:1: %w", name, err)
		}
		p.watched = addTarget(p.watched, watched)
		target := watched
		target.Role, target.FieldSelector = informer.RoleRoot, ""
		if watched.Role == informer.RoleEvents {
			target.Role = informer.RoleEvents
			p.eventCollections = addTarget(p.eventCollections, target)
			continue
		}
		if watched.Role.IsRoot() {
			p.recorded = addTarget(p.recorded, target)
		}
		target.Name = ""
		p.collections = addTarget(p.collections, target)
	}
	return nil
}

// noteCluster notes the cluster of the API servers a header names.
func (p *Player) noteCluster(servers []recording.APIServer) {
	if len(servers) == 0 {
		return
	}
	cluster := ""
	if len(servers) == 1 {
		cluster = servers[0].Context
	}
	if !slices.Contains(p.clusters, cluster) {
		p.clusters = append(p.clusters, cluster)
	}
}

// Cluster is the kubeconfig context of the one cluster the recordings
// watched in plain runs — whose records name no context — as the headers
// read so far say it (the first of each recording, each segment of a
// directory); "" when they name none, several, or runs over several
// contexts (whose records name theirs).
func (p *Player) Cluster() string {
	if len(p.clusters) != 1 {
		return ""
	}
	return p.clusters[0]
}

// targetOf is t, a collection a header or a Heartbeat names, as the run
// that recorded it watched it: with its role and field selector.
func targetOf(t recording.Collection) (informer.Target, error) {
	gv, err := schema.ParseGroupVersion(t.APIVersion)
	if err != nil {
		return informer.Target{}, fmt.Errorf("apiVersion %q: %w", t.APIVersion, err)
	}
	target := informer.Target{
		Context: t.Context, Resource: gv.WithResource(t.Resource), Kind: gv.WithKind(t.Kind),
		Namespace: t.Namespace, Name: t.Name, FieldSelector: t.FieldSelector,
	}
	switch t.Role {
	case informer.RoleEvents.String():
		target.Role = informer.RoleEvents
	case informer.RoleOwned.String():
		target.Role = informer.RoleOwned
	case informer.RoleScout.String():
		target.Role = informer.RoleScout
	}
	return target, nil
}

// addTarget adds t to ts unless it holds it already.
func addTarget(ts []informer.Target, t informer.Target) []informer.Target {
	if slices.ContainsFunc(ts, func(o informer.Target) bool { return o.ID() == t.ID() }) {
		return ts
	}
	return append(ts, t)
}

// next is the next line to play, of all the recordings: the earliest of
// the lines ahead; nil at the end of all.
func (p *Player) next() (*recording.Line, error) {
	first := p.earliest()
	if first == nil {
		return nil, nil
	}
	l := first.ahead
	if l.Gap != nil {
		if err := p.takeCaughtUp(first); err != nil {
			return nil, err
		}
	}
	next, err := p.read(first)
	if err != nil {
		return nil, err
	}
	first.ahead = next
	return l, nil
}

// earliest is the recording whose line ahead comes first (the first of
// them on a tie); nil when all are at their end.
func (p *Player) earliest() *part {
	var first *part
	for _, pt := range p.parts {
		if pt.ahead != nil && (first == nil || pt.ahead.Time.Before(first.ahead.Time)) {
			first = pt
		}
	}
	return first
}

// read reads the next line of one recording: nil at its end. A torn end
// is a warning, and the end.
func (p *Player) read(pt *part) (*recording.Line, error) {
	if len(pt.caughtUp) > 0 {
		l := pt.caughtUp[0]
		pt.caughtUp[0] = nil
		pt.caughtUp = pt.caughtUp[1:]
		return l, nil
	}
	data, number, err := p.readRaw(pt)
	if data == nil || err != nil {
		return nil, err
	}
	l, err := recording.ParseLine(pt.r.Name(), number, data)
	if err != nil {
		return nil, err
	}
	switch {
	case l.Header != nil:
		pt.gap = nil
		p.newest = l.Header
		p.noteCluster(l.Header.Servers)
	case l.Gap != nil:
		pt.gap = l.Gap
	}
	return l, nil
}

// readRaw is read's line unparsed: the next line queued, else of the
// recording, passing over those played already; nil data at its end.
func (p *Player) readRaw(pt *part) ([]byte, int, error) {
	if len(pt.queued) > 0 {
		q := pt.queued[0]
		pt.queued[0] = rawLine{}
		pt.queued = pt.queued[1:]
		return q.data, q.number, nil
	}
	for !pt.ended {
		data, number, err := pt.r.Next()
		var torn *recording.TornError
		switch {
		case errors.Is(err, io.EOF):
			pt.ended = true
			return nil, 0, nil
		case errors.As(err, &torn):
			if !pt.live {
				fmt.Fprintf(p.warn, "warning: %v\n", torn)
			}
			p.torn, pt.ended = true, true
			return nil, 0, nil
		case err != nil:
			return nil, 0, err
		case pt.skip[number]:
			delete(pt.skip, number)
			continue
		}
		return data, number, nil
	}
	return nil, 0, nil
}

// Recorded are the collections the recording watched as roots (named or
// selected types), as targets of one cluster each.
func (p *Player) Recorded() []informer.Target { return p.recorded }

// Select sets what the run watches: targets, each a recorded collection
// narrowed (a namespace, a name), and the objects selector keeps (nil:
// all). It fills each target's initial list from the recording. Call it
// once, before the engine runs.
//
// With a window that starts later (SetWindow), the initial lists are the
// state at its start, each object stamped with that time.
func (p *Player) Select(targets []informer.Target, selector labels.Selector) error {
	p.selector = selector
	p.byID = map[string]*feed{}
	for _, t := range targets {
		f := &feed{target: t, state: newState(), inflight: map[string]int{}}
		p.feeds = append(p.feeds, f)
		p.byID[t.ID()] = f
	}
	for _, l := range p.initial {
		for _, f := range p.feedsOf(l) {
			f.state.set(l.Key(), l.Object)
			f.rv = l.Object.ResourceVersion
			f.saw(l)
			f.expected = append(f.expected, pending{time: l.Time})
		}
	}
	for _, l := range p.heartbeats {
		p.sawHeartbeat(l)
	}
	// A checkpoint's objects are recorded: a recorder that goes on from
	// its position drops what its watch brings of them again (a
	// checkpoint is written only where no position is behind them).
	for _, l := range p.initial {
		if !l.Checkpoint {
			continue
		}
		for _, f := range p.feedsOf(l) {
			if f.pos != "" && f.seen != nil {
				f.seen[l.Key()] = l.Object.ResourceVersion
			}
		}
	}
	p.initial, p.heartbeats = nil, nil
	if p.from.IsZero() {
		return nil
	}
	if err := p.fastForward(); err != nil {
		return err
	}
	p.warnInGap()
	for _, f := range p.feeds {
		f.expected = f.expected[:0]
		for range f.state.len() {
			f.expected = append(f.expected, pending{time: p.from})
		}
	}
	p.clock.SetTime(p.from)
	return nil
}

// feedsOf are the feeds whose targets l belongs to.
func (p *Player) feedsOf(l *recording.Line) []*feed {
	var out []*feed
	for _, f := range p.feeds {
		t := f.target
		if t.Context != l.Context || t.Resource != l.GVR() ||
			(t.Namespace != "" && t.Namespace != l.Namespace) || (t.Name != "" && t.Name != l.Name) {
			continue
		}
		// With a selector, a record is the feed's when its object is
		// selected, or was: a change that unselects it is, as on a
		// server's watch, the feed's deletion of it.
		if !p.selectsFor(f, l.Object) && !p.selectsFor(f, f.state.get(l.Key())) {
			continue
		}
		f.matched = true
		out = append(out, f)
	}
	return out
}

// selects reports whether the run's selector keeps obj: always without
// one, never a nil obj with one.
func (p *Player) selects(obj *rawobj.Object) bool {
	if p.selector == nil || p.selector.Empty() {
		return true
	}
	return obj != nil && p.selector.Matches(labelsOf(obj))
}

// selectsTarget is the engine's Config.Selects in a replay with --tree:
// whether the feed of t, a root, is fed obj — of its namespace and name,
// with the labels its recorder selected and this replay's -l keeps — so
// that an object both a root and owned is handed out once, by its root.
// Not known for what a recording's field selector decides.
func (p *Player) selectsTarget(t informer.Target, obj *rawobj.Object) (bool, bool) {
	for _, recorded := range p.recordedBy {
		if selects, known := recorded(t, obj); !selects || !known {
			return selects, known
		}
	}
	if !t.Role.IsRoot() {
		return false, false
	}
	return p.selects(obj), true
}

// selectsFor reports whether f's informer keeps obj: the selector applies
// to the roots only, as on a server (the objects a tree finds are watched
// unfiltered).
func (p *Player) selectsFor(f *feed, obj *rawobj.Object) bool {
	return f.target.Role.Unfiltered() || p.selects(obj)
}

// labelsOf are obj's labels (none when they do not read).
func labelsOf(obj *rawobj.Object) labels.Set {
	set, _ := informer.ObjectLabels(obj)
	return set
}

// Clock is the recording's time: the engine's timers run on it.
func (p *Player) Clock() clock.Clock { return p.clock }

// Now is the recording's time at the record being handed out.
func (p *Player) Now() time.Time { return p.clock.Now() }

// Barrier is the engine's RunOptions.Barrier: the Player asks through it
// whether the engine's loop has run what a timer it fired woke.
func (p *Player) Barrier() <-chan chan struct{} { return p.barriers }

// NeverSeen are the named roots no record of the recording was of (as
// far as the replay read it): a name that is not in it. Call it after
// Done.
func (p *Player) NeverSeen() []informer.Target {
	var out []informer.Target
	for _, f := range p.feeds {
		if f.target.Name != "" && f.target.Role.IsRoot() && !f.matched {
			out = append(out, f.target)
		}
	}
	return out
}

// Done is closed once the whole recording has been handed out.
func (p *Player) Done() <-chan struct{} { return p.done }

// Err is what ended the replay early (a line that does not read), nil
// otherwise; read it after Done.
func (p *Player) Err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// NewBackoff is the reflectors' backoff in a replay: none, so that the
// relist after a recorded relist comes at once.
func (p *Player) NewBackoff() cache.BackoffManager { return noBackoff{} }

type noBackoff struct{}

func (noBackoff) Backoff() clock.Timer { return clock.RealClock{}.NewTimer(0) }

// Play feeds the recording after its initial lists, one record at a
// time, until its end or ctx's; then closes Done. Run it on its own
// goroutine once the engine runs.
func (p *Player) Play(ctx context.Context) {
	defer close(p.done)
	if !p.settled(ctx, nil) || !p.watching(ctx) {
		return
	}
	l, err := p.next()
	if err != nil {
		p.fail(err)
		return
	}
	// A header or a Gap has the time its run began, which caught-up
	// records that follow it come before: neither ends the window.
	// The end is at least the last line read so far: the Heartbeats that
	// came with the initial lists too.
	end := later(p.clock.Now(), p.lastLine)
	for l != nil && (p.to.IsZero() || !l.Time.After(p.to) || l.Header != nil || l.Gap != nil) {
		if l.Header == nil && l.Gap == nil {
			// Time goes on to the line's, and what it brings by then
			// comes first.
			if !p.tickTo(ctx, l.Time) {
				return
			}
			end = later(end, l.Time)
		}
		// The records of one relist of a collection come together: one
		// list says them all, as it did when recorded.
		batch := []*recording.Line{l}
		next, err := p.next()
		for err == nil && next != nil && sameRelist(l, next) {
			batch = append(batch, next)
			next, err = p.next()
		}
		if err == nil {
			p.feed(ctx, batch)
		}
		if err != nil {
			p.fail(err)
			return
		}
		l = next
	}
	if l != nil {
		// Stopped at --to by a line after it: caught-up records dated
		// before it may still follow that line.
		caughtUp, err := p.caughtUpBefore(p.to, false)
		if err != nil {
			p.fail(err)
			return
		}
		p.feedCaughtUp(ctx, caughtUp)
	}
	// Time runs on to the end: --to, or the recording's last line (its
	// last Heartbeat: its recorder was alive until then).
	if !p.to.IsZero() {
		end = p.to
	}
	if p.tickTo(ctx, end.Add(time.Nanosecond)) && p.barrier(ctx) {
		p.mu.Lock()
		p.advance(end)
		p.mu.Unlock()
		p.barrier(ctx) // a last check, at the end
	}
	p.settled(ctx, nil)
}

// later is the later of a and b.
func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// tickTo stops the time at each timer due before t, once everything fed
// is handed out: the timer fires, and the engine's loop runs what it woke
// — a check of the condition, the timeout (RunOptions.Barrier) — before
// the time goes on, as the recorded run's clock went on between its
// changes. Other timers (a reflector's) fire at their time, and their
// goroutines run when they run: nothing the stream shows waits on them.
// False when ctx ended.
func (p *Player) tickTo(ctx context.Context, t time.Time) bool {
	for {
		// Most records come before any timer is due: they go on without
		// waiting. (The timers are the run's, armed as it began or as
		// they fired, here.)
		next, ok := p.clock.NextDeadline()
		if !ok || !next.Before(t) {
			return true
		}
		// Everything fed is handed out, and the loop is done with it (its
		// checks ran at their time), before the time moves.
		if !p.settled(ctx, nil) || !p.barrier(ctx) {
			return false
		}
		p.mu.Lock()
		p.clock.SetTime(next)
		p.mu.Unlock()
		if !p.barrier(ctx) {
			return false
		}
	}
}

// barrier waits until the engine's loop has run what woke it before.
func (p *Player) barrier(ctx context.Context) bool {
	ack := make(chan struct{})
	select {
	case p.barriers <- ack:
	case <-ctx.Done():
		return false
	}
	select {
	case <-ack:
		return true
	case <-ctx.Done():
		return false
	}
}

// sayGap warns, once for each, of a gap the replay passes: what changed
// then comes after it, at the times the objects give.
func (p *Player) sayGap(g recording.Gap) {
	p.passGap(g)
	fmt.Fprintf(p.warn, "warning: the recording has a gap from %s to %s (%s): its recorder was not running; what changed meanwhile follows, at the times the objects give\n",
		gapTime(g.From), gapTime(g.To), gapLength(g))
}

// gapTime is a time a message about a gap names: to the millisecond, for
// a recorder restarted at once leaves a gap of under a second.
func gapTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.999Z07:00") }

// gapLength is how long g is, as a message says it: to the millisecond
// under a minute, to the second from then on.
func gapLength(g recording.Gap) time.Duration {
	d := g.To.Sub(g.From)
	if d < time.Minute {
		return d.Round(time.Millisecond)
	}
	return d.Round(time.Second)
}

// passGap notes g, a Gap the replay passes (played, or gone past by
// --at and --from), and tells onGap.
func (p *Player) passGap(g recording.Gap) {
	p.gaps = append(p.gaps, g)
	if p.onGap != nil {
		p.onGap(g)
	}
}

// OnGap has f told of each Gap the replay passes: a time the recording
// does not cover. Call it before Select.
func (p *Player) OnGap(f func(recording.Gap)) { p.onGap = f }

// fail records err as the end of the replay.
func (p *Player) fail(err error) {
	p.mu.Lock()
	p.err = err
	p.mu.Unlock()
}

// feed plays one line, or the records of one relist, and waits until the
// engine has handed out what they made (or ctx ends).
func (p *Player) feed(ctx context.Context, batch []*recording.Line) {
	l := batch[0]
	if p.checkpointed != nil && !l.Checkpoint && l.Heartbeat == nil {
		p.endCheckpoint(ctx)
	}
	if l.Header != nil {
		// A resumed run's part: its records go on from where the
		// recording stopped (a relist says any gap).
		return
	}
	if l.Heartbeat != nil {
		// The recorder was alive, and time went on: once what was fed is
		// out, the clock moves to it, and the timers due fire.
		if p.settled(ctx, nil) && p.barrier(ctx) {
			p.mu.Lock()
			p.advance(l.Time)
			p.mu.Unlock()
		}
		return
	}
	if l.Gap != nil {
		p.sayGap(*l.Gap)
		return
	}
	if l.Verdict {
		p.noteLogs(l)
		return
	}
	if l.Type == recording.SyncType {
		return
	}
	byFeed := map[*feed][]*recording.Line{}
	var feeds []*feed
	for _, l := range batch {
		for _, f := range p.feedsOf(l) {
			if byFeed[f] == nil {
				feeds = append(feeds, f)
			}
			byFeed[f] = append(byFeed[f], l)
		}
	}
	if len(feeds) == 0 {
		// Not watched by this run: its time passes all the same.
		p.mu.Lock()
		p.advance(l.Time)
		p.mu.Unlock()
		return
	}
	for _, f := range feeds {
		if l.Relist() {
			if !p.settled(ctx, nil) {
				return
			}
			if l.Checkpoint {
				if p.checkpointed == nil {
					p.checkpointed = map[*feed]bool{}
				}
				p.checkpointed[f] = true
			}
			p.relist(ctx, f, byFeed[f])
			// Its deltas are handed out before anything else is fed: a
			// change of a relisted key would be popped with it.
			if !p.settled(ctx, f) {
				return
			}
			continue
		}
		if !p.ready(ctx, f, l.Key()) {
			return
		}
		p.feedOne(ctx, f, l)
	}
}

// ready waits until a change of key may be fed to f: every other feed
// has handed out what it was fed (the engine merges informers in the
// order they pop, so their deltas must not overlap), and f has no delta
// of key in flight (the FIFO would fold the two) and fewer than
// maxInflight. Deltas of distinct keys of one informer keep their order
// through its watch and FIFO: a run of them is fed without waiting.
func (p *Player) ready(ctx context.Context, f *feed, key string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for ctx.Err() == nil {
		ok := f.inflight[key] == 0 && len(f.expected) < maxInflight
		for _, g := range p.feeds {
			if g != f && len(g.expected) > 0 {
				ok = false
			}
		}
		if ok {
			return true
		}
		p.waitLocked(ctx)
	}
	return false
}

// relist hands the records of one relist to f's informer: the new state
// is listed once the watch ends with 410 Gone, and the FIFO says what
// changed (Replaced, and Deleted with the final state unknown).
func (p *Player) relist(ctx context.Context, f *feed, batch []*recording.Line) {
	p.mu.Lock()
	w := p.watcherLocked(ctx, f)
	p.mu.Unlock()
	if w == nil {
		return
	}
	vanished := 0
	if len(batch) == 0 || batch[0].Checkpoint {
		// A checkpoint is the whole state: what it leaves out is gone.
		listed := make(map[string]bool, len(batch))
		for _, l := range batch {
			listed[l.Key()] = true
		}
		for _, obj := range f.state.items() {
			if key := objectKey(obj); !listed[key] {
				f.state.remove(key)
				vanished++
			}
		}
	}
	for _, l := range batch {
		if f.apply(l, p.selectsFor(f, l.Object)) {
			vanished++
		}
	}
	at := p.clock.Now()
	if len(batch) > 0 {
		at = batch[0].Time
	}
	p.mu.Lock()
	for range f.state.len() + vanished {
		f.expected = append(f.expected, pending{time: at})
	}
	f.watcher = nil
	p.mu.Unlock()
	w.send(ctx, watch.Event{Type: watch.Error, Object: &apierrors.NewResourceExpired("the recording relisted here").ErrStatus})
}

// endCheckpoint ends the checkpoint Play passed: each feed it held no
// record of, and that holds objects, relists to nothing.
func (p *Player) endCheckpoint(ctx context.Context) {
	relisted := p.checkpointed
	p.checkpointed = nil
	for _, f := range p.feeds {
		if relisted[f] || f.state.len() == 0 {
			continue
		}
		if !p.settled(ctx, nil) {
			return
		}
		p.relist(ctx, f, nil)
		if !p.settled(ctx, f) {
			return
		}
	}
}

// objectKey is obj's key, as the cache has it.
func objectKey(obj *rawobj.Object) string {
	if obj.Namespace == "" {
		return obj.Name
	}
	return obj.Namespace + "/" + obj.Name
}

// feedOne hands l, a change, to f's informer as a watch event. It waits
// for the reflector to watch first: a list made before would find l's
// object in the state, and a list made after l's state changed would
// show it twice.
func (p *Player) feedOne(ctx context.Context, f *feed, l *recording.Line) {
	p.mu.Lock()
	w := p.watcherLocked(ctx, f)
	p.mu.Unlock()
	if w == nil {
		return
	}
	key := l.Key()
	obj := l.Object
	switch l.Type {
	case recording.DeletedType:
		known := f.state.get(key)
		if known == nil {
			return // never seen: the FIFO has nothing to delete
		}
		if obj == nil {
			obj = known
		}
		f.state.remove(key)
		p.send(ctx, f, w, watch.Event{Type: watch.Deleted, Object: obj}, pending{time: l.Time, key: key})
	case recording.AddedType, recording.UpdatedType:
		if !p.selectsFor(f, obj) {
			// It leaves the selection: the server's watch says Deleted.
			f.state.remove(key)
			p.send(ctx, f, w, watch.Event{Type: watch.Deleted, Object: obj}, pending{time: l.Time, key: key})
			return
		}
		eventType := watch.Modified
		if f.state.get(key) == nil {
			eventType = watch.Added
		}
		f.state.set(key, obj)
		f.rv = obj.ResourceVersion
		p.send(ctx, f, w, watch.Event{Type: eventType, Object: obj}, pending{time: l.Time, key: key})
	}
}

// send hands e to f's watch w, expecting one delta.
func (p *Player) send(ctx context.Context, f *feed, w *watcher, e watch.Event, d pending) {
	p.mu.Lock()
	f.expected = append(f.expected, d)
	f.inflight[d.key]++
	p.mu.Unlock()
	w.send(ctx, e)
}

// watcherLocked waits for f's reflector to watch, and returns its watch;
// nil when ctx ended. p.mu is held.
func (p *Player) watcherLocked(ctx context.Context, f *feed) *watcher {
	for f.watcher == nil && ctx.Err() == nil {
		p.waitLocked(ctx)
	}
	return f.watcher
}

// watching waits until every feed's reflector has listed and watches:
// the engine's initial lists are all in, empty ones too, before the time
// moves. False when ctx ended first.
func (p *Player) watching(ctx context.Context) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, f := range p.feeds {
		if p.watcherLocked(ctx, f) == nil {
			return false
		}
	}
	return true
}

// settled waits until f (every feed, for nil) owes the engine nothing;
// false when ctx ended first.
func (p *Player) settled(ctx context.Context, only *feed) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for ctx.Err() == nil {
		owed := false
		for _, f := range p.feeds {
			if (only == nil || f == only) && len(f.expected) > 0 {
				owed = true
			}
		}
		if !owed {
			return true
		}
		p.waitLocked(ctx)
	}
	return false
}

// waitLocked waits on cond, and wakes up when ctx ends. p.mu is held.
func (p *Player) waitLocked(ctx context.Context) {
	stop := context.AfterFunc(ctx, func() {
		p.mu.Lock()
		p.cond.Broadcast()
		p.mu.Unlock()
	})
	p.cond.Wait()
	stop()
}

// advance moves the recording's time to t, never back. p.mu is held.
func (p *Player) advance(t time.Time) {
	if t.After(p.clock.Now()) {
		p.clock.SetTime(t)
	}
}

// dropped is the engine's Config.Dropped: a delta fed to f that the
// informer's Admission kept out (--events' Events whose subject is not
// shown) is owed no more. Its entry is the first of its key, or, for a
// delta of a list, the first of a list.
func (p *Player) dropped(t informer.Target, key string, listed bool) {
	f := p.byID[t.ID()]
	if f == nil {
		return
	}
	if listed {
		key = ""
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	i := slices.IndexFunc(f.expected, func(d pending) bool { return d.key == key })
	if i < 0 {
		return
	}
	f.expected = slices.Delete(f.expected, i, i+1)
	f.landed(key)
	p.cond.Broadcast()
}

// landed notes that a delta of key ("" for a list's) fed to f is owed no
// more: handed out, or kept out. Player.mu is held.
func (f *feed) landed(key string) {
	if key == "" {
		return
	}
	if f.inflight[key]--; f.inflight[key] <= 0 {
		delete(f.inflight, key)
	}
}

// Events are the Events collections the run's --events watches (with
// Selection.Events), each to be watched by its join.
func (p *Player) Events() []informer.Target { return p.events }

// NewListerWatcher is the engine's ListerWatcher factory: t's collection
// in the recording. t must be one of Select's targets.
func (p *Player) NewListerWatcher(t informer.Target) cache.ListerWatcher {
	return &listerWatcher{p: p, f: p.byID[t.ID()]}
}

// listerWatcher lists a feed's state and watches what is fed to it.
type listerWatcher struct {
	p *Player
	f *feed
}

// List answers with the feed's state as the recording has reached it.
func (lw *listerWatcher) List(context.Context, metav1.ListOptions) (runtime.Object, error) {
	if lw.f == nil {
		return &rawobj.List{}, nil
	}
	gvk := lw.f.target.Kind
	return &rawobj.List{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind + "List", ResourceVersion: lw.f.rv, Items: lw.f.state.items()}, nil
}

// Watch opens the feed's watch: what Play feeds until the next relist.
func (lw *listerWatcher) Watch(context.Context, metav1.ListOptions) (watch.Interface, error) {
	w := &watcher{ch: make(chan watch.Event), stopped: make(chan struct{})}
	if lw.f == nil {
		return w, nil
	}
	lw.p.mu.Lock()
	lw.f.watcher = w
	lw.p.cond.Broadcast()
	lw.p.mu.Unlock()
	return w, nil
}

// watcher is one watch of a feed.
type watcher struct {
	ch       chan watch.Event
	stopOnce sync.Once
	stopped  chan struct{}
}

func (w *watcher) ResultChan() <-chan watch.Event { return w.ch }

func (w *watcher) Stop() { w.stopOnce.Do(func() { close(w.stopped) }) }

// send hands e to the reflector, unless the watch was stopped or ctx
// ended.
func (w *watcher) send(ctx context.Context, e watch.Event) {
	select {
	case w.ch <- e:
	case <-w.stopped:
	case <-ctx.Done():
	}
}

// saw notes l, a record of f's collection, in f's position: a list's
// record leaves it unknown; a change past a position is seen.
func (f *feed) saw(l *recording.Line) {
	switch {
	case l.Relist():
		f.pos, f.seen = "", nil
	case f.pos == "" || l.Object == nil || l.Type == recording.SyncType:
	default:
		f.seen[l.Key()] = l.Object.ResourceVersion
	}
}

// sawHeartbeat notes the positions of a Heartbeat in the feeds of their
// collections. What was seen is kept: a Heartbeat's position may be
// behind records written before it — a run that went on from a position
// states where its own watch has got to, while the recording holds what
// the run before it recorded past that — and a recorder going on from it
// must drop those again (the consumer drops a change no newer than the
// last recorded of its key, so an older entry costs nothing).
func (p *Player) sawHeartbeat(l *recording.Line) {
	for _, pos := range l.Heartbeat.Positions {
		t, err := targetOf(pos.Collection)
		if err != nil || pos.ResourceVersion == "" {
			continue
		}
		if f := p.byID[t.ID()]; f != nil {
			if f.seen == nil {
				f.seen = map[string]string{}
			}
			f.pos = pos.ResourceVersion
		}
	}
}

// apply applies l, a record of a relist or of what --from skips, to f's
// state: a deletion, or an object no longer selected, removes its object
// (removed: f had it); anything else sets it.
func (f *feed) apply(l *recording.Line, selected bool) (removed bool) {
	key := l.Key()
	if l.Type == recording.DeletedType || !selected {
		removed = f.state.get(key) != nil
		f.state.remove(key)
		return removed
	}
	f.state.set(key, l.Object)
	f.rv = l.Object.ResourceVersion
	return false
}
