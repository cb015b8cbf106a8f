package live

import (
	"fmt"
	"testing"
	"time"
)

// countingWriter counts the bytes written to the terminal.
type countingWriter struct{ n int }

func (c *countingWriter) Write(p []byte) (int, error) { c.n += len(p); return len(p), nil }

// BenchmarkView200At10PerSecond is the cost target of --live: a 200-object
// tree (a Deployment, 4 ReplicaSets, 195 Pods) at 10 deltas a second, one
// frame per delta (the Screen draws at most 10 a second). An op is one
// second of it: 10 deltas observed and 10 frames drawn in a 160×50
// terminal; its CPU time over a second is the share of one core the view
// takes. It reports the bytes written per second.
func BenchmarkView200At10PerSecond(b *testing.B) {
	v := NewView("deployment/web --tree --live", false)
	v.begin(t0)
	observe(b, v, "Deployment", "web", "d", "", "InProgress", t0)
	for r := range 4 {
		observe(b, v, "ReplicaSet", fmt.Sprintf("web-%d", r), fmt.Sprintf("r%d", r), "d", "InProgress", t0)
	}
	for p := range 195 {
		observe(b, v, "Pod", fmt.Sprintf("web-%d-%03d", p%4, p), fmt.Sprintf("p%03d", p), fmt.Sprintf("r%d", p%4), "Current", t0)
	}
	var out countingWriter
	now := t0
	s := NewScreen(&out, -1, v, false, func() time.Time { return now })
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		for d := range 10 {
			now = now.Add(100 * time.Millisecond)
			p := (i*10 + d) % 195
			observe(b, v, "Pod", fmt.Sprintf("web-%d-%03d", p%4, p), fmt.Sprintf("p%03d", p), fmt.Sprintf("r%d", p%4), "InProgress", now)
			s.draw()
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(out.n)/float64(b.N), "bytes/s")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e9*100, "%core")
}
