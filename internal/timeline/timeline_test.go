package timeline

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/kubectl-deltas/kubectl-deltas/internal/diff"
	"github.com/kubectl-deltas/kubectl-deltas/internal/printer"
	"github.com/kubectl-deltas/kubectl-deltas/internal/rawobj"
	"github.com/kubectl-deltas/kubectl-deltas/internal/stage"
)

var t0 = time.Date(2026, 11, 26, 10, 40, 0, 0, time.UTC)

// object is an object's JSON with its owner (controller) UID, if any.
func object(t *testing.T, kind, name, uid, owner string) *rawobj.Object {
	t.Helper()
	meta := map[string]any{"name": name, "namespace": "demo", "uid": uid, "resourceVersion": "1"}
	if owner != "" {
		meta["ownerReferences"] = []any{
			map[string]any{"apiVersion": "v1", "kind": "X", "name": "other", "uid": "not-the-controller"},
			map[string]any{"apiVersion": "apps/v1", "kind": "Owner", "name": "o", "uid": owner, "controller": true},
		}
	}
	raw, err := json.Marshal(map[string]any{"apiVersion": "apps/v1", "kind": kind, "metadata": meta})
	if err != nil {
		t.Fatal(err)
	}
	obj, err := rawobj.Parse(raw, rawobj.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return obj
}

func recordOf(typ, kind, name, uid string, at time.Duration) *printer.Record {
	return &printer.Record{Type: typ, Time: t0.Add(at), APIVersion: "apps/v1", Kind: kind, Namespace: "demo", Name: name, UID: uid}
}

// readLane is a lane as the page's data holds it, names and marks
// decoded.
type readLane struct {
	lane
	Context    string `json:"ctx"`
	APIVersion string `json:"av"`
	Kind       string `json:"kind"`
	Namespace  string `json:"ns"`
	Name       string `json:"name"`
	UID        string `json:"uid"`
	Marks      []mark `json:"marks"`
	// Logs is the lane's "logs" (NoteLogs).
	Logs *printer.VerdictLogs `json:"logs,omitempty"`
}

// newLane is a lane so named, outside any Timeline.
func newLane(context, apiVersion, kind, namespace, name, uid string) *lane {
	l := &lane{Parent: -1}
	l.setNames(nil, context, apiVersion, kind, namespace, name, uid)
	return l
}

// readLaneOf is l as the page's data holds it, with marks.
func readLaneOf(l *lane, marks []mark) *readLane {
	return &readLane{lane: *l, Context: l.Context(), APIVersion: l.APIVersion(), Kind: l.Kind(),
		Namespace: l.Namespace(), Name: l.Name(), UID: l.UID(), Marks: marks}
}

// readDoc is the page's data document, read back.
type readDoc struct {
	document
	Lanes []*readLane `json:"lanes"`
	// Bases is the text of the page's bases element (mark.BaseAt).
	Bases string `json:"-"`
}

// withMarks is l with marks added, as Observe adds them: the members
// they repeat encoded once.
func withMarks(log *chunkLog, l *lane, marks ...mark) *lane {
	var attrs markAttrs
	for i := range marks {
		l.addMark(&marks[i], &attrs, log)
	}
	return l
}

// document reads back what Write wrote into path's script elements: the
// data document, and the bases after it.
func readDocument(t *testing.T, path string) (readDoc, string) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	before, rest, ok := bytes.Cut(page, []byte(dataMarker))
	middle, after, ok2 := bytes.Cut(rest, []byte(basesMarker))
	if !ok || !ok2 || !bytes.HasPrefix(raw, before) || !bytes.HasSuffix(raw, after) {
		t.Fatalf("the page is not the embedded page around its data:\n%s", raw)
	}
	data, bases, ok := bytes.Cut(raw[len(before):len(raw)-len(after)], middle)
	if !ok {
		t.Fatalf("the page has no bases element after its data:\n%s", raw)
	}
	var doc readDoc
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("the data does not read back: %v\n%s", err, data)
	}
	doc.Bases = string(bases)
	return doc, string(data)
}

func TestObserveNestsByControllerAndKeepsEachDelta(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.html")
	tl := New(path, "kubectl deltas deploy/web --tree", func() time.Time { return t0.Add(3 * time.Second) })

	// The Pod comes before its ReplicaSet: its parent is resolved when the
	// page is written.
	pod := recordOf("Added", "Pod", "web-1", "pod-uid", time.Second)
	pod.Health = &printer.Health{Status: "InProgress", Reason: "PodNotReady", Message: "Ready: 0/1"}
	tl.Observe(pod, object(t, "Pod", "web-1", "pod-uid", "rs-uid"), stage.Changes{})
	rs := recordOf("Replaced", "ReplicaSet", "web-5", "rs-uid", 0)
	rs.Initial = true
	tl.Observe(rs, object(t, "ReplicaSet", "web-5", "rs-uid", ""), stage.Changes{})
	up := recordOf("Updated", "Pod", "web-1", "pod-uid", 2*time.Second)
	up.Manager, up.Operation = "kubelet", "Update"
	up.Health = &printer.Health{Status: "Current", Message: "Pod is Ready"}
	up.Changes = []diff.Operation{{Op: diff.OpReplace, Path: "/status/phase", Old: "Pending", Value: "Running"}}
	tl.Observe(up, object(t, "Pod", "web-1", "pod-uid", "rs-uid"), stage.Changes{})
	// A deletion without a final state: no object, no UID; found by name.
	gone := recordOf("Deleted", "Pod", "web-1", "", 3*time.Second)
	gone.FinalStateUnknown = true
	gone.Health = &printer.Health{Status: "NotFound"}
	tl.Observe(gone, nil, stage.Changes{})

	if err := tl.Write(false); err != nil {
		t.Fatal(err)
	}
	doc, _ := readDocument(t, path)
	if doc.Version != Version || doc.Live || doc.Command != "kubectl deltas deploy/web --tree" {
		t.Fatalf("header: %+v", doc)
	}
	if doc.Start != t0.UnixMilli() || doc.End != t0.Add(3*time.Second).UnixMilli() {
		t.Fatalf("span %d–%d, want the first and last record's times", doc.Start, doc.End)
	}
	if len(doc.Lanes) != 2 {
		t.Fatalf("%d lanes, want the Pod's and the ReplicaSet's: %+v", len(doc.Lanes), doc.Lanes)
	}
	podLane, rsLane := doc.Lanes[0], doc.Lanes[1]
	if podLane.UID != "pod-uid" || podLane.Parent != 1 || rsLane.Parent != -1 {
		t.Fatalf("the Pod's lane must nest under its controller's (lane 1): pod %+v, rs %+v", podLane, rsLane)
	}
	if len(podLane.Marks) != 3 {
		t.Fatalf("the Pod has %d marks, want its Added, Updated and Deleted: %+v", len(podLane.Marks), podLane.Marks)
	}
	m := podLane.Marks[1]
	if m.Type != "Updated" || m.Manager != "kubelet" || m.Health != "Current" || len(m.Changes) != 1 ||
		m.Changes[0] != [2]string{"replace", `~ status.phase: "Pending" → "Running"`} {
		t.Fatalf("the update's mark: %+v", m)
	}
	if d := podLane.Marks[2]; d.Type != "Deleted" || !d.Unknown || d.Health != "" {
		t.Fatalf("the deletion's mark (NotFound is not a health band): %+v", d)
	}
	if !rsLane.Marks[0].Initial {
		t.Fatalf("the ReplicaSet's initial Replaced lost its initial flag: %+v", rsLane.Marks[0])
	}
}

func TestEventsJoinTheirSubjectsLane(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.html")
	tl := New(path, "", nil)
	// The Event comes first, naming its subject with a UID: the subject's
	// lane is made by it and found again by the subject's own delta.
	ev := recordOf("Added", "Event", "web-1.abc", "event-uid", time.Second)
	ev.Event = &printer.Event{APIVersion: "v1", Kind: "Pod", Namespace: "demo", Name: "web-1", UID: "pod-uid",
		Type: "Warning", Reason: "FailedScheduling", Message: `0/1 nodes <script>alert(1)</script>`, Count: 2}
	tl.Observe(ev, nil, stage.Changes{})
	tl.Observe(recordOf("Added", "Pod", "web-1", "pod-uid", 2*time.Second), object(t, "Pod", "web-1", "pod-uid", ""), stage.Changes{})
	expired := recordOf("Deleted", "Event", "web-1.abc", "event-uid", time.Hour)
	expired.Event = ev.Event
	tl.Observe(expired, nil, stage.Changes{})
	if err := tl.Write(true); err != nil {
		t.Fatal(err)
	}
	doc, data := readDocument(t, path)
	if len(doc.Lanes) != 1 {
		t.Fatalf("%d lanes, want the Pod's only (an Event is a mark, not a lane): %+v", len(doc.Lanes), doc.Lanes)
	}
	l := doc.Lanes[0]
	if len(l.Events) != 1 || l.Events[0].Reason != "FailedScheduling" || l.Events[0].Count != 2 || len(l.Marks) != 1 {
		t.Fatalf("the Pod's lane: one Event (its expiry is not shown) and one delta, got %+v", l)
	}
	if strings.Contains(data, "<script>") || strings.Contains(data, "</script") {
		t.Fatalf("the data must not be able to end its script element: %s", data)
	}
	if !doc.Live {
		t.Fatal("a page written mid-run must say it is live")
	}
}

// TestEventWithoutUIDThenItsSubject: an Event naming its subject without
// a UID makes a lane by name; the subject's own delta, with the UID, is
// that lane's — written first without the UID, the lane then has it.
func TestEventWithoutUIDThenItsSubject(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.html")
	tl := New(path, "", nil)
	ev := recordOf("Added", "Event", "web-1.abc", "event-uid", time.Second)
	ev.Event = &printer.Event{APIVersion: "v1", Kind: "Pod", Namespace: "demo", Name: "web-1", Type: "Normal", Reason: "Pulled", Count: 1}
	tl.Observe(ev, nil, stage.Changes{})
	if err := tl.Write(true); err != nil {
		t.Fatal(err)
	}
	if doc, _ := readDocument(t, path); len(doc.Lanes) != 1 || doc.Lanes[0].UID != "" || doc.Lanes[0].Name != "web-1" {
		t.Fatalf("the Event's subject, before it is seen: %+v", doc.Lanes)
	}
	pod := recordOf("Added", "Pod", "web-1", "pod-uid", 2*time.Second)
	pod.APIVersion = "v1"
	tl.Observe(pod, object(t, "Pod", "web-1", "pod-uid", ""), stage.Changes{})
	if err := tl.Write(false); err != nil {
		t.Fatal(err)
	}
	doc, _ := readDocument(t, path)
	if len(doc.Lanes) != 1 {
		t.Fatalf("%d lanes, want the Pod's, which the Event's was: %+v", len(doc.Lanes), doc.Lanes)
	}
	l := doc.Lanes[0]
	if l.Context != "" || l.APIVersion != "v1" || l.Kind != "Pod" || l.Namespace != "demo" || l.Name != "web-1" || l.UID != "pod-uid" ||
		len(l.Events) != 1 || len(l.Marks) != 1 {
		t.Fatalf("the Pod's lane: its names with the UID, the Event and the delta, got %+v", l)
	}
	if i, ok := tl.byUID.get("", "pod-uid"); !ok || i != 0 {
		t.Fatal("the lane is not found by the UID it learnt")
	}
}

func TestBreakCycles(t *testing.T) {
	lanes := []*lane{{Parent: 1}, {Parent: 2}, {Parent: 0}, {Parent: 0}, {Parent: -1}}
	breakCycles(lanes)
	roots := 0
	for i := range lanes {
		seen := map[int]bool{}
		for j := i; j >= 0; j = lanes[j].Parent {
			if seen[j] {
				t.Fatalf("lane %d's chain still loops: %+v", i, lanes)
			}
			seen[j] = true
		}
		if lanes[i].Parent == -1 {
			roots++
		}
	}
	if roots != 2 {
		t.Fatalf("%d roots, want the lone one and one cut from the loop", roots)
	}
}

func TestToTimelineWritesBeforeAnyRequestAndRemovesAPageNeverBegun(t *testing.T) {
	dir := t.TempDir()
	f := &Flags{File: filepath.Join(dir, "missing-dir", "t.html")}
	if _, err := f.ToTimeline(nil, nil); err == nil || !strings.Contains(err.Error(), "--timeline") {
		t.Fatalf("an unwritable path must be an error naming the flag, got %v", err)
	}

	f.File = filepath.Join(dir, "t.html")
	tl, err := f.ToTimeline([]string{"deploy/web", "--where=object.x == 'a b'"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	doc, _ := readDocument(t, f.File)
	if !doc.Live || len(doc.Lanes) != 0 || doc.Command != `kubectl deltas deploy/web '--where=object.x == '\''a b'\'''` {
		t.Fatalf("the first page: %+v", doc)
	}
	if err := tl.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(f.File); !os.IsNotExist(err) {
		t.Fatalf("a page created by a run that never began must be removed, stat: %v", err)
	}

	tl, err = f.ToTimeline(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	tl.Begin()
	if err := tl.Close(); err != nil {
		t.Fatal(err)
	}
	if doc, _ := readDocument(t, f.File); doc.Live {
		t.Fatal("the page written at the end must not say it is live")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("temporary files left behind: %v", entries)
	}
}

func TestFlagsValidate(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		file, want string
	}{
		{"-", "not standard output"},
		{dir, "is a directory"},
		{filepath.Join(dir, "t.html"), ""},
		{"", ""},
	} {
		err := (&Flags{File: tc.file}).Validate()
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("--timeline=%q: %v, want %q", tc.file, err, tc.want)
		}
	}
}

func TestAPodThatCannotBeScheduledFailsWithTimeAlone(t *testing.T) {
	raw := []byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"stuck","namespace":"demo","uid":"pod-uid","creationTimestamp":"2026-11-26T10:40:00Z"},` +
		`"status":{"phase":"Pending","conditions":[{"type":"PodScheduled","status":"False","reason":"Unschedulable","message":"0/3 nodes are available"}]}}`)
	obj, err := rawobj.Parse(raw, rawobj.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	now := t0.Add(5 * time.Second)
	tl := New(filepath.Join(t.TempDir(), "t.html"), "", func() time.Time { return now })
	rec := recordOf("Added", "Pod", "stuck", "pod-uid", time.Second)
	rec.APIVersion = "v1"
	rec.Health = &printer.Health{Status: "InProgress", Reason: "PodNotScheduled", Message: "Pod has not been scheduled", RecheckAt: t0.Add(15 * time.Second)}
	tl.Observe(rec, obj, stage.Changes{})

	if err := tl.Write(true); err != nil {
		t.Fatal(err)
	}
	if doc, _ := readDocument(t, tl.Path()); len(doc.Lanes[0].Health) != 0 {
		t.Fatalf("before its schedule window has passed the Pod has not failed: %v", doc.Lanes[0].Health)
	}
	now = t0.Add(20 * time.Second)
	for range 2 { // written twice: the change is added once
		if err := tl.Write(false); err != nil {
			t.Fatal(err)
		}
	}
	doc, _ := readDocument(t, tl.Path())
	h := doc.Lanes[0].Health
	if len(h) != 1 || h[0][0] != float64(t0.Add(15*time.Second).UnixMilli()) || h[0][1] != "Failed" || h[0][2] != "PodUnschedulable" {
		t.Fatalf("the Pod's health must turn Failed at the end of its schedule window, once: %v", h)
	}
	if doc.End != now.UnixMilli() {
		t.Fatalf("the page spans to when the stream ended (%d), got %d", now.UnixMilli(), doc.End)
	}
}

func TestAppendDocumentIsWhatEncodingJSONWrites(t *testing.T) {
	marks := []mark{
		{Time: 5, Type: "Replaced", Initial: true, Health: "Current"},
		{Time: 6, Type: "Updated", Manager: "m\x01", Operation: "Update", Health: "Failed", Reason: "R", Message: "bad\n<img>",
			Changes: [][2]string{{"replace", `~ a: "<" → "\u2029"`}}},
		{Time: 7, Type: "Updated", Manager: "m\x01", Operation: "Update", Health: "Failed", Reason: "R", Message: "bad\n<img>"},
		{Time: 8, Type: "Updated", Manager: "m\x01", Operation: "Update", Health: "Failed", Reason: "R"},
		{Time: 9, Type: "Deleted", Unknown: true},
	}
	var log chunkLog
	pod := newLane("a", "v1", "Pod", "n", "</script><b>", "u")
	pod.Events = []event{{Time: 6, Type: "Warning", Reason: "X", Message: "<script>alert(1)</script>", Count: 3}}
	pod.Health = [][4]any{{int64(8), "Failed", "PodUnschedulable", "Pod could not be scheduled"}}
	node := newLane("", "", "Node", "", "n1", "")
	node.Parent, node.Events = 0, []event{}
	doc := &document{
		Version: Version, Title: "t", Command: "kubectl deltas '<x>' & \u2028", Generated: "g", Live: true, Start: 1, End: 2,
		Contexts: []string{"a", "b"},
		Lanes:    []*lane{withMarks(&log, pod, marks...), node},
		log:      &log,
		Gaps:     [][2]int64{{3, 4}, {10, 12}},
	}
	// What encoding/json writes of the same document, marks as a list.
	want, err := json.Marshal(readDoc{document: *doc, Lanes: []*readLane{readLaneOf(pod, marks), readLaneOf(node, []mark{})}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := encodeDocument(nil, doc, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var a, b any
	if err := json.Unmarshal(got, &a); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, got)
	}
	if err := json.Unmarshal(want, &b); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("encodeDocument:\n%s\nencoding/json:\n%s", got, want)
	}
	if bytes.ContainsAny(got, "<\u2028\u2029") {
		t.Fatalf("the document holds what could end its script element: %s", got)
	}
}

// TestHiddenDeltasStillMoveTheHealth: a change the stream's filters kept
// out (--changed-only, say) of an object shown still changes its health
// band, once per change of health; of an object never shown, nothing.
func TestHiddenDeltasStillMoveTheHealth(t *testing.T) {
	tl := New(filepath.Join(t.TempDir(), "t.html"), "", func() time.Time { return t0.Add(time.Minute) })
	shown := recordOf("Added", "Pod", "web-1", "pod-uid", 0)
	shown.Health = &printer.Health{Status: "InProgress", Reason: "PodPending"}
	tl.Observe(shown, object(t, "Pod", "web-1", "pod-uid", ""), stage.Changes{})
	ready := &printer.Record{Type: "Updated", Time: t0.Add(2 * time.Second), UID: "pod-uid", Health: &printer.Health{Status: "Current", Message: "Pod is Ready"}}
	tl.ObserveHidden(ready, nil)
	again := *ready
	again.Time = t0.Add(3 * time.Second)
	tl.ObserveHidden(&again, nil) // the same health: nothing new
	tl.ObserveHidden(&printer.Record{Time: t0, UID: "never-shown", Health: &printer.Health{Status: "Failed"}}, nil)
	if err := tl.Write(false); err != nil {
		t.Fatal(err)
	}
	doc, _ := readDocument(t, tl.Path())
	if len(doc.Lanes) != 1 || len(doc.Lanes[0].Marks) != 1 {
		t.Fatalf("a hidden delta makes no lane and no mark: %+v", doc.Lanes)
	}
	h := doc.Lanes[0].Health
	if len(h) != 1 || h[0][0] != float64(t0.Add(2*time.Second).UnixMilli()) || h[0][1] != "Current" {
		t.Fatalf("the Pod's band turns Current when it did, once: %v", h)
	}
}

// TestChangesAreComputedLaterInOrder: changes are walked once, at the
// next write or once maxPending marks wait, and the marks keep their
// order, those without changes included; the page gets the members that
// differ (x), or, where only the Go diff can say, the operations (c).
func TestChangesAreComputedLaterInOrder(t *testing.T) {
	tl := New(filepath.Join(t.TempDir(), "t.html"), "", nil)
	changes := func(old, obj *rawobj.Object, secret bool, o stage.DiffOptions) stage.Changes {
		d, err := stage.NewDiffer(o)
		if err != nil {
			t.Fatal(err)
		}
		return d.Changes(old, obj, secret)
	}
	// Not ASCII: walked, not patched (TestChangesArePatched).
	cm := func(v string) *rawobj.Object {
		o, err := rawobj.Parse([]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"demo","uid":"cm-uid","resourceVersion":"`+v+`","labels":{"a":"`+v+`"}},"data":{"k":"`+v+`","n":"é"}}`), rawobj.ParseOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	v1, v2, v3 := cm("1"), cm("2"), cm("3")
	broken := &rawobj.Object{JSON: []byte(`{"metadata":{"name":`)}
	tl.Observe(recordOf("Added", "ConfigMap", "c", "cm-uid", 0), v1, stage.Changes{})
	tl.Observe(recordOf("Updated", "ConfigMap", "c", "cm-uid", time.Second), v2, changes(v1, v2, false, stage.DiffOptions{}))
	tl.Observe(recordOf("Updated", "ConfigMap", "c", "cm-uid", 2*time.Second), v3, changes(v2, v3, true, stage.DiffOptions{}))
	unlabelled, err := rawobj.Parse([]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"demo","uid":"cm-uid","resourceVersion":"3","labels":null},"data":{"k":"2","n":"é"}}`), rawobj.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tl.Observe(recordOf("Updated", "ConfigMap", "c", "cm-uid", 3*time.Second), unlabelled, changes(v2, unlabelled, false, stage.DiffOptions{IgnorePaths: []string{"metadata.labels.a"}}))
	tl.Observe(recordOf("Updated", "ConfigMap", "c", "cm-uid", 4*time.Second), v3, changes(v2, broken, false, stage.DiffOptions{}))
	tl.Observe(recordOf("Deleted", "ConfigMap", "c", "cm-uid", 5*time.Second), nil, stage.Changes{})
	if tl.pending != 5 {
		t.Fatalf("changes walked before the page was written: %d pending", tl.pending)
	}
	if err := tl.Write(false); err != nil {
		t.Fatal(err)
	}
	doc, _ := readDocument(t, tl.Path())
	m := doc.Lanes[0].Marks
	if len(m) != 6 || m[0].Type != "Added" || m[1].Type != "Updated" || m[4].Type != "Updated" || m[5].Type != "Deleted" {
		t.Fatalf("marks out of order: %+v", m)
	}
	if want := `[["~",["metadata","labels","a"],"1","2"],["~",["data","k"],"1","2"]]`; string(m[1].Raw) != want || m[1].Changes != nil {
		t.Fatalf("the update's members that differ: %s (c %v), want %s", m[1].Raw, m[1].Changes, want)
	}
	if m[2].Raw != nil || len(m[2].Changes) != 2 || m[2].Changes[0] != [2]string{"replace", "~ data.k: (changed)"} {
		t.Fatalf("a Secret's changes are made in Go, without their values: %s %+v", m[2].Raw, m[2].Changes)
	}
	if m[3].Raw != nil || len(m[3].Changes) != 1 || m[3].Changes[0] != [2]string{"replace", `~ metadata.labels: {} → null`} {
		t.Fatalf("an ignored path inside a member that differs: the Go diff, %s %+v", m[3].Raw, m[3].Changes)
	}
	if len(m[4].Changes) != 1 || m[4].Changes[0][0] != "error" || !strings.Contains(m[4].Changes[0][1], "could not be computed") {
		t.Fatalf("changes that could not be computed must say so: %s %+v", m[4].Raw, m[4].Changes)
	}
	// A long stream settles by itself, without a write.
	for i := range maxPending {
		tl.Observe(recordOf("Updated", "ConfigMap", "d", "d-uid", time.Duration(i)*time.Millisecond), v2, changes(v1, v2, false, stage.DiffOptions{}))
	}
	if tl.pending != 0 || len(tl.unsettled) != 0 {
		t.Fatalf("after %d waiting marks: %d still waiting", maxPending, tl.pending)
	}
	// And so does one of large objects, before they add up.
	large, err := rawobj.Parse([]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"big","namespace":"demo","uid":"big-uid","resourceVersion":"1"},"data":{"x":"`+strings.Repeat("x", 1<<20)+`"}}`), rawobj.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 8 {
		tl.Observe(recordOf("Updated", "ConfigMap", "big", "big-uid", time.Duration(i)*time.Millisecond), large,
			changes(v1, large, false, stage.DiffOptions{}))
	}
	if tl.pending != 0 {
		t.Fatalf("8 updates of a 1 MiB object: %d still waiting", tl.pending)
	}
}

// TestANewPageIsPrivate: the page holds the cluster's objects, so a new
// one is 0600, as kubectl writes a kubeconfig; a page written over keeps
// the mode its owner gave it.
func TestANewPageIsPrivate(t *testing.T) {
	f := &Flags{File: filepath.Join(t.TempDir(), "t.html")}
	mode := func() os.FileMode {
		t.Helper()
		st, err := os.Stat(f.File)
		if err != nil {
			t.Fatal(err)
		}
		return st.Mode().Perm()
	}
	tl, err := f.ToTimeline(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	tl.Begin()
	if got := mode(); got != 0o600 {
		t.Errorf("a new page is %#o, want 0600", got)
	}
	if err := tl.Close(); err != nil {
		t.Fatal(err)
	}
	if got := mode(); got != 0o600 {
		t.Errorf("the page written at the end is %#o, want 0600", got)
	}
	if err := os.Chmod(f.File, 0o640); err != nil {
		t.Fatal(err)
	}
	tl, err = f.ToTimeline(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	tl.Begin()
	if err := tl.Close(); err != nil {
		t.Fatal(err)
	}
	if got := mode(); got != 0o640 {
		t.Errorf("a page written over one of mode 0640 is %#o, want its mode kept", got)
	}
}

// TestTimeAloneComesBeforeTheNextDelta: the health time alone changed is
// added at its time when the object's next delta comes, before it, though
// the page was never written in between (a replay runs faster than its
// page is written).
func TestTimeAloneComesBeforeTheNextDelta(t *testing.T) {
	raw := []byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"stuck","namespace":"demo","uid":"pod-uid","creationTimestamp":"2026-11-26T10:40:00Z"},` +
		`"status":{"phase":"Pending","conditions":[{"type":"PodScheduled","status":"False","reason":"Unschedulable","message":"0/3 nodes are available"}]}}`)
	obj, err := rawobj.Parse(raw, rawobj.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tl := New(filepath.Join(t.TempDir(), "t.html"), "", func() time.Time { return t0.Add(80 * time.Second) })
	rec := recordOf("Added", "Pod", "stuck", "pod-uid", time.Second)
	rec.APIVersion = "v1"
	rec.Health = &printer.Health{Status: "InProgress", Reason: "PodNotScheduled", Message: "Pod has not been scheduled", RecheckAt: t0.Add(15 * time.Second)}
	tl.Observe(rec, obj, stage.Changes{})
	later := recordOf("Updated", "Pod", "stuck", "pod-uid", 77*time.Second)
	later.APIVersion = "v1"
	later.Health = &printer.Health{Status: "Failed", Reason: "PodUnschedulable", Message: "Pod could not be scheduled"}
	tl.Observe(later, obj, stage.Changes{})
	if err := tl.Write(false); err != nil {
		t.Fatal(err)
	}
	doc, _ := readDocument(t, tl.Path())
	h := doc.Lanes[0].Health
	if len(h) == 0 || h[0][0] != float64(t0.Add(15*time.Second).UnixMilli()) || h[0][1] != "Failed" {
		t.Fatalf("the Pod's health must turn Failed at the end of its schedule window, not at its next delta: %v", h)
	}
}

// TestLaneKeepsNoneOfTheRecordsMemory: a lane's names are its own, not
// the JSON of the object's first version they were read from (which the
// lane would keep for the whole run).
func TestLaneKeepsNoneOfTheRecordsMemory(t *testing.T) {
	buf := []byte("ctxv1ConfigMapdemowebuid-1")
	in := func(from, to int) string { return unsafe.String(&buf[from], to-from) }
	tl := New(filepath.Join(t.TempDir(), "t.html"), "", nil)
	rec := &printer.Record{Type: "Added", Time: t0, Context: in(0, 3), APIVersion: in(3, 5), Kind: in(5, 14), Namespace: in(14, 18), Name: in(18, 21), UID: in(21, 26)}
	tl.Observe(rec, nil, stage.Changes{})
	for i := range buf {
		buf[i] = '!'
	}
	l := tl.lanes[0]
	if got := [...]string{l.Context(), l.APIVersion(), l.Kind(), l.Namespace(), l.Name(), l.UID()}; got != [...]string{"ctx", "v1", "ConfigMap", "demo", "web", "uid-1"} {
		t.Fatalf("the lane's names changed with the record's memory: %q", got)
	}
	if _, ok := tl.byUID.get("ctx", "uid-1"); !ok {
		t.Fatal("the lane is not found by its UID")
	}
}

// TestOneUIDInTwoContexts: an object copied from one cluster into another
// keeps its UID; each cluster's is a lane of its own.
func TestOneUIDInTwoContexts(t *testing.T) {
	tl := New(filepath.Join(t.TempDir(), "t.html"), "", nil)
	for i, ctx := range []string{"a", "b", "a", "c", "b"} {
		rec := recordOf("Updated", "ConfigMap", "c", "same-uid", time.Duration(i)*time.Second)
		rec.Context = ctx
		tl.Observe(rec, nil, stage.Changes{})
	}
	if len(tl.lanes) != 3 {
		t.Fatalf("%d lanes, want one per context (3)", len(tl.lanes))
	}
	for i, want := range []string{"a", "b", "c"} {
		j, ok := tl.byUID.get(want, "same-uid")
		if !ok || j != i || tl.lanes[j].Context() != want || len(tl.lanes[j].marks) == 0 {
			t.Errorf("context %s: lane %d (%v), want %d", want, j, ok, i)
		}
	}
	if _, ok := tl.byUID.get("d", "same-uid"); ok {
		t.Error("a context without the UID finds a lane")
	}
}

// TestChangesArePatched: a small ASCII object's changes reach the page as
// a patch, the first with the version before, the next without it; an
// object too large to start a chain with, or not ASCII, is walked; a
// Secret's changes are Go's.
func TestChangesArePatched(t *testing.T) {
	d, err := stage.NewDiffer(stage.DiffOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm := func(uid, v, extra string) *rawobj.Object {
		o, err := rawobj.Parse([]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"demo","uid":"`+uid+`","resourceVersion":"`+v+`"},"data":{"k":"`+v+`","x":"`+extra+`"}}`), rawobj.ParseOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	tl := New(filepath.Join(t.TempDir(), "t.html"), "", nil)
	large := strings.Repeat("l", maxBaseBytes)
	// "markup" is ASCII, but its '<' may not lie in a script element as
	// it is, and "tab" has a control character: their bases are strings.
	cases := []struct{ uid, extra string }{{"small", ""}, {"large", large}, {"unicode", "é"}, {"markup", "</script><b>"}, {"tab", `\t`}}
	for _, c := range cases {
		prev := cm(c.uid, "1", c.extra)
		tl.Observe(recordOf("Added", "ConfigMap", "c", c.uid, 0), prev, stage.Changes{})
		for i, v := range []string{"2", "3"} {
			obj := cm(c.uid, v, c.extra)
			tl.Observe(recordOf("Updated", "ConfigMap", "c", c.uid, time.Duration(i+1)*time.Second), obj, d.Changes(prev, obj, false))
			prev = obj
		}
	}
	secret := cm("secret", "1", "")
	tl.Observe(recordOf("Updated", "Secret", "s", "secret", time.Second), cm("secret", "2", ""), d.Changes(secret, cm("secret", "2", ""), true))
	if err := tl.Write(false); err != nil {
		t.Fatal(err)
	}
	doc, _ := readDocument(t, tl.Path())
	forms := map[string]string{}
	for _, l := range doc.Lanes {
		for _, m := range l.Marks {
			switch {
			case m.Base != nil && m.Patch != nil:
				forms[l.UID] += "pb+p "
			case m.BaseAt != nil && m.Patch != nil:
				forms[l.UID] += "pr+p "
			case m.Patch != nil:
				forms[l.UID] += "p "
			case m.Raw != nil:
				forms[l.UID] += "x "
			case m.Changes != nil:
				forms[l.UID] += "c "
			default:
				forms[l.UID] += "- "
			}
		}
	}
	want := map[string]string{"small": "- pr+p p ", "large": "- x x ", "unicode": "- x x ", "markup": "- pb+p p ", "tab": "- pr+p p ", "secret": "c "}
	for uid, w := range want {
		if forms[uid] != w {
			t.Errorf("%s: marks %q, want %q", uid, forms[uid], w)
		}
	}
	// A base in the bases element is the version before, byte for byte;
	// one as a string is that version too.
	for _, c := range cases {
		for _, l := range doc.Lanes {
			for _, m := range l.Marks {
				if l.UID != c.uid || m.Patch == nil || m.BaseAt == nil && m.Base == nil {
					continue
				}
				base := string(m.Base)
				if m.BaseAt != nil {
					if len(m.BaseAt) != 2 || m.BaseAt[0] < 0 || m.BaseAt[0]+m.BaseAt[1] > len(doc.Bases) {
						t.Fatalf("%s: \"pr\" %v is not within the bases (%d bytes)", c.uid, m.BaseAt, len(doc.Bases))
					}
					base = doc.Bases[m.BaseAt[0] : m.BaseAt[0]+m.BaseAt[1]]
				}
				if want := string(cm(c.uid, "1", c.extra).JSON); base != want {
					t.Errorf("%s: the base is\n%s\nwant\n%s", c.uid, base, want)
				}
			}
		}
	}
}

// TestNoteLogsOnTheBlockersLane: the logs the verdict read go on the lane
// of their object, in the data as the page reads them, never able to end
// the script element; logs of an object without a lane change nothing.
func TestNoteLogsOnTheBlockersLane(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.html")
	tl := New(path, "", nil)
	tl.Observe(recordOf("Added", "Pod", "web-1", "pod-uid", time.Second), object(t, "Pod", "web-1", "pod-uid", ""), stage.Changes{})
	logs := printer.VerdictLogs{Container: "app", Previous: true, Lines: []string{"starting", "panic: </script><b>no</b> \x1b[31m"}}
	tl.NoteLogs("", "pod-uid", logs)
	tl.NoteLogs("", "other-uid", printer.VerdictLogs{Container: "x", Unavailable: "forbidden"})
	if err := tl.Write(false); err != nil {
		t.Fatal(err)
	}
	doc, data := readDocument(t, path)
	if len(doc.Lanes) != 1 || doc.Lanes[0].Logs == nil || !reflect.DeepEqual(*doc.Lanes[0].Logs, logs) {
		t.Fatalf("lanes %+v, want the Pod's with logs %+v", doc.Lanes, logs)
	}
	if strings.Contains(data, "</script") {
		t.Errorf("a log line ends the script element: %s", data)
	}
}
