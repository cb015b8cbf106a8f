package timeline

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/kubectl-deltas/kubectl-deltas/internal/printer"
	"github.com/kubectl-deltas/kubectl-deltas/internal/rawobj"
	"github.com/kubectl-deltas/kubectl-deltas/internal/stage"
)

// BenchmarkRefresh10kLanes is a page rewritten while a stream of 10,000
// ConfigMaps goes on (Refresh every 5 s): one lane each, a few marks.
func BenchmarkRefresh10kLanes(b *testing.B) {
	tl := New(filepath.Join(b.TempDir(), "t.html"), "kubectl deltas cm", nil)
	for i := range 10000 {
		for k := range 3 {
			rec := &printer.Record{Type: "Updated", Time: t0.Add(time.Duration(k) * time.Second), APIVersion: "v1", Kind: "ConfigMap",
				Namespace: "bench", Name: fmt.Sprintf("cm-%05d", i), UID: fmt.Sprintf("13724929-794f-4b2c-821d-%012d", i),
				Manager: "bench-writer", Operation: "Update", Health: &printer.Health{Status: "Current", Source: "kind", Message: "Resource is always ready"}}
			tl.Observe(rec, nil, stage.Changes{})
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := tl.Write(true); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkObserve50kDeltas is the page's share of the bench's
// 50,000-delta replay: 10,000 ConfigMaps listed, then 4 updates of each
// (new data and resourceVersion), every update's changes handed over, and
// the page written at the end. One op is the whole stream: the ns/op over
// 50,000 is the page's cost per delta, to set beside the stream's.
func BenchmarkObserve50kDeltas(b *testing.B) {
	const objects, updates = 10000, 4
	cm := func(i, v int) *rawobj.Object {
		o, err := rawobj.Parse(fmt.Appendf(nil, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-%05d","namespace":"bench","uid":"uid-%05d","resourceVersion":"%d","creationTimestamp":"2026-11-26T09:00:00Z","labels":{"app":"bench"}},"data":{"k":"v%d","payload":"0123456789012345678901234567890123456789"}}`, i, i, v, v), rawobj.ParseOptions{})
		if err != nil {
			b.Fatal(err)
		}
		return o
	}
	type delta struct {
		rec     printer.Record
		obj     *rawobj.Object
		changes stage.Changes
	}
	health := &printer.Health{Status: "Current", Source: "kind", Message: "Resource is always ready"}
	differ, err := stage.NewDiffer(stage.DiffOptions{})
	if err != nil {
		b.Fatal(err)
	}
	var deltas []delta
	versions := make([]*rawobj.Object, objects)
	for i := range objects {
		versions[i] = cm(i, 1000+i)
		deltas = append(deltas, delta{rec: printer.Record{Type: "Replaced", Initial: true, Time: t0, APIVersion: "v1", Kind: "ConfigMap",
			Namespace: "bench", Name: versions[i].Name, UID: versions[i].UID, Health: health}, obj: versions[i]})
	}
	for u := range updates {
		for i := range objects {
			next := cm(i, 20000+u*objects+i)
			changes := differ.Changes(versions[i], next, false)
			deltas = append(deltas, delta{rec: printer.Record{Type: "Updated", Time: t0.Add(time.Duration(u+1) * time.Second), APIVersion: "v1", Kind: "ConfigMap",
				Namespace: "bench", Name: next.Name, UID: next.UID, Manager: "bench", Operation: "Update", Health: health}, obj: next, changes: changes})
			versions[i] = next
		}
	}
	path := filepath.Join(b.TempDir(), "t.html")
	b.ReportAllocs()
	for b.Loop() {
		tl := New(path, "kubectl deltas --replay=FILE", func() time.Time { return t0.Add(time.Minute) })
		for i := range deltas {
			rec := deltas[i].rec // the Sink hands over a copy it reuses
			tl.Observe(&rec, deltas[i].obj, deltas[i].changes)
		}
		if err := tl.Write(false); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(deltas)), "ns/delta")
}
