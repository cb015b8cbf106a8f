package condition

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/kubectl-deltas/kubectl-deltas/internal/celexpr"
	"github.com/kubectl-deltas/kubectl-deltas/internal/delta"
	"github.com/kubectl-deltas/kubectl-deltas/internal/events"
	"github.com/kubectl-deltas/kubectl-deltas/internal/health"
	"github.com/kubectl-deltas/kubectl-deltas/internal/informer"
	"github.com/kubectl-deltas/kubectl-deltas/internal/printer"
	"github.com/kubectl-deltas/kubectl-deltas/internal/rawobj"
)

// Engine is what a Waiter needs of the stream it waits on.
type Engine interface {
	// Targets are the targets the stream runs now: the roots
	// (informer.RoleRoot), which the user named or selected, and those a
	// view of the stream added to find what they own (--tree's).
	Targets() []informer.Target
}

// Waiter evaluates --until, --until-any and --fail-when whenever the engine
// asks, on the objects the printed stream has shown: the objects named
// (present or not), or every object of an unnamed target. Its view is kept
// from the batches its Sink sees, not read from the Stores, which may be a
// batch ahead of the output: a condition never holds on a change that was
// not printed.
//
// A check costs what changed since the last one, not what is watched
// (view.go): each condition is judged once per object it applies to, again
// only when the object changes or when its time-dependent verdict falls
// due, and its tally counts the objects it holds for.
type Waiter struct {
	until, untilAny, failWhen []*Condition
	stream                    Engine
	errOut                    io.Writer
	// logLines is how many lines of a failing container's log a failure
	// or a timeout explains with (SetLogLines; 0: none).
	logLines int

	// conds are until, untilAny and failWhen in that order; tallies[i] is
	// what conds[i] says of the objects in scope.
	conds   []*Condition
	tallies []*tally
	// view holds, by target ID, the objects as last handed to the Sink;
	// order is the views of the stream's targets in its order, targetIDs
	// their IDs, as the last check saw them. dirty are the entries to
	// judge at the next check, due those to re-judge at a time (dueSwept:
	// the heap's size when it was last swept of stale times). byUID
	// indexes the objects in scope by UID (entry.sameUID chains the
	// others of one UID), for pathOf and Events. healths is
	// ReportChanges' tally. Only the engine's goroutine (the Sink's and
	// Check's) touches them.
	view      map[string]*targetView
	order     []*targetView
	targetIDs []string
	dirty     []*entry
	due       dueHeap
	dueSwept  int
	byUID     map[string]*entry
	healths   healthTally

	// judge is false when objects carry no status (--metadata-only): the
	// messages then name objects without their health, which healthJudge
	// judges.
	judge       bool
	healthJudge *health.Judge
	// now reads the clock, for verdicts that change with time.
	now func() time.Time
	// stableFor is how long --until must hold without a break
	// (--stable-for); holdingSince is when it last began to hold, zero
	// while it does not.
	stableFor    time.Duration
	holdingSince time.Time
	// met are the objects that met the conditions, once they have.
	met []watched
	// report, when set (ReportChanges), is told the verdict of the
	// objects waited on each time it changes; reported is the last one
	// it was told ("" before the first).
	report   func(status health.Status, cause []Held)
	reported health.Status
	// reportStates, when set (ReportStates), is told every condition's
	// state after each check.
	reportStates func([]State)
}

// NewWaiter returns the waiter of --until (every one must hold for every
// object), --until-any (one holding for one object is enough) and
// --fail-when (one holding for any object fails the run). It writes
// "… condition met" to errOut.
func NewWaiter(until, untilAny, failWhen []*Condition, errOut io.Writer) *Waiter {
	w := &Waiter{
		until: until, untilAny: untilAny, failWhen: failWhen, errOut: errOut,
		view: map[string]*targetView{}, byUID: map[string]*entry{},
		healths: healthTally{count: map[health.Status]int{}, with: map[health.Status]map[*entry]struct{}{}},
		judge:   true, healthJudge: health.NewJudge(), now: time.Now, logLines: DefaultLogLines,
	}
	for _, c := range until {
		w.conds, w.tallies = append(w.conds, c), append(w.tallies, newTally(len(w.conds), c, true, false))
	}
	for _, c := range untilAny {
		w.conds, w.tallies = append(w.conds, c), append(w.tallies, newTally(len(w.conds), c, true, true))
	}
	for _, c := range failWhen {
		w.conds, w.tallies = append(w.conds, c), append(w.tallies, newTally(len(w.conds), c, false, true))
	}
	return w
}

// SetFailAfter sets how long a transient failure lasts before the
// waiter's judges count it as Failed (health.Judge.SetFailAfter).
func (w *Waiter) SetFailAfter(d time.Duration) {
	w.healthJudge.SetFailAfter(d)
	for _, conds := range [][]*Condition{w.until, w.untilAny, w.failWhen} {
		for _, c := range conds {
			c.setFailAfter(d)
		}
	}
}

// Now is the waiter's clock: the stream's time.
func (w *Waiter) Now() time.Time { return w.now() }

// SetNow sets the clock the waiter reads (time.Now by default).
func (w *Waiter) SetNow(now func() time.Time) { w.now = now }

// SetLogLines says how many lines of a failing container's log explain
// a failure or a timeout (--logs; 0: none).
func (w *Waiter) SetLogLines(n int) { w.logLines = n }

// logFetch is how the explanation of a failure reads logs.
func (w *Waiter) logFetch() logFetch { return logFetch{lines: w.logLines, warn: w.errOut} }

// SetMetadataOnly says that the objects carry no status to judge: errors
// name what held a condition up without its health.
func (w *Waiter) SetMetadataOnly() { w.judge = false }

// CheckEvery is how often the engine should call Check even when no delta
// comes (informer.RunOptions.CheckEvery), 0 for never: a condition on
// health may change with time alone, and --stable-for ends with time.
func (w *Waiter) CheckEvery() time.Duration {
	switch {
	case w.stableFor > 0:
		return min(time.Second, w.stableFor/2)
	case w.OnHealth():
		return time.Second
	}
	return 0
}

// OnHealth reports whether a condition is on health (status=…): it needs
// objects with their status, and its verdict may change with time alone,
// so the engine should call Check now and then even when no delta comes
// (informer.RunOptions.CheckEvery).
func (w *Waiter) OnHealth() bool { return onHealth(w.until, w.untilAny, w.failWhen) }

// onHealth reports whether one of the conditions is on health (status=…).
func onHealth(conditions ...[]*Condition) bool {
	for _, conds := range conditions {
		for _, c := range conds {
			if c.IsStatus() {
				return true
			}
		}
	}
	return false
}

// Sink returns inner with the waiter's view kept up to date from every
// batch inner is handed: the conditions are evaluated on what the stream
// has shown. stream is what the waiter asks which objects it waits on.
func (w *Waiter) Sink(stream Engine, inner informer.Sink) informer.Sink {
	w.stream = stream
	return viewSink{Sink: inner, w: w}
}

// noteEvents tells the judges of the conditions on health of the Events
// items (health.Judge.NoteEvent).
func (w *Waiter) noteEvents(items []informer.Item) {
	if !w.OnHealth() && w.report == nil {
		return
	}
	for i := range items {
		if it := &items[i]; it.Object != nil && it.Type != delta.Deleted {
			e, err := events.Summarize(it.Object.JSON)
			if err != nil {
				continue // not an Event this can read: it explains nothing
			}
			w.healthJudge.NoteEvent(e.Subject.UID, e.Reason, e.Last)
			for _, c := range w.conds {
				c.noteEvent(e.Subject.UID, e.Reason, e.Last)
			}
			if health.EventJudged(e.Reason) {
				for subject := w.byUID[e.Subject.UID]; subject != nil; subject = subject.sameUID {
					w.rejudgeHealth(subject)
				}
			}
		}
	}
}

// Active reports whether any condition was given.
func (w *Waiter) Active() bool {
	return len(w.until)+len(w.untilAny)+len(w.failWhen) > 0
}

// Waits reports whether the stream waits for something to hold (--until,
// --until-any): its end before that (a --timeout, a recording's end) is
// a timeout. --fail-when alone waits for nothing: the stream's end is a
// normal end, nothing failed.
func (w *Waiter) Waits() bool {
	return len(w.until)+len(w.untilAny) > 0
}

// watched is one object a condition is evaluated on, as it was when the
// waiter described it.
type watched struct {
	// name is how messages name it: "deployment.apps/web".
	name string
	// context is the kubeconfig context of its cluster ("" for one).
	context string
	// target is what its informer watches (its view's, which does not
	// change).
	target *informer.Target
	// objectName is its own name; obj the object, nil if it does not
	// exist.
	objectName string
	obj        *rawobj.Object
}

// targetVars are the CEL variables of an object of t.
func targetVars(t informer.Target, namespace, name string) celexpr.Vars {
	return celexpr.Vars{
		Kind: t.Kind.Kind, APIVersion: t.Kind.GroupVersion().String(), Resource: t.Resource.Resource,
		Namespace: namespace, Name: name,
	}
}

// objectName is "deployment.apps/web", as -o name prints it; with several
// clusters, `context "prod": deployment.apps/web`.
func objectName(t informer.Target, name string) string {
	kind := strings.ToLower(t.Kind.Kind)
	if t.Kind.Group != "" {
		kind += "." + t.Kind.Group
	}
	if t.Context != "" {
		return fmt.Sprintf("context %q: %s/%s", t.Context, kind, name)
	}
	return kind + "/" + name
}

// Check is the engine's Check (informer.RunOptions): a --fail-when that
// holds for any object ends the run with a *FailedError; else --until-any
// holding for one object, or every --until holding for every object (at
// least one, unless every --until is delete), ends it with no error. It
// judges what changed since the last check (see Waiter).
func (w *Waiter) Check() (bool, error) {
	w.refresh(w.now())
	stop, err := w.check()
	if !stop && w.report != nil {
		w.reportChange()
	}
	if w.reportStates != nil {
		w.reportStates(w.states())
	}
	return stop, err
}

// State is a condition as given ("--until=status=Current") and whether it
// holds now: an --until for every object waited on, an --until-any for
// one, a --fail-when for one of every object shown.
type State struct {
	Text  string
	Holds bool
}

// ReportStates has Check tell report every condition's State after each
// check (--live's header).
func (w *Waiter) ReportStates(report func([]State)) { w.reportStates = report }

// states reads each condition's State for ReportStates from its tally.
// An --until holds when it holds for every root object, and there is one
// (or every --until is delete).
func (w *Waiter) states() []State {
	out := make([]State, 0, len(w.conds))
	roots := w.roots()
	for i, c := range w.conds {
		t := w.tallies[i]
		var st State
		switch {
		case i < len(w.until):
			st = State{Text: "--until=" + c.String(), Holds: roots > 0 && t.notHoldingIn(true) == 0 || roots == 0 && w.allDelete()}
		case i < len(w.until)+len(w.untilAny):
			st = State{Text: "--until-any=" + c.String(), Holds: t.anyHolding(true) != nil}
		default:
			st = State{Text: "--fail-when=" + c.String(), Holds: t.anyHolding(false) != nil}
		}
		out = append(out, st)
	}
	return out
}

// roots counts the root objects waited on: those of the root targets, and
// each named one, present or not.
func (w *Waiter) roots() int {
	n := 0
	for _, tv := range w.order {
		if tv.scope == rootScope {
			n += len(tv.entries)
		}
	}
	return n
}

// ReportChanges has Check call report each time the verdict of the
// objects waited on changes, and once at first: their worst health (every
// object the stream shows, --tree's members included: Failed, then
// InProgress, Terminating, Unknown, NotFound, Current), and the objects
// that have it — at most maxReported, without looking anything up. Not
// when Check ends the run: its outcome is said then.
func (w *Waiter) ReportChanges(report func(status health.Status, cause []Held)) {
	w.report = report
}

// maxReported bounds the objects a reported change names.
const maxReported = 10

// worse ranks the health statuses for ReportChanges: higher is worse.
func worse(s health.Status) int {
	switch s {
	case health.Failed:
		return 5
	case health.InProgress:
		return 4
	case health.Terminating:
		return 3
	case health.Unknown:
		return 2
	case health.NotFound:
		return 1
	}
	return 0
}

// reportChange tells report the verdict of the objects waited on, if it
// changed since it was last told: the worst status the health tally
// counts, and some of the objects that have it, by name.
func (w *Waiter) reportChange() {
	if !w.judge {
		return // no status to judge
	}
	status, found := w.healths.worst()
	if !found || status == w.reported {
		return
	}
	w.reported = status
	cause := make([]watched, 0, maxReported)
	for e := range w.healths.with[status] {
		if len(cause) == maxReported {
			break
		}
		cause = append(cause, e.watched())
	}
	slices.SortFunc(cause, func(a, b watched) int { return strings.Compare(a.name, b.name) })
	held := make([]Held, len(cause))
	for i, o := range cause {
		held[i] = w.held(o)
	}
	w.report(status, held)
}

// check is Check without the reporting of changes, on tallies refreshed.
func (w *Waiter) check() (bool, error) {
	if stop, err := w.failed(); stop {
		return true, err
	}
	for i := range w.untilAny {
		t := w.tallies[len(w.until)+i]
		if e := t.anyHolding(true); e != nil {
			o := e.watched()
			fmt.Fprintf(w.errOut, "%s condition met\n", o.name)
			w.met = []watched{o}
			return true, nil
		}
		if err := t.anyErr(true); err != nil {
			return true, err
		}
	}
	if len(w.until) == 0 {
		return false, nil
	}
	if w.roots() == 0 && !w.allDelete() {
		return false, nil
	}
	held := false
	for i := range w.until {
		t := w.tallies[i]
		if err := t.anyErr(false); err != nil {
			w.holdingSince = time.Time{}
			return true, err
		}
		held = held || t.notHoldingIn(false) > 0
	}
	if held {
		w.holdingSince = time.Time{}
		return false, nil
	}
	if !w.stable() {
		return false, nil
	}
	objects := w.rootObjects()
	var lines strings.Builder // one write for all, as kubectl wait's lines
	for _, o := range objects {
		lines.WriteString(o.name + " condition met\n")
	}
	_, _ = io.WriteString(w.errOut, lines.String())
	w.met = objects
	return true, nil
}

// rootObjects are the root objects waited on, in the stream's order of
// targets, by name within each.
func (w *Waiter) rootObjects() []watched {
	out := make([]watched, 0, w.roots())
	for _, tv := range w.order {
		if tv.scope != rootScope {
			continue
		}
		first := len(out)
		for _, e := range tv.entries {
			out = append(out, e.watched())
		}
		slices.SortFunc(out[first:], func(a, b watched) int { return strings.Compare(a.name, b.name) })
	}
	return out
}

// Met returns the objects that met the conditions, described, and true,
// once Check has found them met; false otherwise.
func (w *Waiter) Met() ([]Held, bool) {
	if w.met == nil {
		return nil, false
	}
	out := make([]Held, len(w.met))
	for i, o := range w.met {
		out[i] = w.held(o)
	}
	return out, true
}

// Waited says the --until and --until-any conditions as given, for the
// Verdict record.
func (w *Waiter) Waited() string {
	parts := make([]string, 0, len(w.until)+len(w.untilAny))
	for _, c := range w.until {
		parts = append(parts, "--until="+c.String())
	}
	for _, c := range w.untilAny {
		parts = append(parts, "--until-any="+c.String())
	}
	return strings.Join(parts, " ")
}

// stable reports whether --until, which holds now, has held for
// --stable-for without a break (always without --stable-for).
func (w *Waiter) stable() bool {
	if w.stableFor <= 0 {
		return true
	}
	now := w.now()
	if w.holdingSince.IsZero() {
		w.holdingSince = now
	}
	return now.Sub(w.holdingSince) >= w.stableFor
}

// holdingUp returns the objects for which some --until does not hold: of
// the roots, or, for a status condition, of every object shown — under
// --tree a health is the verdict on a root and all it owns. It reads the
// verdicts of the last check: a full pass, for the message of a timeout.
func (w *Waiter) holdingUp() ([]watched, error) {
	var held []watched
	seen := map[string]bool{}
	for _, tv := range w.order {
		for _, e := range tv.entries {
			for i := range w.until {
				if !w.tallies[i].applies(tv.scope) {
					continue
				}
				v := e.verdicts[i]
				if v.err != nil {
					return nil, v.err
				}
				if o := e.watched(); !v.ok && !seen[o.name] {
					seen[o.name] = true
					held = append(held, o)
					break
				}
			}
		}
	}
	return held, nil
}

// failed reads --fail-when's tallies, which count every object shown,
// what --tree found included: stop with a *FailedError when one holds.
func (w *Waiter) failed() (bool, error) {
	for i, c := range w.failWhen {
		t := w.tallies[len(w.until)+len(w.untilAny)+i]
		if e := t.anyHolding(false); e != nil {
			return true, &FailedError{Condition: c, Held: w.held(e.watched()), judge: w.healthJudge, logs: w.logFetch()}
		}
		if err := t.anyErr(false); err != nil {
			return true, err
		}
	}
	return false, nil
}

// held describes o for messages, with its health when there is status to
// judge.
func (w *Waiter) held(o watched) Held {
	h := Held{Name: o.name, Context: o.context, APIVersion: o.target.Kind.GroupVersion().String(), Kind: o.target.Kind.Kind, ObjectName: o.objectName, obj: o.obj}
	if o.obj != nil {
		h.Namespace, h.UID = o.obj.Namespace, o.obj.UID
		h.Path = w.pathOf(o.obj)
	}
	if !w.judge {
		return h
	}
	v := w.healthJudge.At(o.obj, w.now())
	h.Verdict, h.Health = &v, healthText(v)
	return h
}

// pathOf is the chain of controllers of obj, from the first that the
// waiter sees as a root object down to obj's own, through the objects the
// stream has shown (--tree's members); nil for a root.
func (w *Waiter) pathOf(obj *rawobj.Object) []printer.Owner {
	var path []printer.Owner
	for cur := obj; len(path) < 16; {
		r, err := cur.Controller()
		if err != nil || r == nil {
			break
		}
		e, ok := w.byUID[string(r.UID)]
		if !ok {
			break
		}
		path = append([]printer.Owner{{APIVersion: r.APIVersion, Kind: r.Kind, Name: r.Name, UID: string(r.UID)}}, path...)
		if e.tv.scope == rootScope {
			break
		}
		cur = e.obj
	}
	return path
}

// allDelete reports whether every --until is delete: then no object at all
// is what is waited for.
func (w *Waiter) allDelete() bool {
	for _, c := range w.until {
		if !c.IsDelete() {
			return false
		}
	}
	return true
}

// TimedOut is the error of a --timeout that elapsed while waiting, in
// kubectl wait's words, naming what did not meet the conditions: the root
// targets whose objects held them up (with several clusters, not those of
// a cluster where they were met), or every root when none is to blame
// (an --until-any that nothing met).
func (w *Waiter) TimedOut() error {
	w.refresh(w.now())
	held, err := w.holdingUp()
	if err != nil {
		e := &TimeoutError{Waited: w.waited(nil)}
		return fmt.Errorf("%s; %w", e.Error(), err)
	}
	if len(held) == 0 && !w.holdingSince.IsZero() {
		// Met, not yet for long enough.
		e := &TimeoutError{Waited: w.waited(nil)}
		return fmt.Errorf("%s: it has held for %s of the %s --stable-for asks", e.Error(), w.now().Sub(w.holdingSince).Round(time.Millisecond), w.stableFor)
	}
	blamed := map[string]bool{}
	for _, o := range held {
		if o.target.Role.IsRoot() {
			blamed[o.target.ID()] = true
		} else {
			// A member of a tree holds up the roots of its cluster.
			blamed[contextKey(o.context)] = true
		}
	}
	e := &TimeoutError{Waited: w.waited(blamed), judge: w.healthJudge, logs: w.logFetch()}
	for _, o := range held {
		e.Held = append(e.Held, w.held(o))
	}
	slices.SortFunc(e.Held, func(a, b Held) int { return strings.Compare(a.Name, b.Name) })
	return e
}

// contextKey is the key of TimedOut's blame on every root of a cluster.
func contextKey(context string) string { return "context|" + context }

// waited names the root targets waited on, "configmaps/web in context
// "prod"": those blamed (by Target ID or cluster), or all when none is.
func (w *Waiter) waited(blamed map[string]bool) string {
	var pending []string
	for _, t := range w.stream.Targets() {
		if !t.Role.IsRoot() || len(blamed) > 0 && !blamed[t.ID()] && !blamed[contextKey(t.Context)] {
			continue
		}
		what := t.Resource.GroupResource().String()
		if t.Name != "" {
			what = t.Resource.Resource + "/" + t.Name
		}
		if t.Context != "" {
			what += fmt.Sprintf(" in context %q", t.Context)
		}
		pending = append(pending, what)
	}
	return strings.Join(pending, ", ")
}
