//go:build faults

package e2e

// Issue 14, scenario 6: churn at scale on the busy cluster. CI runs it
// small; `make e2e-churn` runs it at the size (50,000 Pods, 500
// creations and deletions a second for 2 minutes).

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// envInt reads a size from the environment, def when unset.
func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		t.Fatalf("%s=%q: want a positive number", name, v)
	}
	return n
}

// podWriter creates and deletes Pods bound to the busy cluster's simulated
// nodes (kwok makes them Running), with bounded parallelism.
type podWriter struct {
	c      *cluster
	ns     string
	nodes  []string
	next   atomic.Int64
	failed atomic.Int64
	done   atomic.Int64
}

func (w *podWriter) create(ctx context.Context, name string) {
	i := int(w.next.Add(1))
	_, err := w.c.client.CoreV1().Pods(w.ns).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "churn"}},
		Spec: corev1.PodSpec{
			NodeName:   w.nodes[i%len(w.nodes)],
			Containers: []corev1.Container{{Name: "app", Image: "app:v1"}},
		},
	}, metav1.CreateOptions{})
	w.count(err)
}

func (w *podWriter) remove(ctx context.Context, name string) {
	err := w.c.client.CoreV1().Pods(w.ns).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
	w.count(err)
}

func (w *podWriter) count(err error) {
	if err != nil {
		w.failed.Add(1)
	} else {
		w.done.Add(1)
	}
}

// TestBusyChurnAtScale: N Pods on simulated nodes, watched; writers create
// and delete Pods at a fixed rate while kwok writes their status; in the
// middle kube-apiserver is killed, etcd compacted while it is down, and it
// is started again. The stream ends in the server's state (nothing lost,
// nothing invented) and its memory stays bounded by the number of Pods.
// DELTAS_CHURN_PODS, DELTAS_CHURN_RATE (writes/s) and DELTAS_CHURN_SECONDS
// size it (CI: 1,000 Pods, 100/s, 30 s).
func TestBusyChurnAtScale(t *testing.T) {
	n := envInt(t, "DELTAS_CHURN_PODS", 1000)
	rate := envInt(t, "DELTAS_CHURN_RATE", 100)
	seconds := envInt(t, "DELTAS_CHURN_SECONDS", 30)
	c := busyCluster(t)
	r := &rollout{t: t, c: c, ns: c.namespace(t)}
	w := &podWriter{c: c, ns: r.ns, nodes: c.cp.Nodes()}

	began := time.Now()
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			w.create(bg, fmt.Sprintf("seed-%d", i))
		})
	}
	wg.Wait()
	if f := w.failed.Load(); f > 0 {
		t.Fatalf("%d of %d seed Pods failed", f, n)
	}
	t.Logf("%d Pods created in %s", n, time.Since(began).Round(100*time.Millisecond))

	// Through the counting proxy, to see the relist the compaction forces.
	p := newFaultProxy(t, c.cp.Server())
	d := startJSON(t, p.kubeconfig(c.cp.AdminToken()), "pods", "-n", r.ns)
	r.converge(d, 3*time.Minute)
	pid := d.pluginPID(10 * time.Second)
	synced, err := procStatusKB(pid, "VmRSS")
	must(t, err)

	// Churn: each tick creates a Pod and deletes the oldest churned one
	// (after the first second), so the count stays about N.
	// More writes in flight than for the seeding: each waits longer on a
	// server that is also busy with kwok, the controllers and the relist.
	inFlight := make(chan struct{}, 64)
	churnCtx, stopChurn := context.WithCancel(bg)
	churnBegan := time.Now()
	var churn sync.WaitGroup
	churn.Go(func() {
		ticker := time.NewTicker(time.Second / time.Duration(rate))
		defer ticker.Stop()
		for k := 0; ; k++ {
			select {
			case <-churnCtx.Done():
				return
			case <-ticker.C:
			}
			inFlight <- struct{}{}
			churn.Go(func() {
				defer func() { <-inFlight }()
				ctx, cancel := context.WithTimeout(bg, 10*time.Second)
				defer cancel()
				if k%2 == 0 {
					w.create(ctx, fmt.Sprintf("churn-%d", k/2))
				} else if old := k/2 - rate/2; old >= 0 {
					w.remove(ctx, fmt.Sprintf("churn-%d", old))
				}
			})
		}
	})
	time.Sleep(time.Duration(seconds) * time.Second / 2)
	must(t, c.cp.StopAPIServer())
	logMark := len(p.log())
	// Whatever the stream saw last, the compaction passes it: the re-watch
	// at the stream's resourceVersion must fail and the plugin relist while
	// the writers go on.
	must(t, c.cp.AdvanceEtcdRevision(bg))
	rev, err := c.cp.CompactEtcd(bg)
	must(t, err)
	ctx, cancel := context.WithTimeout(bg, 2*time.Minute)
	must(t, c.cp.StartAPIServer(ctx))
	cancel()
	t.Logf("kube-apiserver killed, etcd compacted at revision %d, restarted", rev)
	time.Sleep(time.Duration(seconds) * time.Second / 2)
	stopChurn()
	churn.Wait()
	writes := w.done.Load() - int64(n)
	t.Logf("churn: %d writes (%.0f/s, %d/s asked), %d failed (while the server was down)",
		writes, float64(writes)/time.Since(churnBegan).Seconds(), rate, w.failed.Load())

	state := r.converge(d, 3*time.Minute)
	relists := listsOf(p.requestsTo("pods", logMark))
	if len(relists) == 0 {
		t.Errorf("no relist after the compaction; requests since the kill:\n%s", renderRequests(p.requestsTo("pods", logMark)))
	}
	hwm, err := procStatusKB(pid, "VmHWM")
	must(t, err)
	t.Logf("%d Pods at the end; the plugin's RSS %d MiB after the sync, peak %d MiB; %d records, %d from relists; %d list requests after the restart",
		len(state), synced>>10, hwm>>10, d.led.count(), d.led.relistCount(), len(relists))
	// Memory follows the number of objects: the peak (the relist after the
	// compaction included) stays within three times the RSS of the
	// initial sync, plus the runtime's own.
	if limit := 3*synced + 64<<10; hwm > limit {
		t.Errorf("peak RSS %d MiB, want at most %d MiB", hwm>>10, limit>>10)
	}
	noFailure(t, c)
}
