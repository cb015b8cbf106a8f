//go:build faults

package e2e

import (
	"context"
	"strings"
	"testing"
	"time"
)

// Scenario 1: kube-apiserver killed (SIGKILL) and restarted on the same
// etcd, twice, while a writer makes about 10 changes a second. The plugin
// backs off, re-watches (or relists honestly when the new server's watch
// cache no longer has its resourceVersion), prints exactly one warning and
// one "connection restored" per outage, and its stream ends in the
// server's state.
func TestFaultAPIServerKilled(t *testing.T) {
	t.Parallel()
	c := startCluster(t)
	ns := c.namespace(t)
	w := newWriter(c.client, ns)
	for _, n := range names("pre", 5) {
		if err := w.create(bg, n); err != nil {
			t.Fatal(err)
		}
	}
	d := startJSON(t, c.cp.AdminKubeconfig(), "configmaps", "-n", ns)
	d.waitKeys(5, 30*time.Second)

	stopWriter := w.runPaced(names("cm", 10), 100*time.Millisecond, 3)
	defer stopWriter()
	const outages = 2
	for outage := 1; outage <= outages; outage++ {
		// The stream follows the writer before the kill.
		before := d.led.count()
		d.waitFor("changes before the kill", 30*time.Second, func() bool { return d.led.count() >= before+15 })

		if err := c.cp.StopAPIServer(); err != nil {
			t.Fatal(err)
		}
		killed := time.Now()
		d.waitFor("the outage warning", 60*time.Second, func() bool { return len(d.stderrLines("warning: ")) >= outage })
		t.Logf("outage %d: warning after %s: %s", outage, time.Since(killed).Round(100*time.Millisecond), d.stderrLines("warning: ")[outage-1])
		// Stay down while the writer keeps failing for a while.
		_, failedBefore := w.total()
		d.waitFor("the writer failing against the dead server", 30*time.Second, func() bool { _, f := w.total(); return f >= failedBefore+20 })

		ctx, cancel := context.WithTimeout(bg, 2*time.Minute)
		err := c.cp.StartAPIServer(ctx)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		restarted := time.Now()
		d.waitFor("connection restored", 60*time.Second, func() bool {
			return len(d.stderrLines("info: connection restored after ")) >= outage
		})
		t.Logf("outage %d: down %s, restored %s after the restart", outage, restarted.Sub(killed).Round(100*time.Millisecond), time.Since(restarted).Round(100*time.Millisecond))
	}
	// The stream follows the writer after the last outage.
	before := d.led.count()
	d.waitFor("changes after the restarts", 30*time.Second, func() bool { return d.led.count() >= before+15 })
	steps := stopWriter()
	ok, failed := w.total()
	t.Logf("writer: %d steps, %d writes acknowledged, %d failed; %d records, %d from relists", steps, ok, failed, d.led.count(), d.led.relistCount())

	d.converge(c, ns, 60*time.Second)
	if d.led.relistCount() == 0 {
		// No relist: the watch resumed from the last resourceVersion each
		// time, so every acknowledged write is in the stream.
		if missing := unprinted(d.led, w.writes()); len(missing) > 0 {
			t.Errorf("writes lost without a relist:\n  %s\n%s", strings.Join(missing, "\n  "), d.describe())
		}
	}
	d.checkOutages(outages)
	if code := d.stop(); code != 130 {
		t.Errorf("exit code after SIGINT = %d, want 130", code)
	}
	noStackTrace(t, d.stderr.String())
	if strings.Contains(d.stderr.String(), c.cp.AdminToken()) {
		t.Error("stderr shows the token")
	}
}
