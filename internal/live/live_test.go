package live

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-deltas/kubectl-deltas/internal/cache/cachetest"
	"github.com/kubectl-deltas/kubectl-deltas/internal/condition"
	"github.com/kubectl-deltas/kubectl-deltas/internal/diff"
	"github.com/kubectl-deltas/kubectl-deltas/internal/printer"
	"github.com/kubectl-deltas/kubectl-deltas/internal/rawobj"
	"github.com/kubectl-deltas/kubectl-deltas/internal/stage"
)

var t0 = time.Date(2030, 1, 1, 10, 0, 0, 0, time.UTC)

// recordOf returns a record of kind/name (uid) owned by ownerUID ("" for
// none), at, with health status, and its object.
func recordOf(t testing.TB, kind, name, uid, ownerUID, status string, at time.Time) (*printer.Record, *rawobj.Object) {
	t.Helper()
	owners := ""
	if ownerUID != "" {
		owners = `,"ownerReferences":[{"apiVersion":"apps/v1","kind":"X","name":"x","uid":"` + ownerUID + `","controller":true}]`
	}
	obj := cachetest.MustParse(t, `{"metadata":{"name":"`+name+`","namespace":"demo","uid":"`+uid+`","resourceVersion":"1"`+owners+`}}`)
	rec := &printer.Record{Type: "Added", Time: at, APIVersion: "v1", Kind: kind, Namespace: "demo", Name: name, UID: uid}
	if status != "" {
		rec.Health = &printer.Health{Status: status, Message: status + " message"}
	}
	return rec, obj
}

// observe hands v a record of a new object.
func observe(t testing.TB, v *View, kind, name, uid, ownerUID, status string, at time.Time) {
	t.Helper()
	rec, obj := recordOf(t, kind, name, uid, ownerUID, status, at)
	v.Observe(rec, obj, stage.Changes{})
}

// TestFrameNestsByOwner: rows nested by owner (controller UID), roots by
// kind, each with its health, last delta and message; the header names
// what is watched and the time; a Warning Event under its object.
func TestFrameNestsByOwner(t *testing.T) {
	v := NewView("deploy/web --tree", false)
	v.begin(t0)
	observe(t, v, "Pod", "web-1-a", "p1", "r1", "Current", t0.Add(2*time.Second))
	observe(t, v, "Deployment", "web", "d1", "", "InProgress", t0)
	observe(t, v, "ReplicaSet", "web-1", "r1", "d1", "Current", t0.Add(time.Second))
	observe(t, v, "Pod", "web-1-b", "p2", "r1", "InProgress", t0.Add(3*time.Second))
	v.Observe(&printer.Record{Type: "Added", Time: t0.Add(4 * time.Second), Kind: "Event",
		Event: &printer.Event{Kind: "Pod", Name: "web-1-b", UID: "p2", Type: "Warning", Reason: "FailedScheduling", Message: "0/3 nodes\n are available"}}, nil, stage.Changes{})

	lines := v.Frame(100, 30, t0.Add(10*time.Second), false)
	if !strings.HasPrefix(lines[0], "kubectl deltas deploy/web --tree") || !strings.HasSuffix(lines[0], "elapsed 10s") {
		t.Errorf("title %q", lines[0])
	}
	want := []string{
		"deployment/web     InProgress  Added 10s      InProgress message",
		"  replicaset/web-1 Current     Added 9s       Current message",
		"    pod/web-1-a    Current     Added 8s       Current message",
		"    pod/web-1-b    InProgress  Added 7s       InProgress message",
		"      ⚠ Warning FailedScheduling: 0/3 nodes are available",
	}
	table := lines[2:]
	if len(table) != len(want) {
		t.Fatalf("rows:\n%s\nwant:\n%s", strings.Join(table, "\n"), strings.Join(want, "\n"))
	}
	for i, w := range want {
		if !strings.HasPrefix(table[i], w) {
			t.Errorf("row %d: %q, want it to begin %q", i, table[i], w)
		}
	}
	if !strings.Contains(table[0], "InProgress message") {
		t.Errorf("row 0 lacks the health message: %q", table[0])
	}
}

// TestFrameFoldsQuietCurrent: when the rows do not fit, a run of Current
// siblings that stopped changing folds into one row with a count; a row
// InProgress is never folded, nor its ancestors; with room, nothing is
// folded.
func TestFrameFoldsQuietCurrent(t *testing.T) {
	v := NewView("deploy/web --tree", false)
	v.begin(t0)
	observe(t, v, "Deployment", "web", "d1", "", "InProgress", t0)
	observe(t, v, "ReplicaSet", "web-1", "r1", "d1", "InProgress", t0)
	for i := range 40 {
		status := "Current"
		if i == 17 {
			status = "InProgress"
		}
		observe(t, v, "Pod", fmt.Sprintf("web-1-%02d", i), fmt.Sprintf("p%02d", i), "r1", status, t0)
	}
	now := t0.Add(time.Minute)
	tall := v.Frame(120, 100, now, false)
	if got := len(tall); got != 2+2+40 {
		t.Errorf("a tall terminal: %d lines, want every row (44)", got)
	}

	lines := v.Frame(120, 20, now, false)
	if len(lines) > 20 {
		t.Errorf("%d lines for a terminal of 20", len(lines))
	}
	text := strings.Join(lines, "\n")
	for _, want := range []string{"deployment/web", "replicaset/web-1", "pod/web-1-17", "… 17 pods Current, quiet", "… 22 pods Current, quiet"} {
		if !strings.Contains(text, want) {
			t.Errorf("no %q in the folded frame:\n%s", want, text)
		}
	}
	if strings.Contains(text, "pod/web-1-00") {
		t.Errorf("a quiet Current Pod shown whole:\n%s", text)
	}

	// A change just now keeps its Pod from folding.
	observe(t, v, "Pod", "web-1-05", "p05", "r1", "Current", now)
	if text := strings.Join(v.Frame(120, 20, now.Add(time.Second), false), "\n"); !strings.Contains(text, "pod/web-1-05") {
		t.Errorf("a Pod that changed a second ago is folded:\n%s", text)
	}
}

// TestFrameCutsWhatCannotFold: rows that may not fold and do not fit are
// cut, the last line saying how many are left out.
func TestFrameCutsWhatCannotFold(t *testing.T) {
	v := NewView("pods", false)
	v.begin(t0)
	for i := range 30 {
		observe(t, v, "Pod", fmt.Sprintf("p-%02d", i), fmt.Sprintf("u%02d", i), "", "InProgress", t0)
	}
	lines := v.Frame(80, 10, t0.Add(time.Minute), false)
	if len(lines) != 10 {
		t.Fatalf("%d lines, want 10:\n%s", len(lines), strings.Join(lines, "\n"))
	}
	if last := lines[9]; !strings.Contains(last, "… 23 more not shown") {
		t.Errorf("last line %q, want it to count the 23 rows left out", last)
	}
}

// TestFrameJudgesAgainWithTime: a health that changes with time alone (an
// unschedulable Pod, Failed after kstatus' 15 s) changes in the view when
// its time comes, with no new record.
func TestFrameJudgesAgainWithTime(t *testing.T) {
	v := NewView("pods", false)
	v.begin(t0)
	obj := cachetest.MustParse(t, `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"stuck","namespace":"demo","uid":"s1","resourceVersion":"1","creationTimestamp":"`+
		t0.Format(time.RFC3339)+`"},"spec":{"containers":[{"name":"web","image":"nginx"}]},"status":{"phase":"Pending","conditions":[{"type":"PodScheduled","status":"False","reason":"Unschedulable"}]}}`)
	rec := &printer.Record{Type: "Added", Time: t0, APIVersion: "v1", Kind: "Pod", Namespace: "demo", Name: "stuck", UID: "s1",
		Health: &printer.Health{Status: "InProgress", Reason: "PodNotScheduled", Message: "Pod not scheduled", RecheckAt: t0.Add(15 * time.Second)}}
	v.Observe(rec, obj, stage.Changes{})
	if v.Frame(100, 20, t0.Add(5*time.Second), false); v.Changed(t0.Add(10 * time.Second)) {
		t.Error("changed before the health's time")
	}
	if !v.Changed(t0.Add(16 * time.Second)) {
		t.Error("not changed once the health's time came")
	}
	text := strings.Join(v.Frame(100, 20, t0.Add(16*time.Second), false), "\n")
	if !strings.Contains(text, "Failed") || !strings.Contains(text, "PodUnschedulable") {
		t.Errorf("the unschedulable Pod after 16s:\n%s", text)
	}
}

// TestFrameConditions: the header says each condition and whether it
// holds now.
func TestFrameConditions(t *testing.T) {
	v := NewView("deploy/web", false)
	v.begin(t0)
	v.SetConditions([]condition.State{{Text: "--until=status=Current", Holds: false}, {Text: "--fail-when=status=Failed", Holds: true}})
	lines := v.Frame(80, 20, t0, false)
	if lines[1] != "  --until=status=Current: not yet" || lines[2] != "  --fail-when=status=Failed: holds" {
		t.Errorf("header:\n%s", strings.Join(lines[:3], "\n"))
	}
	if v.Changed(t0) {
		t.Error("changed after a frame with nothing new")
	}
	v.SetConditions([]condition.State{{Text: "--until=status=Current", Holds: false}, {Text: "--fail-when=status=Failed", Holds: true}})
	if v.Changed(t0) {
		t.Error("the same states again count as a change")
	}
}

// TestScreenWritesFramesInBrackets: the first frame clears the screen and
// hides the cursor; later ones redraw from the top left, only when they
// differ; each is one write inside synchronized-output brackets; Close
// leaves the last frame and shows the cursor.
func TestScreenWritesFramesInBrackets(t *testing.T) {
	var out writes
	v := NewView("cm", false)
	now := t0
	v.begin(now)
	s := NewScreen(&out, -1, v, false, func() time.Time { return now })
	s.draw()
	s.draw() // nothing changed
	observe(t, v, "ConfigMap", "a", "a1", "", "Current", now)
	s.draw()
	s.Close()
	s.Close()
	if len(out) != 3 {
		t.Fatalf("%d writes, want the first frame, the changed one and the close: %q", len(out), out)
	}
	for i, w := range out[:2] {
		if !strings.HasPrefix(w, syncBegin) || !strings.HasSuffix(w, clearBelow+syncEnd) {
			t.Errorf("frame %d not bracketed: %q", i, w)
		}
	}
	if !strings.HasPrefix(out[0], syncBegin+hideCursor+clearScreen+home) {
		t.Errorf("first frame: %q", out[0])
	}
	if strings.Contains(out[1], clearScreen) || !strings.HasPrefix(out[1], syncBegin+home) || !strings.Contains(out[1], "configmap/a") {
		t.Errorf("second frame: %q", out[1])
	}
	if out[2] != "\n"+showCursor {
		t.Errorf("close: %q", out[2])
	}
}

// writes records each Write.
type writes []string

func (w *writes) Write(p []byte) (int, error) {
	*w = append(*w, string(p))
	return len(p), nil
}

// TestHeldStderr: what is written while the view draws comes out at
// release, after which writes go through.
func TestHeldStderr(t *testing.T) {
	var out bytes.Buffer
	h := &heldWriter{out: &out, holding: true}
	fmt.Fprintln(h, "warning: one")
	if out.Len() != 0 {
		t.Fatalf("written while held: %q", out.String())
	}
	h.release()
	fmt.Fprintln(h, "error: two")
	if got := out.String(); got != "warning: one\nerror: two\n" {
		t.Errorf("stderr %q", got)
	}
}

// TestFrameSaysTheSizeOfAChange: with --diff, an Updated row says how
// many fields its last change touched, from the printed record's diff or,
// when the run prints none, from the observer's.
func TestFrameSaysTheSizeOfAChange(t *testing.T) {
	v := NewView("cm --diff", true)
	v.begin(t0)
	rec, obj := recordOf(t, "ConfigMap", "a", "a1", "", "Current", t0)
	rec.Type = "Updated"
	rec.Changes = make([]diff.Operation, 2)
	v.Observe(rec, obj, stage.Changes{})
	rec, obj = recordOf(t, "ConfigMap", "b", "b1", "", "Current", t0)
	rec.Type = "Updated"
	old, err := rawobj.Parse([]byte(strings.Replace(string(obj.JSON), `"metadata":{`, `"data":{"k":"v"},"metadata":{`, 1)), rawobj.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	differ, err := stage.NewDiffer(stage.DiffOptions{})
	if err != nil {
		t.Fatal(err)
	}
	v.Observe(rec, obj, differ.Changes(old, obj, false))
	text := strings.Join(v.Frame(100, 10, t0, false), "\n")
	if !strings.Contains(text, "Updated 0s     2 fields  Current message") || !strings.Contains(text, "Updated 0s     1 field  Current message") {
		t.Errorf("the sizes of the changes:\n%s", text)
	}
}

// TestFrameIsSafeForATerminal: names, health messages and Event messages,
// which others wrote, reach the terminal with their control characters
// escaped, as every human output of the plugin does.
func TestFrameIsSafeForATerminal(t *testing.T) {
	v := NewView("pods", false)
	v.begin(t0)
	rec, obj := recordOf(t, "Pod", "evil", "e1", "", "InProgress", t0)
	rec.Name = "evil\x1b[2Jpod"
	rec.Health.Message = "waiting\x1b]0;owned\x07"
	v.Observe(rec, obj, stage.Changes{})
	v.Observe(&printer.Record{Type: "Added", Time: t0, Kind: "Event",
		Event: &printer.Event{Kind: "Pod", UID: "e1", Type: "Warning", Reason: "Bad\x1b[31m", Message: "red\x1b[0m"}}, nil, stage.Changes{})
	text := strings.Join(v.Frame(200, 20, t0, false), "\n")
	if strings.ContainsRune(text, 0x1b) || strings.ContainsRune(text, 0x07) {
		t.Errorf("a control character reached the frame: %q", text)
	}
	for _, want := range []string{`pod/evil\x1b[2Jpod`, `waiting\x1b]0;owned\x07`, `Bad\x1b[31m: red\x1b[0m`} {
		if !strings.Contains(text, want) {
			t.Errorf("no %q in the frame:\n%s", want, text)
		}
	}
}

// TestFrameKeepsTheTimeWhateverTheWidth: at 70 columns a long command
// line is cut, never the elapsed time; a replay's header says the
// recording's time too.
func TestFrameKeepsTheTimeWhateverTheWidth(t *testing.T) {
	v := NewView("deploy,rs,pods -n r2 -l app --tree --events --until=status=Current --timeout=5m", false)
	v.begin(t0)
	for _, width := range []int{20, 40, 70, 120} {
		title := v.Frame(width, 10, t0.Add(75*time.Second), false)[0]
		if !strings.HasSuffix(title, "elapsed 1m15s") || len([]rune(title)) > width {
			t.Errorf("width %d: title %q", width, title)
		}
	}
	if title := v.Frame(70, 10, t0.Add(75*time.Second), false)[0]; !strings.HasPrefix(title, "kubectl deltas deploy,rs,pods") || !strings.Contains(title, "…") {
		t.Errorf("width 70: the command line %q, want it cut with …", title)
	}
	v.replay = true
	title := v.Frame(70, 10, t0.Add(75*time.Second), false)[0]
	if !strings.HasSuffix(title, "at 2030-01-01 10:01:15Z  elapsed 1m15s") || len([]rune(title)) != 70 {
		t.Errorf("a replay's title %q", title)
	}
}

// TestHeldStderrNotesTheStateOfTheData: what the run says on stderr of
// its data while the view draws — a watch failing, its recovery, an
// object waited for — is shown in the view while it holds, and still
// written below the last frame, whole.
func TestHeldStderrNotesTheStateOfTheData(t *testing.T) {
	v := NewView("cm/ready", false)
	v.begin(t0)
	var out bytes.Buffer
	now := t0
	h := &heldWriter{out: &out, holding: true, line: func(l string) { v.Note(l, now) }}
	said := `info: configmaps "ready" not found in namespace "demo": waiting for it to be created
warning: Get "https://127.0.0.1:6443/api/v1/namespaces/demo/configmaps": dial tcp 127.0.0.1:6443: connect: connection refused; retrying, nothing is lost: the watch resumes where it stopped, or relists
info: the server does not render configmaps as a table: generic columns for it
`
	fmt.Fprint(h, said[:40]) // a line in two writes
	fmt.Fprint(h, said[40:])
	now = t0.Add(7 * time.Second)
	frame := strings.Join(v.Frame(200, 20, now, false), "\n")
	for _, want := range []string{
		`… configmaps "ready" not found in namespace "demo": waiting for it to be created`,
		`! since 10:00:00: Get "https://127.0.0.1:6443/api/v1/namespaces/demo/configmaps": dial tcp 127.0.0.1:6443: connect: connection refused; retrying`,
	} {
		if !strings.Contains(frame, want) {
			t.Errorf("during the outage, the frame lacks %q:\n%s", want, frame)
		}
	}
	if strings.Contains(frame, "generic columns") {
		t.Errorf("a note of no state shown:\n%s", frame)
	}
	fmt.Fprintln(h, "info: connection restored after 7s")
	observe(t, v, "ConfigMap", "ready", "u1", "", "Current", now)
	frame = strings.Join(v.Frame(200, 20, now, false), "\n")
	if strings.Contains(frame, "! since") || strings.Contains(frame, "waiting for it") || !strings.Contains(frame, "✓ connection restored after 7s") {
		t.Errorf("after the recovery and the object shown:\n%s", frame)
	}
	if !v.Changed(now.Add(recoveredFor)) {
		t.Error("the recovery said long enough does not change the view")
	}
	if frame = strings.Join(v.Frame(200, 20, now.Add(recoveredFor), false), "\n"); strings.Contains(frame, "restored") {
		t.Errorf("the recovery still said after %s:\n%s", recoveredFor, frame)
	}
	h.release()
	if got := out.String(); got != said+"info: connection restored after 7s\n" {
		t.Errorf("stderr after the view:\n%s", got)
	}
}

// TestFrameShowsTheBlockersLog: the last lines of a failing container's
// log go under its Pod, escaped — the last five when it is the only
// blocker with logs, the last one each when there are more; logs of an
// object not shown change nothing.
func TestFrameShowsTheBlockersLog(t *testing.T) {
	v := NewView("deploy/web --tree", false)
	v.begin(t0)
	observe(t, v, "Deployment", "web", "d1", "", "InProgress", t0)
	observe(t, v, "Pod", "web-1", "p1", "d1", "Failed", t0.Add(time.Second))
	observe(t, v, "Pod", "web-2", "p2", "d1", "Failed", t0.Add(time.Second))
	lines := make([]string, 0, 7)
	for i := range 7 {
		lines = append(lines, fmt.Sprintf("line %d", i+1))
	}
	lines[6] = "\x1b[31mpanic: DATABASE_URL is not set"
	v.SetLogs("", "p1", printer.VerdictLogs{Container: "app", Previous: true, Lines: lines})
	v.SetLogs("", "nowhere", printer.VerdictLogs{Container: "app", Lines: []string{"x"}})

	table := v.Frame(100, 30, t0.Add(10*time.Second), false)[2:]
	want := []string{"deployment/web", "  pod/web-1", "    │ line 3", "    │ line 4", "    │ line 5", "    │ line 6", `    │ \x1b[31mpanic: DATABASE_URL is not set`, "  pod/web-2"}
	if len(table) != len(want) {
		t.Fatalf("rows:\n%s\nwant %d", strings.Join(table, "\n"), len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(table[i], w) {
			t.Errorf("row %d: %q, want it to begin %q", i, table[i], w)
		}
	}

	v.SetLogs("", "p2", printer.VerdictLogs{Container: "app", Lines: []string{"one", "two"}})
	table = v.Frame(100, 30, t0.Add(10*time.Second), false)[2:]
	if got := strings.Join(table, "\n"); strings.Count(got, "│") != 2 || !strings.Contains(got, `│ \x1b[31mpanic`) || !strings.Contains(got, "│ two") {
		t.Errorf("two blockers: want the last line under each:\n%s", got)
	}
}
