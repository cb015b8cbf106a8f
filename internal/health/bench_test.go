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

// BenchmarkOf is health's cost per Pod delta.
func BenchmarkOf(b *testing.B) {
	o := runningPod(b)
	j := NewJudge()
	b.SetBytes(int64(len(o.JSON)))
	b.ReportAllocs()
	for b.Loop() {
		if h := j.Of(o); h.Status != Current {
			b.Fatal(h)
		}
	}
}
