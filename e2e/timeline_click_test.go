//go:build faults

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestBrowserTimelineOverlappingMarks: marks a few pixels apart
// overlap, and the one drawn on top takes the click; the details list
// every mark under the pointer, so a click on the one underneath still
// shows its diff. The page is drawn from a recording whose times are set
// so that two updates are about 6 px apart in the 1400×900 window, more
// than the 4 px the details also gather around the clicked mark.
func TestBrowserTimelineOverlappingMarks(t *testing.T) {
	dir := t.TempDir()
	ns := newNamespace(t)
	createCM(t, ns, "a", nil, map[string]string{"k": "0"})
	rec := filepath.Join(dir, "a.jsonl")
	if res := run(t, 30*time.Second, "cm", "-n", ns, "--until-synced", "-q", "--record="+rec); res.code != 0 {
		t.Fatalf("recording: exit %d, stderr %q", res.code, res.stderr)
	}
	raw, err := os.ReadFile(rec)
	must(t, err)
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		if !isMark(l) { // the recorder's Heartbeats
			lines = append(lines, l)
		}
	}
	if len(lines) != 2 {
		t.Fatalf("the recording: %d lines, want its header and one record:\n%s", len(lines), raw)
	}
	// Three updates of the ConfigMap, each with new data: at +1000 s, at
	// +1000 s + 16 s (about 6 px further at about 2.7 s per px) and at
	// +2000 s, where the span ends.
	var first map[string]any
	must(t, json.Unmarshal([]byte(lines[1]), &first))
	start, err := time.Parse(time.RFC3339Nano, first["time"].(string))
	must(t, err)
	out := []string{lines[0], lines[1]}
	for i, at := range []time.Duration{1000 * time.Second, 1016 * time.Second, 2000 * time.Second} {
		var r map[string]any
		must(t, json.Unmarshal([]byte(lines[1]), &r))
		obj := r["object"].(map[string]any)
		obj["data"] = map[string]any{"k": fmt.Sprint(i + 1)}
		meta := obj["metadata"].(map[string]any)
		meta["resourceVersion"] = fmt.Sprint(900000 + i)
		r["type"], r["initial"], r["resourceVersion"] = "Updated", false, meta["resourceVersion"]
		r["time"] = start.Add(at).UTC().Format(time.RFC3339Nano)
		b, err := json.Marshal(r)
		must(t, err)
		out = append(out, string(b))
	}
	must(t, os.WriteFile(rec, []byte(strings.Join(out, "\n")+"\n"), 0o600))
	page := filepath.Join(dir, "a.html")
	if res := run(t, 30*time.Second, "--replay="+rec, "--timeline="+page, "-o", "name"); res.code != 0 || strings.Count(res.stdout, "\n") != 4 {
		t.Fatalf("the replay: exit %d, stdout %q, stderr %q", res.code, res.stdout, res.stderr)
	}

	b := openBrowser(t)
	b.open(page)
	under, over := fmt.Sprintf(`[data-delta="Updated"][data-time=%q]`, start.Add(1000*time.Second).UTC().Format("2006-01-02T15:04:05.000Z")),
		fmt.Sprintf(`[data-delta="Updated"][data-time=%q]`, start.Add(1016*time.Second).UTC().Format("2006-01-02T15:04:05.000Z"))
	center := func(sel string) float64 {
		return eval[float64](b, fmt.Sprintf(`(function(){var r=document.querySelector(%q).getBoundingClientRect();return r.left+r.width/2})()`, sel))
	}
	if d := center(over) - center(under); d < 4.5 || d > 7.5 {
		t.Fatalf("the two updates are %.1f px apart: the test wants them overlapping, 4.5 to 7.5 px apart", d)
	}
	b.click(under)
	details := eval[string](b, `document.querySelector('[data-details]').textContent`)
	if !strings.Contains(details, `data.k: "0" → "1"`) || !strings.Contains(details, `data.k: "1" → "2"`) {
		t.Errorf("a click on the update underneath does not show its diff beside the one on top:\n%s", details)
	}
	b.noConsoleErrors()
}

// TestBrowserTimelineGap: a recording that went on after its recorder
// was down has a Gap; its replay's page draws it hatched across the
// lanes, from the recorder's last sign of life to its restart, between
// the marks before and after it.
func TestBrowserTimelineGap(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	at := func(d time.Duration) string { return t0.Add(d).Format(time.RFC3339Nano) }
	cm := func(typ string, initial bool, rv, when, extra string) string {
		return fmt.Sprintf(`{"type":%q,"time":%q,"initial":%v,"apiVersion":"v1","kind":"ConfigMap","resource":"configmaps","namespace":"ns","name":"a","uid":"ua","resourceVersion":%q%s,"object":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"ns","uid":"ua","resourceVersion":%q},"data":{"rv":%q}}}`,
			typ, when, initial, rv, extra, rv, rv)
	}
	header := func(when string) string {
		return `{"type":"Recording","time":"` + when + `","schema":"v1","version":"v0","targets":[{"apiVersion":"v1","kind":"ConfigMap","resource":"configmaps","namespace":"ns","role":"root"}]}`
	}
	lines := []string{
		header(at(0)),
		cm("Replaced", true, "1", at(time.Second), ""),
		cm("Updated", false, "2", at(60*time.Second), ""),
		`{"type":"Heartbeat","time":"` + at(100*time.Second) + `"}`,
		header(at(400 * time.Second)),
		`{"type":"Gap","time":"` + at(400*time.Second) + `","from":"` + at(100*time.Second) + `","to":"` + at(400*time.Second) + `"}`,
		cm("Updated", false, "3", at(250*time.Second), `,"caughtUp":"managedFields"`),
		cm("Updated", false, "4", at(500*time.Second), ""),
	}
	rec := filepath.Join(dir, "gap.jsonl")
	must(t, os.WriteFile(rec, []byte(strings.Join(lines, "\n")+"\n"), 0o600))
	page := filepath.Join(dir, "gap.html")
	res := run(t, 30*time.Second, "--replay="+rec, "--timeline="+page, "-o", "name")
	if res.code != 0 || strings.Count(res.stdout, "\n") != 4 || strings.Count(res.stderr, "the recording has a gap from") != 1 {
		t.Fatalf("the replay: exit %d, stdout %q, stderr %q", res.code, res.stdout, res.stderr)
	}

	b := openBrowser(t)
	b.open(page)
	if n := eval[float64](b, `document.querySelectorAll('[data-gap]').length`); n != 1 {
		t.Fatalf("%v gaps drawn, want 1", n)
	}
	from, to := eval[string](b, `document.querySelector('[data-gap]').getAttribute('data-from')`), eval[string](b, `document.querySelector('[data-gap]').getAttribute('data-to')`)
	if from != t0.Add(100*time.Second).Format("2006-01-02T15:04:05.000Z") || to != t0.Add(400*time.Second).Format("2006-01-02T15:04:05.000Z") {
		t.Errorf("the gap drawn is %s to %s", from, to)
	}
	edge := func(sel, side string) float64 {
		return eval[float64](b, fmt.Sprintf(`document.querySelector(%q).getBoundingClientRect().%s`, sel, side))
	}
	before, after := `[data-delta="Updated"][data-time="`+t0.Add(60*time.Second).Format("2006-01-02T15:04:05.000Z")+`"]`,
		`[data-delta="Updated"][data-time="`+t0.Add(500*time.Second).Format("2006-01-02T15:04:05.000Z")+`"]`
	if gl, gr := edge("[data-gap]", "left"), edge("[data-gap]", "right"); gr-gl < 20 || gl < edge(before, "right") || gr > edge(after, "left") {
		t.Errorf("the gap spans %.0f to %.0f px, not between the marks before (%.0f) and after it (%.0f)", gl, gr, edge(before, "right"), edge(after, "left"))
	}
	if h := edge("[data-gap]", "height"); h < 20 {
		t.Errorf("the gap is %.0f px high: it does not cross the lanes", h)
	}
	b.screenshot(dir, "gap")
	b.noConsoleErrors()
}
