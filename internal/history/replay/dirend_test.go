package replay

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/kubectl-deltas/kubectl-deltas/internal/history/recording"
)

// TestReadDirEndTellsTheTreeItsMembers: a directory's later segment
// names, in its header, a --tree type whose scout found members as owned
// (not as a scout, as a run's first header does); a recorder going on
// from that segment's checkpoint is still told the members it ended with
// — else its tree would find them anew as Added, inventing changes.
func TestReadDirEndTellsTheTreeItsMembers(t *testing.T) {
	dir := t.TempDir()
	lines := `{"type":"Recording","time":"2026-11-29T18:00:31Z","schema":"v1","version":"test","targets":[` +
		`{"apiVersion":"apps/v1","kind":"Deployment","resource":"deployments","namespace":"shop","name":"web","role":"root"},` +
		`{"apiVersion":"apps/v1","kind":"ReplicaSet","resource":"replicasets","namespace":"shop","role":"owned"}]}
{"type":"Heartbeat","time":"2026-11-29T18:00:31Z","checkpoint":2,"positions":[{"apiVersion":"apps/v1","kind":"Deployment","resource":"deployments","namespace":"shop","name":"web","role":"root","resourceVersion":"12"}]}
{"type":"Replaced","time":"2026-11-29T18:00:31Z","initial":true,"checkpoint":true,"apiVersion":"apps/v1","kind":"Deployment","resource":"deployments","namespace":"shop","name":"web","uid":"d1","resourceVersion":"12","object":{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"shop","uid":"d1","resourceVersion":"12"}}}
{"type":"Replaced","time":"2026-11-29T18:00:31Z","initial":true,"checkpoint":true,"apiVersion":"apps/v1","kind":"ReplicaSet","resource":"replicasets","namespace":"shop","name":"web-1","uid":"r1","resourceVersion":"11","object":{"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{"name":"web-1","namespace":"shop","uid":"r1","resourceVersion":"11","ownerReferences":[{"apiVersion":"apps/v1","kind":"Deployment","name":"web","uid":"d1","controller":true}]}}}
`
	w, err := recording.Create(filepath.Join(dir, "000002-20261129T180031Z.jsonl.zst"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte(lines)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	ix, err := recording.LoadIndex(dir, io.Discard, true)
	if err != nil {
		t.Fatal(err)
	}
	end, err := ReadDirEnd(ix, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	if len(end.Members) != 1 || end.Members[0].Object.Name != "web-1" {
		t.Fatalf("the members the recording ended with: %+v, want the ReplicaSet web-1", end.Members)
	}
	if _, ok := end.Resumes[end.Recorded[0].ID()]; !ok || len(end.Recorded) != 1 {
		t.Errorf("the root: recorded %v, resumes %v", end.Recorded, end.Resumes)
	}
}
