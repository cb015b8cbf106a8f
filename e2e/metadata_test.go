package e2e

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestMetadataOnly: --metadata-only records carry the metadata object (no
// data, spec or status), and --diff and the field manager still work on
// it.
func TestMetadataOnly(t *testing.T) {
	ns := newNamespace(t)
	createCM(t, ns, "settings", map[string]string{"tier": "a"}, map[string]string{"key": "secret-ish value"})
	createDeployment(t, ns, "web")

	r := run(t, time.Minute, "cm,deploy", "-n", ns, "--metadata-only", "--until-synced", "-o", "json")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	recs := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(recs) != 2 { // settings, web
		t.Fatalf("%d records:\n%s", len(recs), r.stdout)
	}
	for _, line := range recs {
		var rec struct {
			Kind   string                     `json:"kind"`
			Object map[string]json.RawMessage `json:"object"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		for _, field := range []string{"data", "spec", "status"} {
			if _, ok := rec.Object[field]; ok {
				t.Errorf("%s record carries %s: %s", rec.Kind, field, line)
			}
		}
		if _, ok := rec.Object["metadata"]; !ok || rec.Kind == "PartialObjectMetadata" {
			t.Errorf("record %s", line)
		}
	}
	if strings.Contains(r.stdout, "secret-ish value") {
		t.Error("a ConfigMap's data was printed")
	}

	s := start(t, "cm/settings", "-n", ns, "--metadata-only", "--diff", "--show-manager")
	s.expect("Replaced: settings by e2e.test")
	patch := []byte(`{"metadata":{"labels":{"tier":"b"}}}`)
	if _, err := testEnv.client.CoreV1().ConfigMaps(ns).Patch(bg, "settings", types.MergePatchType, patch, metav1.PatchOptions{FieldManager: "e2e-labeler"}); err != nil {
		t.Fatal(err)
	}
	s.expect("Updated: settings by e2e-labeler", `  ~ metadata.labels.tier: "a" → "b"`)
}
