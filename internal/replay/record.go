package replay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-deltas/kubectl-deltas/internal/rawobj"
	"github.com/kubectl-deltas/kubectl-deltas/internal/recording"
)

// line is one record of a recording, as much of it as a replay needs:
// the members of recordMembers, named as the record names them.
type line struct {
	Type, Context, APIVersion, Kind, Resource, Namespace, Name string
	Time                                                       time.Time
	Initial, FinalStateUnknown                                 bool
	Manager, Operation                                         string

	// Not in the record: where it is, and its object parsed.
	number int
	object *rawobj.Object
	// header is set for a "Recording" line, heartbeat for a "Heartbeat"
	// one, gap for a "Gap" one: lines that are not records.
	header    *recording.Header
	heartbeat *recording.Heartbeat
	gap       *recording.Gap
	// verdict is set for a "Verdict" line (-o json output): nothing to
	// play.
	verdict bool
}

// mark reports whether l is a Heartbeat, a Gap or a Verdict: a line that
// says something of the recording or the run, not of an object.
func (l *line) mark() bool { return l.heartbeat != nil || l.gap != nil || l.verdict }

// The record types a recording holds.
const (
	typeAdded    = "Added"
	typeUpdated  = "Updated"
	typeDeleted  = "Deleted"
	typeReplaced = "Replaced"
	typeSync     = "Sync"
	// typeVerdict ends -o json output stopped by a condition.
	typeVerdict = "Verdict"
)

// recordMembers are the members of a record a replay reads, in the order
// of parseLine's values.
var recordMembers = []string{"type", "time", "initial", "context", "apiVersion", "kind", "resource", "namespace", "name", "finalStateUnknown", "manager", "operation", "object"}

// parseLine reads one line of a recording: a header or a record whose
// object, if any, is parsed. Errors name the recording and the line. A
// record is read in one validating pass that cuts its members out
// (rawobj.Members), its object parsed as a list item is.
func parseLine(name string, number int, data []byte) (*line, error) {
	v, err := rawobj.Members(data, recordMembers...)
	if err != nil {
		return nil, fmt.Errorf("%s:%d: not a record of kubectl deltas: %w", name, number, err)
	}
	l := line{number: number}
	strs := []*string{&l.Type, nil, nil, &l.Context, &l.APIVersion, &l.Kind, &l.Resource, &l.Namespace, &l.Name, nil, &l.Manager, &l.Operation}
	for i, dst := range strs {
		if dst == nil || v[i] == nil {
			continue
		}
		if *dst, err = jsonString(v[i]); err != nil {
			return nil, fmt.Errorf("%s:%d: %q: %w", name, number, recordMembers[i], err)
		}
	}
	if l.Initial, err = jsonBool(v[2]); err == nil {
		l.FinalStateUnknown, err = jsonBool(v[9])
	}
	if err != nil {
		return nil, fmt.Errorf("%s:%d: not a record of kubectl deltas: %w", name, number, err)
	}
	if v[1] != nil {
		text, err := jsonString(v[1])
		if err == nil {
			l.Time, err = time.Parse(time.RFC3339Nano, text)
		}
		if err != nil {
			return nil, fmt.Errorf("%s:%d: \"time\": %w", name, number, err)
		}
	}
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
	case recording.HeartbeatType:
		var h recording.Heartbeat
		if err := json.Unmarshal(data, &h); err != nil {
			return nil, fmt.Errorf("%s:%d: a %q line that does not read: %w", name, number, l.Type, err)
		}
		l.heartbeat = &h
		return &l, nil
	case typeVerdict:
		l.verdict = true
		return &l, nil
	case recording.GapType:
		var g recording.Gap
		if err := json.Unmarshal(data, &g); err != nil {
			return nil, fmt.Errorf("%s:%d: a %q line that does not read: %w", name, number, l.Type, err)
		}
		if g.From.IsZero() || g.To.Before(g.From) {
			return nil, fmt.Errorf("%s:%d: a %q line whose \"from\" and \"to\" are not a time span", name, number, l.Type)
		}
		l.gap = &g
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
	if object := v[12]; object != nil {
		obj, err := rawobj.Parse(object, rawobj.ParseOptions{})
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

// jsonString is the JSON string value raw, unescaped; "" for null.
func jsonString(raw []byte) (string, error) {
	if len(raw) >= 2 && raw[0] == '"' && bytes.IndexByte(raw[1:len(raw)-1], '\\') < 0 && bytes.IndexByte(raw[1:len(raw)-1], '"') < 0 {
		return string(raw[1 : len(raw)-1]), nil
	}
	var s *string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", err
	}
	if s == nil {
		return "", nil
	}
	return *s, nil
}

// jsonBool is the JSON boolean raw; false for absent or null.
func jsonBool(raw []byte) (bool, error) {
	switch string(raw) {
	case "", "null", "false":
		return false, nil
	case "true":
		return true, nil
	}
	return false, fmt.Errorf("%s is not a boolean", raw)
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
	return l.header == nil && !l.mark() && (l.Type == typeReplaced || l.Initial || (l.Type == typeDeleted && l.FinalStateUnknown))
}

// sameCollection reports whether l and o were recorded in one collection.
func (l *line) sameCollection(o *line) bool {
	return l.header == nil && o.header == nil && !l.mark() && !o.mark() && l.Context == o.Context && l.APIVersion == o.APIVersion && l.Resource == o.Resource
}
