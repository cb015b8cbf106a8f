package timeline

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/kubectl-deltas/kubectl-deltas/internal/printer"
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
			tl.Observe(rec, nil, nil)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := tl.Write(true); err != nil {
			b.Fatal(err)
		}
	}
}
