package recording

import (
	"cmp"
	"encoding/json"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/kubectl-deltas/kubectl-deltas/internal/informer"
	"github.com/kubectl-deltas/kubectl-deltas/internal/printer"
	"github.com/kubectl-deltas/kubectl-deltas/internal/rawobj"
)

// A checkpoint is the state of everything a recording holds at a point:
// a Heartbeat whose "checkpoint" counts the objects, at the start of a
// zstd frame of its own, then one record of each object, as a list's
// ("type":"Replaced","initial":true) marked "checkpoint":true, with the
// object as it was last recorded (redacted as it was). A replay that
// starts there (a segment alone, --at, --from) lists them as its initial
// lists; one that comes to them playing passes them over: they say
// nothing new.

// CheckpointRecords is how many records a recorder writes between two
// checkpoints of a recording directory, at least: a look back plays at
// most this many after the checkpoint it starts at (about half a second
// at the replay's 40,000 records a second). With more than a quarter as
// many objects, it is CheckpointsPerObject times the objects, so that a
// checkpoint — every object written once — never costs more than a
// quarter of the records between two.
const (
	CheckpointRecords    = 20000
	CheckpointsPerObject = 4
)

// recorded is one object as a recording holds it.
type recorded struct {
	context, apiVersion, kind, resource, namespace, name, uid, resourceVersion string
	// object is the JSON recorded, as printed: managedFields stripped,
	// Secrets redacted unless --show-secret-data. Never written to: it is
	// the informer's object's, or the redacted copy made for the record.
	object json.RawMessage
}

// recordedState is what a recording holds: each object's last record,
// by collection (context, apiVersion and resource, as a replay tells
// them apart) and key; and, by collection, the newest resourceVersion
// recorded. Used from the recorder's goroutine only.
type recordedState struct {
	objects map[string]*recorded
	newest  map[string]string
}

func newRecordedState() *recordedState {
	return &recordedState{objects: map[string]*recorded{}, newest: map[string]string{}}
}

// collectionID is how a replay tells collections apart.
func collectionID(context, apiVersion, resource string) string {
	return context + "|" + apiVersion + "|" + resource
}

// apply notes rec, a record written.
func (s *recordedState) apply(rec *printer.Record) {
	coll := collectionID(rec.Context, rec.APIVersion, rec.Resource)
	id := coll + "|" + rec.Namespace + "/" + rec.Name
	if rec.ResourceVersion != "" && (s.newest[coll] == "" || informer.NewerResourceVersion(rec.ResourceVersion, s.newest[coll])) {
		s.newest[coll] = rec.ResourceVersion
	}
	switch rec.Type {
	case SyncType:
		return
	case DeletedType:
		delete(s.objects, id)
		return
	}
	o := s.objects[id]
	if o == nil {
		// The namespace and name are copied: the record's point into its
		// object, which they would keep alive after the next change.
		o = &recorded{context: rec.Context, apiVersion: rec.APIVersion, kind: rec.Kind, resource: rec.Resource,
			namespace: strings.Clone(rec.Namespace), name: strings.Clone(rec.Name)}
		s.objects[id] = o
	}
	o.uid, o.resourceVersion, o.object = rec.UID, rec.ResourceVersion, rec.Object
}

// seed adds the objects of a recording that goes on: those it ends with
// in the collection t.
func (s *recordedState) seed(t informer.Target, objs []*rawobj.Object) {
	apiVersion := t.Kind.GroupVersion().String()
	coll := collectionID(t.Context, apiVersion, t.Resource.Resource)
	for _, obj := range objs {
		s.objects[coll+"|"+obj.Namespace+"/"+obj.Name] = &recorded{
			context: t.Context, apiVersion: apiVersion, kind: t.Kind.Kind, resource: t.Resource.Resource,
			namespace: strings.Clone(obj.Namespace), name: strings.Clone(obj.Name), uid: obj.UID, resourceVersion: obj.ResourceVersion, object: obj.JSON,
		}
		if s.newest[coll] == "" || informer.NewerResourceVersion(obj.ResourceVersion, s.newest[coll]) {
			s.newest[coll] = obj.ResourceVersion
		}
	}
}

// behind reports whether a position of positions is older than a record
// of its collection already written: a run that went on from a position
// watches from there again, and a checkpoint written then would, to the
// recorder going on from it, not say which of those changes it holds
// (a deleted object's). A checkpoint waits until no position is.
func (s *recordedState) behind(positions []Position) bool {
	for _, p := range positions {
		newest := s.newest[collectionID(p.Context, p.APIVersion, p.Resource)]
		if newest != "" && p.ResourceVersion != "" && informer.NewerResourceVersion(newest, p.ResourceVersion) {
			return true
		}
	}
	return false
}

// checkpointPiece is how much of a checkpoint is built before it is
// written: a checkpoint is written in pieces, so that writing one costs
// no memory in proportion to the objects.
const checkpointPiece = 64 << 10

// writeCheckpoint writes the checkpoint of s at now to w, its Heartbeat
// saying positions, in the order of collections and keys, in pieces of
// whole lines.
func (s *recordedState) writeCheckpoint(w io.Writer, now time.Time, positions []Position) error {
	objs := make([]*recorded, 0, len(s.objects))
	for _, o := range s.objects {
		objs = append(objs, o)
	}
	slices.SortFunc(objs, func(a, b *recorded) int {
		return cmp.Or(cmp.Compare(a.context, b.context), cmp.Compare(a.apiVersion, b.apiVersion), cmp.Compare(a.resource, b.resource),
			cmp.Compare(a.namespace, b.namespace), cmp.Compare(a.name, b.name))
	})
	beat, err := json.Marshal(Heartbeat{Type: HeartbeatType, Time: now.UTC(), Checkpoint: len(objs), Positions: positions})
	if err != nil {
		return err
	}
	beat = append(beat, '\n')
	dst := beat
	stamp := now.UTC().AppendFormat(nil, time.RFC3339Nano)
	for _, o := range objs {
		if len(dst) >= checkpointPiece {
			if _, err := w.Write(dst); err != nil {
				return err
			}
			dst = dst[:0]
		}
		dst = append(dst, `{"type":"Replaced","time":"`...)
		dst = append(dst, stamp...)
		dst = append(dst, `","initial":true,"checkpoint":true`...)
		if o.context != "" {
			dst = rawobj.AppendString(append(dst, `,"context":`...), o.context)
		}
		dst = rawobj.AppendString(append(dst, `,"apiVersion":`...), o.apiVersion)
		dst = rawobj.AppendString(append(dst, `,"kind":`...), o.kind)
		dst = rawobj.AppendString(append(dst, `,"resource":`...), o.resource)
		dst = rawobj.AppendString(append(dst, `,"namespace":`...), o.namespace)
		dst = rawobj.AppendString(append(dst, `,"name":`...), o.name)
		dst = rawobj.AppendString(append(dst, `,"uid":`...), o.uid)
		dst = rawobj.AppendString(append(dst, `,"resourceVersion":`...), o.resourceVersion)
		dst = append(append(dst, `,"object":`...), o.object...)
		dst = append(dst, "}\n"...)
	}
	_, err = w.Write(dst)
	return err
}

// len is how many objects s holds.
func (s *recordedState) len() int { return len(s.objects) }
