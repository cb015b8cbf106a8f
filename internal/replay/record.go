package replay

import (
	"encoding/json"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-deltas/kubectl-deltas/internal/rawobj"
	"github.com/kubectl-deltas/kubectl-deltas/internal/recording"
)

// line is one record of a recording, as much of it as a replay needs.
type line struct {
	Type              string          `json:"type"`
	Time              time.Time       `json:"time"`
	Initial           bool            `json:"initial"`
	Context           string          `json:"context"`
	APIVersion        string          `json:"apiVersion"`
	Kind              string          `json:"kind"`
	Resource          string          `json:"resource"`
	Namespace         string          `json:"namespace"`
	Name              string          `json:"name"`
	FinalStateUnknown bool            `json:"finalStateUnknown"`
	Manager           string          `json:"manager"`
	Operation         string          `json:"operation"`
	Object            json.RawMessage `json:"object"`

	// Not in the record: where it is, and its object parsed.
	number int
	object *rawobj.Object
	// header is set for a "Recording" line.
	header *recording.Header
}

// The record types a recording holds.
const (
	typeAdded    = "Added"
	typeUpdated  = "Updated"
	typeDeleted  = "Deleted"
	typeReplaced = "Replaced"
	typeSync     = "Sync"
)

// parseLine reads one line of a recording: a header or a record whose
// object, if any, is parsed. Errors name the recording and the line.
func parseLine(name string, number int, data []byte) (*line, error) {
	var l line
	if err := json.Unmarshal(data, &l); err != nil {
		return nil, fmt.Errorf("%s:%d: not a record of kubectl deltas: %w", name, number, err)
	}
	l.number = number
	switch l.Type {
	case recording.HeaderType:
		var h recording.Header
		if err := json.Unmarshal(data, &h); err != nil {
			return nil, fmt.Errorf("%s:%d: a %q line that does not read: %w", name, number, l.Type, err)
		}
		if h.Schema != recording.Schema {
			return nil, fmt.Errorf("%s:%d: a recording of schema %q, which this build does not read (it reads %q): replay it with the version that wrote it (%s)", name, number, h.Schema, recording.Schema, h.Version)
		}
		l.header = &h
		return &l, nil
	case typeAdded, typeUpdated, typeDeleted, typeReplaced, typeSync:
	case "":
		return nil, fmt.Errorf("%s:%d: not a record of kubectl deltas: no \"type\"", name, number)
	default:
		return nil, fmt.Errorf("%s:%d: a record of type %q, which this build does not replay (Added, Updated, Deleted, Replaced, Sync)", name, number, l.Type)
	}
	if l.Resource == "" || l.APIVersion == "" || l.Name == "" {
		return nil, fmt.Errorf("%s:%d: a %s record without its apiVersion, resource or name", name, number, l.Type)
	}
	if _, err := schema.ParseGroupVersion(l.APIVersion); err != nil {
		return nil, fmt.Errorf("%s:%d: apiVersion %q: %w", name, number, l.APIVersion, err)
	}
	if len(l.Object) > 0 && string(l.Object) != "null" {
		obj, err := rawobj.Parse(l.Object, rawobj.ParseOptions{})
		if err != nil {
			return nil, fmt.Errorf("%s:%d: the object of a %s record: %w", name, number, l.Type, err)
		}
		if l.Manager != "" {
			// The record names who made the change; managedFields are not
			// recorded. One entry, at the record's time, makes the stage
			// name the same manager again.
			obj.Managers = []rawobj.ManagedFieldsEntry{{Manager: l.Manager, Operation: l.Operation, Time: l.Time.UTC().Format(time.RFC3339Nano)}}
		}
		l.object = obj
	} else if l.Type != typeDeleted {
		return nil, fmt.Errorf("%s:%d: a %s record without its object", name, number, l.Type)
	}
	return &l, nil
}

// gvr is the collection the record was watched in.
func (l *line) gvr() schema.GroupVersionResource {
	gv, _ := schema.ParseGroupVersion(l.APIVersion)
	return gv.WithResource(l.Resource)
}

// key is the record's object key, as the cache has it.
func (l *line) key() string {
	if l.Namespace == "" {
		return l.Name
	}
	return l.Namespace + "/" + l.Name
}

// relist reports whether the record comes from a relist (or a list made
// after the start): Replaced, or Deleted with its final state unknown.
func (l *line) relist() bool {
	return l.header == nil && (l.Type == typeReplaced || l.Initial || (l.Type == typeDeleted && l.FinalStateUnknown))
}

// sameCollection reports whether l and o were recorded in one collection.
func (l *line) sameCollection(o *line) bool {
	return l.header == nil && o.header == nil && l.Context == o.Context && l.APIVersion == o.APIVersion && l.Resource == o.Resource
}
