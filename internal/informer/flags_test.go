package informer

import (
	"io"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-deltas/kubectl-deltas/internal/rawobj"
)

// TestGCPercent: --metadata-only lowers the garbage collector's target of
// the run, unless GOGC is set.
func TestGCPercent(t *testing.T) {
	tests := []struct {
		name         string
		metadataOnly bool
		gogc         string
		want         int
	}{
		{"whole objects", false, "", 0},
		{"metadata only", true, "", metadataOnlyGCPercent},
		{"metadata only, GOGC set", true, "200", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := NewListWatchFlags()
			f.MetadataOnly = tc.metadataOnly
			getenv := func(k string) string {
				if k == "GOGC" {
					return tc.gogc
				}
				return ""
			}
			if got := f.gcPercent(getenv); got != tc.want {
				t.Errorf("got GC percent %d, want %d", got, tc.want)
			}
		})
	}
}

// TestSelects: whether a target's request selects an object, known from
// the object's namespace, name and labels; a field selector on another
// field is not known.
func TestSelects(t *testing.T) {
	obj, err := rawobj.Parse([]byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web-x","namespace":"demo","uid":"u","resourceVersion":"1","labels":{"app":"web","tier":"front"}}}`), rawobj.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pods := Target{Resource: schema.GroupVersionResource{Version: "v1", Resource: "pods"}}
	named := pods
	named.Name = "web-x"
	other := pods
	other.Namespace = "other"
	cases := []struct {
		name                   string
		labelSel, fieldSel     string
		target                 Target
		wantSelects, wantKnown bool
	}{
		{name: "every pod", target: pods, wantSelects: true, wantKnown: true},
		{name: "by its name", target: named, wantSelects: true, wantKnown: true},
		{name: "another namespace", target: other, wantKnown: true},
		{name: "labels that match", labelSel: "app=web,tier in (front,back)", target: pods, wantSelects: true, wantKnown: true},
		{name: "labels that do not", labelSel: "app=db", target: pods, wantKnown: true},
		{name: "a label it lacks", labelSel: "!tier", target: pods, wantKnown: true},
		{name: "its name by field", fieldSel: "metadata.name=web-x", target: pods, wantSelects: true, wantKnown: true},
		{name: "another name by field", fieldSel: "metadata.name!=web-x", target: pods, wantKnown: true},
		{name: "a status field", fieldSel: "status.phase=Running", target: pods},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := NewListWatchFlags()
			f.LabelSelector, f.FieldSelector = tc.labelSel, tc.fieldSel
			selects, known := f.Config(nil, false, io.Discard).Selects(tc.target, obj)
			if selects != tc.wantSelects || known != tc.wantKnown {
				t.Errorf("got selects %v, known %v; want %v, %v", selects, known, tc.wantSelects, tc.wantKnown)
			}
		})
	}
}
