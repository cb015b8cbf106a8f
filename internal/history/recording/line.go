package recording

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-deltas/kubectl-deltas/internal/printer"
	"github.com/kubectl-deltas/kubectl-deltas/internal/rawobj"
)

// Line is one line of a recording, as much of it as a replay needs: a
// record's members of recordMembers, named as the record names them, or
// a line that is not a record.
type Line struct {
	Type, Context, APIVersion, Kind, Resource, Namespace, Name string
	Time                                                       time.Time
	Initial, FinalStateUnknown                                 bool
	// Checkpoint marks the record of an object in a checkpoint: the
	// state of the recording at that point, not a change.
	Checkpoint         bool
	Manager, Operation string
	// CaughtUp is the record's "caughtUp": where the time of a change
	// made while nothing recorded comes from; "" for one recorded as it
	// came.
	CaughtUp string

	// Not in the record: where it is, and its object parsed.
	Number int
	Object *rawobj.Object
	// Header is set for a "Recording" line, Heartbeat for a "Heartbeat"
	// one, Gap for a "Gap" one: lines that are not records.
	Header    *Header
	Heartbeat *Heartbeat
	Gap       *Gap
	// Verdict is set for a "Verdict" line (-o json output, or the end of
	// a recorded run that waited): nothing to play. Logs are the logs of
	// failing containers it holds.
	Verdict bool
	Logs    []ObjectLogs
}

// ObjectLogs are the logs a Verdict line holds of one object (its
// "logs"): its failing container's last lines, as the run read them.
type ObjectLogs struct {
	Context, UID string
	Logs         printer.VerdictLogs
}

// Mark reports whether l is a Heartbeat, a Gap or a Verdict: a line that
// says something of the recording or the run, not of an object.
func (l *Line) Mark() bool { return l.Heartbeat != nil || l.Gap != nil || l.Verdict }

// The record types a recording holds.
const (
	AddedType    = "Added"
	UpdatedType  = "Updated"
	DeletedType  = "Deleted"
	ReplacedType = "Replaced"
	SyncType     = "Sync"
	// VerdictType ends -o json output stopped by a condition.
	VerdictType = "Verdict"
)

// recordMembers are the members of a record a replay reads, in the order
// of parseLine's values.
var recordMembers = []string{"type", "time", "initial", "context", "apiVersion", "kind", "resource", "namespace", "name", "finalStateUnknown", "manager", "operation", "object", "caughtUp", "checkpoint"}

// ParseLine reads data, line number of the recording name: a record,
// whose object, if any, is parsed, or a line that is not one (a header, a
// Heartbeat, a Gap, a Verdict). Errors name the recording and the line. A
// record is read in one validating pass that cuts its members out
// (rawobj.Members), its object parsed as a list item is.
func ParseLine(name string, number int, data []byte) (*Line, error) {
	v, err := rawobj.Members(data, recordMembers...)
	if err != nil {
		return nil, fmt.Errorf("%s:%d: not a record of kubectl deltas: %w", name, number, err)
	}
	l := Line{Number: number}
	strs := []*string{&l.Type, nil, nil, &l.Context, &l.APIVersion, &l.Kind, &l.Resource, &l.Namespace, &l.Name, nil, &l.Manager, &l.Operation, nil, &l.CaughtUp}
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
	case HeaderType:
		var h Header
		if err := json.Unmarshal(data, &h); err != nil {
			return nil, fmt.Errorf("%s:%d: a %q line that does not read: %w", name, number, l.Type, err)
		}
		if h.Schema != Schema {
			return nil, fmt.Errorf("%s:%d: a recording of schema %q, which this build does not read (it reads %q): replay it with the version that wrote it (%s)", name, number, h.Schema, Schema, h.Version)
		}
		l.Header = &h
		return &l, nil
	case HeartbeatType:
		var h Heartbeat
		if err := json.Unmarshal(data, &h); err != nil {
			return nil, fmt.Errorf("%s:%d: a %q line that does not read: %w", name, number, l.Type, err)
		}
		l.Heartbeat = &h
		return &l, nil
	case VerdictType:
		l.Verdict = true
		if l.Logs, err = verdictLogs(data); err != nil {
			return nil, fmt.Errorf("%s:%d: a %q line that does not read: %w", name, number, l.Type, err)
		}
		return &l, nil
	case GapType:
		var g Gap
		if err := json.Unmarshal(data, &g); err != nil {
			return nil, fmt.Errorf("%s:%d: a %q line that does not read: %w", name, number, l.Type, err)
		}
		if g.From.IsZero() || g.To.Before(g.From) {
			return nil, fmt.Errorf("%s:%d: a %q line whose \"from\" and \"to\" are not a time span", name, number, l.Type)
		}
		l.Gap = &g
		return &l, nil
	case AddedType, UpdatedType, DeletedType, ReplacedType, SyncType:
	case "":
		return nil, fmt.Errorf("%s:%d: not a record of kubectl deltas: no \"type\"", name, number)
	default:
		return nil, fmt.Errorf("%s:%d: a record of type %q, which this build does not replay (Added, Updated, Deleted, Replaced, Sync)", name, number, l.Type)
	}
	if l.Checkpoint, err = jsonBool(v[14]); err != nil {
		return nil, fmt.Errorf("%s:%d: \"checkpoint\": %w", name, number, err)
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
			obj.SetManagers([]rawobj.ManagedFieldsEntry{{Manager: l.Manager, Operation: l.Operation, Time: l.Time.UTC().Format(time.RFC3339Nano)}})
		}
		l.Object = obj
	} else if l.Type != DeletedType {
		return nil, fmt.Errorf("%s:%d: a %s record without its object", name, number, l.Type)
	}
	return &l, nil
}

// verdictLogs are the logs of the objects of the Verdict line data.
func verdictLogs(data []byte) ([]ObjectLogs, error) {
	var v struct {
		Objects []struct {
			Context, UID string
			Logs         *printer.VerdictLogs
		}
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return nil, err
	}
	var out []ObjectLogs
	for _, o := range v.Objects {
		if o.Logs != nil {
			out = append(out, ObjectLogs{Context: o.Context, UID: o.UID, Logs: *o.Logs})
		}
	}
	return out, nil
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

// GVR is the collection the record was watched in.
func (l *Line) GVR() schema.GroupVersionResource {
	gv, _ := schema.ParseGroupVersion(l.APIVersion)
	return gv.WithResource(l.Resource)
}

// Key is the record's object key, as the cache has it.
func (l *Line) Key() string {
	if l.Namespace == "" {
		return l.Name
	}
	return l.Namespace + "/" + l.Name
}

// Relist reports whether the record comes from a relist (or a list made
// after the start): Replaced, or Deleted with its final state unknown.
func (l *Line) Relist() bool {
	return l.Header == nil && !l.Mark() && (l.Type == ReplacedType || l.Initial || (l.Type == DeletedType && l.FinalStateUnknown))
}

// SameCollection reports whether l and o were recorded in one collection.
func (l *Line) SameCollection(o *Line) bool {
	return l.Header == nil && o.Header == nil && !l.Mark() && !o.Mark() && l.Context == o.Context && l.APIVersion == o.APIVersion && l.Resource == o.Resource
}
