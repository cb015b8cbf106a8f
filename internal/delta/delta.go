// Package delta names the types of change kubectl deltas hands out: the
// vocabulary shared by the informer machinery that produces deltas
// (internal/cache, as client-go's DeltaType) and the record and printers
// that show them. It imports nothing of the project, so that a printer can
// know the words without knowing the machinery.
package delta

// Type is the type of a change (addition, deletion, etc).
type Type string

// The types of change, as client-go's DeltaFIFO names them.
const (
	Added   Type = "Added"
	Updated Type = "Updated"
	Deleted Type = "Deleted"
	// Replaced is emitted when we encountered watch errors and had to do a
	// relist. We don't know if the replaced object has changed.
	//
	// NOTE: Previous versions of client-go emitted Sync for this case; the
	// DeltaFIFO does too unless EmitDeltaTypeReplaced is set.
	Replaced Type = "Replaced"
	// Sync is for synthetic events during a periodic resync.
	Sync Type = "Sync"
)

// Types returns every type, in the order help texts list them.
func Types() []Type {
	return []Type{Added, Updated, Deleted, Replaced, Sync}
}
