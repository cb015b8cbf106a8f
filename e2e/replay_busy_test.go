//go:build faults

package e2e

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-deltas/kubectl-deltas/internal/history/recording"
)

// TestBusyReplayFailsWhenLiveFailed: a Pod that cannot be scheduled is
// judged Failed 15 s on by time alone, with no change of its own; its
// recording, replayed, turns it Failed at the same recorded time (±1 s):
// --fail-when trips there, the Verdict names the scheduler's Warning as
// live, and the replay's page draws the Failed where the live page did.
func TestBusyReplayFailsWhenLiveFailed(t *testing.T) {
	c := busyCluster(t)
	ns := c.namespace(t)
	kc := c.cp.AdminKubeconfig()
	dir := t.TempDir()
	path := filepath.Join(dir, "stuck.jsonl.zst")
	livePage, replayPage := filepath.Join(dir, "live.html"), filepath.Join(dir, "replay.html")
	createBroken(t, c, ns, "stuck", nil, map[string]string{"disk": "none"})
	live := runAs(t, kc, 2*time.Minute, "deploy/stuck", "-n", ns, "--tree", "--events", "--until=status=Current", "--fail-when=status=Failed",
		"--timeout=90s", "-o", "json", "--record="+path, "--timeline="+livePage)
	liveVerdict := lastVerdict(t, live)
	if live.code != 2 || liveVerdict.Outcome != "Failed" {
		t.Fatalf("live: exit %d, verdict %+v, stderr %q", live.code, liveVerdict, live.stderr)
	}

	replayed := runAs(t, kc, 2*time.Minute, "--replay="+path, "--until=status=Current", "--fail-when=status=Failed", "-o", "json", "--timeline="+replayPage)
	replayVerdict := lastVerdict(t, replayed)
	if replayed.code != 2 || replayVerdict.Outcome != "Failed" {
		t.Fatalf("replay: exit %d, verdict %+v, stderr %q", replayed.code, replayVerdict, replayed.stderr)
	}
	if d := replayVerdict.Time.Sub(liveVerdict.Time); d < -time.Second || d > time.Second {
		t.Errorf("the replay failed at %s, the live run at %s: %s apart", replayVerdict.Time, liveVerdict.Time, d)
	}
	for name, v := range map[string]verdict{"live": liveVerdict, "replay": replayVerdict} {
		if v.pod() == nil || v.pod().Event == nil || v.pod().Event.Reason != "FailedScheduling" {
			t.Errorf("%s: the Verdict's Pod has not the scheduler's Warning: %+v", name, v)
		}
	}
	if !strings.Contains(replayed.stderr, "Warning FailedScheduling") {
		t.Errorf("replay: stderr %q names no Warning", replayed.stderr)
	}

	liveFailed, replayFailed := podFailedAt(t, livePage), podFailedAt(t, replayPage)
	if d := replayFailed.Sub(liveFailed); liveFailed.IsZero() || d < -time.Second || d > time.Second {
		t.Errorf("the replay's page draws the Pod Failed at %s, the live page at %s", replayFailed, liveFailed)
	}
}

// verdict is the Verdict record of a run.
type verdict struct {
	Type, Outcome string
	Time          time.Time
	Objects       []struct {
		Kind, Name string
		Health     struct{ Status, Reason string }
		Event      *struct{ Type, Reason string }
	}
}

// pod is the Verdict's Pod, nil without one.
func (v *verdict) pod() *struct {
	Kind, Name string
	Health     struct{ Status, Reason string }
	Event      *struct{ Type, Reason string }
} {
	for i := range v.Objects {
		if v.Objects[i].Kind == "Pod" {
			return &v.Objects[i]
		}
	}
	return nil
}

// lastVerdict is the Verdict record a -o json run ends with.
func lastVerdict(t *testing.T, r result) verdict {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	var v verdict
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &v); err != nil || v.Type != "Verdict" {
		t.Fatalf("the last line is no Verdict: %s (%v); stderr %q", lines[len(lines)-1], err, r.stderr)
	}
	return v
}

// podFailedAt is when the page at path first draws its Pod Failed; zero
// when it does not.
func podFailedAt(t *testing.T, path string) time.Time {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, rest, _ := strings.Cut(string(raw), `<script id="timeline-data" type="application/json">`)
	data, _, _ := strings.Cut(rest, "</script>")
	var doc struct {
		Lanes []struct {
			Kind   string  `json:"kind"`
			Health [][]any `json:"health"`
			Marks  []struct {
				Time   int64  `json:"t"`
				Health string `json:"h"`
			} `json:"marks"`
		} `json:"lanes"`
	}
	if err := json.Unmarshal([]byte(data), &doc); err != nil {
		t.Fatalf("the data of %s: %v", path, err)
	}
	var at time.Time
	for _, l := range doc.Lanes {
		if l.Kind != "Pod" {
			continue
		}
		note := func(ms int64) {
			if when := time.UnixMilli(ms); at.IsZero() || when.Before(at) {
				at = when
			}
		}
		for _, h := range l.Health {
			if len(h) >= 2 && h[1] == "Failed" {
				note(int64(h[0].(float64)))
			}
		}
		for _, m := range l.Marks {
			if m.Health == "Failed" {
				note(m.Time)
			}
		}
	}
	return at
}

// TestBusyRecorderGoesOn: on the busy cluster (controllers, scheduler,
// kwok), a recorder of a namespace's Deployments, ReplicaSets and Pods
// with --events is killed with SIGKILL while a Deployment is scaled up,
// and started again: the recording holds nothing of a Pod deleted before
// it began, no record twice (Events included), one Gap, the Pods created
// while it was down at their creationTimestamp inside the gap; its replay
// at the end is the server's state.
func TestBusyRecorderGoesOn(t *testing.T) {
	c := busyCluster(t)
	ns := c.namespace(t)
	kc := c.cp.AdminKubeconfig()
	r := &rollout{t: t, c: c, ns: ns}
	r.create(2, "web:v1")
	r.waitRolledOut(2 * time.Minute)
	// Scaled down before the recording begins: the Pod deleted then is
	// older than the collection's resourceVersion at the first list.
	r.scale(1)
	r.waitRolledOut(2 * time.Minute)
	path := filepath.Join(t.TempDir(), "web.jsonl")
	args := []string{"deploy,rs,pods", "-n", ns, "--events", "-o", "json", "--record=" + path}
	run := startAs(t, kc, args...)
	if !run.waitFor(func(l string) bool { typ, _ := podOf(l); return typ != "" }, 30*time.Second) {
		t.Fatal("the recorder printed no Pod in 30s")
	}
	waitHeartbeat(t, path, 3) // deployments, replicasets, pods (the Events: not while one waits for its subject)
	if err := run.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-run.done

	r.scale(3) // two Pods while the recorder is down
	r.waitRolledOut(2 * time.Minute)
	run = startAs(t, kc, args...)
	// Both Pods made while it was down, caught up: the watch it resumes
	// may bring them in separate batches, a Heartbeat between them. (An
	// Event about a Pod is no Pod: its record names the Pod too.)
	added := map[string]bool{}
	if !run.waitFor(func(l string) bool {
		if typ, name := podOf(l); typ == "Added" {
			added[name] = true
		}
		return len(added) >= 2
	}, 30*time.Second) {
		t.Fatalf("the recorder going on printed %d Pods Added, want the 2 made while it was down", len(added))
	}
	waitHeartbeat(t, path, 3)
	run.stop()

	lines, end := readLines(t, path)
	if !errors.Is(end, io.EOF) {
		t.Fatalf("reading the recording: %v", end)
	}
	pods, err := c.client.CoreV1().Pods(ns).List(bg, metav1.ListOptions{})
	must(t, err)
	exists := map[string]bool{}
	for _, p := range pods.Items {
		exists[p.Name] = true
	}
	seen := map[string]bool{}
	podLines := map[string][]string{} // each Pod's record types, in order
	gaps, caughtUp := 0, 0
	var gap recording.Gap
	for i, line := range lines {
		var rec struct {
			Type, Kind, Name, ResourceVersion, CaughtUp string
			Time                                        time.Time
			Object                                      struct {
				Metadata struct{ CreationTimestamp time.Time }
			}
		}
		must(t, json.Unmarshal([]byte(line), &rec))
		switch rec.Type {
		case "Gap":
			gaps++
			must(t, json.Unmarshal([]byte(line), &gap))
			continue
		case "Recording", "Heartbeat":
			continue
		}
		id := rec.Type + " " + rec.Kind + " " + rec.Name + " " + rec.ResourceVersion
		if seen[id] {
			t.Errorf("line %d recorded twice: %s", i+1, id)
		}
		seen[id] = true
		if rec.Kind == "Pod" {
			podLines[rec.Name] = append(podLines[rec.Name], rec.Type)
		}
		if rec.CaughtUp != "" {
			caughtUp++
			if rec.Time.Before(gap.From) || rec.Time.After(gap.To) {
				t.Errorf("line %d: caught up at %s, outside the gap %s to %s", i+1, rec.Time, gap.From, gap.To)
			}
			// creationTimestamp is in seconds: a Pod created in the second
			// the recorder last beat is dated from that beat.
			if created := rec.Object.Metadata.CreationTimestamp; rec.Kind == "Pod" && rec.Type == "Added" &&
				(rec.CaughtUp != "creationTimestamp" || rec.Time.Before(created) || rec.Time.Sub(created) >= 2*time.Second) {
				t.Errorf("line %d: a Pod created while down, recorded at %s (%s), created at %s", i+1, rec.Time, rec.CaughtUp, rec.Object.Metadata.CreationTimestamp)
			}
		}
	}
	for name, types := range podLines {
		// Only the Pods of the recording's time: the one scaled away
		// before it began is not in it, not even as a change.
		if !exists[name] && !slices.Contains(types, "Deleted") {
			t.Errorf("Pod %s, which no longer exists, is recorded %v and never deleted", name, types)
		}
	}
	if gaps != 1 || caughtUp < 2 {
		t.Errorf("%d Gaps and %d caught-up records; want one Gap, and the two Pods created while down caught up at least", gaps, caughtUp)
	}
	replayed := runAs(t, kc, time.Minute, "pods", "--replay="+path, "--at=-0s", "-o", "name")
	var names []string
	for _, p := range pods.Items {
		names = append(names, "pod/"+p.Name)
	}
	slices.Sort(names)
	got := strings.Fields(replayed.stdout)
	slices.Sort(got)
	if replayed.code != 0 || !slices.Equal(got, names) {
		t.Errorf("the replay at the end: exit %d, %q (stderr %q), want the server's Pods %q; the recording:\n%s", replayed.code, got, replayed.stderr, names, strings.Join(lines, "\n"))
	}
}

// podOf is the type of line, a record of -o json, and the name of its
// Pod; "" for a record of anything else (an Event about a Pod included).
func podOf(line string) (typ, name string) {
	var rec struct{ Type, Kind, Name string }
	if json.Unmarshal([]byte(line), &rec) != nil || rec.Kind != "Pod" {
		return "", ""
	}
	return rec.Type, rec.Name
}
