//go:build faults

package e2e

// Where features meet (issue 55): one writer per recording, --fail-when
// alone on a replay, --queue as a controller queues, --help's examples.

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestBusyTwoRecordersOneFile: a second recorder of a file being recorded
// is refused before it asks the cluster anything, naming the first by its
// pid, and the recording stays whole; a replay of it meanwhile reads what
// is whole and says it is live; once the first is killed (SIGKILL), a
// recorder goes on with the file: the kernel released the lock.
func TestBusyTwoRecordersOneFile(t *testing.T) {
	c := busyCluster(t)
	ns := c.namespace(t)
	kc := c.cp.AdminKubeconfig()
	r := &rollout{t: t, c: c, ns: ns}
	r.create(2, "web:v1")
	path := filepath.Join(t.TempDir(), "web.jsonl.zst")
	args := []string{"deploy,rs,pods", "-n", ns, "-o", "name", "--record=" + path}
	first := startAs(t, kc, args...)
	if !first.waitFor(func(l string) bool { return strings.HasPrefix(l, "pod/") }, 30*time.Second) {
		t.Fatal("the first recorder printed no Pod in 30s")
	}
	r.waitRolledOut(2 * time.Minute)
	waitRecorded(t, path, func(lines []string) bool { return len(lines) > 3 })

	second := runAs(t, kc, 20*time.Second, args...)
	want := fmt.Sprintf("error: --record: %s is being recorded by another kubectl deltas (pid %d): two recorders would corrupt it; stop that one, or record to another file\n", path, first.cmd.Process.Pid)
	if second.code != 1 || second.stdout != "" || second.stderr != want {
		t.Errorf("a second recorder of one file: exit %d, stdout %q, stderr %q; want exit 1, nothing on stdout and\n%s", second.code, second.stdout, second.stderr, want)
	}

	// A replay while it is recorded.
	r.scale(3)
	replayed := runAs(t, kc, time.Minute, "--replay="+path, "-o", "name")
	if replayed.code != 0 || !strings.Contains(replayed.stdout, "deployment.apps/web") ||
		!strings.Contains(replayed.stderr, fmt.Sprintf("is being recorded by another kubectl deltas (pid %d): replaying what it holds so far", first.cmd.Process.Pid)) ||
		strings.Contains(replayed.stderr, "warning") {
		t.Errorf("a replay of a live recording: exit %d, stdout %q, stderr %q; want the Deployment, and an info line that it is live", replayed.code, replayed.stdout, replayed.stderr)
	}

	// SIGKILL: no stale lock.
	if err := first.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-first.done
	r.waitRolledOut(2 * time.Minute)
	again := startAs(t, kc, args...)
	if !again.waitFor(func(l string) bool { return strings.HasPrefix(l, "pod/") }, 30*time.Second) {
		t.Fatalf("the recorder after a SIGKILLed one printed no Pod in 30s; stderr:\n%s", again.stderr.String())
	}
	waitRecorded(t, path, func(lines []string) bool { return strings.Count(strings.Join(lines, "\n"), `"type":"Heartbeat"`) >= 2 })
	if code := again.stop(); code != 130 {
		t.Errorf("the recorder going on: exit %d, stderr:\n%s", code, again.stderr.String())
	}
	lines, end := readLines(t, path)
	if !errors.Is(end, io.EOF) {
		t.Fatalf("the recording after two recorders met it: %v", end)
	}
	if n := strings.Count(strings.Join(lines, "\n"), `{"type":"Recording"`); n != 2 {
		t.Errorf("the recording holds %d runs' headers, want 2 (the refused recorder wrote nothing)", n)
	}
}

// waitRecorded waits (30 s at most) until the lines of the recording at
// path, read as far as they are whole, satisfy done.
func waitRecorded(t *testing.T, path string, done func([]string) bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		lines, _ := readLines(t, path)
		if done(lines) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the recording %s did not get there in 30s:\n%s", path, strings.Join(lines, "\n"))
		}
		time.Sleep(200 * time.Millisecond)
	}
}
