package events

import (
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kubectl-deltas/kubectl-deltas/internal/cache"
	"github.com/kubectl-deltas/kubectl-deltas/internal/informer"
	"github.com/kubectl-deltas/kubectl-deltas/internal/rawobj"
)

// Timing of a Join.
const (
	// ParkFor is how long an Event whose subject has not been shown waits
	// for it, counted from when the objects' initial lists were out (or
	// from the Event's arrival, if later): the subject's informer and the
	// Events' race, and the subject may come second.
	ParkFor = 10 * time.Second
	// LingerFor is how long a deleted subject's Events are still joined:
	// those of its last moments come after the deletion.
	LingerFor = time.Minute
)

// Engine is what a Join needs of the engine it runs in.
type Engine interface {
	Informers() []*informer.Informer
	AddAdmitted(informer.Target, informer.Admission) (*informer.Informer, error)
}

// Join is the informer.Sink of --events: it adds to the stream the Events
// whose subject is an object the stream shows, and no others. It sits
// after the tree (which decides what is shown) and before the waiter and
// the printer. Events are watched by informers it adds (Watch) whose Store
// keeps only the Events it admits, so that on a busy cluster the Events of
// other objects are not held: an Event whose subject is not known yet is
// parked, not stored, for ParkFor, and adopted into the Store and handed
// out when its subject is shown.
//
// What the stream shows of an Event: its Added (or Replaced with the
// initial state), and an Updated each time it happens again (its series
// or count moving). Its deletion — Events expire an hour after their last
// occurrence — is not a change of its subject and is not shown.
type Join struct {
	next   informer.Sink
	stream Engine
	now    func() time.Time

	// informers are the Events informers by target ID; written by Watch
	// before the run, read-only after.
	informers map[string]*informer.Informer

	// lock guards subjects, parked and parkQueue: Admit runs on the Events
	// informers' goroutines, under their FIFO's lock. Lock order: a FIFO's
	// lock, then lock; never the other way (Adopt is called without it).
	lock sync.Mutex
	// subjects are the join keys (joinKeys) of the objects shown and not
	// deleted more than LingerFor ago.
	subjects map[joinKey]struct{}
	// parked are the Events waiting for their subject, by informer and
	// key; parkedBy lists them by the join key of their subject;
	// parkQueue in order of arrival (entries of events since adopted or
	// parked again are skipped when met).
	parked    map[parkKey]*parkedEvent
	parkedBy  map[joinKey][]parkKey
	parkQueue []parkKey

	// seeded: seedResumed ran. Touched before the engine runs only.
	seeded bool

	// Touched by the engine's goroutine only (Handle, Flush):
	// startedAt is when every object informer's initial list was out.
	startedAt time.Time
	// leaving are the deleted subjects, oldest first.
	leaving []leavingSubject
}

type parkKey struct{ id, key string }

// joinKey is what an Event's subject is found by, in the cluster of
// context: its UID alone, or, with uid "", its group, kind, namespace and
// name.
type joinKey struct {
	context                      string
	uid                          string
	group, kind, namespace, name string
}

// parkedEvent is an Event waiting for its subject: key is where it is
// parked (its informer and its key there).
type parkedEvent struct {
	key     parkKey
	obj     *rawobj.Object
	subject joinKey
	initial bool
	at      time.Time
}

type leavingSubject struct {
	keys  [2]joinKey
	until time.Time
}

// NewJoin returns a Join of the Events informers it adds to stream
// (Watch). now is its clock; nil means time.Now.
func NewJoin(stream Engine, now func() time.Time) *Join {
	if now == nil {
		now = time.Now
	}
	return &Join{
		stream: stream, now: now,
		informers: map[string]*informer.Informer{},
		subjects:  map[joinKey]struct{}{},
		parked:    map[parkKey]*parkedEvent{},
		parkedBy:  map[joinKey][]parkKey{},
	}
}

// Watch adds the informer of t, the Events of one namespace (or all),
// whose Store keeps what the Join admits. Call it before the engine runs.
func (j *Join) Watch(t informer.Target) error {
	j.seedResumed()
	t.Role = informer.RoleEvents
	a := &admission{j: j, id: t.ID(), context: t.Context}
	inf, err := j.stream.AddAdmitted(t, a)
	if err != nil {
		return err
	}
	j.informers[a.id] = inf
	return nil
}

// seedResumed makes subjects of the objects of every informer that
// resumed a recording (informer.Informer.Resumed): they were shown before
// the recording went on, and are not shown again unless they change, but
// their Events are news. Once, before the engine runs.
func (j *Join) seedResumed() {
	if j.seeded {
		return
	}
	j.seeded = true
	j.lock.Lock()
	defer j.lock.Unlock()
	for _, inf := range j.stream.Informers() {
		t := inf.Target()
		if t.Role == informer.RoleEvents || !inf.Resumed() {
			continue
		}
		for _, o := range inf.Store().List() {
			obj, ok := o.(*rawobj.Object)
			if !ok {
				continue
			}
			for _, k := range objectKeys(t.Context, t.Kind.Group, t.Kind.Kind, obj) {
				if k != (joinKey{}) {
					j.subjects[k.clone()] = struct{}{}
				}
			}
		}
	}
}

// Sink returns the Join as the Sink in front of next.
func (j *Join) Sink(next informer.Sink) *Join {
	j.next = next
	return j
}

// admission is the informer.Admission of one Events informer.
type admission struct {
	j       *Join
	id      string
	context string
}

// Admit implements informer.Admission: an Event whose subject has been
// shown enters; another is parked until its subject is shown, or expires.
func (a *admission) Admit(obj *rawobj.Object, initial bool) bool {
	subject, ok := subjectKey(a.context, subjectOf(obj))
	if !ok {
		return false
	}
	j := a.j
	j.lock.Lock()
	defer j.lock.Unlock()
	if _, known := j.subjects[subject]; known {
		return true
	}
	pk := parkKey{id: a.id, key: cache.ObjectKey(obj)}
	if p, ok := j.parked[pk]; ok {
		p.obj, p.initial = obj, p.initial && initial
		return false
	}
	j.parked[pk] = &parkedEvent{key: pk, obj: obj, subject: subject, initial: initial, at: j.now()}
	j.parkedBy[subject] = append(j.parkedBy[subject], pk)
	j.parkQueue = append(j.parkQueue, pk)
	return false
}

// Handle implements informer.Sink.
func (j *Join) Handle(b informer.Batch) (bool, error) {
	if b.Informer.Target().Role == informer.RoleEvents {
		return j.handleEvents(b)
	}
	if done, err := j.next.Handle(b); done || err != nil {
		return done, err
	}
	j.expire()
	target := b.Informer.Target()
	for i := range b.Items {
		it := &b.Items[i]
		if it.Object == nil {
			continue
		}
		keys := objectKeys(target.Context, target.Kind.Group, target.Kind.Kind, it.Object)
		if it.Type == cache.Deleted {
			j.leaving = append(j.leaving, leavingSubject{keys: [2]joinKey{keys[0].clone(), keys[1].clone()}, until: j.now().Add(LingerFor)})
			continue
		}
		if done, err := j.enter(keys, it.Initial); done || err != nil {
			return done, err
		}
	}
	return false, nil
}

// handleEvents passes on an Events informer's batch, less the deletions.
func (j *Join) handleEvents(b informer.Batch) (bool, error) {
	shown := b.Items[:0:0]
	for i := range b.Items {
		if b.Items[i].Type != cache.Deleted {
			shown = append(shown, b.Items[i])
		}
	}
	if len(shown) == 0 {
		return false, nil
	}
	b.Items = shown
	return j.next.Handle(b)
}

// enter makes the object of keys a subject and hands out its parked
// Events, as initial when both were part of the initial state.
func (j *Join) enter(keys [2]joinKey, initial bool) (bool, error) {
	var released []*parkedEvent
	j.lock.Lock()
	for _, k := range keys {
		if _, ok := j.subjects[k]; ok || k == (joinKey{}) {
			continue
		}
		j.subjects[k.clone()] = struct{}{}
		for _, pk := range j.parkedBy[k] {
			if p := j.parked[pk]; p != nil {
				released = append(released, p)
				delete(j.parked, pk)
			}
		}
		delete(j.parkedBy, k)
	}
	j.lock.Unlock()
	for _, p := range released {
		inf := j.informers[p.key.id]
		stored, err := inf.Adopt(p.obj)
		if err != nil {
			return false, err
		}
		if !stored {
			// A newer version was admitted since: it is on its way.
			continue
		}
		it := informer.Item{
			Delta: cache.Delta{Type: cache.Added, Object: p.obj}, Type: cache.Added,
			Object: p.obj, Key: p.key.key,
		}
		if p.initial && initial {
			it.Type, it.Initial = cache.Replaced, true
		}
		if done, err := j.next.Handle(informer.Batch{Informer: inf, Items: []informer.Item{it}}); done || err != nil {
			return done, err
		}
	}
	return false, nil
}

// Flush implements informer.Sink.
func (j *Join) Flush() error {
	j.expire()
	return j.next.Flush()
}

// expire forgets the parked Events whose subject did not come within
// ParkFor of the objects' initial lists, and the subjects deleted more
// than LingerFor ago.
func (j *Join) expire() {
	now := j.now()
	if j.startedAt.IsZero() {
		if !j.objectListsOut() {
			return
		}
		j.startedAt = now
	}
	n := 0
	for n < len(j.leaving) && !now.Before(j.leaving[n].until) {
		n++
	}
	gone := j.leaving[:n]
	j.leaving = j.leaving[n:]

	j.lock.Lock()
	defer j.lock.Unlock()
	for _, l := range gone {
		for _, k := range l.keys {
			delete(j.subjects, k)
		}
	}
	cutoff := now.Add(-ParkFor)
	if j.startedAt.After(cutoff) {
		return
	}
	n = 0
	for ; n < len(j.parkQueue); n++ {
		pk := j.parkQueue[n]
		p := j.parked[pk]
		if p == nil {
			continue
		}
		if p.at.After(cutoff) {
			break
		}
		delete(j.parked, pk)
		j.parkedBy[p.subject] = slices.DeleteFunc(j.parkedBy[p.subject], func(k parkKey) bool { return k == pk })
		if len(j.parkedBy[p.subject]) == 0 {
			delete(j.parkedBy, p.subject)
		}
	}
	j.parkQueue = slices.Delete(j.parkQueue, 0, n)
}

// objectListsOut reports whether every informer of objects (not of
// Events) has handed out its initial list.
func (j *Join) objectListsOut() bool {
	for _, inf := range j.stream.Informers() {
		if inf.Target().Role != informer.RoleEvents && !inf.InitialDone() {
			return false
		}
	}
	return true
}

// LatestWarning is the latest Warning among the Events the Join let in
// about the object uid of the cluster of context: what explains it where
// there is no cluster to ask (a replay). Call it once the engine has run.
func (j *Join) LatestWarning(context, uid string) (w Warning, found bool) {
	if uid == "" {
		return Warning{}, false
	}
	for _, inf := range j.informers {
		if inf.Target().Context != context {
			continue
		}
		for _, o := range inf.Store().List() {
			obj, ok := o.(*rawobj.Object)
			if !ok {
				continue
			}
			e, err := Summarize(obj.JSON)
			if err != nil || e.Type != "Warning" || e.Subject.UID != uid {
				continue
			}
			if !found || e.Last.After(w.Last) {
				w, found = Warning{Reason: e.Reason, Message: e.Message, Count: e.Count, Last: e.Last}, true
			}
		}
	}
	return w, found
}

// Parked is how many Events wait for their subject (tests, benchmarks).
func (j *Join) Parked() int {
	j.lock.Lock()
	defer j.lock.Unlock()
	return len(j.parked)
}

// subjectKey is the join key an Event's subject is found by: its UID;
// its kind, namespace and name when it has no UID or, as the kubelet's
// Events about Nodes, the name in its place. ok is false for an Event
// whose subject cannot be told.
func subjectKey(context string, s Subject) (k joinKey, ok bool) {
	if s.UID != "" && s.UID != s.Name {
		return joinKey{context: context, uid: s.UID}, true
	}
	if s.Kind == "" || s.Name == "" {
		return joinKey{}, false
	}
	group, _, found := strings.Cut(s.APIVersion, "/")
	if !found {
		group = ""
	}
	return joinKey{context: context, group: group, kind: s.Kind, namespace: s.Namespace, name: s.Name}, true
}

// objectKeys are the join keys of an object of group and kind in the
// cluster of context: by name, and by UID (none, the zero key, without
// one). They share the object's strings: clone before keeping.
func objectKeys(context, group, kind string, obj *rawobj.Object) [2]joinKey {
	keys := [2]joinKey{{context: context, group: group, kind: kind, namespace: obj.Namespace, name: obj.Name}}
	if obj.UID != "" {
		keys[1] = joinKey{context: context, uid: obj.UID}
	}
	return keys
}

// clone is k with strings of its own: an object's strings share its JSON's
// allocation, which a kept key must not hold on to.
func (k joinKey) clone() joinKey {
	return joinKey{
		context: k.context, uid: strings.Clone(k.uid), group: strings.Clone(k.group), kind: strings.Clone(k.kind),
		namespace: strings.Clone(k.namespace), name: strings.Clone(k.name),
	}
}
