package cache

import (
	"errors"
	"fmt"
	"maps"
	"sort"
	"sync"
)

// ErrFIFOClosed is returned by Pop once the queue is closed and drained.
var ErrFIFOClosed = errors.New("DeltaFIFO: manipulating with closed queue")

// ErrZeroLengthDeltasObject is returned by KeyOf for an empty Deltas.
var ErrZeroLengthDeltasObject = errors.New("0 length Deltas object; can't get key")

// PopProcessFunc is passed to Pop() to process the Deltas of one key.
// isInInitialList is true when the item was part of the first Replace (the
// initial list) and was popped before the queue reported synced.
type PopProcessFunc func(deltas Deltas, isInInitialList bool) error

// DeltaFIFOOptions is the configuration parameters for DeltaFIFO. All are
// optional.
type DeltaFIFOOptions struct {
	// KeyFunction is used to figure out what key an object should have.
	// (It's exposed in the returned DeltaFIFO's KeyOf() method, with
	// additional handling around deleted objects and queue state.)
	// Optional, the default is MetaNamespaceKeyFunc.
	KeyFunction KeyFunc

	// KnownObjects is expected to return a list of keys that the consumer of
	// this queue "knows about". It is used to decide which items are
	// missing when Replace() is called; 'Deleted' deltas are produced for
	// the missing items, and Resync() emits Sync deltas from it. The
	// consumer keeps it up to date as it processes popped deltas.
	KnownObjects KeyListerGetter

	// EmitDeltaTypeReplaced indicates that the queue consumer understands
	// the Replaced DeltaType. Without it, Replace() emits Sync deltas, as
	// client-go did before the Replaced type was added.
	EmitDeltaTypeReplaced bool

	// MaxUpdatedBacklog, when positive, bounds the run of consecutive
	// Updated deltas queued for one key: when an Updated would make the run
	// longer, it replaces the newest Updated of the run instead of being
	// appended, and the replacement's Coalesced count says how many updates
	// it stands for. Only intermediate states are lost, never the newest
	// one, and Added/Deleted/Replaced/Sync deltas are never folded. Memory is
	// then bounded by the number of keys, not by the number of events, when
	// the consumer is slower than the watch. Zero keeps every delta, as
	// client-go does.
	MaxUpdatedBacklog int

	// Populated starts the queue populated and synced: its KnownObjects
	// are a state the consumer already has (a stream resumed from a
	// recording), so no Replace is an initial population, and HasSynced
	// holds before anything is queued. Not in client-go.
	Populated bool
}

// DeltaFIFO is like a FIFO, but differs in two ways. One is that the
// accumulator associated with a given object's key is not that object but
// rather a Deltas, which is a slice of Delta values for that object. Applying
// an object to a Deltas means to append a Delta except when the potentially
// appended Delta is a Deleted and the Deltas already ends with a Deleted. In
// that case the Deltas does not grow, although the terminal Deleted will be
// replaced by the new Deleted if the older Deleted's object is a
// DeletedFinalStateUnknown.
//
// The other difference is that DeltaFIFO has two additional ways that an
// object can be applied to an accumulator: Replaced and Sync. If
// EmitDeltaTypeReplaced is not set to true, Sync will be used in replace
// events for backwards compatibility. Sync is used for periodic resync
// events.
//
// DeltaFIFO is a producer-consumer queue, where a Reflector is intended to be
// the producer, and the consumer is whatever calls the Pop() method.
//
// A key is popped at most once per enqueue: all the deltas accumulated for it
// are handed to the consumer together, oldest first, and a key that is
// already queued keeps its place ("no line jumping").
//
// DeltaFIFO's Pop(), Add(), Update(), Delete(), Replace() and Resync() are
// safe for concurrent use. Pop calls its process function with the lock
// held, so the consumer's Store update is atomic with respect to Replace and
// Resync, which read knownObjects; the process function must be quick and
// must not call back into the queue.
type DeltaFIFO struct {
	// lock/cond protects access to 'items' and 'queue'.
	lock sync.RWMutex
	cond sync.Cond

	// items maps a key to a Deltas. Each such Deltas has at least one
	// Delta.
	items map[string]Deltas

	// queue maintains FIFO order of keys for consumption in Pop(). There are
	// no duplicates in queue. A key is in queue if and only if it is in
	// items.
	queue []string

	// populated is true if the first batch of items inserted by Replace()
	// has been populated or Delete/Add/Update was called first.
	populated bool
	// initialPopulationCount is the number of items inserted by the first
	// call of Replace() (unique keys plus queued deletions).
	initialPopulationCount int

	// synced is closed, once, when the queue first reports synced.
	synced chan struct{}
	// syncedClosed records that synced was closed; guarded by lock.
	syncedClosed bool

	// keyFunc is used to make the key used for queued item insertion and
	// retrieval, and should be deterministic.
	keyFunc KeyFunc

	// knownObjects list keys that are "known" --- affecting Delete(),
	// Replace(), and Resync().
	knownObjects KeyListerGetter

	// closed is set by Close(); guarded by lock. Once closed and drained,
	// Pop returns ErrFIFOClosed.
	closed bool

	// emitDeltaTypeReplaced is whether to emit the Replaced or Sync
	// DeltaType when Replace() is called.
	emitDeltaTypeReplaced bool

	// maxUpdatedBacklog bounds runs of consecutive Updated deltas per key;
	// 0 means unbounded.
	maxUpdatedBacklog int
}

var (
	_ ReflectorStore = (*DeltaFIFO)(nil)
	_ Queue          = (*DeltaFIFO)(nil)
)

// Queue is what a Reflector feeds and a consumer drains.
type Queue interface {
	ReflectorStore
	// Pop blocks until there is at least one key to process or the Queue
	// is closed, then processes the accumulator of the first key.
	Pop(PopProcessFunc) (Deltas, error)
	// HasSynced returns true if the first batch of keys have all been
	// popped. The first batch of keys are those of the first Replace
	// operation if that happened before any Add, Update, or Delete;
	// otherwise the first batch is empty.
	HasSynced() bool
	// Close the queue.
	Close()
}

// NewDeltaFIFOWithOptions returns a Queue which can be used to process
// changes to items. See also the comment on DeltaFIFO.
func NewDeltaFIFOWithOptions(opts DeltaFIFOOptions) *DeltaFIFO {
	if opts.KeyFunction == nil {
		opts.KeyFunction = MetaNamespaceKeyFunc
	}
	f := &DeltaFIFO{
		items:                 map[string]Deltas{},
		queue:                 []string{},
		synced:                make(chan struct{}),
		keyFunc:               opts.KeyFunction,
		knownObjects:          opts.KnownObjects,
		emitDeltaTypeReplaced: opts.EmitDeltaTypeReplaced,
		maxUpdatedBacklog:     opts.MaxUpdatedBacklog,
	}
	f.cond.L = &f.lock
	if opts.Populated {
		f.populated = true
		f.checkSyncedLocked()
	}
	return f
}

// Close the queue. Items already queued still drain through Pop; after
// that, Pop returns ErrFIFOClosed instead of blocking.
func (f *DeltaFIFO) Close() {
	f.lock.Lock()
	defer f.lock.Unlock()
	f.closed = true
	f.cond.Broadcast()
}

// WithLock runs fn under the queue's lock, as Pop runs its process
// function: what fn does to data structures kept in step with the queue
// (knownObjects) is atomic with respect to Pop, Add, Update, Delete and
// Replace. fn must not call the queue.
func (f *DeltaFIFO) WithLock(fn func()) {
	f.lock.Lock()
	defer f.lock.Unlock()
	fn()
}

// KeyOf exposes f's keyFunc, but also detects the key of a Deltas object or
// DeletedFinalStateUnknown objects.
func (f *DeltaFIFO) KeyOf(obj any) (string, error) {
	if d, ok := obj.(Deltas); ok {
		if len(d) == 0 {
			return "", KeyError{obj, ErrZeroLengthDeltasObject}
		}
		obj = d.Newest().Object
	}
	if d, ok := obj.(DeletedFinalStateUnknown); ok {
		return d.Key, nil
	}
	return f.keyFunc(obj)
}

// HasSynced returns true if an Add/Update/Delete was called first, or the
// first batch of items inserted by Replace() has been popped. Once true it
// stays true.
func (f *DeltaFIFO) HasSynced() bool {
	f.lock.Lock()
	defer f.lock.Unlock()
	return f.hasSyncedLocked()
}

// Synced returns a channel that is closed once HasSynced becomes true.
func (f *DeltaFIFO) Synced() <-chan struct{} {
	return f.synced
}

// hasSyncedLocked reports whether the initial population has drained.
// Caller must lock first.
func (f *DeltaFIFO) hasSyncedLocked() bool {
	return f.syncedClosed || (f.populated && f.initialPopulationCount == 0)
}

// checkSyncedLocked latches the synced state. Caller must lock first.
func (f *DeltaFIFO) checkSyncedLocked() {
	if !f.syncedClosed && f.populated && f.initialPopulationCount == 0 {
		f.syncedClosed = true
		close(f.synced)
	}
}

// Len returns the number of keys waiting to be popped.
func (f *DeltaFIFO) Len() int {
	f.lock.RLock()
	defer f.lock.RUnlock()
	return len(f.queue)
}

// Add inserts an item, and puts it in the queue. The item is only enqueued
// if it doesn't already exist in the set.
func (f *DeltaFIFO) Add(obj any) error {
	f.lock.Lock()
	defer f.lock.Unlock()
	f.populated = true
	defer f.checkSyncedLocked()
	return f.queueActionLocked(Added, obj)
}

// Update is just like Add, but makes an Updated Delta.
func (f *DeltaFIFO) Update(obj any) error {
	f.lock.Lock()
	defer f.lock.Unlock()
	f.populated = true
	defer f.checkSyncedLocked()
	return f.queueActionLocked(Updated, obj)
}

// Delete is just like Add, but makes a Deleted Delta. If the given object
// does not already exist, it will be ignored. (It may have already been
// deleted by a Replace (re-list), for example.) In this method "exist" means
// that the object's key is in knownObjects (if set) or in the queue; if
// knownObjects cannot answer, the delete is queued anyway.
func (f *DeltaFIFO) Delete(obj any) error {
	id, err := f.KeyOf(obj)
	if err != nil {
		return KeyError{obj, err}
	}
	f.lock.Lock()
	defer f.lock.Unlock()
	f.populated = true
	defer f.checkSyncedLocked()
	_, queued := f.items[id]
	if f.knownObjects == nil {
		if !queued {
			// Presumably, this was deleted when a relist happened. Don't
			// provide a second report of the same deletion.
			return nil
		}
	} else {
		// We only want to skip the "deletion" action if the object doesn't
		// exist in knownObjects and it doesn't have corresponding item in
		// items. Note that even if there is a "deletion" action in items,
		// we can ignore it because it will be deduped automatically in
		// dedupDeltas.
		_, known, err := f.knownObjects.GetByKey(id)
		if err == nil && !known && !queued {
			return nil
		}
	}
	// exist in items and/or KnownObjects
	return f.queueActionLocked(Deleted, obj)
}

// queueActionLocked appends a delta of actionType to the object's list of
// deltas, queueing its key if it was not queued. Caller must lock first.
func (f *DeltaFIFO) queueActionLocked(actionType DeltaType, obj any) error {
	id, err := f.KeyOf(obj)
	if err != nil {
		return KeyError{obj, err}
	}
	f.queueKeyedLocked(id, actionType, obj)
	return nil
}

// queueKeyedLocked is queueActionLocked of an object whose key the caller
// has computed: id is f.KeyOf(obj). Caller must lock first.
func (f *DeltaFIFO) queueKeyedLocked(id string, actionType DeltaType, obj any) {
	oldDeltas, queued := f.items[id]
	// The new slice replaces the old one in items; nobody else holds it.
	newDeltas := append(oldDeltas, Delta{Type: actionType, Object: obj}) //nolint:gocritic // see above
	newDeltas = dedupDeltas(newDeltas)
	if actionType == Updated && f.maxUpdatedBacklog > 0 {
		newDeltas = coalesceUpdates(newDeltas, f.maxUpdatedBacklog)
	}

	if !queued {
		f.queue = append(f.queue, id)
	}
	f.items[id] = newDeltas
	f.cond.Broadcast()
}

// coalesceUpdates keeps the trailing run of Updated deltas at most max
// long by folding the newest delta into the one before it, so that it is at
// most limit long. deltas ends with an Updated.
func coalesceUpdates(deltas Deltas, limit int) Deltas {
	n := len(deltas)
	run := 0
	for i := n - 1; i >= 0 && deltas[i].Type == Updated; i-- {
		run++
	}
	if run <= limit || limit < 1 {
		return deltas
	}
	newest := deltas[n-1]
	newest.Coalesced += deltas[n-2].Coalesced + 1
	deltas[n-2] = newest
	deltas[n-1] = Delta{}
	return deltas[:n-1]
}

// dedupDeltas re-lists the deltas without the last one if the last two are
// both deletions of the same object; see isDup.
func dedupDeltas(deltas Deltas) Deltas {
	n := len(deltas)
	if n < 2 {
		return deltas
	}
	a := &deltas[n-1]
	b := &deltas[n-2]
	if out := isDup(a, b); out != nil {
		deltas[n-2] = *out
		deltas[n-1] = Delta{}
		return deltas[:n-1]
	}
	return deltas
}

// isDup returns the delta to keep if a and b represent the same event, nil
// otherwise.
func isDup(a, b *Delta) *Delta {
	if out := isDeletionDup(a, b); out != nil {
		return out
	}
	// TODO: Detect other duplicate situations? Are there any?
	return nil
}

// isDeletionDup keeps the older of two consecutive deletions (b), unless b
// is a tombstone: then the newer one (a) carries more information.
func isDeletionDup(a, b *Delta) *Delta {
	if b.Type != Deleted || a.Type != Deleted {
		return nil
	}
	// Do more sophisticated checks, or is this sufficient?
	if _, ok := b.Object.(DeletedFinalStateUnknown); ok {
		return a
	}
	return b
}

// Pop blocks until the queue has some items, and then returns one. If
// multiple items are ready, they are returned in the order in which they
// were added/updated. The item is removed from the queue before process is
// called; an item that process fails on is not queued again.
//
// process is called under the lock, so it is safe to update data structures
// in it that need to be in sync with the queue (knownObjects). process
// should avoid expensive I/O so that the producer's Add, Update, Delete and
// Replace are not blocked for long.
//
// Pop returns the popped deltas and process's error, or ErrFIFOClosed when
// the queue is closed and empty.
func (f *DeltaFIFO) Pop(process PopProcessFunc) (Deltas, error) {
	f.lock.Lock()
	defer f.lock.Unlock()
	for {
		for len(f.queue) == 0 {
			// When the queue is empty, invocation of Pop() is blocked until
			// new item is enqueued. When Close() is called, the f.closed is
			// set and the condition is broadcasted, which causes this loop
			// to exit.
			if f.closed {
				return nil, ErrFIFOClosed
			}
			f.cond.Wait()
		}
		isInInitialList := !f.hasSyncedLocked()
		id := f.queue[0]
		f.queue[0] = ""
		f.queue = f.queue[1:]
		if f.initialPopulationCount > 0 {
			f.initialPopulationCount--
		}
		item, ok := f.items[id]
		if !ok {
			// This should never happen: queue and items are kept in step.
			continue
		}
		delete(f.items, id)
		// As in client-go v0.36, the queue reports synced before the last
		// initial item is processed.
		f.checkSyncedLocked()
		err := process(item, isInInitialList)
		return item, err
	}
}

// Replace atomically does two things: (1) it adds the given objects using
// the Sync or Replaced DeltaType and then (2) it does some deletions. In
// particular: for every pre-existing key K that is not the key of an object
// in `list` there is the effect of `Delete(DeletedFinalStateUnknown{K, O})`
// where O is the latest known object of K. The pre-existing keys are those
// in the union set of the keys in the queue and the keys in knownObjects.
// The resourceVersion argument is ignored.
//
// Tombstones for keys known only to knownObjects are queued in sorted key
// order so that the output of a relist is deterministic.
func (f *DeltaFIFO) Replace(list []any, _ string) error {
	f.lock.Lock()
	defer f.lock.Unlock()
	keys := make(set, len(list))

	// Add Sync/Replaced action for each new item.
	action := f.replaceAction()
	for _, item := range list {
		key, err := f.KeyOf(item)
		if err != nil {
			return KeyError{item, err}
		}
		keys.insert(key)
		f.queueKeyedLocked(key, action, item)
	}
	queuedDeletions, err := f.queueReplaceDeletionsLocked(keys)
	if err != nil {
		return err
	}
	if !f.populated {
		f.populated = true
		f.initialPopulationCount = len(keys) + queuedDeletions
		f.checkSyncedLocked()
	}
	return nil
}

// replaceAction is the DeltaType of the objects of a Replace.
func (f *DeltaFIFO) replaceAction() DeltaType {
	// keep backwards compat for old clients
	if f.emitDeltaTypeReplaced {
		return Replaced
	}
	return Sync
}

// queueReplaceDeletionsLocked is the second half of a Replace whose objects
// had the keys in keys: it queues a DeletedFinalStateUnknown for every key
// in the queue or in knownObjects that is not in keys, and returns how
// many. Caller must lock first.
func (f *DeltaFIFO) queueReplaceDeletionsLocked(keys set) (int, error) {
	// Do deletion detection against objects in the queue.
	queuedDeletions := 0
	for k, oldItem := range f.items {
		if keys.has(k) {
			continue
		}
		// Delete pre-existing items not in the new list. This could
		// happen if the watch deletion event was missed while
		// disconnected from the apiserver.
		var deletedObj any
		if n := oldItem.Newest(); n != nil {
			deletedObj = n.Object
			// if the previous object is a DeletedFinalStateUnknown, we have
			// to extract the actual Object
			if d, ok := deletedObj.(DeletedFinalStateUnknown); ok {
				deletedObj = d.Obj
			}
		}
		queuedDeletions++
		if err := f.queueActionLocked(Deleted, DeletedFinalStateUnknown{k, deletedObj}); err != nil {
			return queuedDeletions, err
		}
	}

	if f.knownObjects != nil {
		// Detect deletions for objects not present in the queue, but
		// present in KnownObjects.
		knownKeys := f.knownObjects.ListKeys()
		sort.Strings(knownKeys)
		for _, k := range knownKeys {
			if keys.has(k) {
				continue
			}
			if len(f.items[k]) > 0 {
				continue
			}
			deletedObj, exists, err := f.knownObjects.GetByKey(k)
			if err != nil || !exists {
				// The object vanished from knownObjects in between; we
				// still owe the consumer a deletion of the key.
				deletedObj = nil
			}
			queuedDeletions++
			if err := f.queueActionLocked(Deleted, DeletedFinalStateUnknown{k, deletedObj}); err != nil {
				return queuedDeletions, err
			}
		}
	}
	return queuedDeletions, nil
}

// StartReplace begins a Replace whose objects are queued one at a time, as
// Add of the returned Replacement is called, so that Pop hands out the
// first objects of a large list while the rest is still being read; its
// Finish does what Replace does after queueing the objects (the tombstones;
// the queue counts as populated from then on). StartReplace, Add of each
// object of a list, then Finish, with no Pop in between, has exactly the
// effect of Replace(list). Objects popped before Finish of the first
// Replace are popped with isInInitialList, as are the rest.
//
// A Replacement is used by one goroutine. One that is never finished (the
// list failed) leaves the objects it added queued; the next Replace or
// replacement is then compared with them as with any queued key.
func (f *DeltaFIFO) StartReplace() Replacement {
	f.lock.Lock()
	defer f.lock.Unlock()
	r := &fifoReplacement{f: f}
	if f.populated || len(f.items) > 0 || f.knownObjects != nil && len(f.knownObjects.ListKeys()) > 0 {
		r.keys = set{}
	} else {
		r.untracked = true
	}
	return r
}

// fifoReplacement is a Replace of a DeltaFIFO in progress. Its fields are
// only touched by the goroutine that uses it; the queue is touched under
// f.lock.
//
// The first list of a queue (not populated, nothing queued, nothing
// known) is untracked: every key queued or known until it finishes is one
// it added (the Reflector is the queue's one producer, a Resync queues
// known keys again, and knownObjects holds what the consumer popped, or
// adopted of it), so Finish has nothing to tombstone and
// the replacement keeps no set of the list's keys, which would be held
// until the end of the list, when memory peaks. A Restart after objects
// were added ends that: the keys queued or known are then those of the
// earlier round.
type fifoReplacement struct {
	f *DeltaFIFO
	// untracked: see above; keys and before are nil while it holds.
	// added: objects were added while untracked.
	untracked, added bool
	// keys are the keys added since the start or the last Restart: the
	// keys of the list that Finish completes.
	keys set
	// before are the keys added before the last Restart, nil until one:
	// this replacement has queued the keys of keys and before. One set of
	// the list's keys, not two, while a list is read without a Restart, as
	// almost every list is: it is held until Finish, when the Store holds
	// most of the list too.
	before set
}

// Add queues objs, in order, with the Sync or Replaced DeltaType, under
// one lock. If this replacement queued an object's key before the last
// Restart and that delta is still the newest of the key, not popped yet,
// the object takes its place instead of following it, so a restarted list
// does not hand out the same object twice.
func (r *fifoReplacement) Add(objs []any) error {
	f := r.f
	f.lock.Lock()
	defer f.lock.Unlock()
	action := f.replaceAction()
	for _, obj := range objs {
		key, err := f.KeyOf(obj)
		if err != nil {
			return KeyError{obj, err}
		}
		if r.untracked {
			r.added = true
			f.queueKeyedLocked(key, action, obj)
			continue
		}
		// Only a key queued before the last Restart is collapsed: a key
		// twice in one list is queued twice, as Replace does.
		restarted := r.before.has(key) && !r.keys.has(key)
		r.keys.insert(key)
		if deltas := f.items[key]; restarted && len(deltas) > 0 && deltas[len(deltas)-1].Type == action {
			deltas[len(deltas)-1].Object = obj
			continue
		}
		f.queueKeyedLocked(key, action, obj)
	}
	return nil
}

// Restart forgets the keys of the objects added so far: the list starts
// again from its first object. The objects stay queued; Finish tombstones
// those whose keys are not added again.
func (r *fifoReplacement) Restart() {
	switch {
	case r.untracked && !r.added:
		return
	case r.untracked:
		// What is queued or known is what the earlier round added.
		f := r.f
		f.lock.Lock()
		r.before = set{}
		for k := range f.items {
			r.before.insert(k)
		}
		if f.knownObjects != nil {
			for _, k := range f.knownObjects.ListKeys() {
				r.before.insert(k)
			}
		}
		f.lock.Unlock()
		r.untracked = false
	case r.before == nil:
		r.before = r.keys
	default:
		maps.Copy(r.before, r.keys)
	}
	r.keys = set{}
}

// Finish queues the tombstones of the Replace (see Replace) and marks the
// queue populated, its initial population being every key now queued.
func (r *fifoReplacement) Finish(string) error {
	f := r.f
	f.lock.Lock()
	defer f.lock.Unlock()
	if !r.untracked {
		if _, err := f.queueReplaceDeletionsLocked(r.keys); err != nil {
			return err
		}
	}
	if !f.populated {
		// Nothing but this replacement queued anything while the queue
		// was not populated (Add, Update and Delete populate it), so what
		// is queued is what remains of the initial population.
		f.populated = true
		f.initialPopulationCount = len(f.queue)
		f.checkSyncedLocked()
	}
	return nil
}

// Resync adds, with a Sync type of Delta, every object listed by
// f.knownObjects whose key is not already queued for processing. If
// f.knownObjects is nil then Resync does nothing. The whole operation holds
// the lock, so a concurrent Update cannot slip in between the check and the
// Sync (#31981).
func (f *DeltaFIFO) Resync() error {
	f.lock.Lock()
	defer f.lock.Unlock()
	if f.knownObjects == nil {
		return nil
	}
	keys := f.knownObjects.ListKeys()
	sort.Strings(keys)
	for _, k := range keys {
		if err := f.syncKeyLocked(k); err != nil {
			return err
		}
	}
	return nil
}

// syncKeyLocked queues a Sync of the known object of key unless key
// already has deltas queued. Caller must lock first.
func (f *DeltaFIFO) syncKeyLocked(key string) error {
	obj, exists, err := f.knownObjects.GetByKey(key)
	if err != nil || !exists {
		// Gone from knownObjects between ListKeys and GetByKey: nothing
		// to sync.
		return nil
	}

	// If we are doing Resync() and there is already an event queued for
	// that object, we ignore the Resync for it. This is to avoid the race,
	// where the resync comes with the previous value of object (since
	// queueing an event for the object doesn't trigger changing the
	// underlying store <knownObjects>.
	id, err := f.KeyOf(obj)
	if err != nil {
		return KeyError{obj, err}
	}
	if len(f.items[id]) > 0 {
		return nil
	}

	if err := f.queueActionLocked(Sync, obj); err != nil {
		return fmt.Errorf("couldn't queue object: %w", err)
	}
	return nil
}
