package record

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-deltas/kubectl-deltas/internal/cache"
	"github.com/kubectl-deltas/kubectl-deltas/internal/cache/cachetest"
	"github.com/kubectl-deltas/kubectl-deltas/internal/informer"
	"github.com/kubectl-deltas/kubectl-deltas/internal/printer"
	"github.com/kubectl-deltas/kubectl-deltas/internal/recording"
)

// readRecording returns the lines of a recording.
func readRecording(t *testing.T, path string) []string {
	t.Helper()
	r, err := recording.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = r.Close() }()
	var out []string
	for {
		line, _, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(line))
	}
}

// TestRecorderKeepsWhatThePrintedStreamDrops: the printed stream filters
// (--types=Deleted, --watch-only); the recording has every delta, at the
// printed records' time, Secrets redacted, after its header.
func TestRecorderKeepsWhatThePrintedStreamDrops(t *testing.T) {
	inf, target := idleInformer(t, "secrets", "Secret")
	listed := cachetest.MustParse(t, `{"metadata":{"name":"a","namespace":"ns","resourceVersion":"1","uid":"u"},"data":{"p":"aHVudGVyMg=="}}`)
	updated := cachetest.MustParse(t, `{"metadata":{"name":"a","namespace":"ns","resourceVersion":"2","uid":"u"},"data":{"p":"c2VjcmV0"}}`)

	flags := NewFlags()
	flags.Types, flags.WatchOnly, flags.Diff = []string{"Deleted"}, true, true
	flags.Record = filepath.Join(t.TempDir(), "r.jsonl.gz")
	stage, err := flags.ToStage(false, false)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := flags.ToRecorder(true, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	p, err := printer.New(printer.Options{Format: "json"})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	at := time.Date(2026, 11, 26, 10, 40, 0, 0, time.UTC)
	sink := NewSink(stage, p, &out, 0, func() time.Time { return at })
	sink.RecordTo(rec)
	if err := rec.Begin([]informer.Target{target}, "v9.9.9", "", ""); err != nil {
		t.Fatal(err)
	}
	for _, b := range []informer.Batch{
		{Informer: inf, Initial: true, Items: []informer.Item{{Delta: cache.Delta{Type: cache.Replaced, Object: listed}, Type: cache.Replaced, Initial: true, Object: listed, Key: "ns/a"}}},
		{Informer: inf, Items: []informer.Item{{Delta: cache.Delta{Type: cache.Updated, Object: updated}, Type: cache.Updated, Object: updated, Old: listed, Key: "ns/a"}}},
		{Informer: inf, Items: []informer.Item{{Delta: cache.Delta{Type: cache.Deleted, Object: updated}, Type: cache.Deleted, Object: updated, Key: "ns/a"}}},
	} {
		if _, err := sink.Handle(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := sink.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}

	lines := readRecording(t, flags.Record)
	if len(lines) != 4 {
		t.Fatalf("the recording has %d lines, want a header and 3 records:\n%s", len(lines), strings.Join(lines, "\n"))
	}
	var h recording.Header
	if err := json.Unmarshal([]byte(lines[0]), &h); err != nil || h.Type != "Recording" || h.Schema != "v1" || h.Version != "v9.9.9" ||
		len(h.Targets) != 1 || h.Targets[0].Resource != "secrets" || h.Targets[0].Role != "root" {
		t.Errorf("header %s (%v)", lines[0], err)
	}
	var types []string
	for _, line := range lines[1:] {
		var r struct {
			Type    string          `json:"type"`
			Time    time.Time       `json:"time"`
			Health  json.RawMessage `json:"health"`
			Changes json.RawMessage `json:"changes"`
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		types = append(types, r.Type)
		if !r.Time.Equal(at) || r.Health == nil {
			t.Errorf("record %s: want the printed time and health", line)
		}
		if strings.Contains(line, "c2VjcmV0") || strings.Contains(line, "aHVudGVyMg==") {
			t.Errorf("a Secret's value is in the recording: %s", line)
		}
		if r.Type == "Updated" && (r.Changes == nil || !strings.Contains(string(r.Changes), "/data/p")) {
			t.Errorf("the Updated record has no changes of /data/p: %s", line)
		}
	}
	if strings.Join(types, ",") != "Replaced,Updated,Deleted" {
		t.Errorf("recorded %v, want every delta", types)
	}
	if printed := strings.Count(out.String(), "\n"); printed != 1 || !strings.Contains(out.String(), `"type":"Deleted"`) {
		t.Errorf("printed %q, want the Deleted record alone", out.String())
	}
}

func TestRecorderRefusesAndCleansUp(t *testing.T) {
	dir := t.TempDir()
	existing := filepath.Join(dir, "old.jsonl")
	if err := os.WriteFile(existing, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	stage, err := NewStage(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := CreateRecorder(existing, stage, io.Discard); err == nil || !strings.Contains(err.Error(), "is not a recording to go on with") {
		t.Errorf("an existing file that is not a recording: %v", err)
	}
	// A run that ends before it watches anything leaves no file behind.
	fresh := filepath.Join(dir, "new.jsonl.zst")
	rec, err := CreateRecorder(fresh, stage, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(fresh); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a recording never begun is still there: %v", err)
	}
}

// TestRecorderGoesOn: --record onto a recording resumes each collection
// from the state it ended in and the resourceVersion of its last record,
// appends the run's part, and refuses a run that watches what it did not
// record.
func TestRecorderGoesOn(t *testing.T) {
	inf, target := idleInformer(t, "configmaps", "ConfigMap")
	path := filepath.Join(t.TempDir(), "r.jsonl.zst")
	stage, err := NewStage(Options{})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := CreateRecorder(path, stage, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := rec.Resume(target); ok {
		t.Error("a new recording resumes")
	}
	a1 := cachetest.MustParse(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"ns","resourceVersion":"1","uid":"ua"}}`)
	b2 := cachetest.MustParse(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b","namespace":"ns","resourceVersion":"2","uid":"ub"}}`)
	a3 := cachetest.MustParse(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"ns","resourceVersion":"3","uid":"ua"}}`)
	b4 := cachetest.MustParse(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b","namespace":"ns","resourceVersion":"4","uid":"ub"}}`)
	if err := rec.Begin([]informer.Target{target}, "v0", "", ""); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	for _, items := range [][]informer.Item{
		{{Delta: cache.Delta{Type: cache.Replaced, Object: a1}, Type: cache.Replaced, Initial: true, Object: a1, Key: "ns/a"}},
		{{Delta: cache.Delta{Type: cache.Replaced, Object: b2}, Type: cache.Replaced, Initial: true, Object: b2, Key: "ns/b"}},
		{{Delta: cache.Delta{Type: cache.Updated, Object: a3}, Type: cache.Updated, Object: a3, Old: a1, Key: "ns/a"}},
		{{Delta: cache.Delta{Type: cache.Deleted, Object: b4}, Type: cache.Deleted, Object: b4, Key: "ns/b"}},
	} {
		now = now.Add(time.Second)
		if err := rec.Record(inf.Target(), items, now); err != nil {
			t.Fatal(err)
		}
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}

	again, err := CreateRecorder(path, stage, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	res, ok := again.Resume(target)
	if !ok || res.ResourceVersion != "4" || len(res.Objects) != 1 || res.Objects[0].Name != "a" || res.Objects[0].ResourceVersion != "3" {
		t.Fatalf("Resume = %+v, %v; want a at 3, from resourceVersion 4 (b's deletion)", res, ok)
	}
	secrets := target
	secrets.Resource.Resource = "secrets"
	if err := again.Begin([]informer.Target{target, secrets}, "v0", "", ""); err == nil || !strings.Contains(err.Error(), "recorded configmaps; this run also watches secrets, which it did not") {
		t.Errorf("a run that watches more than was recorded: %v", err)
	}
	if err := again.Begin([]informer.Target{target}, "v0", "", ""); err != nil {
		t.Fatal(err)
	}
	if err := again.Close(); err != nil {
		t.Fatal(err)
	}
	lines := readRecording(t, path)
	if len(lines) != 6 || !strings.HasPrefix(lines[5], `{"type":"Recording"`) {
		t.Errorf("the recording after going on:\n%s\nwant its 5 lines and a second header", strings.Join(lines, "\n"))
	}
}
