package condition

import (
	"time"

	"github.com/kubectl-deltas/kubectl-deltas/internal/celexpr"
	"github.com/kubectl-deltas/kubectl-deltas/internal/delta"
	"github.com/kubectl-deltas/kubectl-deltas/internal/health"
	"github.com/kubectl-deltas/kubectl-deltas/internal/informer"
	"github.com/kubectl-deltas/kubectl-deltas/internal/rawobj"
)

// The view is what the waiter judges: by target, the objects as last
// handed to its Sink. It is kept so that a check costs what changed, not
// what is watched:
//
//   - A batch marks the entries it changes dirty; a check judges the
//     dirty entries alone, and only for the conditions that apply to them.
//   - A verdict that may change with time alone (a health's RecheckAt)
//     puts its entry on the due heap; a check re-judges it once its time
//     has come on the stream's clock, and nothing before.
//   - Every judged verdict is counted in its condition's tally (tally.go)
//     while its object is in scope, so that whether a condition holds is
//     read from counts.
//
// An object is in scope while its target is one of the stream's targets
// (Stream.Targets); a check compares those with the ones it saw last, and
// moves the objects of a target that came or went in or out of scope.
//
// Only the goroutine that runs the Sink and calls Check (the engine's)
// touches the view.

// scope is what an object of the view is to the conditions.
type scope uint8

const (
	// outOfScope: its target is not among the stream's targets now.
	outOfScope scope = iota
	// rootScope: an object of a root, named or selected by the user.
	rootScope
	// memberScope: an object a view of the stream added (--tree's).
	memberScope
)

// targetView is the view of one target's objects.
type targetView struct {
	target informer.Target
	scope  scope
	// kind is how messages name the kind: "deployment.apps/".
	kind string
	// entries holds the target's objects by key ("ns/name"). A named
	// target (Target.Name) has exactly one, present or not: its object is
	// waited on whether it exists or not.
	entries map[string]*entry
}

// entry is one object the conditions are judged on.
type entry struct {
	tv  *targetView
	key string
	// obj is the object as last handed to the Sink; nil for a named
	// object that does not exist.
	obj *rawobj.Object
	// gen counts the objects the entry held: a due time pushed for an
	// earlier one is stale.
	gen uint64
	// verdicts[i] is what Waiter.conds[i] said of obj (in few when
	// there are that few conditions: one allocation less an object);
	// health is what ReportChanges' judge said.
	verdicts []verdict
	few      [2]verdict
	health   judged
	// indexedAs is the UID it is filed under in Waiter.byUID, "" when
	// it is not; sameUID the next entry filed under the same one (the
	// same object named by two targets).
	indexedAs string
	sameUID   *entry
	// dirty: the entry is on Waiter.dirty, to be judged at the next
	// check. removed: it left the view.
	dirty, removed bool
}

// verdict is what a condition said of an object. recheckAt, when not
// zero, is when it may say otherwise of the same object (a health that
// depends on time); counted says it is in the condition's tally.
type verdict struct {
	judged, ok, counted bool
	err                 error
	recheckAt           time.Time
}

// judged is a health status and when it may change for the same object
// (zero: never).
type judged struct {
	judged, counted bool
	status          health.Status
	recheckAt       time.Time
}

// name is how messages name the entry's object: "deployment.apps/web"
// (objectName).
func (e *entry) name() string {
	if e.tv.target.Context != "" {
		return objectName(e.tv.target, e.objectName())
	}
	return e.tv.kind + e.objectName()
}

// objectName is the object's own name.
func (e *entry) objectName() string {
	if e.obj != nil {
		return e.obj.Name
	}
	return e.tv.target.Name
}

// vars are the CEL variables of the entry's object.
func (e *entry) vars() celexpr.Vars {
	t := e.tv.target
	if e.obj == nil {
		return targetVars(t, t.Namespace, t.Name)
	}
	v := targetVars(t, e.obj.Namespace, e.obj.Name)
	v.Object = e.obj.JSON
	return v
}

// watched is the entry as it is now, for messages.
func (e *entry) watched() watched {
	return watched{name: e.name(), context: e.tv.target.Context, target: &e.tv.target, objectName: e.objectName(), obj: e.obj}
}

// viewSink updates the waiter's view with every batch it hands on.
type viewSink struct {
	informer.Sink
	w *Waiter
}

func (s viewSink) Handle(b informer.Batch) (bool, error) {
	t := b.Informer.Target()
	if t.Role == informer.RoleEvents {
		// Events explain the objects waited on; no condition is about
		// them, but some change their subject's health.
		s.w.noteEvents(b.Items)
		return s.Sink.Handle(b)
	}
	tv := s.w.targetView(t)
	for i := range b.Items {
		it := &b.Items[i]
		e := tv.entries[it.Key]
		if it.Type == delta.Deleted {
			if e == nil {
				continue
			}
			if t.Name == "" {
				s.w.remove(e)
				continue
			}
			s.w.set(e, nil)
			continue
		}
		if e == nil {
			e = &entry{tv: tv, key: it.Key}
			tv.entries[it.Key] = e
		}
		if e.obj != it.Object {
			s.w.set(e, it.Object)
		}
	}
	return s.Sink.Handle(b)
}

// targetView returns the view of t, made on first sight; its scope is
// set by syncTargets.
func (w *Waiter) targetView(t informer.Target) *targetView {
	id := t.ID()
	tv := w.view[id]
	if tv == nil {
		tv = &targetView{target: t, kind: objectName(t, ""), entries: map[string]*entry{}}
		w.view[id] = tv
	}
	return tv
}

// set makes obj (nil: it does not exist) the entry's object: what was
// said of the one before goes.
func (w *Waiter) set(e *entry, obj *rawobj.Object) {
	w.uncountAll(e)
	e.obj = obj
	e.gen++
	e.unjudge()
	w.reindex(e)
	w.markDirty(e)
}

// unjudge forgets what was said of e's object; it must be uncounted
// (uncountAll) first.
func (e *entry) unjudge() {
	clear(e.verdicts)
	e.health = judged{}
}

// rejudgeHealth has the next check judge the health of e again, which an
// Event may have changed (health.EventJudged).
func (w *Waiter) rejudgeHealth(e *entry) {
	for i := range e.verdicts {
		if v := &e.verdicts[i]; w.conds[i].IsStatus() && v.judged {
			if v.counted {
				w.tallies[i].remove(e, e.tv.scope, *v)
			}
			*v = verdict{}
		}
	}
	if e.health.counted {
		w.healths.remove(e, e.health.status)
	}
	e.health = judged{}
	w.markDirty(e)
}

// remove takes the entry out of the view.
func (w *Waiter) remove(e *entry) {
	w.uncountAll(e)
	w.unindex(e)
	e.removed = true
	delete(e.tv.entries, e.key)
}

// markDirty has the next check judge e.
func (w *Waiter) markDirty(e *entry) {
	if !e.dirty && e.tv.scope != outOfScope {
		e.dirty = true
		w.dirty = append(w.dirty, e)
	}
}

// syncTargets brings the scopes of the view in line with the stream's
// targets, when they changed since the last check: the objects of a
// target that came into scope are judged at this check; those of one that
// left it leave the tallies.
func (w *Waiter) syncTargets() {
	targets := w.stream.Targets()
	ids := w.targetIDs[:0]
	same := len(targets) == len(w.targetIDs)
	for i, t := range targets {
		id := t.ID()
		if same && w.targetIDs[i] != id {
			same = false
		}
		ids = append(ids, id)
	}
	if same {
		return
	}
	w.targetIDs = ids
	want := make(map[string]scope, len(targets))
	w.order = w.order[:0]
	for _, t := range targets {
		if t.Role == informer.RoleEvents {
			continue
		}
		s := memberScope
		if t.Role.IsRoot() {
			s = rootScope
		}
		want[t.ID()] = s
		tv := w.targetView(t)
		w.order = append(w.order, tv)
		if t.Name != "" && len(tv.entries) == 0 {
			key := t.Name
			if t.Namespace != "" {
				key = t.Namespace + "/" + t.Name
			}
			tv.entries[key] = &entry{tv: tv, key: key}
		}
	}
	for id, tv := range w.view {
		if s := want[id]; s != tv.scope {
			w.rescope(tv, s)
		}
	}
}

// rescope moves the objects of tv to scope s.
func (w *Waiter) rescope(tv *targetView, s scope) {
	for _, e := range tv.entries {
		w.uncountAll(e)
		w.unindex(e)
	}
	tv.scope = s
	if s == outOfScope {
		return
	}
	for _, e := range tv.entries {
		// Judged again: what was said of it out of scope may be
		// stale (an Event about it was not heard).
		e.unjudge()
		w.reindex(e)
		w.markDirty(e)
	}
}

// reindex files e in byUID under its object's UID, when it is in scope.
func (w *Waiter) reindex(e *entry) {
	w.unindex(e)
	if e.obj == nil || e.tv.scope == outOfScope || e.obj.UID == "" {
		return
	}
	e.indexedAs, e.sameUID = e.obj.UID, w.byUID[e.obj.UID]
	w.byUID[e.obj.UID] = e
}

// unindex takes e out of byUID.
func (w *Waiter) unindex(e *entry) {
	if e.indexedAs == "" {
		return
	}
	uid := e.indexedAs
	switch head := w.byUID[uid]; {
	case head == e && e.sameUID == nil:
		delete(w.byUID, uid)
	case head == e:
		w.byUID[uid] = e.sameUID
	default:
		for p := head; p != nil; p = p.sameUID {
			if p.sameUID == e {
				p.sameUID = e.sameUID
				break
			}
		}
	}
	e.indexedAs, e.sameUID = "", nil
}
