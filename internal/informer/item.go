package informer

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-deltas/kubectl-deltas/internal/cache"
	"github.com/kubectl-deltas/kubectl-deltas/internal/rawobj"
)

// Item is one delta of a popped batch, with the Store's state around it.
type Item struct {
	// Delta is the delta as the FIFO popped it.
	Delta cache.Delta
	// Type is what the delta is shown as, and Initial whether it is part of
	// the state the stream started from; both are decided by the engine
	// (see show) and read by every Sink, which never rewrites them.
	Type    cache.DeltaType
	Initial bool
	// InInitialList is the FIFO's isInInitialList for the delta: popped
	// before the informer's queue had synced (what OnAdd is told). Set by
	// show, never rewritten.
	InInitialList bool
	// Object is the object after the delta; for a tombstone its last known
	// state, possibly nil.
	Object *rawobj.Object
	// Old is the Store's state of the key before the delta, nil if it had
	// none.
	Old *rawobj.Object
	// Key is the FIFO key, namespace/name or name.
	Key string
	// Tombstone marks a Deleted delta whose final state was missed (the
	// object vanished while the watch was down, found by a relist).
	Tombstone bool
	// Unchanged marks a Replaced delta of an object that the Store already
	// had at this resourceVersion and UID: a relist, or a list cut off and
	// started again, brought nothing new.
	Unchanged bool
	// CaughtUp marks a change of an informer that resumed a recording
	// that was made while nothing recorded: the watch from the recording's
	// position, or its relist, caught it up as the run began.
	CaughtUp bool
	// Owners is, under --tree, the chain of ownerReferences from the root
	// the object belongs to down to its direct owner; set by the tree, nil
	// otherwise.
	Owners []metav1.OwnerReference
}

// Batch is the deltas of one Pop: the deltas of one key, oldest first.
type Batch struct {
	Informer *Informer
	Items    []Item
	// Initial is true for the deltas of the initial list, popped before the
	// informer's FIFO had synced.
	Initial bool
	// Joined is true for the batches of an informer added while the stream
	// was running (a type that appeared): its initial list is news to the
	// stream, not part of the state the stream started from.
	Joined bool
}

// InitialState reports whether b was popped while the informer's initial
// list came in and that list is part of the state the stream started
// from (not the list of a type that joined later).
func (b *Batch) InitialState() bool { return b.Initial && !b.Joined }

// show decides what the items of a batch are shown as. It and Entering are
// the only places that decide it:
//
//   - the listed objects of an informer that joined the running stream (a
//     type that appeared) are news: Added, not initial (--watch-only keeps
//     them);
//   - a Replaced popped with an initial list that is part of the starting
//     state is initial; the other deltas popped with it (changes the watch
//     brought in before the pop) are changes, not initial;
//   - every other delta is shown as popped.
func (b *Batch) show() {
	for i := range b.Items {
		it := &b.Items[i]
		it.Type = it.Delta.Type
		if b.Initial && b.Joined && it.Type == cache.Replaced {
			it.Type = cache.Added
		}
		it.Initial = b.InitialState() && it.Type == cache.Replaced
		it.InInitialList = b.Initial
	}
}

// Entering makes it the first delta shown of an object that enters a view
// of the stream that filters objects (--tree's members): Replaced and
// initial while the state the view starts from comes in, Added after it;
// with no previous state, since none was shown.
func (it *Item) Entering(initialState bool) {
	it.Type, it.Initial = cache.Added, false
	if initialState {
		it.Type, it.Initial = cache.Replaced, true
	}
	it.Old, it.Unchanged = nil, false
}
