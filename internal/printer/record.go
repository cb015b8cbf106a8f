// Package printer writes delta records in the output formats of kubectl
// deltas: text, wide, json, yaml, name, jsonpath, jsonpath-as-json,
// go-template and custom-columns.
package printer

import (
	"encoding/json"
	"time"

	"github.com/kubectl-deltas/kubectl-deltas/internal/diff"
)

// Record is one popped delta as every printer sees it. The field order of
// its JSON form (schema v1) is fixed and documented in docs/output.md:
//
//	type, time, initial, [context], apiVersion, kind, resource, namespace, name, uid,
//	resourceVersion, [finalStateUnknown], [coalesced], [caughtUp], [owners],
//	[manager, operation], [health], [changes], object
//
// Fields in brackets are optional and omitted when empty/false/zero.
type Record struct {
	// Type is one of Added, Updated, Deleted, Replaced, Sync.
	Type string
	// Time is when the delta was popped from the FIFO.
	Time time.Time
	// Initial is true for deltas of the first list (popped before the FIFO
	// had synced).
	Initial bool
	// Context is the kubeconfig context of the cluster the delta comes
	// from, when several are watched; "" for one cluster.
	Context string

	APIVersion string
	Kind       string
	// Resource is the plural resource name ("configmaps").
	Resource        string
	Namespace       string
	Name            string
	UID             string
	ResourceVersion string

	// FinalStateUnknown marks a Deleted delta whose object is a tombstone:
	// the object vanished while the watch was down, Object is its last known
	// state (or null).
	FinalStateUnknown bool
	// Coalesced is how many Updated deltas of this key were folded into this
	// one because the reader fell behind.
	Coalesced int
	// CaughtUp, in a recording, says where Time comes from for a change
	// made while nothing recorded and caught up after a Gap: the object's
	// "creationTimestamp", "deletionTimestamp" or "managedFields" (the
	// newest entry that moved), or "gap" when the object does not say (Time
	// is then the gap's end). "" for a change recorded as it came.
	CaughtUp string
	// Owners is, under --tree, the chain of owners from the root the
	// object belongs to down to its direct owner; nil for a root and
	// without --tree.
	Owners []Owner
	// Manager and Operation name the field manager that made the change, when
	// known (from managedFields).
	Manager   string
	Operation string
	// Health is the verdict on the object as handed out; nil when not
	// judged (objects without status under --metadata-only, or a format
	// that does not show it).
	Health *Health
	// Row is, for -o wide, the object's row of its kind's server-side
	// Table (the columns kubectl get shows); nil when the server sent none.
	Row *Row
	// Event is what human output says of an Event that explains an
	// object (--events); nil for other records. JSON has it all in Object.
	Event *Event
	// Changes is the field-level diff against the previous state; nil when
	// not computed (no --diff), an empty non-nil slice when nothing changed.
	Changes []diff.Operation

	// Object is the object's JSON as it will be printed (managedFields
	// stripped and Secret values redacted as the flags ask), or "null".
	Object json.RawMessage

	// Call describes, with --handler, the ResourceEventHandler call the
	// record is (Type is then OnAdd, OnUpdate or OnDelete); its Delta is
	// "" for a delta record.
	Call HandlerCall
}

// The ResourceEventHandler calls a record of --handler is one of.
const (
	OnAdd    = "OnAdd"
	OnUpdate = "OnUpdate"
	OnDelete = "OnDelete"
)

// HandlerCall is what a handler call's record says beyond a delta's: the
// delta it comes from and the arguments a handler is given.
type HandlerCall struct {
	// Delta is the type of the delta the call comes from (Added, Updated,
	// Deleted, Replaced, Sync).
	Delta string
	// OldResourceVersion is, for OnUpdate, the resourceVersion of the old
	// object: equal to ResourceVersion for a resync or an unchanged
	// object of a relist.
	OldResourceVersion string
	// IsInInitialList is OnAdd's isInInitialList: the object came while
	// the informer had not synced.
	IsInInitialList bool
	// OldObject is, for OnUpdate with --diff, the old object's JSON as it
	// will be printed; nil otherwise.
	OldObject json.RawMessage
}

// IsCall reports whether r is a handler call's record.
func (r *Record) IsCall() bool { return r.Call.Delta != "" }

// Owner is one link of a Record's owner chain: an ownerReference's
// identifying fields.
type Owner struct {
	APIVersion string
	Kind       string
	Name       string
	UID        string
}

// Row is a row of a server-side Table: its column definitions and its
// cells, a JSON array as sent, one value per column.
type Row struct {
	Columns []Column
	Cells   json.RawMessage
}

// Column is a column definition of a server-side Table: Priority 0
// columns are kubectl get's, higher ones kubectl get -o wide's; Format
// "name" marks the object's name.
type Column struct {
	Name     string
	Format   string
	Priority int32
}

// Event is an Event record's summary for human output: its subject, and
// what happened to it.
type Event struct {
	// Subject's apiVersion, kind, namespace, name and UID (when the Event
	// names it).
	APIVersion, Kind, Namespace, Name, UID string
	// Type is Normal or Warning; Reason and Message say what happened;
	// Count how many times (at least 1).
	Type, Reason, Message string
	Count                 int
	// Last is when it last happened (zero when it says not); no output
	// shows it, health rules read it (health.Judge.NoteEvent).
	Last time.Time
}

// Health is a verdict on an object (kstatus' statuses: Current,
// InProgress, Failed, Terminating, Unknown, NotFound).
type Health struct {
	Status string
	// Source is where the verdict came from: kind, conditions or none
	// (nothing in the object says: Current by default); "" when not said.
	Source string
	// Reason is a CamelCase reason, "" when the verdict has none.
	Reason  string
	Message string
	// RecheckAt, when not zero, is when the verdict on this same object
	// changes with time alone (an unschedulable Pod fails then); no
	// format prints it.
	RecheckAt time.Time
}
