package otlp

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestPositionAdvancesAndIsKept: a position moves to the newest time
// acknowledged with the ids of that time, says what was taken, and
// survives being written and read.
func TestPositionAdvancesAndIsKept(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	var p Position
	p.advance([]*item{{time: t0, id: "a"}, {time: t0.Add(time.Second), id: "b"}, {time: t0.Add(time.Second), id: "c"}})
	p.advance([]*item{{time: t0.Add(time.Second), id: "c"}, {time: t0.Add(time.Second), id: "d"}})
	if !p.Time.Equal(t0.Add(time.Second)) || !reflect.DeepEqual(p.IDs, []string{"b", "c", "d"}) {
		t.Fatalf("position %v %v, want %v [b c d]", p.Time, p.IDs, t0.Add(time.Second))
	}
	for _, tc := range []struct {
		at    time.Time
		id    string
		taken bool
	}{{t0, "x", true}, {t0.Add(time.Second), "d", true}, {t0.Add(time.Second), "e", false}, {t0.Add(2 * time.Second), "b", false}} {
		if got := p.taken(tc.at, tc.id); got != tc.taken {
			t.Errorf("taken(%v, %s) = %v, want %v", tc.at, tc.id, got, tc.taken)
		}
	}
	path := PositionPath(filepath.Join(t.TempDir(), "r.jsonl.zst"), false)
	if _, found, err := ReadPosition(path); found || err != nil {
		t.Fatalf("a missing position: found %v, %v", found, err)
	}
	p.Endpoint = "http://127.0.0.1:4318"
	if err := writePosition(path, &p); err != nil {
		t.Fatal(err)
	}
	got, found, err := ReadPosition(path)
	if err != nil || !found || !got.Time.Equal(p.Time) || !reflect.DeepEqual(got.IDs, p.IDs) || got.Endpoint != p.Endpoint {
		t.Errorf("read %+v (%v, %v), want %+v", got, found, err, p)
	}
	if PositionPath("rec/", true) != filepath.Join("rec", ".otlp.json") {
		t.Errorf("a directory's position: %s", PositionPath("rec/", true))
	}
}

// TestResendFeedLeavesOutWhatWasTaken: the feed of the replay that sends
// again leaves out the state at its start, what the position says was
// taken, and Verdicts; it keeps the rest.
func TestResendFeedLeavesOutWhatWasTaken(t *testing.T) {
	e, _ := newTestExporter(t, "http://127.0.0.1:1", nil)
	t0 := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	from := t0.Add(-time.Nanosecond)
	taken := &item{kind: "Updated", time: t0, object: objectRef{uid: "u"}, resourceVersion: "1"}
	taken.id = recordID(taken)
	pos := Position{Time: t0, IDs: []string{taken.id}}
	f := e.ResendFeed(context.Background(), pos, from)
	for _, tc := range []struct {
		it   item
		sent bool
	}{
		{item{kind: "Replaced", initial: true, time: from, object: objectRef{uid: "u"}, resourceVersion: "1"}, false},
		{*taken, false},
		{item{kind: "Updated", time: t0, object: objectRef{uid: "u"}, resourceVersion: "2"}, true},
		{item{kind: "Updated", time: t0.Add(time.Millisecond), object: objectRef{uid: "u"}, resourceVersion: "3"}, true},
		{item{kind: "Replaced", initial: true, time: t0.Add(time.Second), object: objectRef{uid: "v"}, resourceVersion: "4"}, true},
		{item{kind: "Verdict", time: t0.Add(time.Second)}, false},
	} {
		it := tc.it
		before := len(e.waiting)
		if err := f.queue(&it); err != nil {
			t.Fatal(err)
		}
		if sent := len(e.waiting) > before; sent != tc.sent {
			t.Errorf("%s %s at %v: sent %v, want %v", it.kind, it.resourceVersion, it.time, sent, tc.sent)
		}
	}
}

// TestDroppedRecordHoldsThePosition: with a position kept, a record
// dropped because the queue is full stops the position at the records
// queued before it, though the collector takes later ones: a run started
// again sends from there.
func TestDroppedRecordHoldsThePosition(t *testing.T) {
	fc := &fakeCollector{fail: []int{503, 503, 503}}
	srv := httptest.NewServer(fc)
	defer srv.Close()
	e, said := newTestExporter(t, srv.URL, nil)
	path := filepath.Join(t.TempDir(), "r.jsonl.otlp.json")
	t0 := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	if err := e.KeepPosition(path, Position{}, false, t0.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	one := len(sampleRecords(t0)[2].Object) + 200
	e.limits.maxWaiting = 5 * one
	if err := e.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	for i := range 40 {
		r := sampleRecords(t0.Add(time.Duration(i) * time.Second))[2]
		r.Type = "Updated"
		if err := e.Feed().Print(nil, r); err != nil {
			t.Fatal(err)
		}
		if i == 30 {
			fc.mu.Lock()
			fc.fail = nil // the collector takes records again
			fc.mu.Unlock()
		}
	}
	// Once the queue has room, later records are queued and taken.
	for deadline := time.Now().Add(5 * time.Second); ; {
		e.mu.Lock()
		empty := len(e.waiting) == 0
		e.mu.Unlock()
		if empty {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the queue does not drain")
		}
		time.Sleep(time.Millisecond)
	}
	for i := 40; i < 43; i++ {
		r := sampleRecords(t0.Add(time.Duration(i) * time.Second))[2]
		r.Type = "Updated"
		if err := e.Feed().Print(nil, r); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Close(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(said.String(), "the recording keeps them") {
		t.Errorf("said %q, want the drops said", said.String())
	}
	pos, found, err := ReadPosition(path)
	if err != nil || !found {
		t.Fatalf("position: %v %v", found, err)
	}
	e.mu.Lock()
	held, heldAt := e.held, e.heldAt
	e.mu.Unlock()
	if !held || heldAt == 0 || heldAt >= 40 {
		t.Fatalf("held %v at %d: the queue should have dropped some of 40 records", held, heldAt)
	}
	// Record i is made at t0+i s, and sampleRecords' third is 2 s later.
	if want := t0.Add(time.Duration(heldAt-1+2) * time.Second); !pos.Time.Equal(want) {
		t.Errorf("position at %v, want %v: the last record queued before the first drop (the collector got %d)", pos.Time, want, len(fc.records()))
	}
}
