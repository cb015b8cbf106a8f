package cmd

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/kubectl-deltas/kubectl-deltas/internal/cache"
	"github.com/kubectl-deltas/kubectl-deltas/internal/rawobj"
)

// informer is the pipeline of one watch target: Reflector -> DeltaFIFO ->
// pop -> Store. The Store is the FIFO's knownObjects; the consumer keeps it
// up to date under the FIFO's lock, as client-go's processDeltas does.
type informer struct {
	target    watchTarget
	store     cache.Indexer
	fifo      *cache.DeltaFIFO
	reflector *cache.Reflector

	// poppedInitial counts items popped with isInInitialList, written by
	// the consumer goroutine under the FIFO lock; handledInitial counts
	// those the output loop has handled (printed or filtered) and is only
	// touched by the output loop. The initial list is fully out when the
	// FIFO has synced and the two agree.
	poppedInitial  atomic.Int64
	handledInitial int64
}

// item is one delta of a popped batch, with what the output needs.
type item struct {
	delta cache.Delta
	// obj is the object after the delta; for a tombstone its last known
	// state, possibly nil.
	obj *rawobj.Object
	// old is the Store's state before the delta, nil if it had none.
	old *rawobj.Object
	// key is the FIFO key (namespace/name).
	key       string
	tombstone bool
	// unchanged marks a Replaced delta of an object whose resourceVersion
	// the Store already had (a relist, or a list cut off and started
	// again): not printed unless --relist=all.
	unchanged bool
}

// batch is the deltas of one Pop.
type batch struct {
	inf     *informer
	items   []item
	initial bool
}

// knownStore is the Store as the FIFO's knownObjects. In resume mode
// (--resource-version) the Store starts empty, so a Deleted event for an
// object it never saw would be dropped (D5); there, unknown keys answer
// with an error, which makes the FIFO queue the delete anyway.
type knownStore struct {
	cache.Indexer
	resume bool
}

var errUnknownInResume = errors.New("object not seen since the stream was resumed")

func (k knownStore) GetByKey(key string) (any, bool, error) {
	obj, exists, err := k.Indexer.GetByKey(key)
	if err == nil && !exists && k.resume {
		return nil, false, errUnknownInResume
	}
	return obj, exists, err
}

// process applies popped deltas to the Store and describes them for the
// output. It runs under the FIFO's lock and does no I/O.
func (inf *informer) process(deltas cache.Deltas, relistAll bool) ([]item, error) {
	items := make([]item, 0, len(deltas))
	for _, d := range deltas {
		it := item{delta: d}
		switch d.Type {
		case cache.Sync, cache.Replaced, cache.Added, cache.Updated:
			obj, ok := d.Object.(*rawobj.Object)
			if !ok {
				return nil, fmt.Errorf("unexpected object %T in a %s delta", d.Object, d.Type)
			}
			it.obj, it.key = obj, cache.ObjectKey(obj)
			old, exists, err := inf.store.GetByKey(it.key)
			if err != nil {
				return nil, err
			}
			if exists {
				it.old = old.(*rawobj.Object)
				err = inf.store.Update(obj)
			} else {
				err = inf.store.Add(obj)
			}
			if err != nil {
				return nil, err
			}
			// A Replaced delta of an object the Store already has at this
			// resourceVersion comes from a relist, or from a list that
			// was cut off and started again.
			it.unchanged = d.Type == cache.Replaced && !relistAll && it.old != nil &&
				it.old.ResourceVersion == obj.ResourceVersion && it.old.UID == obj.UID
		case cache.Deleted:
			switch o := d.Object.(type) {
			case cache.DeletedFinalStateUnknown:
				it.tombstone, it.key = true, o.Key
				if o.Obj != nil {
					obj, ok := o.Obj.(*rawobj.Object)
					if !ok {
						return nil, fmt.Errorf("unexpected object %T in a tombstone", o.Obj)
					}
					it.obj = obj
				}
			case *rawobj.Object:
				it.obj, it.key = o, cache.ObjectKey(o)
			default:
				return nil, fmt.Errorf("unexpected object %T in a Deleted delta", d.Object)
			}
			if old, exists, _ := inf.store.GetByKey(it.key); exists {
				it.old = old.(*rawobj.Object)
			}
			if err := inf.store.Delete(d.Object); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("unknown delta type %q", d.Type)
		}
		items = append(items, it)
	}
	return items, nil
}

// consume pops the FIFO until it is closed and hands each batch to out.
// The FIFO is the buffer: while the output is slow, this goroutine waits on
// out and the reflector keeps reading the watch into the FIFO.
func (inf *informer) consume(ctx context.Context, out chan<- batch, relistAll bool, fail func(error)) {
	for {
		var b batch
		_, err := inf.fifo.Pop(func(deltas cache.Deltas, initial bool) error {
			items, err := inf.process(deltas, relistAll)
			if err != nil {
				return err
			}
			if initial {
				inf.poppedInitial.Add(1)
			}
			b = batch{inf: inf, items: items, initial: initial}
			return nil
		})
		if errors.Is(err, cache.ErrFIFOClosed) {
			return
		}
		if err != nil {
			fail(fmt.Errorf("internal error processing %s: %w", inf.target.mapping.Resource.Resource, err))
			return
		}
		select {
		case out <- b:
		case <-ctx.Done():
			return
		}
	}
}

// initialDone reports whether every delta of the initial list has been
// handled by the output loop. Called by the output loop only.
func (inf *informer) initialDone() bool {
	// HasSynced takes the FIFO lock, so a Pop that is processing the last
	// initial item has finished (and counted it) when it returns true.
	return inf.fifo.HasSynced() && inf.poppedInitial.Load() == inf.handledInitial
}
