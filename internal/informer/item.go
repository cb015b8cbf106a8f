package informer

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-deltas/kubectl-deltas/internal/cache"
	"github.com/kubectl-deltas/kubectl-deltas/internal/rawobj"
)

// Item is one delta of a popped batch, with the Store's state around it.
type Item struct {
	Delta cache.Delta
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
