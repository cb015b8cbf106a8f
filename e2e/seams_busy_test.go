//go:build faults

package e2e

// Where features meet (issue 55): one writer per recording, --fail-when
// alone on a replay, --queue as a controller queues, --help's examples.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
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

// queueRun is what a --handler --queue -o json run printed: its handler
// calls by kind, its reconciles and its summary.
type queueRun struct {
	calls      map[string]int // by kind
	reconciles []queueRecord
	summary    struct{ Calls, NotQueued, Reconciles, Coalesced int }
}

// readQueueRun reads the lines of a --handler --queue -o json run.
func readQueueRun(t *testing.T, lines []string) queueRun {
	t.Helper()
	q := queueRun{calls: map[string]int{}}
	summaries := 0
	for _, l := range lines {
		var r queueRecord
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("not JSON: %q", l)
		}
		switch r.Type {
		case "OnAdd", "OnUpdate", "OnDelete":
			q.calls[r.Kind]++
		case "Reconcile":
			q.reconciles = append(q.reconciles, r)
		case "QueueSummary":
			summaries++
			must(t, json.Unmarshal([]byte(l), &q.summary))
		}
	}
	if summaries != 1 {
		t.Fatalf("%d QueueSummary records, want 1:\n%s", summaries, strings.Join(lines, "\n"))
	}
	return q
}

// finishQueueRun lets s print its last calls and reconciles, stops it
// and reads all it printed.
func finishQueueRun(t *testing.T, s *stream) queueRun {
	t.Helper()
	s.waitFor(func(string) bool { return false }, 2*time.Second)
	s.stop()
	for l := range s.lines {
		s.seen = append(s.seen, l)
	}
	return readQueueRun(t, s.seen)
}

// folded is how many calls q's reconciles fold; a reconcile that is not
// of a wanted key fails the test, saying why.
func (q queueRun) folded(t *testing.T, wanted func(queueRecord) bool, why string) (n int) {
	t.Helper()
	for _, rec := range q.reconciles {
		if !wanted(rec) {
			t.Errorf("a reconcile of %s %s: %s", rec.Kind, rec.Name, why)
		}
		n += rec.Calls
	}
	return n
}

func (q queueRun) totalCalls() (n int) {
	for _, c := range q.calls {
		n += c
	}
	return n
}

// TestBusyQueueAsAController: --queue queues what one controller of the
// watched types would. With --events, the Events' calls queue nothing (a
// Pod controller does not watch Events); with --tree, the roots' calls
// queue the root and the members' their owner when it is of the root's
// type (controller-runtime's For and Owns), so a rollout of deploy/web
// reconciles the Deployment alone. The summary counts every handler call
// printed, and those that queued nothing apart.
func TestBusyQueueAsAController(t *testing.T) {
	c := busyCluster(t)
	kc := c.cp.AdminKubeconfig()

	t.Run("pods with their Events", func(t *testing.T) {
		r := &rollout{t: t, c: c, ns: c.namespace(t)}
		s := startAs(t, kc, "pods", "-n", r.ns, "--events", "--handler", "--queue", "--reconcile-time=10ms", "-o", "json")
		r.create(2, "web:v1")
		r.waitRolledOut(90 * time.Second)
		if !s.waitFor(func(l string) bool { return strings.Contains(l, `"kind":"Event"`) }, 30*time.Second) {
			t.Fatalf("no Event about the Pods in 30s; lines:\n%s", strings.Join(s.seen, "\n"))
		}
		q := finishQueueRun(t, s)
		folded := q.folded(t, func(rec queueRecord) bool { return rec.Kind == "Pod" }, "a Pod controller reconciles Pods")
		if q.calls["Event"] == 0 || q.summary.Calls != q.totalCalls() || q.summary.NotQueued != q.calls["Event"] ||
			folded+q.summary.NotQueued != q.summary.Calls {
			t.Errorf("calls %v, %d folded into reconciles, summary %+v; want every call counted, the Events' as queued nothing", q.calls, folded, q.summary)
		}
	})

	t.Run("a Deployment's tree", func(t *testing.T) {
		r := &rollout{t: t, c: c, ns: c.namespace(t)}
		r.create(2, "web:v1")
		r.waitRolledOut(90 * time.Second)
		s := startAs(t, kc, "deploy/web", "-n", r.ns, "--tree", "--handler", "--queue", "--reconcile-time=10ms", "-o", "json")
		if !s.waitFor(func(l string) bool { return strings.Contains(l, `"type":"Reconcile"`) }, 30*time.Second) {
			t.Fatalf("no reconcile of the initial list; lines:\n%s", strings.Join(s.seen, "\n"))
		}
		r.setImage("web:v2")
		r.waitRolledOut(90 * time.Second)
		q := finishQueueRun(t, s)
		folded := q.folded(t, func(rec queueRecord) bool { return rec.Kind == "Deployment" && rec.Name == "web" }, "the tree's controller reconciles deployment web")
		queued := q.calls["Deployment"] + q.calls["ReplicaSet"]
		if q.calls["Pod"] == 0 || q.summary.Calls != q.totalCalls() || q.summary.NotQueued != q.calls["Pod"] || folded != queued {
			t.Errorf("calls %v, %d folded into reconciles, summary %+v; want the Deployment's and ReplicaSets' calls queued, the Pods' counted as queued nothing", q.calls, folded, q.summary)
		}
	})
}

// seamRecord is what the seams tests read of a record.
type seamRecord struct {
	Type, Kind, Name, ResourceVersion string
	Owners                            []struct{ Kind, Name string }
	Object                            struct {
		Metadata struct{ UID string }
	}
}

// onceEach fails the test for a change of an object given twice in
// lines (records of -o json or of a recording): the same kind, name,
// resourceVersion and type; it returns the records of objects.
func onceEach(t *testing.T, what string, lines []string) []seamRecord {
	t.Helper()
	seen := map[string]int{}
	var out []seamRecord
	for i, l := range lines {
		var r seamRecord
		must(t, json.Unmarshal([]byte(l), &r))
		switch r.Kind {
		case "Pod", "ReplicaSet", "Deployment":
		default:
			continue // the recording's own lines, Events
		}
		out = append(out, r)
		id := fmt.Sprintf("%s %s %s rv %s", r.Type, r.Kind, r.Name, r.ResourceVersion)
		if first, twice := seen[id]; twice {
			t.Errorf("%s: line %d gives %s again (first at line %d)", what, i+1, id, first)
		}
		seen[id] = i + 1
	}
	return out
}

// TestBusyRootAlsoMemberOnce: deploy,rs,pods -l app --tree --events
// during a rollout: each Pod is a root (pods, selected) and a member (its
// ReplicaSet's, a root too). Each change is printed once and recorded
// once — a Pod's with its owner, its ReplicaSet, when the tree knows it —
// and the recording replays without an Updated that changes nothing.
func TestBusyRootAlsoMemberOnce(t *testing.T) {
	c := busyCluster(t)
	ns := c.namespace(t)
	kc := c.cp.AdminKubeconfig()
	r := &rollout{t: t, c: c, ns: ns}
	r.create(3, "web:v1")
	r.waitRolledOut(2 * time.Minute)
	path := filepath.Join(t.TempDir(), "full.jsonl")
	s := startAs(t, kc, "deploy,rs,pods", "-n", ns, "-l", "app", "--tree", "--events", "-o", "json", "--record="+path)
	if !s.waitFor(func(l string) bool { typ, _ := podOf(l); return typ != "" }, 30*time.Second) {
		t.Fatal("no Pod in 30s")
	}
	r.setImage("web:v2")
	r.waitRolledOut(2 * time.Minute)
	r.scale(5)
	r.waitRolledOut(2 * time.Minute)
	s.waitFor(func(string) bool { return false }, 3*time.Second) // the last changes
	s.stop()
	for l := range s.lines {
		s.seen = append(s.seen, l)
	}
	printed := onceEach(t, "printed", s.seen)
	added, withOwners := 0, 0
	for _, rec := range printed {
		if rec.Kind == "Pod" && rec.Type == "Added" {
			added++
			if len(rec.Owners) > 0 && rec.Owners[len(rec.Owners)-1].Kind == "ReplicaSet" {
				withOwners++
			}
		}
	}
	if added < 5 || withOwners*2 < added {
		t.Errorf("%d Pods Added, %d of them with their ReplicaSet: want the rollout's and the scale's 5 at least, most with their owner", added, withOwners)
	}
	lines, end := readLines(t, path)
	if !errors.Is(end, io.EOF) {
		t.Fatalf("reading the recording: %v", end)
	}
	onceEach(t, "recorded", lines)

	replayed := runAs(t, kc, time.Minute, "--replay="+path, "-o", "json")
	if replayed.code != 0 {
		t.Fatalf("replay: exit %d, stderr %q", replayed.code, replayed.stderr)
	}
	last := map[string]string{} // resourceVersion by UID
	for _, rec := range onceEach(t, "replayed", strings.Split(strings.TrimSpace(replayed.stdout), "\n")) {
		uid := rec.Object.Metadata.UID
		if rec.Type == "Updated" && last[uid] == rec.ResourceVersion {
			t.Errorf("the replay has an Updated of %s %s that changes nothing (rv %s)", rec.Kind, rec.Name, rec.ResourceVersion)
		}
		last[uid] = rec.ResourceVersion
	}

	// --fail-when alone on the replay of a rollout where nothing failed:
	// the recording's end is the stream's, exit 0; an --until unmet at
	// the end stays an error.
	res := runAs(t, kc, time.Minute, "--replay="+path, "--fail-when=status=Failed", "-o", "name")
	if res.code != 0 || res.stderr != "" {
		t.Errorf("--fail-when alone on the replay: exit %d, stderr %q; want 0 and nothing said", res.code, res.stderr)
	}
	res = runAs(t, kc, time.Minute, "--replay="+path, "--until=delete", "--fail-when=status=Failed", "-o", "name")
	if res.code != 1 || !strings.HasPrefix(res.stderr, "error: the recording ended before the condition was met on ") {
		t.Errorf("an --until unmet at the replay's end: exit %d, stderr %q; want 1 and the recording's end said", res.code, res.stderr)
	}
}

// timedRecord is what the resumed-recorder test reads of a record.
type timedRecord struct {
	Initial                                     bool
	Type, Kind, Name, ResourceVersion, CaughtUp string
	Time                                        time.Time
	From, To                                    time.Time // a Gap's
	Object                                      struct {
		Metadata struct {
			UID               string
			CreationTimestamp time.Time
		}
	}
}

// readTimed decodes lines (a recording's, or a replay's -o json).
func readTimed(t *testing.T, lines []string) []timedRecord {
	t.Helper()
	out := make([]timedRecord, 0, len(lines))
	for _, l := range lines {
		var r timedRecord
		must(t, json.Unmarshal([]byte(l), &r))
		out = append(out, r)
	}
	return out
}

// workload reports whether r is a record of the rollout's objects.
func (r timedRecord) workload() bool {
	return r.Kind == "Pod" || r.Kind == "ReplicaSet" || r.Kind == "Deployment"
}

// stateAt is the state a replay of path gives --at=at: each workload
// object's kind, name and resourceVersion, sorted.
func stateAt(t *testing.T, kc, path string, at time.Time) []string {
	t.Helper()
	res := runAs(t, kc, time.Minute, "--replay="+path, "--at="+at.Format(time.RFC3339Nano), "-o", "json")
	if res.code != 0 {
		t.Fatalf("--replay=%s --at=%s: exit %d, stderr %q", path, at.Format(time.RFC3339Nano), res.code, res.stderr)
	}
	var out []string
	for _, r := range readTimed(t, strings.Split(strings.TrimSpace(res.stdout), "\n")) {
		if r.workload() {
			out = append(out, r.Kind+" "+r.Name+" "+r.ResourceVersion)
		}
	}
	slices.Sort(out)
	return out
}

// TestBusyRecorderKilledTwiceIsInTime: deploy,rs,pods -l app --tree
// --events recorded by a recorder that runs through, and by one killed
// (SIGKILL) twice in the middle of a rollout and started again each
// time. The resumed recording replays in time and forward in
// resourceVersion for every object; its caught-up creations are at their
// creationTimestamp (±1 s); and --at at ten quiet times outside its gaps
// gives what the uninterrupted recording gives.
func TestBusyRecorderKilledTwiceIsInTime(t *testing.T) {
	c := busyCluster(t)
	ns := c.namespace(t)
	kc := c.cp.AdminKubeconfig()
	r := &rollout{t: t, c: c, ns: ns, minReadySeconds: 1}
	r.create(3, "web:v1")
	r.waitRolledOut(2 * time.Minute)
	dir := t.TempDir()
	full, killed := filepath.Join(dir, "full.jsonl"), filepath.Join(dir, "killed.jsonl")
	args := func(path string) []string {
		return []string{"deploy,rs,pods", "-n", ns, "-l", "app", "--tree", "--events", "-o", "json", "--record=" + path}
	}
	through := startAs(t, kc, args(full)...)
	down := startAs(t, kc, args(killed)...)
	waitHeartbeat(t, full, 2)
	waitHeartbeat(t, killed, 2)
	quiet := func() { time.Sleep(4 * time.Second) } // a time with no change, for --at to compare
	quiet()

	r.setImage("web:v2") // a rollout of about 6 s (minReadySeconds)
	for range 2 {
		time.Sleep(1500 * time.Millisecond)
		must(t, down.cmd.Process.Kill())
		<-down.done
		time.Sleep(2 * time.Second) // Pods made and deleted while it is down
		down = startAs(t, kc, args(killed)...)
		waitHeartbeat(t, killed, 2)
	}
	r.waitRolledOut(2 * time.Minute)
	quiet()
	r.scale(5)
	r.waitRolledOut(2 * time.Minute)
	quiet()
	r.scale(2)
	r.waitRolledOut(2 * time.Minute)
	quiet()
	through.stop()
	down.stop()

	fullLines, end := readLines(t, full)
	if !errors.Is(end, io.EOF) {
		t.Fatalf("reading %s: %v", full, end)
	}
	killedLines, end := readLines(t, killed)
	if !errors.Is(end, io.EOF) {
		t.Fatalf("reading %s: %v", killed, end)
	}
	var gaps [][2]time.Time
	caughtUp := 0
	for _, rec := range readTimed(t, killedLines) {
		switch {
		case rec.Type == "Gap":
			gaps = append(gaps, [2]time.Time{rec.From, rec.To})
		case rec.CaughtUp == "creationTimestamp" && rec.Type == "Added" && rec.workload():
			caughtUp++
			if d := rec.Time.Sub(rec.Object.Metadata.CreationTimestamp); d < -time.Second || d > time.Second {
				t.Errorf("%s %s created at %s, caught up at %s", rec.Kind, rec.Name, rec.Object.Metadata.CreationTimestamp, rec.Time)
			}
		}
	}
	if len(gaps) != 2 || caughtUp == 0 {
		t.Fatalf("%d gaps and %d creations caught up; want 2 gaps, and Pods made while down caught up:\n%s", len(gaps), caughtUp, strings.Join(killedLines, "\n"))
	}

	// The replay: in time, and forward per object.
	res := runAs(t, kc, time.Minute, "--replay="+killed, "-o", "json")
	if res.code != 0 {
		t.Fatalf("replay: exit %d, stderr %q", res.code, res.stderr)
	}
	var last time.Time
	rvs := map[string]int{}
	for _, rec := range readTimed(t, strings.Split(strings.TrimSpace(res.stdout), "\n")) {
		if rec.Initial {
			continue // the state it starts from, in the list's order
		}
		if rec.Time.Before(last) {
			t.Errorf("the replay goes back in time: %s %s %s at %s after %s", rec.Type, rec.Kind, rec.Name, rec.Time, last)
		}
		last = rec.Time
		rv, err := strconv.Atoi(rec.ResourceVersion)
		if err != nil || rec.Object.Metadata.UID == "" {
			continue
		}
		if uid := rec.Object.Metadata.UID; rv < rvs[uid] {
			t.Errorf("the replay goes back in resourceVersion: %s %s %s rv %d after %d", rec.Type, rec.Kind, rec.Name, rv, rvs[uid])
		} else {
			rvs[uid] = rv
		}
	}

	// --at at quiet times outside the gaps: no record of either within a
	// second (caught-up times are in whole seconds), both running.
	var busy []time.Time
	for _, rec := range readTimed(t, append(slices.Clone(fullLines), killedLines...)) {
		if rec.workload() {
			busy = append(busy, rec.Time)
		}
	}
	first := readTimed(t, killedLines[:1])[0].Time
	lastTime := readTimed(t, killedLines[len(killedLines)-1:])[0].Time
	var quietTimes []time.Time
	for at := first.Add(2 * time.Second); at.Before(lastTime.Add(-time.Second)); at = at.Add(250 * time.Millisecond) {
		near := slices.ContainsFunc(busy, func(b time.Time) bool { return b.Sub(at).Abs() < time.Second })
		inGap := slices.ContainsFunc(gaps, func(g [2]time.Time) bool {
			return !at.Before(g[0].Add(-time.Second)) && at.Before(g[1].Add(time.Second))
		})
		if !near && !inGap {
			quietTimes = append(quietTimes, at)
		}
	}
	if len(quietTimes) < 10 {
		t.Fatalf("%d quiet times outside the gaps, want 10 at least", len(quietTimes))
	}
	var times []time.Time // ten, spread over the run
	for i := range 10 {
		times = append(times, quietTimes[i*(len(quietTimes)-1)/9])
	}
	for _, at := range times {
		if got, want := stateAt(t, kc, killed, at), stateAt(t, kc, full, at); !slices.Equal(got, want) {
			t.Errorf("--at=%s: the resumed recording has\n  %s\nthe uninterrupted one\n  %s", at.Format(time.RFC3339Nano), strings.Join(got, "\n  "), strings.Join(want, "\n  "))
		}
	}
}
