package cache

import "github.com/kubectl-deltas/kubectl-deltas/internal/delta"

// DeltaType is the type of a change (addition, deletion, etc). The words
// live in package delta, which the printers can import without the cache.
type DeltaType = delta.Type

// Change type definition.
const (
	Added    = delta.Added
	Updated  = delta.Updated
	Deleted  = delta.Deleted
	Replaced = delta.Replaced
	Sync     = delta.Sync
)

// Delta is a member of Deltas (a list of Delta objects) which in its turn is
// the type stored by a DeltaFIFO. It tells you what change happened, and the
// object's state after that change.
type Delta struct {
	Type DeltaType
	// Object is the object after the change (for Deleted, the last state
	// seen), or a DeletedFinalStateUnknown when a relist found the object
	// gone and its final state was missed.
	Object any
	// Coalesced counts the Updated deltas of the same key that this one
	// replaced because the key's backlog exceeded the FIFO's
	// MaxUpdatedBacklog. It is 0 unless the consumer fell behind.
	Coalesced int
}

// Deltas is a list of one or more 'Delta's to an individual object. The
// oldest delta is at index 0, the newest delta is the last one.
type Deltas []Delta

// Oldest is a convenience function that returns the oldest delta, or nil if
// there are no deltas.
func (d Deltas) Oldest() *Delta {
	if len(d) > 0 {
		return &d[0]
	}
	return nil
}

// Newest is a convenience function that returns the newest delta, or nil if
// there are no deltas.
func (d Deltas) Newest() *Delta {
	if n := len(d); n > 0 {
		return &d[n-1]
	}
	return nil
}

// DeletedFinalStateUnknown is placed into a DeltaFIFO in the case where an
// object was deleted but the watch deletion event was missed while
// disconnected from the apiserver. In this case we don't know the final
// "resting" state of the object, so there's a chance the included `Obj` is
// stale. Obj may be nil when nothing was known of the object.
type DeletedFinalStateUnknown struct {
	Key string
	Obj any
}
