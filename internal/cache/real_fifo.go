package cache

import (
	"errors"
	"fmt"
	"sort"
	"sync"
)

// The queue-only delta types of a RealFIFO that emits atomic events. A
// consumer expands them (see Reconcile); they are never handed to a Sink.
const (
	// ReplacedAll is a whole relist as one delta; its Object is a
	// ReplacedAllInfo.
	ReplacedAll DeltaType = "ReplacedAll"
	// SyncAll is a whole resync as one delta; its Object is a SyncAllInfo.
	SyncAll DeltaType = "SyncAll"
	// Bookmark is a watch bookmark; its Object is a BookmarkInfo.
	Bookmark DeltaType = "Bookmark"
)

// ReplacedAllInfo is the Object of a ReplacedAll delta: the objects of one
// Replace, in list order, and the list's resourceVersion.
type ReplacedAllInfo struct {
	ResourceVersion string
	Objects         []any
}

// SyncAllInfo is the Object of a SyncAll delta: every object the consumer
// knows is to be synced, as it knows it when the delta is popped.
type SyncAllInfo struct{}

// BookmarkInfo is the Object of a Bookmark delta.
type BookmarkInfo struct {
	ResourceVersion string
}

// defaultRealFIFOBatchSize is the most deltas one PopBatch hands out, as
// in client-go.
const defaultRealFIFOBatchSize = 1000

// RealFIFOOptions configures a RealFIFO.
type RealFIFOOptions struct {
	// KeyFunction is used to figure out what key an object should have.
	// Optional, the default is MetaNamespaceKeyFunc.
	KeyFunction KeyFunc

	// KnownObjects lists the keys the consumer knows: Replace makes
	// tombstones of those a relist lacks, and Resync queues a Sync of
	// each. Required unless AtomicEvents, and not allowed with it.
	KnownObjects KeyListerGetter

	// AtomicEvents makes a Replace one ReplacedAll delta and a Resync one
	// SyncAll delta, which the consumer expands against its own store
	// (client-go v0.36's default, feature AtomicFIFO). Without it, a
	// Replace queues tombstones then Replaced deltas, a Resync one Sync
	// per known key not queued (client-go v0.33–v0.35).
	AtomicEvents bool

	// EmitDeltaTypeBookmark queues a Bookmark delta for each bookmark the
	// reflector reports. Only with AtomicEvents, as in client-go.
	EmitDeltaTypeBookmark bool

	// Populated starts the queue populated and synced: the consumer's
	// store already holds a state (a stream resumed from a recording), so
	// no Replace is an initial population. Not in client-go.
	Populated bool
}

// RealFIFO is a Queue in which every notification from the Reflector is
// handed out in order, one delta per notification: unlike a DeltaFIFO it
// keeps no accumulator per key, so it hands out every intermediate state
// and never drops a deletion as a duplicate. It is client-go v0.33+'s
// informer queue (tools/cache/the_real_fifo.go), with the same rules for
// Replace, Resync, HasSynced and batching.
//
// Pop and PopBatch call their process functions with the lock held, so
// the consumer's store is updated atomically with respect to Replace and
// Resync, which read knownObjects; process functions must be quick and
// must not call back into the queue. A RealFIFO has one consumer.
type RealFIFO struct {
	// lock guards every field below but keyFunc, which is read-only;
	// cond waits on it for items or Close.
	lock sync.Mutex
	cond sync.Cond

	// items are the queued deltas, oldest first.
	items []Delta

	// populated is true once the first Replace, or any Add, Update or
	// Delete, has been called; initialPopulationCount is the number of
	// items the first Replace left queued that have not been popped.
	populated              bool
	initialPopulationCount int

	// synced is closed, once, when the queue first reports synced;
	// syncedClosed records that it was.
	synced       chan struct{}
	syncedClosed bool

	keyFunc KeyFunc

	// knownObjects is the consumer's store; nil with atomicEvents.
	knownObjects KeyListerGetter

	// closed is set by Close; a closed queue drains, then Pop returns
	// ErrFIFOClosed.
	closed bool

	batchSize             int
	atomicEvents          bool
	emitDeltaTypeBookmark bool
}

var (
	_ ReflectorStore = (*RealFIFO)(nil)
	_ Queue          = (*RealFIFO)(nil)
)

// Errors of NewRealFIFOWithOptions: options client-go refuses (with a
// panic there).
var (
	errKnownObjectsWithAtomic = errors.New("a RealFIFO that emits atomic events keeps no knownObjects: the consumer reconciles against its own store")
	errNoKnownObjects         = errors.New("a RealFIFO without atomic events needs knownObjects to find what a relist deleted")
	errBookmarkWithoutAtomic  = errors.New("a RealFIFO emits bookmarks only with atomic events, where they cannot overtake a relist")
)

// NewRealFIFOWithOptions returns a RealFIFO, or an error for options that
// contradict each other.
func NewRealFIFOWithOptions(opts RealFIFOOptions) (*RealFIFO, error) {
	if opts.KeyFunction == nil {
		opts.KeyFunction = MetaNamespaceKeyFunc
	}
	switch {
	case opts.AtomicEvents && opts.KnownObjects != nil:
		return nil, errKnownObjectsWithAtomic
	case !opts.AtomicEvents && opts.KnownObjects == nil:
		return nil, errNoKnownObjects
	case !opts.AtomicEvents && opts.EmitDeltaTypeBookmark:
		return nil, errBookmarkWithoutAtomic
	}
	f := &RealFIFO{
		items:                 make([]Delta, 0, 10),
		synced:                make(chan struct{}),
		keyFunc:               opts.KeyFunction,
		knownObjects:          opts.KnownObjects,
		batchSize:             defaultRealFIFOBatchSize,
		atomicEvents:          opts.AtomicEvents,
		emitDeltaTypeBookmark: opts.EmitDeltaTypeBookmark,
	}
	f.cond.L = &f.lock
	if opts.Populated {
		f.populated = true
		f.checkSyncedLocked()
	}
	return f, nil
}

// Close the queue. Items already queued still drain through Pop; after
// that, Pop returns ErrFIFOClosed instead of blocking.
func (f *RealFIFO) Close() {
	f.lock.Lock()
	defer f.lock.Unlock()
	f.closed = true
	f.cond.Broadcast()
}

// IsClosed reports whether Close was called.
func (f *RealFIFO) IsClosed() bool {
	f.lock.Lock()
	defer f.lock.Unlock()
	return f.closed
}

// WithLock runs fn under the queue's lock, as Pop runs its process
// function. fn must not call the queue.
func (f *RealFIFO) WithLock(fn func()) {
	f.lock.Lock()
	defer f.lock.Unlock()
	fn()
}

// KeyOf is f's keyFunc, which also knows the key of Deltas, a Delta and a
// DeletedFinalStateUnknown.
func (f *RealFIFO) KeyOf(obj any) (string, error) {
	if d, ok := obj.(Deltas); ok {
		if len(d) == 0 {
			return "", KeyError{obj, ErrZeroLengthDeltasObject}
		}
		obj = d.Newest().Object
	}
	if d, ok := obj.(Delta); ok {
		obj = d.Object
	}
	if d, ok := obj.(DeletedFinalStateUnknown); ok {
		return d.Key, nil
	}
	return f.keyFunc(obj)
}

// HasSynced returns true if an Add/Update/Delete was called first, or
// every item the first Replace queued has been popped and processed. Once
// true it stays true.
func (f *RealFIFO) HasSynced() bool {
	f.lock.Lock()
	defer f.lock.Unlock()
	return f.syncedClosed
}

// Synced returns a channel that is closed once HasSynced becomes true.
func (f *RealFIFO) Synced() <-chan struct{} {
	return f.synced
}

// checkSyncedLocked latches the synced state; called after populated or
// initialPopulationCount change. Caller must lock first.
func (f *RealFIFO) checkSyncedLocked() {
	if !f.syncedClosed && f.populated && f.initialPopulationCount == 0 {
		f.syncedClosed = true
		close(f.synced)
	}
}

// Len returns the number of deltas waiting to be popped.
func (f *RealFIFO) Len() int {
	f.lock.Lock()
	defer f.lock.Unlock()
	return len(f.items)
}

// appendLocked queues one delta. Caller must lock first.
func (f *RealFIFO) appendLocked(t DeltaType, obj any) error {
	if t != ReplacedAll && t != SyncAll && t != Bookmark {
		// A delta whose key cannot be read could not be matched against
		// the consumer's store.
		if _, err := f.KeyOf(obj); err != nil {
			return KeyError{obj, err}
		}
	}
	f.items = append(f.items, Delta{Type: t, Object: obj})
	f.cond.Broadcast()
	return nil
}

// Add queues an Added delta of obj.
func (f *RealFIFO) Add(obj any) error {
	return f.event(Added, obj)
}

// Update queues an Updated delta of obj.
func (f *RealFIFO) Update(obj any) error {
	return f.event(Updated, obj)
}

// Delete queues a Deleted delta of obj, whether or not the consumer knows
// its key: unlike a DeltaFIFO, a RealFIFO never drops a deletion.
func (f *RealFIFO) Delete(obj any) error {
	return f.event(Deleted, obj)
}

// event queues a watch event's delta; the queue counts as populated from
// then on.
func (f *RealFIFO) event(t DeltaType, obj any) error {
	f.lock.Lock()
	defer f.lock.Unlock()
	f.populated = true
	f.checkSyncedLocked()
	return f.appendLocked(t, obj)
}

// Bookmark queues a Bookmark delta when the queue emits them; otherwise
// it does nothing.
func (f *RealFIFO) Bookmark(resourceVersion string) error {
	if !f.emitDeltaTypeBookmark {
		return nil
	}
	f.lock.Lock()
	defer f.lock.Unlock()
	return f.appendLocked(Bookmark, BookmarkInfo{ResourceVersion: resourceVersion})
}

// Replace queues a relist. With atomic events it is one ReplacedAll delta
// of list. Without, it queues first a tombstone for every key that is
// queued (its newest delta not a deletion) or known and missing from list,
// then a Replaced delta of each object of list, in list order. The first
// Replace is the initial population: HasSynced waits for everything queued
// by then.
func (f *RealFIFO) Replace(list []any, resourceVersion string) error {
	f.lock.Lock()
	defer f.lock.Unlock()
	var err error
	if f.atomicEvents {
		err = f.appendLocked(ReplacedAll, ReplacedAllInfo{ResourceVersion: resourceVersion, Objects: list})
	} else {
		err = f.replaceLocked(list)
	}
	if err != nil {
		return err
	}
	if !f.populated {
		f.populated = true
		f.initialPopulationCount = len(f.items)
		f.checkSyncedLocked()
	}
	return nil
}

// replaceLocked is Replace without atomic events. Caller must lock first.
func (f *RealFIFO) replaceLocked(list []any) error {
	tombstones, err := Reconcile(list, f.items, f.knownObjects, f.KeyOf)
	if err != nil {
		return err
	}
	for _, t := range tombstones {
		if err := f.appendLocked(Deleted, t); err != nil {
			return fmt.Errorf("couldn't enqueue object: %w", err)
		}
	}
	for _, obj := range list {
		if err := f.appendLocked(Replaced, obj); err != nil {
			return fmt.Errorf("couldn't enqueue object: %w", err)
		}
	}
	return nil
}

// Reconcile finds what a relist of list deletes, as client-go's
// reconcileReplacement does: a tombstone for each key of queued (in the
// order of first appearance) whose newest delta is not a deletion, then
// for each key of known (in sorted order, where client-go follows its
// store's map order) not queued; keys in list are kept. A tombstone
// carries the key's newest queued object, else the known one (nil when
// known cannot give it). The caller handles list itself, after the
// tombstones, as both of client-go's callers do.
func Reconcile(list []any, queued []Delta, known KeyListerGetter, keyOf KeyFunc) ([]DeletedFinalStateUnknown, error) {
	listed := make(set, len(list))
	for _, obj := range list {
		key, err := keyOf(obj)
		if err != nil {
			return nil, KeyError{obj, err}
		}
		listed.insert(key)
	}

	var queuedKeys []string
	newest := map[string]Delta{}
	for _, d := range queued {
		if d.Type == ReplacedAll || d.Type == SyncAll || d.Type == Bookmark {
			continue
		}
		key, err := keyOf(d.Object)
		if err != nil {
			return nil, KeyError{d.Object, err}
		}
		if _, seen := newest[key]; !seen {
			queuedKeys = append(queuedKeys, key)
		}
		newest[key] = d
	}

	var tombstones []DeletedFinalStateUnknown
	for _, key := range queuedKeys {
		d := newest[key]
		// A queued deletion of a key the relist lacks is said already.
		if listed.has(key) || d.Type == Deleted {
			continue
		}
		tombstones = append(tombstones, DeletedFinalStateUnknown{Key: key, Obj: d.Object})
	}
	if known != nil {
		keys := known.ListKeys()
		sort.Strings(keys)
		for _, key := range keys {
			if listed.has(key) {
				continue
			}
			if _, isQueued := newest[key]; isQueued {
				continue
			}
			obj, exists, err := known.GetByKey(key)
			if err != nil || !exists {
				// Gone from known in between: the key is still owed its
				// deletion, without an object.
				obj = nil
			}
			tombstones = append(tombstones, DeletedFinalStateUnknown{Key: key, Obj: obj})
		}
	}
	return tombstones, nil
}

// Resync queues a resync. With atomic events it is one SyncAll delta.
// Without, it queues a Sync of each known object whose key has no delta
// queued (such a key's queued delta is newer than what is known), in
// sorted key order.
func (f *RealFIFO) Resync() error {
	f.lock.Lock()
	defer f.lock.Unlock()
	if f.atomicEvents {
		return f.appendLocked(SyncAll, SyncAllInfo{})
	}
	queued := set{}
	for _, d := range f.items {
		key, err := f.KeyOf(d.Object)
		if err != nil {
			return KeyError{d, err}
		}
		queued.insert(key)
	}
	keys := f.knownObjects.ListKeys()
	sort.Strings(keys)
	for _, key := range keys {
		if queued.has(key) {
			continue
		}
		obj, exists, err := f.knownObjects.GetByKey(key)
		if err != nil || !exists {
			continue
		}
		if err := f.appendLocked(Sync, obj); err != nil {
			return fmt.Errorf("couldn't queue object: %w", err)
		}
	}
	return nil
}

// waitLocked blocks until a delta is queued or the queue is closed and
// drained; it reports false for the latter. Caller must lock first.
func (f *RealFIFO) waitLocked() bool {
	for len(f.items) == 0 {
		if f.closed {
			return false
		}
		f.cond.Wait()
	}
	return true
}

// takeLocked removes the first n queued deltas and returns them. Caller
// must lock first.
func (f *RealFIFO) takeLocked(n int) []Delta {
	out := make([]Delta, n)
	copy(out, f.items[:n])
	// Zero the taken slots: the backing array would keep their objects
	// alive until it is reallocated.
	clear(f.items[:n])
	f.items = f.items[n:]
	return out
}

// poppedLocked counts n popped deltas against the initial population once
// they are processed, so that HasSynced is not true while the last
// initial delta is still being processed. Caller must lock first.
func (f *RealFIFO) poppedLocked(n int) {
	if f.initialPopulationCount > 0 {
		f.initialPopulationCount = max(f.initialPopulationCount-n, 0)
		f.checkSyncedLocked()
	}
}

// Pop blocks until a delta is queued, then removes the oldest and calls
// process with it (as a Deltas of one) under the lock. isInInitialList is
// true while the queue has not synced. Pop returns the delta and
// process's error, or ErrFIFOClosed once the queue is closed and drained.
func (f *RealFIFO) Pop(process PopProcessFunc) (Deltas, error) {
	f.lock.Lock()
	defer f.lock.Unlock()
	if !f.waitLocked() {
		return nil, ErrFIFOClosed
	}
	isInInitialList := !f.syncedClosed
	item := Deltas(f.takeLocked(1))
	defer f.poppedLocked(1)
	return item, process(item, isInInitialList)
}

// ProcessBatchFunc processes the deltas of one PopBatch: each of another
// key, oldest first.
type ProcessBatchFunc func(deltas []Delta, isInInitialList bool) error

// batchable are the delta types PopBatch may hand out together; the
// atomic ones go alone.
func batchable(t DeltaType) bool {
	switch t {
	case Sync, Replaced, Added, Updated, Deleted:
		return true
	}
	return false
}

// PopBatch blocks until a delta is queued, then removes the longest run
// of queued deltas that can be processed together — at most the batch
// size, of distinct keys, all batchable, none past the initial population
// when the first is in it — and calls processBatch with them, or
// processSingle when the run is one delta. Both run under the lock. It
// returns their error, or ErrFIFOClosed once the queue is closed and
// drained.
func (f *RealFIFO) PopBatch(processBatch ProcessBatchFunc, processSingle PopProcessFunc) error {
	f.lock.Lock()
	defer f.lock.Unlock()
	if !f.waitLocked() {
		return ErrFIFOClosed
	}
	isInInitialList := !f.syncedClosed
	n := f.batchLengthLocked()
	deltas := f.takeLocked(n)
	defer f.poppedLocked(n)
	if n == 1 {
		return processSingle(Deltas(deltas), isInInitialList)
	}
	return processBatch(deltas, isInInitialList)
}

// batchLengthLocked is how many of the queued deltas the next PopBatch
// takes; at least one. Caller must lock first; the queue is not empty.
func (f *RealFIFO) batchLengthLocked() int {
	keys := set{}
	n := 0
	for i := 0; i < f.batchSize && i < len(f.items); i++ {
		if f.initialPopulationCount > 0 && i >= f.initialPopulationCount {
			break
		}
		d := f.items[i]
		if !batchable(d.Type) {
			if n == 0 {
				n = 1
			}
			break
		}
		key, err := f.KeyOf(d)
		if err != nil {
			// A delta without a key closes the batch, and goes in it:
			// popped, as a single Pop would.
			n++
			break
		}
		if keys.has(key) {
			break
		}
		keys.insert(key)
		n++
	}
	return n
}
