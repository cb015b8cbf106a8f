package stage

import (
	"testing"

	"github.com/kubectl-deltas/kubectl-deltas/internal/rawobj"
)

// BenchmarkDiffConfigMapUpdate is the diff of one ConfigMap update, as the
// timeline computes it for every change (the bench's 50,000-delta page).
func BenchmarkDiffConfigMapUpdate(b *testing.B) {
	old, err := rawobj.Parse([]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-00000","namespace":"bench","uid":"13724929-794f-4b2c-821d-063d15a53c46","resourceVersion":"640","creationTimestamp":"2026-11-26T11:37:00Z","labels":{"app":"bench","tier":"x"},"managedFields":[{"manager":"kubectl-create","operation":"Update","apiVersion":"v1","time":"2026-11-26T11:37:00Z","fieldsType":"FieldsV1","fieldsV1":{"f:data":{".":{},"f:key":{},"f:n":{}}}}]},"data":{"key":"vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv","n":"0"}}`), rawobj.ParseOptions{KeepManagedFields: true})
	if err != nil {
		b.Fatal(err)
	}
	obj, err := rawobj.Parse([]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-00000","namespace":"bench","uid":"13724929-794f-4b2c-821d-063d15a53c46","resourceVersion":"1073741825","creationTimestamp":"2026-11-26T11:37:00Z","labels":{"app":"bench","tier":"x"},"managedFields":[{"manager":"bench-writer","operation":"Update","apiVersion":"v1","time":"2026-11-26T11:38:47Z","fieldsType":"FieldsV1","fieldsV1":{"f:data":{".":{},"f:key":{},"f:n":{}}}}]},"data":{"key":"wwwwvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv","n":"1"}}`), rawobj.ParseOptions{KeepManagedFields: true})
	if err != nil {
		b.Fatal(err)
	}
	d, err := newDiffer(DiffOptions{Show: true})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		changes, err := d.compute(old, obj, false)
		if err != nil || len(changes) != 2 {
			b.Fatalf("changes %v, %v; want data.key and data.n", changes, err)
		}
	}
}

// BenchmarkRawConfigMapUpdate is what the timeline keeps of one
// ConfigMap update: the members that differ, undecoded (AppendRaw).
func BenchmarkRawConfigMapUpdate(b *testing.B) {
	old, err := rawobj.Parse([]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-00000","namespace":"bench","uid":"uid-00000","resourceVersion":"1001","creationTimestamp":"2026-11-26T09:00:00Z","labels":{"app":"bench"}},"data":{"k":"v1001","payload":"0123456789012345678901234567890123456789"}}`), rawobj.ParseOptions{})
	if err != nil {
		b.Fatal(err)
	}
	obj, err := rawobj.Parse([]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-00000","namespace":"bench","uid":"uid-00000","resourceVersion":"20979","creationTimestamp":"2026-11-26T09:00:00Z","labels":{"app":"bench"}},"data":{"k":"v20979","payload":"0123456789012345678901234567890123456789"}}`), rawobj.ParseOptions{})
	if err != nil {
		b.Fatal(err)
	}
	d, err := NewDiffer(DiffOptions{})
	if err != nil {
		b.Fatal(err)
	}
	changes := d.Changes(old, obj, false)
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		var ok bool
		if buf, ok, err = changes.AppendRaw(buf[:0]); err != nil || !ok || len(buf) == 0 {
			b.Fatalf("%s %v %v", buf, ok, err)
		}
	}
}
