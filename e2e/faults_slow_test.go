//go:build faults

package e2e

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// terminatedWatchers reads the API server's count of watchers it closed
// for being too slow (apiserver_terminated_watchers_total, configmaps).
func (c *cluster) terminatedWatchers(t *testing.T) int {
	t.Helper()
	raw, err := c.client.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(bg)
	if err != nil {
		t.Fatalf("reading /metrics: %v", err)
	}
	n := 0
	sc := bufio.NewScanner(strings.NewReader(string(raw)))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "apiserver_terminated_watchers_total{") && strings.Contains(line, `resource="configmaps"`) {
			f := strings.Fields(line)
			v, _ := strconv.ParseFloat(f[len(f)-1], 64)
			n += int(v)
		}
	}
	return n
}

// Scenario 5: a slow reader. stdout is read 10 lines a second while a
// burst of 100 ConfigMaps × 60 updates (8 KiB each) is written. The plugin
// keeps reading the watch at full speed (the DeltaFIFO is the buffer): the
// writer is not slowed down, the final state arrives as soon as the reader
// speeds up, and the API server does not close the watch for being slow
// (apiserver_terminated_watchers_total; logged, see below). With the default --max-update-backlog the queued updates of one
// object are folded and the records say how many ("coalesced"), so memory
// is bounded by the objects, not by the events: the plugin's peak RSS
// (VmHWM) grows by at most twice (Go's GC lets the heap reach twice the
// live data) what a full FIFO holds — objects × (backlog+1) deltas — plus
// a fixed slack. Measured on the 2-core machine: +34 MB with the default
// backlog, +64 MB with --max-update-backlog=0 (every event kept); the bound
// is +43 MB. Once the
// reader speeds up, the final state arrives, and each object's records
// account for every one of its writes.
func TestFaultSlowReader(t *testing.T) {
	t.Parallel()
	// 100 objects × 60 updates of 8 KiB: 6,100 writes, about 52 MB of
	// events, for 0.9 MB of objects.
	const objects, updates, payloadSize = 100, 60, 8 << 10
	// backlog is the default --max-update-backlog.
	const backlog = 10
	c := startCluster(t)
	ns := c.namespace(t)
	d := startJSON(t, c.cp.AdminKubeconfig(), "configmaps", "-n", ns)
	pid := d.pluginPID(10 * time.Second)
	d.waitWatchingJSON(c, ns, 60*time.Second)
	baseRSS, err := procStatusKB(pid, "VmRSS")
	if err != nil {
		t.Fatal(err)
	}
	terminatedBefore := c.terminatedWatchers(t)

	d.readDelay.Store(int64(100 * time.Millisecond))
	w := newWriter(c.client, ns)
	w.payload = strings.Repeat("x", payloadSize)
	began := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := range 16 {
		wg.Go(func() {
			for i := g; i < objects; i += 16 {
				name := fmt.Sprintf("cm-%d", i)
				if err := w.create(bg, name); err != nil {
					errs <- err
					return
				}
			}
			for range updates {
				for i := g; i < objects; i += 16 {
					if err := w.update(bg, fmt.Sprintf("cm-%d", i)); err != nil {
						errs <- err
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	wrote := time.Since(began)
	readDuringBurst := d.led.count()
	ok, _ := w.total()
	hwmDuringBurst, _ := procStatusKB(pid, "VmHWM")
	t.Logf("writer: %d writes in %s; the reader got %d records meanwhile; VmRSS before %d KiB, VmHWM %d KiB", ok, wrote.Round(100*time.Millisecond), readDuringBurst, baseRSS, hwmDuringBurst)

	d.readDelay.Store(0)
	drain := time.Now()
	d.converge(c, ns, 2*time.Minute)
	drained := time.Since(drain)
	hwm, err := procStatusKB(pid, "VmHWM")
	if err != nil {
		t.Fatal(err)
	}
	coalesced, maxCoalesced := 0, 0
	for _, r := range d.led.recordsFrom(0) {
		if r.Coalesced > 0 {
			coalesced++
			maxCoalesced = max(maxCoalesced, r.Coalesced)
		}
	}
	terminatedAfter := c.terminatedWatchers(t)
	t.Logf("drained in %s: %d records for %d writes, %d coalesced (max %d); VmHWM %d KiB; terminated watchers %d → %d",
		drained.Round(100*time.Millisecond), d.led.count(), ok, coalesced, maxCoalesced, hwm, terminatedBefore, terminatedAfter)

	if problems := checkSequence(d.led, w.writes()); len(problems) > 0 {
		t.Errorf("the records do not account for every write:\n%s", strings.Join(problems[:min(len(problems), 20)], "\n"))
	}
	if d.led.relistCount() > 0 {
		t.Errorf("%d records from a relist: the watch was lost under a slow reader", d.led.relistCount())
	}
	// The writer is not held back by the plugin, and the backlog comes out
	// at once when the reader speeds up.
	if wrote > 2*time.Minute {
		t.Errorf("the burst took %s: the server side was held back", wrote)
	}
	if drained > 30*time.Second {
		t.Errorf("the final state took %s to arrive once the reader sped up", drained)
	}
	// A watcher the server closed for being slow is a stall of the plugin's
	// watch reader. On an idle machine it never happens (0 in every run);
	// on a machine saturated by other work (load average 5 on 2 cores) the
	// server closed it once in 6 runs, and the re-watch lost nothing (the
	// checks above hold). Reported, not failed: a scheduling stall of the
	// whole machine is not the plugin's doing.
	if terminatedAfter != terminatedBefore {
		load, _ := os.ReadFile("/proc/loadavg")
		t.Logf("NOTE: the API server closed %d configmaps watcher(s) for being slow (load average %s); the stream recovered without loss", terminatedAfter-terminatedBefore, strings.TrimSpace(string(load)))
	}
	if coalesced == 0 || d.led.count() > ok/2 {
		t.Errorf("with the default --max-update-backlog and a slow reader, queued updates should be folded: %d records (%d coalesced) for %d writes", d.led.count(), coalesced, ok)
	}
	if maxCoalesced > updates {
		t.Errorf("a record says it folds %d updates; an object had %d", maxCoalesced, updates)
	}
	// Less than 10 lines/s × the burst's duration plus slack were read while
	// the writer ran: the reader really was slow, the FIFO held the rest.
	if limit := int(wrote.Seconds()*10) + 50; readDuringBurst > limit {
		t.Errorf("the reader got %d records during a %s burst: not slow", readDuringBurst, wrote)
	}
	objectSize := int64(payloadSize + 512)
	boundKB := (2*objects*(backlog+1)*objectSize + 24<<20) >> 10
	if growth := hwm - baseRSS; growth > boundKB {
		t.Errorf("peak RSS grew by %d KiB during the burst (VmRSS %d KiB before, VmHWM %d KiB), more than %d KiB: memory follows the events, not the objects", growth, baseRSS, hwm, boundKB)
	}
	if code := d.stop(); code != 130 {
		t.Errorf("exit code after SIGINT = %d, want 130", code)
	}
}
