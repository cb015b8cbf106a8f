package stage

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-deltas/kubectl-deltas/internal/cache"
	"github.com/kubectl-deltas/kubectl-deltas/internal/cache/cachetest"
	"github.com/kubectl-deltas/kubectl-deltas/internal/history"
	"github.com/kubectl-deltas/kubectl-deltas/internal/history/recording"
	"github.com/kubectl-deltas/kubectl-deltas/internal/informer"
	"github.com/kubectl-deltas/kubectl-deltas/internal/printer"
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
	hist := history.NewFlags()
	hist.Record = filepath.Join(t.TempDir(), "r.jsonl.gz")
	stage, err := flags.ToStage(false, false, false)
	if err != nil {
		t.Fatal(err)
	}
	fill, err := flags.ToRecordStage(true)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := hist.OpenRecorder(fill, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	p, err := printer.New(printer.Options{Format: "json"})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	at := time.Date(2026, 11, 26, 10, 40, 0, 0, time.UTC)
	sink := NewRecordSink(stage, p, &out, 0, func() time.Time { return at })
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

	lines := readRecording(t, hist.Record)
	if len(lines) != 5 || !strings.HasPrefix(lines[4], `{"type":"Heartbeat"`) {
		t.Fatalf("the recording has %d lines, want a header, 3 records and the Heartbeat of its end:\n%s", len(lines), strings.Join(lines, "\n"))
	}
	lines = lines[:4]
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
	if _, err := openRecorder(existing, stage, io.Discard); err == nil || !strings.Contains(err.Error(), "is not a recording to go on with") {
		t.Errorf("an existing file that is not a recording: %v", err)
	}
	// A run that ends before it watches anything leaves no file behind.
	fresh := filepath.Join(dir, "new.jsonl.zst")
	rec, err := openRecorder(fresh, stage, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	// One writer per recording: a second recorder is refused while the
	// first runs, and leaves the file to it.
	if _, err := openRecorder(fresh, stage, io.Discard); err == nil || !strings.Contains(err.Error(), "is being recorded by another kubectl deltas") {
		t.Errorf("a second recorder of one file: got %v, want it refused", err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("the refused recorder removed the first one's file: %v", err)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(fresh); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a recording never begun is still there: %v", err)
	}
	// Closed, the recorder let go of its lock.
	rec, err = openRecorder(fresh, stage, io.Discard)
	if err != nil {
		t.Fatalf("a recorder after the first closed: %v", err)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestRecorderGoesOn: --record onto a recording resumes each collection
// from the state it ended in and the position of its newest Heartbeat,
// with the changes recorded past that position (the watch brings them
// again); a relist after the last Heartbeat, or none at all, relists. The
// run's part is appended after a Gap from the recording's last line; a
// run that watches what it did not record, or leaves out what it did, is
// refused.
func TestRecorderGoesOn(t *testing.T) {
	inf, target := idleInformer(t, "configmaps", "ConfigMap")
	path := filepath.Join(t.TempDir(), "r.jsonl.zst")
	stage, err := NewStage(Options{})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := openRecorder(path, stage, io.Discard)
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
	position := "2"
	rec.PositionsFrom(func() []informer.Position {
		return []informer.Position{{Target: target, ResourceVersion: position}}
	})
	if err := rec.Begin([]informer.Target{target}, "v0", "", ""); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	record := func(items ...informer.Item) {
		t.Helper()
		now = now.Add(time.Second)
		if err := rec.Record(inf.Target(), items, now); err != nil {
			t.Fatal(err)
		}
	}
	// The initial list, at the collection's resourceVersion 12: a
	// ConfigMap deleted before the recording began is not in it.
	record(informer.Item{Delta: cache.Delta{Type: cache.Replaced, Object: a1}, Type: cache.Replaced, Initial: true, Object: a1, Key: "ns/a"})
	record(informer.Item{Delta: cache.Delta{Type: cache.Replaced, Object: b2}, Type: cache.Replaced, Initial: true, Object: b2, Key: "ns/b"})
	position = "12"
	if err := rec.Heartbeat(now); err != nil {
		t.Fatal(err)
	}
	record(informer.Item{Delta: cache.Delta{Type: cache.Updated, Object: a3}, Type: cache.Updated, Object: a3, Old: a1, Key: "ns/a"})
	record(informer.Item{Delta: cache.Delta{Type: cache.Deleted, Object: b4}, Type: cache.Deleted, Object: b4, Key: "ns/b"})
	// Killed: no Heartbeat at the end. (Close writes one, whose position
	// is gone by then.)
	rec.PositionsFrom(nil)
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}

	again, err := openRecorder(path, stage, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	res, ok := again.Resume(target)
	if !ok || res.ResourceVersion != "12" || len(res.Objects) != 1 || res.Objects[0].Name != "a" || res.Objects[0].ResourceVersion != "3" ||
		len(res.Seen) != 2 || res.Seen["ns/a"] != "3" || res.Seen["ns/b"] != "4" {
		t.Fatalf("Resume = %+v, %v; want a at 3, from the Heartbeat's position 12, a at 3 and b's deletion at 4 seen past it", res, ok)
	}
	secrets := target
	secrets.Resource.Resource = "secrets"
	if err := again.Begin([]informer.Target{target, secrets}, "v0", "", ""); err == nil || !strings.Contains(err.Error(), "recorded configmaps; this run also watches secrets, which it did not") {
		t.Errorf("a run that watches more than was recorded: %v", err)
	}
	if err := again.Begin(nil, "v0", "", ""); err == nil || !strings.Contains(err.Error(), "recorded configmaps; this run does not watch configmaps, whose record would stop here") {
		t.Errorf("a run that watches less than was recorded: %v", err)
	}
	if err := again.Begin([]informer.Target{target}, "v0", "", ""); err != nil {
		t.Fatal(err)
	}
	// A relist past the last Heartbeat: no position.
	if err := again.Record(inf.Target(), []informer.Item{{Delta: cache.Delta{Type: cache.Replaced, Object: a3}, Type: cache.Replaced, Object: a3, Old: a3, Key: "ns/a"}}, now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := again.Close(); err != nil {
		t.Fatal(err)
	}
	lines := readRecording(t, path)
	if len(lines) != 11 || !strings.HasPrefix(lines[7], `{"type":"Recording"`) || !strings.HasPrefix(lines[8], `{"type":"Gap"`) {
		t.Fatalf("the recording after going on:\n%s\nwant its 7 lines, a second header and a Gap", strings.Join(lines, "\n"))
	}
	var gap recording.Gap
	var last recording.Heartbeat
	if err := json.Unmarshal([]byte(lines[8]), &gap); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(lines[6]), &last); err != nil {
		t.Fatal(err)
	}
	if !gap.From.Equal(last.Time) || gap.To.Before(gap.From) || !gap.Time.Equal(gap.To) {
		t.Errorf("Gap %s; want from the Heartbeat of the first part's end (%s) to the second part's start", lines[8], last.Time)
	}
	third, err := openRecorder(path, stage, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if res, ok := third.Resume(target); !ok || res.ResourceVersion != "" || res.Seen != nil || len(res.Objects) != 1 {
		t.Errorf("after a relist past the last Heartbeat: Resume = %+v, %v; want the state, to relist", res, ok)
	}
	_ = third.Close()
}

// TestCaughtUpRecordsCarryTheirObjectsTimes: after a gap, a change the
// resumed informer caught up is recorded at the time its object gives
// (a deletion's when it was asked), within the gap and never before the
// same object's caught-up record before it — other objects' do not push
// it — or at the gap's end when the object says nothing; a change made
// live keeps the time it was seen.
func TestCaughtUpRecordsCarryTheirObjectsTimes(t *testing.T) {
	inf, target := idleInformer(t, "configmaps", "ConfigMap")
	path := filepath.Join(t.TempDir(), "r.jsonl")
	stage, err := NewStage(Options{})
	if err != nil {
		t.Fatal(err)
	}
	first := `{"type":"Recording","time":"2026-11-26T10:00:00Z","schema":"v1","version":"v0","targets":[{"apiVersion":"v1","kind":"ConfigMap","resource":"configmaps","role":"root"}]}
{"type":"Heartbeat","time":"2026-11-26T10:00:10Z","positions":[{"apiVersion":"v1","kind":"ConfigMap","resource":"configmaps","role":"root","resourceVersion":"7"}]}
`
	if err := os.WriteFile(path, []byte(first), 0o600); err != nil {
		t.Fatal(err)
	}
	rec, err := openRecorder(path, stage, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if err := rec.Begin([]informer.Target{target}, "v0", "", ""); err != nil {
		t.Fatal(err)
	}
	start := rec.Gap().To
	within := func(d time.Duration) string { return rec.Gap().From.Add(d).Format(time.RFC3339) }
	created := cachetest.MustParse(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"ns","resourceVersion":"8","uid":"uc","creationTimestamp":"`+within(3*time.Second)+`","managedFields":[{"manager":"kubectl","operation":"Update","time":"`+within(3*time.Second)+`"}]}}`)
	updated := cachetest.MustParse(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"ns","resourceVersion":"9","uid":"uc","creationTimestamp":"`+within(3*time.Second)+`","managedFields":[{"manager":"kubectl","operation":"Update","time":"`+within(5*time.Second)+`"}]}}`)
	earlier := cachetest.MustParse(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"d","namespace":"ns","resourceVersion":"10","uid":"ud","creationTimestamp":"`+within(-time.Hour)+`"}}`)
	gone := cachetest.MustParse(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"e","namespace":"ns","resourceVersion":"11","uid":"ue"}}`)
	// A graceful deletion: asked at +8s, due 10s later.
	podMeta := `"name":"p","namespace":"ns","uid":"up","creationTimestamp":"` + within(-time.Hour) + `"`
	running := cachetest.MustParse(t, `{"apiVersion":"v1","kind":"Pod","metadata":{`+podMeta+`,"resourceVersion":"5"}}`)
	terminating := cachetest.MustParse(t, `{"apiVersion":"v1","kind":"Pod","metadata":{`+podMeta+`,"resourceVersion":"13","deletionTimestamp":"`+within(18*time.Second)+`","deletionGracePeriodSeconds":10}}`)
	// An older managedFields time than its last record's: never before it.
	again := cachetest.MustParse(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"ns","resourceVersion":"14","uid":"uc","creationTimestamp":"`+within(3*time.Second)+`","managedFields":[{"manager":"other","operation":"Update","time":"`+within(4*time.Second)+`"}]}}`)
	live := cachetest.MustParse(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"f","namespace":"ns","resourceVersion":"12","uid":"uf","creationTimestamp":"`+start.Add(time.Second).Format(time.RFC3339)+`"}}`)
	seen := start.Add(2 * time.Second)
	for _, it := range []informer.Item{
		{Delta: cache.Delta{Type: cache.Added, Object: created}, Type: cache.Added, Object: created, Key: "ns/c", CaughtUp: true},
		{Delta: cache.Delta{Type: cache.Updated, Object: updated}, Type: cache.Updated, Object: updated, Old: created, Key: "ns/c", CaughtUp: true},
		{Delta: cache.Delta{Type: cache.Added, Object: earlier}, Type: cache.Added, Object: earlier, Key: "ns/d", CaughtUp: true},
		{Delta: cache.Delta{Type: cache.Deleted, Object: gone}, Type: cache.Deleted, Object: gone, Key: "ns/e", CaughtUp: true},
		{Delta: cache.Delta{Type: cache.Updated, Object: terminating}, Type: cache.Updated, Object: terminating, Old: running, Key: "ns/p", CaughtUp: true},
		{Delta: cache.Delta{Type: cache.Deleted, Object: terminating}, Type: cache.Deleted, Object: terminating, Old: terminating, Key: "ns/p", CaughtUp: true},
		{Delta: cache.Delta{Type: cache.Updated, Object: again}, Type: cache.Updated, Object: again, Old: updated, Key: "ns/c", CaughtUp: true},
		{Delta: cache.Delta{Type: cache.Added, Object: live}, Type: cache.Added, Object: live, Key: "ns/f"},
	} {
		if err := rec.Record(inf.Target(), []informer.Item{it}, seen); err != nil {
			t.Fatal(err)
		}
	}
	rec.PositionsFrom(nil)
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	lines := readRecording(t, path)
	var got []string
	for _, line := range lines[4:12] {
		var r struct {
			Type     string    `json:"type"`
			Name     string    `json:"name"`
			Time     time.Time `json:"time"`
			CaughtUp string    `json:"caughtUp"`
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%s %s +%s %s", r.Type, r.Name, r.Time.Sub(rec.Gap().From), r.CaughtUp))
	}
	gapLength := start.Sub(rec.Gap().From)
	want := []string{
		"Added c +3s creationTimestamp",
		"Updated c +5s managedFields",
		"Added d +0s creationTimestamp", // dated before the gap: at its start, not pushed to the record before it
		fmt.Sprintf("Deleted e +%s gap", gapLength),
		"Updated p +8s deletionTimestamp", // when the deletion was asked: deletionTimestamp less the grace period
		"Deleted p +8s deletionTimestamp",
		"Updated c +5s managedFields", // never before c's record before it

		fmt.Sprintf("Added f +%s ", seen.Sub(rec.Gap().From)),
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the records after the gap:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// openRecorder opens the recording name as --record=name does.
func openRecorder(name string, fill recording.Filler, warn io.Writer) (*recording.Recorder, error) {
	return (&history.Flags{Record: name}).OpenRecorder(fill, warn)
}
