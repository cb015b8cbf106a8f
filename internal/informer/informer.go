package informer

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/clock"

	"github.com/kubectl-deltas/kubectl-deltas/internal/cache"
	"github.com/kubectl-deltas/kubectl-deltas/internal/rawobj"
)

// Role is what a target is for in a run. The layers above the engine add
// targets of their own (--tree's scouts and owned types, --events' Events)
// and tell their batches apart by it.
type Role int

const (
	// RoleRoot is a target the user named or selected, or a type of a
	// category or of --all-types: the run's selectors apply, its deltas
	// are printed.
	RoleRoot Role = iota
	// RoleScout is --tree's search of one type for what the roots own:
	// every object (the run's selectors do not apply), metadata only
	// (PartialObjectMetadata), never printed.
	RoleScout
	// RoleOwned is a type in which --tree found an owned object, watched
	// whole: every object, printed when it is in a tree.
	RoleOwned
	// RoleEvents is the Events that explain the run's objects (--events):
	// a companion stream with its own FieldSelector whose Sink
	// (events.Join) decides what is shown.
	RoleEvents
)

// IsRoot reports whether the role is RoleRoot: a target the user named or
// selected, not a scout, an owned type or the Events that explain them.
func (r Role) IsRoot() bool { return r == RoleRoot }

// Unfiltered reports whether the run's label and field selectors do not
// apply: every object of the collection is watched (what a tree's roots
// own, whatever its labels; the Events about them).
func (r Role) Unfiltered() bool { return r != RoleRoot }

// MetadataOnly reports whether the objects' metadata only is listed and
// watched (PartialObjectMetadata), also when the run watches whole
// objects.
func (r Role) MetadataOnly() bool { return r == RoleScout }

// String names the role in IDs and messages.
func (r Role) String() string {
	switch r {
	case RoleScout:
		return "scout"
	case RoleOwned:
		return "owned"
	case RoleEvents:
		return "events"
	}
	return "root"
}

// Target names the collection one informer lists and watches.
type Target struct {
	// Context is the kubeconfig context of the cluster, when a run
	// watches several; "" for one cluster.
	Context string
	// Resource is the collection; Kind is the kind of its objects.
	Resource schema.GroupVersionResource
	Kind     schema.GroupVersionKind
	// Namespace, or "" for cluster-scoped resources and all namespaces.
	Namespace string
	// Name, when set, narrows the collection to the object of that name.
	Name string
	// Role is what the target is for (RoleRoot by default).
	Role Role
	// Optional marks a target the user did not name (a member of a category
	// or of --all-types, a scout): when the server forbids it, it is
	// dropped with a note instead of ending the run.
	Optional bool
	// FieldSelector is the own field selector of a RoleEvents target.
	FieldSelector string
	// APIService names the APIService whose aggregated server serves the
	// target ("" when kube-apiserver serves it): that server's outages are
	// its own, reported apart from the cluster's, and do not end the type.
	APIService string
}

// Describe names targets for messages: "configmaps in shop (prod),
// deployments.apps/web in shop"; "no type" for none.
func Describe(ts []Target) string {
	if len(ts) == 0 {
		return "no type"
	}
	parts := make([]string, 0, len(ts))
	for _, t := range ts {
		s := t.Resource.GroupResource().String()
		if t.Name != "" {
			s += "/" + t.Name
		}
		if t.Namespace != "" {
			s += " in " + t.Namespace
		}
		if t.Context != "" {
			s += " (" + t.Context + ")"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}

// ID identifies the informer of t within an Engine: two targets with the
// same ID share one informer.
func (t Target) ID() string {
	id := t.Resource.String() + "|" + t.Namespace + "|" + t.Name
	if t.Context != "" {
		id = t.Context + "|" + id
	}
	if t.Role != RoleRoot {
		id += "|" + t.Role.String()
	}
	if t.Role == RoleEvents {
		id += "|" + t.FieldSelector
	}
	return id
}

// Informer is the pipeline of one Target: Reflector → DeltaFIFO → Pop →
// Store. The Store is the FIFO's knownObjects; the consumer updates it under
// the FIFO's lock as it pops, as client-go's processDeltas does, so that a
// relist's Replace sees exactly what has been popped.
type Informer struct {
	target Target
	// resumedFrom is the resourceVersion the informer resumed a recorded
	// stream from (Config.Resume), "" otherwise; gapSaid is set once the
	// resumed watch is past that point: its loss was said, or a watch
	// held. Only the reflector's goroutine (its handlers) touches it.
	resumedFrom string
	gapSaid     bool
	// resumed: the informer resumed a recording (Config.Resume). Set at
	// construction, read-only after.
	resumed bool
	// recorded are, for an informer that resumed a recording from a
	// position (Resumed.Seen), the resourceVersion of the last record of
	// each key recorded after it: the resumed watch brings those changes
	// again, and the consumer drops them. Touched under the FIFO's lock
	// only (process).
	recorded map[string]string
	// caughtUpTo is, for an informer that resumed a recording, the
	// collection's resourceVersion on the server as it started (a list of
	// one item): a change up to it happened while nothing recorded, and
	// is caught up (Item.CaughtUp). "" otherwise, or when it could not be
	// asked. Written before the reflector runs, on its goroutine; read by
	// process under the FIFO's lock after the reflector has queued.
	caughtUpTo string
	// lw is the informer's ListerWatcher, kept for that one list.
	lw cache.ListerWatcher

	store     cache.Indexer
	fifo      queue
	reflector *cache.Reflector
	// inOrder: fifo is a RealFIFO emitting atomic events (Config.FIFO is
	// FIFOReal), whose ReplacedAll and SyncAll deltas process expands.
	// Set at construction, read-only after.
	inOrder bool

	// cancel stops the reflector and the consumer, stopReflector the
	// reflector alone; wg counts the informer's goroutines, reflectorDone
	// is closed when the reflector's has returned. All are set by start,
	// under the Engine's lock, and are nil for an informer that was never
	// started.
	cancel        context.CancelFunc
	stopReflector context.CancelFunc
	wg            sync.WaitGroup
	reflectorDone chan struct{}
	// done is closed when the informer is stopped; set by start.
	done <-chan struct{}

	// poppedInitial counts the batches popped with isInInitialList; the
	// consumer writes it under the FIFO lock. handledInitial counts those
	// the Engine's loop has handed to the Sink and is touched by the loop
	// only. The initial list is fully out when the FIFO has synced and the
	// two agree.
	poppedInitial  atomic.Int64
	handledInitial int64
	// popped counts every batch popped (written under the FIFO's lock, as
	// the batch leaves the queue); handled those the Engine's loop has
	// handed to the Sink (touched by the loop only). Equal, with nothing
	// queued: every change the reflector has read is with the Sink
	// (Engine.Positions).
	popped  atomic.Int64
	handled int64

	// joined: the informer was added while the Engine ran. Set before
	// start, read-only after.
	joined bool
	// admission, if set, decides which objects enter the Store (see
	// Admission). Set before start, read-only after.
	admission Admission

	// columns are the column definitions of the last Table the server sent
	// (watch events after a watch's first carry none); touched under the
	// FIFO's lock only (process, Adopt).
	columns []rawobj.TableColumn

	// errLock guards lastErr, the last error its reflector reported.
	errLock sync.Mutex
	lastErr error

	// dropped is Config.Dropped; selects is Config.Selects (nil: not
	// known). Set at construction, read-only after.
	dropped func(t Target, key string, listed bool)
	selects func(Target, *rawobj.Object) (selects, known bool)
	// keepsListed: the informer remembers the UIDs of its initial list
	// (Config.KeepListed). Set at construction, read-only after.
	keepsListed bool
	// listedLock guards listed, the UIDs of the objects the initial list
	// brought, and forgotListed: written by the consumer as it pops them
	// (under the FIFO's lock, so that the Store never holds a listed
	// object that listed lacks), read by Listed, dropped by ForgetListed.
	listedLock   sync.Mutex
	listed       map[string]struct{}
	forgotListed bool
}

// Listed reports whether the object of this UID came with the informer's
// initial list: it existed when the informer started. It knows only the
// objects popped so far (all of the list once InitialDone), and nothing for
// an informer that does not keep them (Config.KeepListed) or forgot them.
func (inf *Informer) Listed(uid string) bool {
	inf.listedLock.Lock()
	defer inf.listedLock.Unlock()
	_, ok := inf.listed[uid]
	return ok
}

// ForgetListed drops what Listed knows, once nobody will ask again.
func (inf *Informer) ForgetListed() {
	inf.listedLock.Lock()
	defer inf.listedLock.Unlock()
	inf.listed, inf.forgotListed = nil, true
}

// noteListed remembers the UID of an object of the initial list.
func (inf *Informer) noteListed(uid string) {
	inf.listedLock.Lock()
	defer inf.listedLock.Unlock()
	if inf.forgotListed {
		return
	}
	if inf.listed == nil {
		inf.listed = map[string]struct{}{}
	}
	inf.listed[uid] = struct{}{}
}

// LastError is the last error the informer's reflector reported (a failed
// list or watch), nil if none.
func (inf *Informer) LastError() error {
	inf.errLock.Lock()
	defer inf.errLock.Unlock()
	return inf.lastErr
}

func (inf *Informer) setLastError(err error) {
	inf.errLock.Lock()
	defer inf.errLock.Unlock()
	inf.lastErr = err
}

// Admission decides which of the objects an informer watches enter its
// Store and the stream, for an informer that keeps only some of what it
// watches (the Events of the run's objects, on a busy cluster).
type Admission interface {
	// Admit reports whether obj, whose key is not in the Store, enters
	// it; initial says it came with the initial list. An object not
	// admitted is not stored nor handed out, and its deletion is not
	// either; a later version is asked about again. Admit runs on the
	// informer's consumer goroutine under the FIFO's lock: it must not
	// block, nor call the informer.
	Admit(obj *rawobj.Object, initial bool) bool
}

// Adopt puts obj into the Store, as a popped Added delta would, unless
// the Store has its key already (a newer version came in since): an
// object that Admission turned away and wants in after all. It reports
// whether obj was stored; the caller hands it out. It takes the FIFO's
// lock, so a relist sees the Store with or without obj, never half.
func (inf *Informer) Adopt(obj *rawobj.Object) (stored bool, err error) {
	key := cache.ObjectKey(obj)
	inf.fifo.WithLock(func() {
		inf.withColumns(obj)
		var exists bool
		if _, exists, err = inf.store.GetByKey(key); err != nil || exists {
			return
		}
		err = inf.store.Add(obj)
		stored = err == nil
	})
	return stored, err
}

// Target returns what the informer watches.
func (inf *Informer) Target() Target { return inf.target }

// Selects reports whether the informer's list and watch select obj, an
// object of its type and cluster — it hands out, or will, every change of
// obj — when that is known from obj alone (known false otherwise: a field
// selector on fields other than the name and namespace, or no
// Config.Selects).
func (inf *Informer) Selects(obj *rawobj.Object) (selects, known bool) {
	if inf.selects == nil {
		return false, false
	}
	return inf.selects(inf.target, obj)
}

// Store returns the informer's Store: the objects popped so far, by key. It
// is safe for concurrent reads.
func (inf *Informer) Store() cache.Indexer { return inf.store }

// Resumed reports whether the informer resumed a recorded stream
// (Config.Resume): its Store began as the recorded state.
func (inf *Informer) Resumed() bool { return inf.resumed }

// LastSyncResourceVersion is the resourceVersion the informer has last
// observed (list, event or bookmark).
func (inf *Informer) LastSyncResourceVersion() string {
	return inf.reflector.LastSyncResourceVersion()
}

// newInformer builds the pipeline of t; nothing runs until start.
func newInformer(t Target, cfg *Config, errorHandler func(*Informer, error), healthyHandler func(*Informer)) (*Informer, error) {
	indexers := cfg.Indexers
	if indexers == nil {
		indexers = cache.Indexers{}
	}
	inf := &Informer{
		target:      t,
		store:       cache.NewIndexer(cache.DeletionHandlingMetaNamespaceKeyFunc, indexers),
		keepsListed: cfg.KeepListed != nil && cfg.KeepListed(t),
		dropped:     cfg.Dropped,
		selects:     cfg.Selects,
	}
	resumeFrom, resumed := cfg.ResumeFrom, false
	if cfg.Resume != nil {
		if r, ok := cfg.Resume(t); ok {
			// The Store starts as the state resumed from: the watch from
			// its position, or a relist without one, says what changed
			// since, and nothing is an initial list.
			for _, obj := range r.Objects {
				_ = inf.store.Add(obj)
			}
			resumeFrom, inf.resumedFrom, inf.recorded, resumed = r.ResourceVersion, r.ResourceVersion, r.Seen, true
		}
	}
	if cfg.FIFO == FIFOReal {
		// As client-go v0.36's informers queue: in order, a relist and a
		// resync each one atomic delta that process expands against the
		// Store. A RealFIFO never drops a deletion, known key or not.
		fifo, err := cache.NewRealFIFOWithOptions(cache.RealFIFOOptions{AtomicEvents: true, Populated: resumed})
		if err != nil {
			return nil, fmt.Errorf("internal error: %w", err)
		}
		inf.fifo, inf.inOrder = fifo, true
	} else {
		inf.fifo = cache.NewDeltaFIFOWithOptions(cache.DeltaFIFOOptions{
			// Resuming a resourceVersion with no state (--resource-version),
			// a deletion of a key never seen is news; resuming a recording's
			// state, the Store knows every key there is.
			KnownObjects:          knownStore{Indexer: inf.store, resume: resumeFrom != "" && !resumed},
			EmitDeltaTypeReplaced: true,
			MaxUpdatedBacklog:     cfg.MaxUpdatedBacklog,
			Populated:             resumed,
		})
	}
	name := t.Resource.GroupResource().String()
	var backoff cache.BackoffManager
	if cfg.NewBackoff != nil {
		backoff = cfg.NewBackoff()
	}
	inf.lw = cfg.NewListerWatcher(t)
	inf.resumed = resumed
	inf.reflector = cache.NewReflector(inf.lw, inf.fifo, cache.ReflectorOptions{
		Name:                   name,
		TypeDescription:        name,
		ExpectedType:           &rawobj.Object{},
		ResyncPeriod:           cfg.ResyncPeriod,
		MinWatchTimeout:        cfg.MinWatchTimeout,
		WatchListPageSize:      cfg.PageSize,
		UseWatchList:           cfg.WatchList,
		InitialResourceVersion: resumeFrom,
		ErrorHandler:           func(err error) { errorHandler(inf, err) },
		HealthyHandler:         func() { inf.gapSaid = true; healthyHandler(inf) },
		Clock:                  cfg.Clock,
		Backoff:                backoff,
	})
	return inf, nil
}

// queue is what an Informer needs of its FIFO: a DeltaFIFO or a RealFIFO.
type queue interface {
	cache.Queue
	// Synced is closed once HasSynced holds.
	Synced() <-chan struct{}
	// Len is the number of keys (DeltaFIFO) or deltas (RealFIFO) queued.
	Len() int
	// WithLock runs fn under the lock Pop processes under (takes it: a
	// …Locked name, as client-go writes, would say the caller holds it).
	WithLock(fn func())
	// KeyOf is the key of an object, a Deltas or a tombstone.
	KeyOf(obj any) (string, error)
}

// start runs the informer's goroutines until ctx ends or stop is called:
// the reflector, the consumer that hands popped batches to out, and a
// waiter that pokes synced once the FIFO has synced.
func (inf *Informer) start(ctx context.Context, out chan<- Batch, synced chan<- struct{}, fail func(error)) {
	ctx, inf.cancel = context.WithCancel(ctx)
	inf.done = ctx.Done()
	reflectorCtx, stopReflector := context.WithCancel(ctx)
	inf.stopReflector, inf.reflectorDone = stopReflector, make(chan struct{})
	inf.wg.Go(func() {
		defer close(inf.reflectorDone)
		if inf.resumed {
			inf.caughtUpTo = serverResourceVersion(reflectorCtx, inf.lw)
		}
		inf.reflector.Run(reflectorCtx)
	})
	inf.wg.Go(func() { inf.consume(ctx, out, fail) })
	inf.wg.Go(func() {
		select {
		case <-inf.fifo.Synced():
			poke(synced)
		case <-ctx.Done():
		}
	})
}

// stop ends the informer's goroutines and waits for them. The FIFO is
// closed, so that a consumer blocked in Pop returns.
func (inf *Informer) stop() {
	if inf.cancel != nil {
		inf.cancel()
	}
	inf.fifo.Close()
	inf.wg.Wait()
}

// retire ends an informer whose resource the server no longer serves,
// without losing a change: the reflector stops, every object still in the
// Store is queued as Deleted (final state unknown) — none, normally, since
// the server deletes a type's objects, and sends their deletions, before
// the type goes away — and the consumer hands out what is queued before
// the informer stops. It blocks until then, or until the run ends.
func (inf *Informer) retire() {
	if inf.stopReflector == nil {
		inf.stop()
		return
	}
	inf.stopReflector()
	<-inf.reflectorDone
	// Replace with nothing makes a tombstone of every known key; Pop
	// drains a closed queue before it reports ErrFIFOClosed.
	_ = inf.fifo.Replace(nil, "")
	inf.fifo.Close()
	inf.wg.Wait()
	inf.cancel()
}

// poke sends on a one-slot wake-up channel without blocking: a pending
// wake-up already says "look again".
func poke(c chan<- struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// serverResourceVersion is the resourceVersion of lw's collection on the
// server now, from a list of at most one item; "" when the list fails
// (the reflector's own list or watch will say why).
func serverResourceVersion(ctx context.Context, lw cache.ListerWatcher) string {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	list, err := lw.List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		return ""
	}
	if l, ok := list.(interface{ GetResourceVersion() string }); ok {
		return l.GetResourceVersion()
	}
	return ""
}

// consume pops the FIFO until it is closed or ctx ends, and hands each
// batch to out. The FIFO is the buffer: while the output is slow, this
// goroutine waits on out and the reflector keeps reading the watch into the
// FIFO.
func (inf *Informer) consume(ctx context.Context, out chan<- Batch, fail func(error)) {
	var batches []Batch
	for {
		batches = batches[:0]
		_, err := inf.fifo.Pop(func(deltas cache.Deltas, initial bool) error {
			items, err := inf.process(deltas, initial)
			if err != nil || len(items) == 0 {
				// Every delta was kept out (Admission) or recorded
				// already: nothing to hand out, nothing to count.
				return err
			}
			batches = inf.batches(batches, items, initial)
			inf.popped.Add(int64(len(batches)))
			if initial {
				inf.poppedInitial.Add(int64(len(batches)))
			}
			return nil
		})
		if errors.Is(err, cache.ErrFIFOClosed) {
			return
		}
		if err != nil {
			fail(fmt.Errorf("internal error processing %s: %w", inf.target.Resource.Resource, err))
			return
		}
		for i := range batches {
			select {
			case out <- batches[i]:
			case <-ctx.Done():
				return
			}
			batches[i] = Batch{}
		}
	}
}

// batches appends to dst the batches a Pop's items are handed out as: the
// DeltaFIFO's one key is one batch; a RealFIFO hands out every delta on
// its own (a relist's or a resync's expands to one per key), so each is
// a batch.
func (inf *Informer) batches(dst []Batch, items []Item, initial bool) []Batch {
	if !inf.inOrder {
		b := Batch{Informer: inf, Items: items, Initial: initial, Joined: inf.joined}
		b.show()
		return append(dst, b)
	}
	for i := range items {
		b := Batch{Informer: inf, Items: items[i : i+1 : i+1], Initial: initial, Joined: inf.joined}
		b.show()
		dst = append(dst, b)
	}
	return dst
}

// process applies popped deltas to the Store and describes them; initial
// says they came with the initial list. It runs under the FIFO's lock and
// does no I/O.
func (inf *Informer) process(deltas cache.Deltas, initial bool) ([]Item, error) {
	items := make([]Item, 0, len(deltas))
	for _, d := range deltas {
		var err error
		switch d.Type {
		case cache.ReplacedAll:
			items, err = inf.processReplacedAll(items, d, initial)
		case cache.SyncAll:
			items, err = inf.processSyncAll(items, initial)
		case cache.Bookmark:
			// Nothing to hand out: the reflector keeps the position.
		default:
			items, err = inf.processDelta(items, d, initial)
		}
		if err != nil {
			return nil, err
		}
	}
	return items, nil
}

// processReplacedAll expands a RealFIFO's relist as client-go v0.36's
// processReplacedAllInfo does: first a tombstone of every stored key the
// list lacks, then a Replaced delta of each listed object, in list order.
// Called under the FIFO's lock.
func (inf *Informer) processReplacedAll(items []Item, d cache.Delta, initial bool) ([]Item, error) {
	info, ok := d.Object.(cache.ReplacedAllInfo)
	if !ok {
		return nil, fmt.Errorf("a ReplacedAll delta holds %T, not ReplacedAllInfo", d.Object)
	}
	tombstones, err := cache.Reconcile(info.Objects, nil, inf.store, inf.fifo.KeyOf)
	if err != nil {
		return nil, err
	}
	items = slices.Grow(items, len(tombstones)+len(info.Objects))
	for _, t := range tombstones {
		if items, err = inf.processDelta(items, cache.Delta{Type: cache.Deleted, Object: t}, initial); err != nil {
			return nil, err
		}
	}
	for _, obj := range info.Objects {
		if items, err = inf.processDelta(items, cache.Delta{Type: cache.Replaced, Object: obj}, initial); err != nil {
			return nil, err
		}
	}
	return items, nil
}

// processSyncAll expands a RealFIFO's resync: a Sync of every stored
// object, by key (client-go follows its store's map order). Called under
// the FIFO's lock.
func (inf *Informer) processSyncAll(items []Item, initial bool) ([]Item, error) {
	keys := inf.store.ListKeys()
	slices.Sort(keys)
	var err error
	for _, key := range keys {
		obj, exists, _ := inf.store.GetByKey(key)
		if !exists {
			continue
		}
		if items, err = inf.processDelta(items, cache.Delta{Type: cache.Sync, Object: obj}, initial); err != nil {
			return nil, err
		}
	}
	return items, nil
}

// processDelta applies one delta to the Store and appends its Item to
// items, unless the delta is kept out. Called under the FIFO's lock.
func (inf *Informer) processDelta(items []Item, d cache.Delta, initial bool) ([]Item, error) {
	if inf.recorded != nil && inf.wasRecorded(d) {
		return items, nil
	}
	it := Item{Delta: d}
	switch d.Type {
	case cache.Sync, cache.Replaced, cache.Added, cache.Updated:
		obj, ok := d.Object.(*rawobj.Object)
		if !ok {
			return nil, fmt.Errorf("unexpected object %T in a %s delta", d.Object, d.Type)
		}
		inf.withColumns(obj)
		it.Object, it.Key = obj, cache.ObjectKey(obj)
		old, exists, err := inf.store.GetByKey(it.Key)
		if err != nil {
			return nil, err
		}
		if !exists && inf.admission != nil && !inf.admission.Admit(obj, initial) {
			inf.drop(it.Key, d.Type == cache.Replaced)
			return items, nil
		}
		if initial && d.Type == cache.Replaced && inf.keepsListed {
			// A Replaced delta popped with the initial list is an
			// object of the list; an Added one came by the watch.
			// Noted before the Store has it: a reader that finds it
			// in the Store finds it listed.
			inf.noteListed(obj.UID)
		}
		if exists {
			it.Old = old.(*rawobj.Object)
			err = inf.store.Update(obj)
		} else {
			err = inf.store.Add(obj)
		}
		if err != nil {
			return nil, err
		}
		it.Unchanged = d.Type == cache.Replaced && it.Old != nil &&
			it.Old.ResourceVersion == obj.ResourceVersion && it.Old.UID == obj.UID
	case cache.Deleted:
		switch o := d.Object.(type) {
		case cache.DeletedFinalStateUnknown:
			it.Tombstone, it.Key = true, o.Key
			if o.Obj != nil {
				obj, ok := o.Obj.(*rawobj.Object)
				if !ok {
					return nil, fmt.Errorf("unexpected object %T in a tombstone", o.Obj)
				}
				it.Object = obj
			}
		case *rawobj.Object:
			inf.withColumns(o)
			it.Object, it.Key = o, cache.ObjectKey(o)
		default:
			return nil, fmt.Errorf("unexpected object %T in a Deleted delta", d.Object)
		}
		old, exists, _ := inf.store.GetByKey(it.Key)
		if exists {
			it.Old = old.(*rawobj.Object)
		} else if inf.admission != nil {
			// Never admitted: nothing was shown to delete.
			inf.drop(it.Key, it.Tombstone)
			return items, nil
		}
		if err := inf.store.Delete(d.Object); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("unknown delta type %q", d.Type)
	}
	it.CaughtUp = inf.caughtUp(&it)
	return append(items, it), nil
}

// caughtUp reports whether it is a change made while nothing recorded:
// its resourceVersion (a tombstone's last known one) is not past where
// the server stood as the informer resumed. Called under the FIFO's lock.
func (inf *Informer) caughtUp(it *Item) bool {
	if inf.caughtUpTo == "" || it.Unchanged {
		return false
	}
	if it.Object == nil {
		return it.Tombstone
	}
	return !NewerResourceVersion(it.Object.ResourceVersion, inf.caughtUpTo)
}

// wasRecorded reports whether d, a delta of a watch resumed from a
// recording's position, is a change the recording holds already: its
// key was recorded after the position at this resourceVersion or a
// later one. Called under the FIFO's lock.
func (inf *Informer) wasRecorded(d cache.Delta) bool {
	if d.Type != cache.Added && d.Type != cache.Updated && d.Type != cache.Deleted {
		return false
	}
	obj, ok := d.Object.(*rawobj.Object)
	if !ok {
		return false // a tombstone: a relist's, never a watch's
	}
	last, ok := inf.recorded[cache.ObjectKey(obj)]
	return ok && !NewerResourceVersion(obj.ResourceVersion, last)
}

// NewerResourceVersion reports whether resourceVersion a is later than b:
// as numbers when both read as numbers (etcd's revisions, which every
// kube-apiserver serves), else whenever they differ.
func NewerResourceVersion(a, b string) bool {
	x, errX := strconv.ParseUint(a, 10, 64)
	y, errY := strconv.ParseUint(b, 10, 64)
	if errX != nil || errY != nil {
		return a != b
	}
	return x > y
}

// drop tells Config.Dropped of a delta of key kept out; listed: it came
// with a list.
func (inf *Informer) drop(key string, listed bool) {
	if inf.dropped != nil {
		inf.dropped(inf.target, key, listed)
	}
}

// withColumns gives an object that came as a Table row without the
// Table's column definitions those of the last Table, and remembers a
// Table's. Called under the FIFO's lock, before obj is stored or handed
// out (so that setting its Columns does not race a reader).
func (inf *Informer) withColumns(obj *rawobj.Object) {
	switch {
	case obj.Row == nil:
	case obj.Row.Columns != nil:
		inf.columns = obj.Row.Columns
	default:
		obj.Row.Columns = inf.columns
	}
}

// InitialDone reports whether every batch of the informer's initial list
// has been handed to the Sink. Call it only on Run's goroutine: from a
// Sink's Handle or a Check.
func (inf *Informer) InitialDone() bool {
	// HasSynced takes the FIFO lock, so a Pop that is processing the last
	// initial batch has finished (and counted it) when it returns true.
	return inf.fifo.HasSynced() && inf.poppedInitial.Load() == inf.handledInitial
}

// knownStore is the Store as the FIFO's knownObjects. When resuming from a
// resourceVersion the Store starts empty, so the FIFO would drop a Deleted
// event for an object it never saw (a delete of an unknown key is a no-op);
// there, unknown keys answer with an error, which makes the FIFO queue the
// delete anyway.
type knownStore struct {
	cache.Indexer
	resume bool
}

var errUnknownInResume = errors.New("object not seen since the stream was resumed")

// GetByKey implements cache.KeyListerGetter.
func (k knownStore) GetByKey(key string) (any, bool, error) {
	obj, exists, err := k.Indexer.GetByKey(key)
	if err == nil && !exists && k.resume {
		return nil, false, errUnknownInResume
	}
	return obj, exists, err
}

// Resumed is the state a target's stream resumes from (Config.Resume).
type Resumed struct {
	// ResourceVersion is the collection's position: every change up to
	// it is in Objects, and the watch goes on from it. "" relists (no
	// position is known): the relist says what changed.
	ResourceVersion string
	// Objects are the state, as far as it was recorded: up to the
	// position and past it.
	Objects []*rawobj.Object
	// Seen are, by key, the resourceVersion of the last change recorded
	// past the position (deletions included): the watch brings them
	// again, and they are dropped. nil with no position.
	Seen map[string]string
}

// FIFO names the queue an informer's deltas go through, as a client-go
// version's SharedIndexInformer queues them.
type FIFO string

const (
	// FIFODelta is the DeltaFIFO (client-go ≤ v0.32's informers): deltas
	// accumulate per key and a key's are popped together; a relist is a
	// Replaced per listed object then a tombstone per vanished key; a
	// resync a Sync per known key not queued.
	FIFODelta FIFO = "delta"
	// FIFOReal is the RealFIFO with atomic events (client-go v0.36's
	// informers): every event on its own, in order; a relist is one
	// delta, handed out as the tombstones of the vanished keys first,
	// then a Replaced per listed object in list order; a resync is a
	// Sync of every stored object.
	FIFOReal FIFO = "real"
)

// Config is what every informer of an Engine shares.
type Config struct {
	// NewListerWatcher makes the ListerWatcher of a target. Required.
	NewListerWatcher func(Target) cache.ListerWatcher
	// ResyncPeriod, if non-zero, queues a Sync delta for every known object
	// that often.
	ResyncPeriod time.Duration
	// PageSize is the list page size: 0 lets the reflector choose, a
	// positive value is always used, a negative one lists in one request.
	PageSize int64
	// WatchList gets the initial state with a streaming list (a watch with
	// sendInitialEvents), falling back to list and watch when refused.
	WatchList bool
	// ResumeFrom, if set, skips the initial list: watches start from this
	// resourceVersion, and deletes of never-seen objects are kept.
	ResumeFrom string
	// Resume, if set, says for each target whether it resumes a recorded
	// stream: its Store starts as the recorded state and its watch from the
	// recorded resourceVersion; there is no initial list, and a relist (the
	// resourceVersion compacted away) says what changed meanwhile.
	Resume func(Target) (Resumed, bool)
	// MaxUpdatedBacklog folds runs of queued Updated deltas of one key
	// longer than this into the newest (0 keeps all; DeltaFIFO only).
	MaxUpdatedBacklog int
	// FIFO is the queue between each reflector and its consumer:
	// FIFODelta (the default) or FIFOReal.
	FIFO FIFO
	// MinWatchTimeout is the shortest server-side watch timeout; 0 means the
	// reflector's default.
	MinWatchTimeout time.Duration
	// GCPercent, if positive, is the garbage collector's target (GOGC)
	// while Run runs; it is set back when Run returns. ListWatchFlags.Config
	// lowers it under --metadata-only.
	GCPercent int
	// Indexers are the Store's indices; nil means none.
	Indexers cache.Indexers
	// KeepListed, if set, says which informers remember the UIDs of the
	// objects of their initial list (Informer.Listed): --tree asks it of
	// its roots and scouts, to tell the objects that existed when the
	// stream started from those that came after.
	KeepListed func(Target) bool
	// Selects, if set, says whether a target's list and watch select an
	// object of its type and cluster, when its own fields say (known);
	// Informer.Selects asks it. ListWatchFlags.Config sets it.
	Selects func(t Target, obj *rawobj.Object) (selects, known bool)
	// Dropped, if set, is told of each delta an informer's Admission kept
	// out, which is never handed out: its target, its key, and whether it
	// came with a list (an initial list or a relist). A replay accounts
	// with it for what it fed. Called under the FIFO's lock: it must not
	// block, nor call the informer.
	Dropped func(t Target, key string, listed bool)
	// Clock is the time source of the reflectors, the outage warnings and
	// Run's timeout. Defaults to the real clock.
	Clock clock.Clock
	// NewBackoff, if set, makes each reflector's backoff (tests).
	NewBackoff func() cache.BackoffManager
	// Gone, if set, is called when the server answers an optional target's
	// list or watch with NotFound: its resource is no longer served. The
	// informer keeps retrying, quietly, until it is retired or removed. It
	// is called on the reflector's goroutine and must not block.
	Gone func(Target)
	// DescribeAPIService, if set, says what the cluster knows of the
	// APIService of a target served by an aggregated API whose outage
	// begins ("APIService v1.x.io: FailedDiscoveryCheck: …"), for its one
	// warning. It is called on the reflector's goroutine, once per outage,
	// and must return within a few seconds.
	DescribeAPIService func(Target) string
}
