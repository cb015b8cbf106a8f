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
	"github.com/kubectl-deltas/kubectl-deltas/internal/rawobj"
)

// Stream is what a Waiter needs of the stream it waits on.
type Stream interface {
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
type Waiter struct {
	until, untilAny, failWhen []*Condition
	stream                    Stream
	errOut                    io.Writer
	// view holds, by target ID and key, the objects as last handed to the
	// Sink. verdicts holds what each condition said of each object in the
	// view: objects are immutable (a change brings a new one), so a
	// condition is evaluated once per object, not once per check; an
	// object leaving the view takes its verdicts along. Only Run's
	// goroutine touches them.
	view     map[string]map[string]*rawobj.Object
	verdicts map[verdictKey]verdict
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
	// byUID indexes the objects of the view by UID, for pathOf; nil when
	// the view changed since.
	byUID map[string]watched
	// report, when set (ReportChanges), is told the verdict of the
	// objects waited on each time it changes; reported is the last one
	// it was told ("" before the first).
	report   func(status health.Status, cause []Held)
	reported health.Status
	// reportStates, when set (ReportStates), is told every condition's
	// state after each check.
	reportStates func([]State)
	// statuses holds reportChange's judgement of each object in the view,
	// as verdicts holds the conditions': an object leaving the view takes
	// its own along.
	statuses map[*rawobj.Object]judged
}

// judged is a health status and when it may change for the same object
// (zero: never).
type judged struct {
	status    health.Status
	recheckAt time.Time
}

// verdict is what a condition said of an object; recheckAt, when not
// zero, is when it may say otherwise of the same object (a health that
// depends on time).
type verdict struct {
	ok        bool
	recheckAt time.Time
}

// verdictKey names one condition's verdict on one object.
type verdictKey struct {
	obj  *rawobj.Object
	cond *Condition
}

// NewWaiter returns the waiter of --until (every one must hold for every
// object), --until-any (one holding for one object is enough) and
// --fail-when (one holding for any object fails the run). It writes
// "… condition met" to errOut.
func NewWaiter(until, untilAny, failWhen []*Condition, errOut io.Writer) *Waiter {
	return &Waiter{
		until: until, untilAny: untilAny, failWhen: failWhen, errOut: errOut,
		view: map[string]map[string]*rawobj.Object{}, verdicts: map[verdictKey]verdict{},
		judge: true, healthJudge: health.NewJudge(), now: time.Now,
	}
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
func (w *Waiter) Sink(stream Stream, inner informer.Sink) informer.Sink {
	w.stream = stream
	return viewSink{Sink: inner, w: w}
}

// viewSink updates the waiter's view with every batch it hands on.
type viewSink struct {
	informer.Sink
	w *Waiter
}

func (s viewSink) Handle(b informer.Batch) (bool, error) {
	if b.Informer.Target().Role == informer.RoleEvents {
		// Events explain the objects waited on; no condition is about
		// them, but some change their subject's health.
		s.w.noteEvents(b.Items)
		return s.Sink.Handle(b)
	}
	id := b.Informer.Target().ID()
	s.w.byUID = nil
	objects := s.w.view[id]
	if objects == nil {
		objects = map[string]*rawobj.Object{}
		s.w.view[id] = objects
	}
	for i := range b.Items {
		it := &b.Items[i]
		if old := objects[it.Key]; old != nil && (old != it.Object || it.Type == delta.Deleted) {
			s.w.forget(old)
		}
		if it.Type == delta.Deleted {
			delete(objects, it.Key)
		} else {
			objects[it.Key] = it.Object
		}
	}
	return s.Sink.Handle(b)
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
			for _, conds := range [][]*Condition{w.until, w.untilAny, w.failWhen} {
				for _, c := range conds {
					c.noteEvent(e.Subject.UID, e.Reason, e.Last)
				}
			}
		}
	}
}

// forget drops the verdicts on obj, which left the view.
func (w *Waiter) forget(obj *rawobj.Object) {
	delete(w.statuses, obj)
	for _, conds := range [][]*Condition{w.until, w.untilAny, w.failWhen} {
		for _, c := range conds {
			delete(w.verdicts, verdictKey{obj, c})
		}
	}
}

// holds evaluates c on o, once per object in the view — again once a
// verdict's recheck time has come.
func (w *Waiter) holds(c *Condition, o watched) (bool, error) {
	key := verdictKey{o.obj, c}
	if v, ok := w.verdicts[key]; ok && o.obj != nil && (v.recheckAt.IsZero() || w.now().Before(v.recheckAt)) {
		return v.ok, nil
	}
	ok, recheckAt, err := c.Judge(o.obj, o.vars, w.now())
	if err != nil {
		return false, err
	}
	if o.obj != nil {
		w.verdicts[key] = verdict{ok: ok, recheckAt: recheckAt}
	}
	return ok, nil
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

// watched is one object a condition is evaluated on.
type watched struct {
	// name is how messages name it: "deployment.apps/web".
	name string
	// context is the kubeconfig context of its cluster ("" for one).
	context string
	// target is what its informer watches.
	target informer.Target
	// vars is the object as the Store has it (Object nil if it does not
	// exist), for the conditions; obj is that object, nil if none.
	vars celexpr.Vars
	obj  *rawobj.Object
}

// objects returns what the conditions are evaluated on: with rootsOnly,
// not what --tree found the roots to own.
func (w *Waiter) objects(rootsOnly bool) []watched {
	var out []watched
	for _, t := range w.stream.Targets() {
		if rootsOnly && !t.Role.IsRoot() {
			continue
		}
		if t.Name != "" {
			key := t.Name
			if t.Namespace != "" {
				key = t.Namespace + "/" + t.Name
			}
			o := watched{name: objectName(t, t.Name), context: t.Context, target: t, vars: targetVars(t, t.Namespace, t.Name)}
			if obj, ok := w.view[t.ID()][key]; ok {
				o.vars.Object, o.obj = obj.JSON, obj
			}
			out = append(out, o)
			continue
		}
		for _, obj := range w.view[t.ID()] {
			vars := targetVars(t, obj.Namespace, obj.Name)
			vars.Object = obj.JSON
			out = append(out, watched{name: objectName(t, obj.Name), context: t.Context, target: t, vars: vars, obj: obj})
		}
	}
	return out
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
// holds for any object ends the run with a *FailedError; else --until-any holding for one object, or
// every --until holding for every object (at least one, unless every
// --until is delete), ends it with no error.
func (w *Waiter) Check() (bool, error) {
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

// states evaluates each condition for ReportStates; the verdicts come
// from the cache the checks fill.
func (w *Waiter) states() []State {
	roots, all := w.objects(true), w.objects(false)
	out := make([]State, 0, len(w.until)+len(w.untilAny)+len(w.failWhen))
	anyHolds := func(c *Condition, objects []watched) bool {
		for _, o := range objects {
			if ok, err := w.holds(c, o); err == nil && ok {
				return true
			}
		}
		return false
	}
	for _, c := range w.until {
		holds := len(roots) > 0
		for _, o := range roots {
			if ok, err := w.holds(c, o); err != nil || !ok {
				holds = false
				break
			}
		}
		out = append(out, State{Text: "--until=" + c.String(), Holds: holds || len(roots) == 0 && w.allDelete()})
	}
	for _, c := range w.untilAny {
		out = append(out, State{Text: "--until-any=" + c.String(), Holds: anyHolds(c, roots)})
	}
	for _, c := range w.failWhen {
		out = append(out, State{Text: "--fail-when=" + c.String(), Holds: anyHolds(c, all)})
	}
	return out
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
// changed since it was last told.
func (w *Waiter) reportChange() {
	if !w.judge {
		return // no status to judge
	}
	var status health.Status
	var cause []watched
	now := w.now()
	if w.statuses == nil {
		w.statuses = map[*rawobj.Object]judged{}
	}
	for _, o := range w.objects(false) {
		j, ok := w.statuses[o.obj]
		if !ok || o.obj == nil || !j.recheckAt.IsZero() && !now.Before(j.recheckAt) {
			h := w.healthJudge.At(o.obj, now)
			j = judged{status: h.Status, recheckAt: h.RecheckAt}
			if o.obj != nil {
				w.statuses[o.obj] = j
			}
		}
		s := j.status
		switch {
		case len(cause) == 0 || worse(s) > worse(status):
			status, cause = s, append(cause[:0], o)
		case s == status && len(cause) < maxReported:
			cause = append(cause, o)
		}
	}
	if len(cause) == 0 || status == w.reported {
		return
	}
	w.reported = status
	held := make([]Held, len(cause))
	for i, o := range cause {
		held[i] = w.held(o)
	}
	w.report(status, held)
}

// check is Check without the reporting of changes.
func (w *Waiter) check() (bool, error) {
	if stop, err := w.failed(); stop {
		return true, err
	}
	objects := w.objects(true)
	for _, c := range w.untilAny {
		for _, o := range objects {
			ok, err := w.holds(c, o)
			if err != nil {
				return true, err
			}
			if ok {
				fmt.Fprintf(w.errOut, "%s condition met\n", o.name)
				w.met = []watched{o}
				return true, nil
			}
		}
	}
	if len(w.until) == 0 {
		return false, nil
	}
	if len(objects) == 0 && !w.allDelete() {
		return false, nil
	}
	if held, err := w.holdingUp(objects); err != nil || len(held) > 0 {
		w.holdingSince = time.Time{}
		return err != nil, err
	}
	if !w.stable() {
		return false, nil
	}
	for _, o := range objects {
		fmt.Fprintf(w.errOut, "%s condition met\n", o.name)
	}
	w.met = objects
	return true, nil
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

// holdingUp returns the objects for which some --until does not hold:
// of roots (the roots' objects), or, for a status condition, of every
// object shown — under --tree a health is the verdict on a root and all it
// owns.
func (w *Waiter) holdingUp(roots []watched) ([]watched, error) {
	var all []watched
	var held []watched
	seen := map[string]bool{}
	for _, c := range w.until {
		objects := roots
		if c.IsStatus() {
			if all == nil {
				all = w.objects(false)
			}
			objects = all
		}
		for _, o := range objects {
			ok, err := w.holds(c, o)
			if err != nil {
				return nil, err
			}
			if !ok && !seen[o.name] {
				seen[o.name] = true
				held = append(held, o)
			}
		}
	}
	return held, nil
}

// failed evaluates --fail-when on every object shown, what --tree found
// included: stop with a *FailedError when one holds.
func (w *Waiter) failed() (bool, error) {
	if len(w.failWhen) == 0 {
		return false, nil
	}
	objects := w.objects(false)
	for _, c := range w.failWhen {
		for _, o := range objects {
			if ok, err := w.holds(c, o); err != nil || ok {
				if err != nil {
					return true, err
				}
				return true, &FailedError{Condition: c, Held: w.held(o), judge: w.healthJudge}
			}
		}
	}
	return false, nil
}

// held describes o for messages, with its health when there is status to
// judge.
func (w *Waiter) held(o watched) Held {
	h := Held{Name: o.name, Context: o.context, APIVersion: o.target.Kind.GroupVersion().String(), Kind: o.target.Kind.Kind, ObjectName: o.vars.Name, obj: o.obj}
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
func (w *Waiter) pathOf(obj *rawobj.Object) []Owner {
	if w.byUID == nil {
		w.byUID = map[string]watched{}
		for _, o := range w.objects(false) {
			if o.obj != nil {
				w.byUID[o.obj.UID] = o
			}
		}
	}
	byUID := w.byUID
	var path []Owner
	for cur := obj; len(path) < 16; {
		r, err := cur.Controller()
		if err != nil || r == nil {
			break
		}
		o, ok := byUID[string(r.UID)]
		if !ok {
			break
		}
		path = append([]Owner{{APIVersion: r.APIVersion, Kind: r.Kind, Name: r.Name, UID: string(r.UID)}}, path...)
		if o.target.Role.IsRoot() {
			break
		}
		cur = o.obj
	}
	return path
}

// Owner is a link of a Held object's owner path.
type Owner struct{ APIVersion, Kind, Name, UID string }

// Held is an object a condition held, or did not hold, for: what messages
// say of it.
type Held struct {
	// Name is "deployment.apps/web" (with its context's name, for
	// several clusters).
	Name string
	// Context, Namespace and UID locate it, for looking up what explains
	// it (its Events); UID is "" for an object that does not exist.
	Context, Namespace, UID string
	// Health is its health ("Failed (PodUnschedulable): Pod could not be
	// scheduled"), control characters escaped; "" when not judged.
	Health string
	// Explained is more that was found about it (its latest Warning
	// event), a line, added by whoever could look it up; Warning is that
	// event.
	Explained string
	Warning   *events.Warning

	// For the Verdict record: its apiVersion, kind and name; its health
	// (nil when not judged); its controllers from the waited-on object
	// down (Path).
	APIVersion, Kind, ObjectName string
	Verdict                      *health.Health
	Path                         []Owner
	// obj is the object, for looking up what blocks it (blockers).
	obj *rawobj.Object
}

// lines appends what is said of h to b: its name and health, and its
// explanation on a line of its own, indented by indent.
func (h Held) lines(b *strings.Builder, indent string) {
	b.WriteString(h.Name)
	if h.Health != "" {
		b.WriteString(": " + h.Health)
	}
	if h.Explained != "" {
		b.WriteString("\n" + indent + h.Explained)
	}
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

// FailedError is a --fail-when that held.
type FailedError struct {
	Condition *Condition
	// Held is the object it held for; Blockers what blocks it, when
	// looked up (Explain).
	Held     Held
	Blockers []Held
	// judge judges the blockers.
	judge *health.Judge
}

// All is the object the condition held for, then what blocks it.
func (e *FailedError) All() []Held { return append([]Held{e.Held}, e.Blockers...) }

func (e *FailedError) Error() string {
	var b strings.Builder
	b.WriteString(e.Held.Name + " matched --fail-when=" + e.Condition.String())
	if e.Held.Health != "" {
		b.WriteString(": " + e.Held.Health)
	}
	if e.Held.Explained != "" {
		b.WriteString("\n  " + e.Held.Explained)
	}
	for _, h := range e.Blockers {
		b.WriteString("\n  ")
		h.lines(&b, "    ")
	}
	return b.String()
}

// TimeoutError is --timeout running out while waiting: kubectl wait's
// message, and the objects that held the conditions up.
type TimeoutError struct {
	// Waited names what was waited on: "deployments/web".
	Waited string
	Held   []Held
	// SourceEnded: not a --timeout, the end of a replayed recording.
	SourceEnded bool
	// judge judges the blockers (Explain).
	judge *health.Judge
}

func (e *TimeoutError) Error() string {
	var b strings.Builder
	if e.SourceEnded {
		b.WriteString("the recording ended before the condition was met on " + e.Waited)
	} else {
		b.WriteString("timed out waiting for the condition on " + e.Waited)
	}
	for _, group := range sameExplanation(e.Held) {
		b.WriteString("\n  ")
		h := group[0]
		for _, o := range group[1:] {
			h.Name += ", " + o.Name
		}
		h.lines(&b, "    ")
	}
	return b.String()
}

// sameExplanation groups held, in order, so that objects with the same
// health and the same explanation (a Warning, as the scheduler's
// FailedScheduling for every Pod of a rollout) are said once, with all
// their names.
func sameExplanation(held []Held) [][]Held {
	var groups [][]Held
	for _, h := range held {
		i := -1
		if h.Explained != "" {
			i = slices.IndexFunc(groups, func(g []Held) bool { return g[0].Health == h.Health && g[0].Explained == h.Explained })
		}
		if i < 0 {
			groups = append(groups, []Held{h})
			continue
		}
		groups[i] = append(groups[i], h)
	}
	return groups
}

// TimedOut is the error of a --timeout that elapsed while waiting, in
// kubectl wait's words, naming what did not meet the conditions: the root
// targets whose objects held them up (with several clusters, not those of
// a cluster where they were met), or every root when none is to blame
// (an --until-any that nothing met).
func (w *Waiter) TimedOut() error {
	held, err := w.holdingUp(w.objects(true))
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
	e := &TimeoutError{Waited: w.waited(blamed), judge: w.healthJudge}
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
