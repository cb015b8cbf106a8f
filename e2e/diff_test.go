package e2e

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"reflect"
	"strings"
	"testing"
	"time"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-deltas/kubectl-deltas/internal/diff"
)

func TestDiffText(t *testing.T) {
	ns := newNamespace(t)
	createCM(t, ns, "demo", nil, map[string]string{"key": "a", "old": "x"})
	s := start(t, "cm", "-n", ns, "--diff")
	s.expect("Replaced: demo")
	cms := testEnv.client.CoreV1().ConfigMaps(ns)
	patch := []byte(`{"data":{"key":"b","old":null},"metadata":{"labels":{"tier":"web"}}}`)
	if _, err := cms.Patch(bg, "demo", types.MergePatchType, patch, metav1.PatchOptions{FieldManager: "e2e-editor"}); err != nil {
		t.Fatal(err)
	}
	s.expect(
		"Updated: demo by e2e-editor",
		`  ~ data.key: "a" → "b"`,
		"  - data.old",
		`  + metadata.labels: {"tier":"web"}`,
	)
}

// record is the part of the JSON record the diff tests read.
type record struct {
	Type    string `json:"type"`
	Initial bool   `json:"initial"`
	Name    string `json:"name"`
	// ResourceVersion is the record's object's.
	ResourceVersion string           `json:"resourceVersion"`
	Manager         string           `json:"manager"`
	Changes         []diff.Operation `json:"changes"`
	Object          json.RawMessage  `json:"object"`
}

func decodeRecord(t *testing.T, line string) record {
	t.Helper()
	var r record
	if err := json.Unmarshal([]byte(line), &r); err != nil {
		t.Fatalf("bad JSON line %q: %v", line, err)
	}
	return r
}

// normalized decodes an object without metadata.resourceVersion, which
// diffs leave out.
func normalized(t *testing.T, raw json.RawMessage) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v map[string]any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	delete(v["metadata"].(map[string]any), "resourceVersion")
	return v
}

// The bar of the issue: the changes of -o json --diff are a JSON Patch
// that turns the previous object into the new one.
func TestDiffJSONPatchAppliesToOldObject(t *testing.T) {
	ns := newNamespace(t)
	createCM(t, ns, "demo", map[string]string{"a": "1"}, map[string]string{"key": "a", "list": "x"})
	s := start(t, "cm", "-n", ns, "--diff", "-o", "json")
	prev := decodeRecord(t, s.next(30*time.Second))
	cms := testEnv.client.CoreV1().ConfigMaps(ns)
	patches := []string{
		`{"data":{"key":"b"}}`,
		`{"data":{"list":null,"new":"n"},"metadata":{"labels":{"a":null,"b":"2","app.kubernetes.io/name":"x"}}}`,
		`{"metadata":{"annotations":{"note":"with \"quotes\" and ~ / chars"}}}`,
	}
	for _, p := range patches {
		if _, err := cms.Patch(bg, "demo", types.MergePatchType, []byte(p), metav1.PatchOptions{FieldManager: "e2e-patcher"}); err != nil {
			t.Fatal(err)
		}
		line := s.next(30 * time.Second)
		cur := decodeRecord(t, line)
		if cur.Type != "Updated" || len(cur.Changes) == 0 || cur.Manager != "e2e-patcher" {
			t.Fatalf("record %+v", cur)
		}
		want := normalized(t, cur.Object)
		// What a script gets, `jq .changes`, applied by an independent
		// RFC 6902 implementation.
		jq := exec.Command("jq", "-c", ".changes")
		jq.Stdin = strings.NewReader(line)
		changes, err := jq.Output()
		if err != nil {
			t.Fatalf("jq .changes: %v", err)
		}
		patch, err := jsonpatch.DecodePatch(changes)
		if err != nil {
			t.Fatalf("jq .changes is not a JSON Patch: %v\n%s", err, changes)
		}
		oldJSON, err := json.Marshal(normalized(t, prev.Object))
		if err != nil {
			t.Fatal(err)
		}
		newJSON, err := patch.Apply(oldJSON)
		if err != nil {
			t.Fatalf("applying %s: %v", changes, err)
		}
		if got := normalized(t, newJSON); !reflect.DeepEqual(got, want) {
			t.Fatalf("json-patch applied %s to the old object:\n got  %v\n want %v", changes, got, want)
		}
		prev = cur
	}
}

func TestChangedOnlyDropsMetadataOnlyTouch(t *testing.T) {
	ns := newNamespace(t)
	createCM(t, ns, "demo", nil, map[string]string{"key": "a"})
	s := start(t, "cm", "-n", ns, "--changed-only")
	s.expect("Replaced: demo")
	cms := testEnv.client.CoreV1().ConfigMaps(ns)
	// A server-side apply of the same values by a new manager changes
	// only managedFields (and the resourceVersion).
	force := true
	same := []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"demo"},"data":{"key":"a"}}`)
	if _, err := cms.Patch(bg, "demo", types.ApplyPatchType, same, metav1.PatchOptions{FieldManager: "e2e-applier", Force: &force}); err != nil {
		t.Fatal(err)
	}
	s.quiet(2 * time.Second)
	updateCM(t, ns, "demo", "key", "b")
	s.expect("Updated: demo")
}

func TestDiffScaleCustomResource(t *testing.T) {
	ns := newNamespace(t)
	widgets := ensureWidgetCRD(t).Namespace(ns)
	obj := widget("web", 1)
	if _, err := widgets.Create(bg, obj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	s := start(t, "widgets", "-n", ns, "--diff")
	s.expect("Replaced: web")
	if _, err := widgets.Patch(bg, "web", types.MergePatchType, []byte(`{"spec":{"replicas":3}}`), metav1.PatchOptions{FieldManager: "e2e-scaler"}); err != nil {
		t.Fatal(err)
	}
	// generation moves with spec for custom resources; --diff shows it
	// (only --changed-only ignores it).
	s.expect("Updated: web by e2e-scaler", "  ~ metadata.generation: 1 → 2", "  ~ spec.replicas: 1 → 3")
}

func TestShowManager(t *testing.T) {
	ns := newNamespace(t)
	// With data, so that the server tracks managedFields (an object
	// created without any field never gets them).
	createCM(t, ns, "demo", nil, map[string]string{"a": "1"})
	s := start(t, "cm", "-n", ns, "--show-manager", "--watch-only")
	waitWatching(t, s, ns, nil)
	updateCM(t, ns, "demo", "k", "v")
	line := s.next(30 * time.Second)
	if line != "Updated: demo by e2e-writer" {
		t.Errorf("line %q", line)
	}
	plain := run(t, time.Minute, "cm", "-n", ns, "--until-synced")
	if strings.Contains(plain.stdout, " by ") {
		t.Errorf("plain text names a manager: %q", plain.stdout)
	}
}
