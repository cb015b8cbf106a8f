package recording

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-deltas/kubectl-deltas/internal/cache"
	"github.com/kubectl-deltas/kubectl-deltas/internal/informer"
	"github.com/kubectl-deltas/kubectl-deltas/internal/printer"
	"github.com/kubectl-deltas/kubectl-deltas/internal/rawobj"
)

// copyFiller fills a record from the delta alone, as the record stage
// does for what a replay reads.
type copyFiller struct{}

func (copyFiller) Fill(rec *printer.Record, t informer.Target, it *informer.Item, now time.Time) (bool, error) {
	*rec = printer.Record{
		Type: string(it.Type), Time: now, Initial: it.Initial, Context: t.Context,
		APIVersion: t.Kind.GroupVersion().String(), Kind: t.Kind.Kind, Resource: t.Resource.Resource,
		Object: json.RawMessage("null"),
	}
	if obj := it.Object; obj != nil {
		rec.Namespace, rec.Name, rec.UID, rec.ResourceVersion, rec.Object = obj.Namespace, obj.Name, obj.UID, obj.ResourceVersion, obj.JSON
	}
	return true, nil
}

var testTarget = informer.Target{
	Resource: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"},
	Kind:     schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, Namespace: "shop",
}

// configMap is a ConfigMap of shop at resourceVersion rv.
func configMap(t *testing.T, name string, rv int, value string) *rawobj.Object {
	t.Helper()
	obj, err := rawobj.Parse([]byte(fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q,"namespace":"shop","uid":"u-%s","resourceVersion":"%d"},"data":{"k":%q}}`, name, name, rv, value)), rawobj.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return obj
}

// churn is a test's run of a recorder into a directory: each step adds,
// updates or deletes one of a few ConfigMaps, and model is what the
// recording holds after each.
type churn struct {
	t     *testing.T
	rec   *Recorder
	now   time.Time
	rv    int
	model map[string]string // name → resourceVersion
}

func newChurn(t *testing.T, dir string, policy DirPolicy) *churn {
	t.Helper()
	if err := PrepareDir(dir); err != nil {
		t.Fatal(err)
	}
	lock, err := LockDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	ix, err := LoadIndex(dir, io.Discard, true)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := NewDirRecorder(dir, lock, ix, nil, policy, copyFiller{}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if err := rec.Begin([]informer.Target{testTarget}, "test", "", ""); err != nil {
		t.Fatal(err)
	}
	return &churn{t: t, rec: rec, now: time.Now(), model: map[string]string{}}
}

// recordChurn records n changes into a new directory with policy, and
// returns it and what it holds at the end.
func recordChurn(t *testing.T, policy DirPolicy, n int) (string, map[string]string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "rec") + "/"
	c := newChurn(t, dir, policy)
	for i := range n {
		c.step(i)
	}
	if err := c.rec.Close(); err != nil {
		t.Fatal(err)
	}
	return dir, c.model
}

// step makes change i, then ticks every 10 changes.
func (c *churn) step(i int) {
	c.t.Helper()
	name := fmt.Sprintf("cm-%d", i%7)
	c.rv++
	c.now = c.now.Add(100 * time.Millisecond)
	it := informer.Item{Type: cache.Added, Key: "shop/" + name, Object: configMap(c.t, name, c.rv, strings.Repeat("v", i%50))}
	switch _, known := c.model[name]; {
	case known && i%5 == 0:
		it.Type = cache.Deleted
		delete(c.model, name)
	case known:
		it.Type = cache.Updated
		c.model[name] = fmt.Sprint(c.rv)
	default:
		c.model[name] = fmt.Sprint(c.rv)
	}
	if err := c.rec.Record(testTarget, []informer.Item{it}, c.now); err != nil {
		c.t.Fatal(err)
	}
	if i%10 == 9 {
		if err := c.rec.Tick(c.now); err != nil {
			c.t.Fatal(err)
		}
	}
}

// readLines reads r through.
func readLines(t *testing.T, r *Reader) []string {
	t.Helper()
	defer func() { _ = r.Close() }()
	var out []string
	for {
		data, _, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(data))
	}
}

// records are the records of lines as "type name rv", and the state
// they leave.
func records(t *testing.T, lines []string) (changes []string, state map[string]string) {
	t.Helper()
	state = map[string]string{}
	for i, l := range lines {
		line, err := ParseLine("test", i+1, []byte(l))
		if err != nil {
			t.Fatal(err)
		}
		if line.Header != nil || line.Mark() {
			continue
		}
		rv := ""
		if line.Object != nil {
			rv = line.Object.ResourceVersion
		}
		if !line.Checkpoint {
			changes = append(changes, line.Type+" "+line.Name+" "+rv)
		}
		if line.Type == DeletedType {
			delete(state, line.Name)
		} else {
			state[line.Name] = rv
		}
	}
	return changes, state
}

func TestDirRecordsInSegmentsThatReadAsOne(t *testing.T) {
	dir, model := recordChurn(t, DirPolicy{SegmentBytes: 2000, CheckpointRecords: 15}, 300)
	ix, err := LoadIndex(dir, io.Discard, false)
	if err != nil {
		t.Fatal(err)
	}
	if ix.Rebuilt {
		t.Error("a recorder that closed left an index that had to be rebuilt")
	}
	if len(ix.Segments) < 3 {
		t.Fatalf("%d segments, want several (2,000 bytes each)", len(ix.Segments))
	}
	checkpoints := 0
	for _, info := range ix.Infos {
		checkpoints += len(info.Checkpoints)
	}
	if checkpoints <= len(ix.Segments) {
		t.Errorf("%d checkpoints in %d segments, want some within them (every 15 records)", checkpoints, len(ix.Segments))
	}

	// Read from the start, the directory is the stream: every change once,
	// in order, no checkpoint, one header.
	r, err := OpenDir(ix, ix.StartAt(time.Time{}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	lines := readLines(t, r)
	got, state := records(t, lines)
	for _, l := range lines {
		if strings.Contains(l, `"checkpoint":true`) {
			t.Fatalf("a checkpoint's record read going on from segment to segment: %s", l)
		}
	}
	headers := 0
	for _, l := range lines {
		if strings.HasPrefix(l, `{"type":"Recording"`) {
			headers++
		}
	}
	if headers != 1 {
		t.Errorf("%d headers, want 1: a segment that goes on from the one before is not a new run", headers)
	}
	if len(got) != 300 {
		t.Errorf("%d changes read, want 300", len(got))
	}
	if !reflect.DeepEqual(state, model) {
		t.Errorf("state at the end %v, want %v", state, model)
	}

	// From each checkpoint, the state it holds is the recording's there:
	// what every record before it left.
	for _, info := range ix.Infos {
		for _, cp := range info.Checkpoints {
			r, err := OpenDir(ix, Start{Segment: info.Name, Offset: cp.Offset}, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			lines := readLines(t, r)
			if !strings.HasPrefix(lines[0], `{"type":"Recording"`) {
				t.Fatalf("reading from %s@%d: the first line is not the segment's header: %s", info.Name, cp.Offset, lines[0])
			}
			var initial []string
			for _, l := range lines[1:] {
				if strings.HasPrefix(l, `{"type":"Heartbeat"`) {
					continue
				}
				if !strings.Contains(l, `"checkpoint":true`) {
					break
				}
				initial = append(initial, l)
			}
			_, cpState := records(t, initial)
			// The changes after it are the last of the full reading's.
			full, _ := records(t, lines)
			if len(full) > 300 {
				t.Fatalf("more changes after a checkpoint than recorded")
			}
			wantState := stateAfter(t, got[:300-len(full)])
			if !reflect.DeepEqual(cpState, wantState) {
				t.Errorf("the checkpoint at %s@%d holds %v, want the state of the %d records before it: %v", info.Name, cp.Offset, cpState, 300-len(full), wantState)
			}
		}
	}
}

// stateAfter is the state the changes ("type name rv") leave.
func stateAfter(t *testing.T, changes []string) map[string]string {
	t.Helper()
	state := map[string]string{}
	for _, ch := range changes {
		f := strings.Fields(ch)
		if f[0] == DeletedType {
			delete(state, f[1])
		} else {
			state[f[1]] = f[2]
		}
	}
	return state
}

func TestDirMissingSegmentIsAGapAndARelist(t *testing.T) {
	dir, model := recordChurn(t, DirPolicy{SegmentBytes: 1500, CheckpointRecords: 1000}, 200)
	segs, err := ListSegments(dir)
	if err != nil || len(segs) < 4 {
		t.Fatalf("%d segments (%v), want at least 4", len(segs), err)
	}
	if err := os.Remove(filepath.Join(dir, segs[1].Name)); err != nil {
		t.Fatal(err)
	}
	ix, err := LoadIndex(dir, io.Discard, false)
	if err != nil {
		t.Fatal(err)
	}
	var warn bytes.Buffer
	r, err := OpenDir(ix, ix.StartAt(time.Time{}), &warn)
	if err != nil {
		t.Fatal(err)
	}
	lines := readLines(t, r)
	if !strings.Contains(warn.String(), fmt.Sprintf("segment %06d is missing", segs[1].Seq)) {
		t.Errorf("no warning naming the missing segment: %q", warn.String())
	}
	gap := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, `{"type":"Gap"`) })
	if gap < 1 || !strings.HasPrefix(lines[gap-1], `{"type":"Recording"`) {
		t.Fatalf("no Gap after the next segment's header: %v", lines)
	}
	if !strings.Contains(lines[gap+2], `"checkpoint":true`) {
		t.Errorf("the checkpoint after the gap is not read (its records say what changed): %s", lines[gap+2])
	}
	_, state := records(t, lines)
	if !reflect.DeepEqual(state, model) {
		t.Errorf("state at the end %v, want %v", state, model)
	}
}

func TestTornOrMissingIndexIsRebuilt(t *testing.T) {
	dir, _ := recordChurn(t, DirPolicy{SegmentBytes: 2000, CheckpointRecords: 15}, 200)
	whole, err := LoadIndex(dir, io.Discard, false)
	if err != nil {
		t.Fatal(err)
	}
	checkpoints := func(ix *DirIndex) []string {
		var out []string
		for _, info := range ix.Infos {
			for _, cp := range info.Checkpoints {
				out = append(out, fmt.Sprintf("%s@%d %s %d", info.Name, cp.Offset, cp.Time.UTC().Format(time.RFC3339Nano), cp.Records))
			}
		}
		return out
	}
	want := checkpoints(whole)
	index := filepath.Join(dir, IndexName)
	data, err := os.ReadFile(index)
	if err != nil {
		t.Fatal(err)
	}
	// Torn in the middle of its last line: that entry is lost, the rest
	// reads, and a recorder going on reads the newest segment again.
	if err := os.WriteFile(index, data[:len(data)-20], 0o600); err != nil {
		t.Fatal(err)
	}
	var warn bytes.Buffer
	ix, err := LoadIndex(dir, &warn, true)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(warn.String(), "ends torn") || !ix.Rebuilt {
		t.Errorf("a torn index: warning %q, rebuilt %v", warn.String(), ix.Rebuilt)
	}
	if got := checkpoints(ix); !reflect.DeepEqual(got, want) {
		t.Errorf("checkpoints after a torn index:\n%v\nwant\n%v", got, want)
	}
	// Missing: rebuilt whole from the segments.
	if err := os.Remove(index); err != nil {
		t.Fatal(err)
	}
	warn.Reset()
	if ix, err = LoadIndex(dir, &warn, false); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(warn.String(), "has no index.jsonl") {
		t.Errorf("a missing index: warning %q", warn.String())
	}
	if got := checkpoints(ix); !reflect.DeepEqual(got, want) {
		t.Errorf("checkpoints of a rebuilt index:\n%v\nwant\n%v", got, want)
	}
	if err := ix.Save(); err != nil {
		t.Fatal(err)
	}
	if ix, err = LoadIndex(dir, io.Discard, false); err != nil || ix.Rebuilt {
		t.Errorf("the saved index did not read whole: %v, rebuilt %v", err, ix.Rebuilt)
	}
}

func TestRetentionKeepsTheNewestAndAWholeWindow(t *testing.T) {
	dir, model := recordChurn(t, DirPolicy{SegmentBytes: 1500, KeepBytes: 4000, CheckpointRecords: 1000}, 400)
	ix, err := LoadIndex(dir, io.Discard, false)
	if err != nil {
		t.Fatal(err)
	}
	if ix.Rebuilt {
		t.Error("retention left an index that names deleted segments or misses some")
	}
	if ix.Segments[0].Seq == 1 {
		t.Fatalf("no segment deleted: %v", ix.Segments)
	}
	var total int64
	for _, s := range ix.Segments[:len(ix.Segments)-1] {
		st, err := os.Stat(filepath.Join(dir, s.Name))
		if err != nil {
			t.Fatal(err)
		}
		total += st.Size()
	}
	if total > 4000 {
		t.Errorf("the segments before the newest hold %d bytes, want at most --record-keep's 4000", total)
	}
	for i := 1; i < len(ix.Segments); i++ {
		if ix.Segments[i].Seq != ix.Segments[i-1].Seq+1 {
			t.Errorf("a segment in the middle deleted: %v", ix.Segments)
		}
	}
	// What is kept reads as one, from the oldest kept segment's
	// checkpoint, to the state of the end.
	r, err := OpenDir(ix, ix.StartAt(time.Time{}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	_, state := records(t, readLines(t, r))
	if !reflect.DeepEqual(state, model) {
		t.Errorf("state at the end %v, want %v", state, model)
	}
}

func TestDirBadInput(t *testing.T) {
	base := t.TempDir()
	file := filepath.Join(base, "file")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := PrepareDir(file + "/"); err == nil || !strings.Contains(err.Error(), "is a file, not a directory") {
		t.Errorf("PrepareDir of a file: %v", err)
	}
	other := filepath.Join(base, "other")
	if err := os.MkdirAll(other, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, "notes.txt"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ListSegments(other); err == nil || !strings.Contains(err.Error(), "notes.txt") || !strings.Contains(err.Error(), "not a recording directory") {
		t.Errorf("ListSegments of a directory of something else: %v", err)
	}
	for name, ok := range map[string]bool{"000001-20261129T155011Z.jsonl.zst": true, "1-20261129T155011Z.jsonl.zst": false, "000001-2026.jsonl.zst": false, "000000-20261129T155011Z.jsonl.zst": false} {
		if _, got := ParseSegmentName(name); got != ok {
			t.Errorf("ParseSegmentName(%q) = %v, want %v", name, got, ok)
		}
	}
}

// TestDirCheckpointWaitsForPositionsButNotForever: a segment due while a
// collection has no position (its watch down) is not cut until the
// positions are known, or positionsPatience has passed.
func TestDirCheckpointWaitsForPositionsButNotForever(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "rec") + "/"
	c := newChurn(t, dir, DirPolicy{SegmentBytes: 1, CheckpointRecords: 1 << 30})
	c.rec.TargetsFrom(func() []informer.Target { return []informer.Target{testTarget} })
	c.rec.PositionsFrom(func() []informer.Position { return nil }) // its watch is down
	segments := func() int {
		segs, err := ListSegments(dir)
		if err != nil {
			t.Fatal(err)
		}
		return len(segs)
	}
	for i := range 9 {
		c.step(i)
	}
	start := c.now
	for at := start; at.Before(start.Add(positionsPatience)); at = at.Add(HeartbeatInterval) {
		if err := c.rec.Tick(at); err != nil {
			t.Fatal(err)
		}
	}
	if n := segments(); n != 1 {
		t.Fatalf("%d segments while a position was not known, want 1", n)
	}
	if err := c.rec.Tick(start.Add(positionsPatience)); err != nil {
		t.Fatal(err)
	}
	if n := segments(); n != 2 {
		t.Errorf("%d segments after %s without a position, want 2", n, positionsPatience)
	}
	c.rec.PositionsFrom(func() []informer.Position {
		return []informer.Position{{Target: testTarget, ResourceVersion: fmt.Sprint(c.rv)}}
	})
	if err := c.rec.Tick(start.Add(positionsPatience + HeartbeatInterval)); err != nil {
		t.Fatal(err)
	}
	if n := segments(); n != 3 {
		t.Errorf("%d segments once the position is known again, want 3", n)
	}
	if err := c.rec.Close(); err != nil {
		t.Fatal(err)
	}
}
