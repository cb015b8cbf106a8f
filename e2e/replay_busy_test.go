//go:build faults

package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
