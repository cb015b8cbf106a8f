//go:build faults

package e2e

import (
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-deltas/kubectl-deltas/internal/history/recording"
)

// TestFaultRecordGoesOn: a recorder killed with SIGKILL and started again
// on its recording goes on where it stopped, twice: once with the changes
// made meanwhile still in etcd (they come as the watch's events), once
// with etcd compacted past the recording's resourceVersion (a relist says
// what changed, with one note of the gap). The recording then holds no
// record twice, no phantom, one initial list, a Gap each time it went
// on, and ends in the server's state — the fault tests' ledger reads it as it reads a live stream.
func TestFaultRecordGoesOn(t *testing.T) {
	t.Parallel()
	c := startCluster(t, "--watch-cache=false") // so that a compaction answers 410
	ns := c.namespace(t)
	w := newWriter(c.client, ns)
	for _, n := range names("base", 4) {
		must(t, w.create(bg, n))
	}
	path := filepath.Join(t.TempDir(), "r.jsonl.zst")
	args := []string{"configmaps", "-n", ns, "--record=" + path}
	kill := func(d *deltasRun) {
		t.Helper()
		time.Sleep(2 * recording.CutInterval) // what was printed is in the file
		_ = d.cmd.Process.Kill()
		<-d.done
	}

	d := startJSON(t, c.cp.AdminKubeconfig(), args...)
	d.waitKeys(4, 30*time.Second)
	must(t, w.update(bg, "base-0"))
	d.converge(c, ns, 30*time.Second)
	kill(d)

	// Down: the changes are still in etcd; the watch from the recorded
	// resourceVersion brings them, and nothing else.
	must(t, w.create(bg, "pre-1"))
	must(t, w.update(bg, "base-1"))
	must(t, w.remove(bg, "base-2"))
	d = startJSON(t, c.cp.AdminKubeconfig(), args...)
	d.waitRecord("Added pre-1", 30*time.Second, func(r *deltaRecord) bool { return r.Name == "pre-1" && r.Type == "Added" })
	d.waitRecord("Updated base-1", 30*time.Second, func(r *deltaRecord) bool { return r.Name == "base-1" && r.Type == "Updated" })
	d.waitRecord("Deleted base-2", 30*time.Second, func(r *deltaRecord) bool {
		return r.Name == "base-2" && r.Type == "Deleted" && !r.FinalStateUnknown
	})
	if n := d.led.count(); n != 3 {
		t.Errorf("the recorder went on with %d records, want the 3 changes made while it was down\n%s", n, d.describe())
	}
	kill(d)

	// Down again, and etcd compacted past where the recording stopped.
	must(t, w.create(bg, "pre-2"))
	must(t, w.update(bg, "base-3"))
	must(t, w.create(bg, "gone-2"))
	must(t, w.remove(bg, "gone-2"))
	must(t, w.remove(bg, "pre-1"))
	if _, err := c.cp.CompactEtcd(bg); err != nil {
		t.Fatal(err)
	}
	d = startJSON(t, c.cp.AdminKubeconfig(), args...)
	d.waitStderr("where the recording stopped (compacted): relisting", 60*time.Second)
	d.waitRecord("Replaced pre-2", 30*time.Second, func(r *deltaRecord) bool { return r.Name == "pre-2" && r.Type == "Replaced" && !r.Initial })
	d.waitRecord("Replaced base-3", 30*time.Second, func(r *deltaRecord) bool { return r.Name == "base-3" && r.Type == "Replaced" && !r.Initial })
	d.waitRecord("Deleted pre-1", 30*time.Second, func(r *deltaRecord) bool { return r.Name == "pre-1" && r.Type == "Deleted" && r.FinalStateUnknown })
	if code := d.stop(); code != 130 {
		t.Errorf("exit %d after Ctrl-C, want 130", code)
	}

	// The recording, read as a stream.
	r, err := recording.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	led := newLedger(false)
	headers, initial, gaps, heartbeats := 0, 0, 0, 0
	for {
		line, _, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("reading the recording: %v", err)
		}
		switch {
		case strings.HasPrefix(string(line), `{"type":"Recording"`):
			headers++
			continue
		case strings.HasPrefix(string(line), `{"type":"Gap"`):
			gaps++
			continue
		case strings.HasPrefix(string(line), `{"type":"Heartbeat"`):
			heartbeats++
			continue
		}
		if strings.Contains(string(line), `"initial":true`) {
			initial++
		}
		led.applyLine(string(line))
	}
	server, err := c.state(bg, ns)
	must(t, err)
	if diff := stateDiff(led.snapshot(), server); len(diff) > 0 {
		t.Errorf("the recording does not end in the server's state:\n  %s", strings.Join(diff, "\n  "))
	}
	if v := led.violations(); len(v) > 0 {
		t.Errorf("the recording breaks the ledger's rules:\n  %s", strings.Join(v, "\n  "))
	}
	if headers != 3 || initial != 4 || gaps != 2 || heartbeats < 3 {
		t.Errorf("the recording has %d parts, %d initial records, %d Gaps and %d Heartbeats; want 3, the first run's 4, one Gap each time it went on and a Heartbeat at least after each initial list", headers, initial, gaps, heartbeats)
	}
	if led.has(func(r *deltaRecord) bool { return r.Name == "gone-2" }) {
		t.Error("an object created and deleted inside the gap is in the recording")
	}
	// Its replay ends in the server's state too.
	replayed := runAs(t, c.cp.AdminKubeconfig(), time.Minute, "--replay="+path, "--at=-0s", "-o", "json")
	end := newLedger(false)
	for _, line := range strings.Split(strings.TrimSpace(replayed.stdout), "\n") {
		end.applyLine(line)
	}
	if diff := stateDiff(end.snapshot(), server); replayed.code != 0 || len(diff) > 0 {
		t.Errorf("the replay of the recording at its end (exit %d, stderr %q) is not the server's state:\n  %s", replayed.code, replayed.stderr, strings.Join(diff, "\n  "))
	}
	t.Logf("%d records in %d parts", led.count(), headers)
}
