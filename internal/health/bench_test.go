package health

import (
	"os"
	"testing"

	"github.com/kubectl-deltas/kubectl-deltas/internal/rawobj"
)

// runningPod is a running Pod of a Deployment as the busy cluster's
// controllers and kwok leave it (testdata/running-pod.json).
func runningPod(tb testing.TB) *rawobj.Object {
	tb.Helper()
	data, err := os.ReadFile("testdata/running-pod.json")
	if err != nil {
		tb.Fatal(err)
	}
	return judgeableT(tb, string(data))
}

// BenchmarkOf is health's cost per delta: of a running Pod, the bulk of a
// busy cluster's deltas, and of a ConfigMap, a kind judged by its kind
// alone.
func BenchmarkOf(b *testing.B) {
	configMap := judgeableT(b, `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"cm-00001","namespace":"bench","uid":"0b9c7e2a-1d5e-4f7b-9a51-3c2d2f0e8a11","resourceVersion":"1234","creationTimestamp":"2026-11-26T10:00:00Z"},"data":{"key":"value-00001","other":"0123456789abcdef0123456789abcdef"}}`)
	for _, bc := range []struct {
		name string
		o    *rawobj.Object
	}{{"pod", runningPod(b)}, {"configmap", configMap}} {
		b.Run(bc.name, func(b *testing.B) {
			j := NewJudge()
			b.SetBytes(int64(len(bc.o.JSON)))
			b.ReportAllocs()
			for b.Loop() {
				if h := j.Of(bc.o); h.Status != Current {
					b.Fatal(h)
				}
			}
		})
	}
}
