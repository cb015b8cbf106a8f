package replay

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-deltas/kubectl-deltas/internal/history/recording"
	"github.com/kubectl-deltas/kubectl-deltas/internal/informer"
)

var t0 = time.Date(2026, 11, 26, 10, 40, 0, 0, time.UTC)

// rec is one record line of a ConfigMap (or Secret, for resource
// "secrets") at t0 plus ms milliseconds.
func rec(typ string, initial bool, resource, name, rv string, ms int, extra string) string {
	kind := map[string]string{"configmaps": "ConfigMap", "secrets": "Secret"}[resource]
	obj := fmt.Sprintf(`{"apiVersion":"v1","kind":%q,"metadata":{"name":%q,"namespace":"ns","uid":"uid-%s","resourceVersion":%q,"labels":{"app":%q}},"data":{"rv":%q}}`, kind, name, name, rv, name, rv)
	return fmt.Sprintf(`{"type":%q,"time":%q,"initial":%v,"apiVersion":"v1","kind":%q,"resource":%q,"namespace":"ns","name":%q,"uid":"uid-%s","resourceVersion":%q%s,"object":%s}`,
		typ, t0.Add(time.Duration(ms)*time.Millisecond).Format(time.RFC3339Nano), initial, kind, resource, name, name, rv, extra, obj)
}

const header = `{"type":"Recording","time":"2026-11-26T10:39:59Z","schema":"v1","version":"v0.0.0","targets":[` +
	`{"apiVersion":"v1","kind":"ConfigMap","resource":"configmaps","namespace":"ns","role":"root"},` +
	`{"apiVersion":"v1","kind":"Secret","resource":"secrets","namespace":"ns","role":"root"}]}`

// testRecording has an initial list, watch events of two types, a relist
// (a changed object, a vanished one) and a deletion after it.
func testRecording() string {
	return strings.Join([]string{
		header,
		rec("Replaced", true, "configmaps", "a", "1", 0, ""),
		rec("Replaced", true, "configmaps", "b", "2", 1, ""),
		rec("Replaced", true, "secrets", "s", "3", 2, ""),
		rec("Updated", false, "configmaps", "a", "4", 100, `,"manager":"kubectl-edit","operation":"Update"`),
		rec("Added", false, "secrets", "t", "5", 200, ""),
		rec("Added", false, "configmaps", "c", "6", 300, ""),
		rec("Replaced", false, "configmaps", "a", "8", 5000, ""),
		rec("Deleted", false, "configmaps", "b", "2", 5000, `,"finalStateUnknown":true`),
		rec("Updated", false, "configmaps", "c", "9", 6000, ""),
		rec("Deleted", false, "secrets", "s", "10", 7000, ""),
	}, "\n") + "\n"
}

// captured is what a sink was handed, one line per item:
// "TYPE initial? tombstone? KIND/NAME@rv at +ms".
type captured struct {
	p     *Player
	lines []string
}

// capture has c capture what p plays (a sink is made before its Player).
func (c *captured) capture(p *Player) *captured {
	c.p = p
	return c
}

func (c *captured) Handle(b informer.Batch) (bool, error) {
	for _, it := range b.Items {
		name := it.Key
		rv := ""
		if it.Object != nil {
			name, rv = it.Object.Name, it.Object.ResourceVersion
		}
		line := fmt.Sprintf("%s %s/%s@%s +%dms", it.Type, b.Informer.Target().Kind.Kind, name, rv, c.p.Now().Sub(t0).Milliseconds())
		if it.Initial {
			line += " initial"
		}
		if it.Tombstone {
			line += " tombstone"
		}
		if it.Unchanged {
			line += " unchanged"
		}
		c.lines = append(c.lines, line)
	}
	return false, nil
}

func (c *captured) Flush() error { return nil }

// play replays data with targets picked by pick (all recorded ones for
// nil) and returns what the sink was handed, and Run's error.
func play(t *testing.T, data string, pick func([]informer.Target) []informer.Target, selector labels.Selector) ([]string, *bytes.Buffer, error) {
	t.Helper()
	return playMany(t, []string{data}, pick, selector)
}

// playMany is play of several recordings, named rec.jsonl, rec2.jsonl…
func playMany(t *testing.T, datas []string, pick func([]informer.Target) []informer.Target, selector labels.Selector) ([]string, *bytes.Buffer, error) {
	t.Helper()
	var readers []*recording.Reader
	for i, data := range datas {
		name := "rec.jsonl"
		if i > 0 {
			name = fmt.Sprintf("rec%d.jsonl", i+1)
		}
		r, err := recording.NewReader(name, strings.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		readers = append(readers, r)
	}
	var warn bytes.Buffer
	p, err := Open(&warn, readers...)
	if err != nil {
		t.Fatal(err)
	}
	ts := p.Recorded()
	if pick != nil {
		ts = pick(ts)
	}
	if err := p.Select(ts, selector); err != nil {
		t.Fatal(err)
	}
	engine := informer.New(informer.Config{NewListerWatcher: p.NewListerWatcher, Clock: p.Clock(), NewBackoff: p.NewBackoff}, &warn)
	for _, target := range ts {
		if _, err := engine.Add(target); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sink := &captured{p: p}
	go p.Play(ctx)
	err = engine.Run(ctx, p.Gate(sink), informer.RunOptions{SourceDone: p.Done(), Barrier: p.Barrier()})
	if perr := p.Err(); perr != nil {
		err = perr
	}
	return sink.lines, &warn, err
}

func TestReplayKeepsOrderTimeAndRelists(t *testing.T) {
	got, warn, err := play(t, testRecording(), nil, nil)
	if !errors.Is(err, informer.ErrSourceEnded) {
		t.Fatalf("Run ended with %v, want the end of the recording", err)
	}
	// The initial lists come type by type; then the recording's order. The
	// relist lists every ConfigMap again: c unchanged, a changed, b gone.
	wantHead := []string{
		"Replaced ConfigMap/a@1 +0ms initial",
		"Replaced ConfigMap/b@2 +1ms initial",
	}
	wantTail := []string{
		"Updated ConfigMap/a@4 +100ms",
		"Added Secret/t@5 +200ms",
		"Added ConfigMap/c@6 +300ms",
		"Replaced ConfigMap/a@8 +5000ms",
		"Replaced ConfigMap/c@6 +5000ms unchanged",
		"Deleted ConfigMap/b@2 +5000ms tombstone",
		"Updated ConfigMap/c@9 +6000ms",
		"Deleted Secret/s@10 +7000ms",
	}
	secret := "Replaced Secret/s@3 +2ms initial"
	if len(got) != len(wantHead)+1+len(wantTail) {
		t.Fatalf("handed:\n%s", strings.Join(got, "\n"))
	}
	initial := got[:3]
	var cms []string
	for _, l := range initial {
		if l != secret {
			cms = append(cms, l)
		}
	}
	if len(cms) != 2 || strings.Join(cms, "\n") != strings.Join(wantHead, "\n") {
		t.Errorf("initial lists:\n%s\nwant the ConfigMaps in order:\n%s\nand %s", strings.Join(initial, "\n"), strings.Join(wantHead, "\n"), secret)
	}
	// The relisted objects come in the list's order: the state's.
	tail := got[3:]
	if strings.Join(tail, "\n") != strings.Join(wantTail, "\n") {
		t.Errorf("after the initial lists:\n%s\nwant:\n%s", strings.Join(tail, "\n"), strings.Join(wantTail, "\n"))
	}
	if warn.Len() > 0 {
		t.Errorf("warnings: %s", warn.String())
	}
}

func TestReplayNarrowed(t *testing.T) {
	// The ConfigMaps named c only, and the Secrets labelled app=t.
	pick := func(ts []informer.Target) []informer.Target {
		cm, secrets := ts[0], ts[1]
		cm.Name = "c"
		return []informer.Target{cm, secrets}
	}
	got, _, err := play(t, testRecording(), pick, labels.SelectorFromSet(labels.Set{"app": "t"}))
	if !errors.Is(err, informer.ErrSourceEnded) {
		t.Fatal(err)
	}
	// The selector applies to both: the ConfigMap c is labelled app=c.
	want := []string{"Added Secret/t@5 +200ms"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("handed:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	got, _, err = play(t, testRecording(), pick, nil)
	if !errors.Is(err, informer.ErrSourceEnded) {
		t.Fatal(err)
	}
	want = []string{"Replaced Secret/s@3 +2ms initial", "Added ConfigMap/c@6 +300ms", "Added Secret/t@5 +200ms"}
	if len(got) < 3 {
		t.Fatalf("handed:\n%s", strings.Join(got, "\n"))
	}
	// Order: s, t (Secrets), c (the ConfigMap named c), by the recording.
	if got[0] != want[0] || got[1] != want[2] || got[2] != want[1] {
		t.Errorf("handed:\n%s", strings.Join(got, "\n"))
	}
}

func TestReplayTornAndBad(t *testing.T) {
	data := testRecording()
	torn := data[:len(data)-40]
	got, warn, err := play(t, torn, nil, nil)
	if !errors.Is(err, informer.ErrSourceEnded) || !strings.Contains(warn.String(), "rec.jsonl:11: the last line is cut short") {
		t.Errorf("a torn recording: %v, warnings %q", err, warn.String())
	}
	if last := got[len(got)-1]; last != "Updated ConfigMap/c@9 +6000ms" {
		t.Errorf("a torn recording ends its replay with %q, want the last whole record", last)
	}

	bad := strings.Replace(data, rec("Added", false, "secrets", "t", "5", 200, ""), `{"type":"Modified","name":"x"}`, 1)
	_, _, err = play(t, bad, nil, nil)
	if err == nil || !strings.Contains(err.Error(), `rec.jsonl:6: a record of type "Modified"`) {
		t.Errorf("a record of an unknown type: %v", err)
	}

	for _, tc := range []struct{ data, want string }{
		{"not json\n", "rec.jsonl:1: not a record of kubectl deltas"},
		{rec("Added", false, "configmaps", "a", "1", 0, "") + "\n", `rec.jsonl:1: not a recording of kubectl deltas: it does not begin with a "Recording" line`},
		{strings.Replace(header, `"v1"`, `"v2"`, 1) + "\n", `rec.jsonl:1: a recording of schema "v2"`},
	} {
		r, err := recording.NewReader("rec.jsonl", strings.NewReader(tc.data))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Open(&bytes.Buffer{}, r); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Open(%q): %v, want %q", tc.data, err, tc.want)
		}
	}
}

func TestParseTime(t *testing.T) {
	span := recording.Span{Start: t0, End: t0.Add(10 * time.Minute)}
	for _, tc := range []struct {
		in     string
		hasEnd bool
		want   time.Time
		err    string
	}{
		{"2026-11-26T10:45:00Z", true, t0.Add(5 * time.Minute), ""},
		{"2026-11-26T11:45:00+01:00", true, t0.Add(5 * time.Minute), ""},
		{"10:45", true, t0.Add(5 * time.Minute), ""},
		{"10:45:30.5", true, t0.Add(5*time.Minute + 30500*time.Millisecond), ""},
		{"+90s", true, t0.Add(90 * time.Second), ""},
		{"-1m", true, t0.Add(9 * time.Minute), ""},
		{"-1m", false, time.Time{}, "standard input"},
		{"+soon", true, time.Time{}, `invalid --at "+soon"`},
		{"yesterday", true, time.Time{}, `invalid --at "yesterday"`},
	} {
		got, err := ParseTime("--at", tc.in, span, tc.hasEnd)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseTime(%q): %v, want an error with %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || !got.Equal(tc.want) {
			t.Errorf("ParseTime(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	f := Window{At: "09:00"}
	if _, _, err := f.Times(span, true); err == nil || !strings.Contains(err.Error(), "before the recording's start: it spans 2026-11-26T10:40:00Z to 2026-11-26T10:50:00Z") {
		t.Errorf("--at before the start: %v", err)
	}
	f = Window{From: "+5m", To: "+1m"}
	if _, _, err := f.Times(span, true); err == nil || !strings.Contains(err.Error(), "--to 2026-11-26T10:41:00Z is before --from") {
		t.Errorf("--to before --from: %v", err)
	}
}

// playWindow replays the test recording from from to to.
func playWindow(t *testing.T, from, to time.Time) []string {
	t.Helper()
	return playWindowInto(t, from, to, &captured{})
}

// playWindowInto is playWindow with sink, given the Player, capturing.
func playWindowInto(t *testing.T, from, to time.Time, sink interface {
	informer.Sink
	capture(p *Player) *captured
}) []string {
	t.Helper()
	r, err := recording.NewReader("rec.jsonl", strings.NewReader(testRecording()))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Open(&bytes.Buffer{}, r)
	if err != nil {
		t.Fatal(err)
	}
	p.SetWindow(from, to)
	cms := p.Recorded()[:1]
	if err := p.Select(cms, nil); err != nil {
		t.Fatal(err)
	}
	engine := informer.New(informer.Config{NewListerWatcher: p.NewListerWatcher, Clock: p.Clock(), NewBackoff: p.NewBackoff}, &bytes.Buffer{})
	if _, err := engine.Add(cms[0]); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := sink.capture(p)
	go p.Play(ctx)
	if err := engine.Run(ctx, p.Gate(sink), informer.RunOptions{SourceDone: p.Done(), Barrier: p.Barrier()}); !errors.Is(err, informer.ErrSourceEnded) {
		t.Fatal(err)
	}
	return c.lines
}

// owedSink checks, for each batch it is handed, that the Player still
// counts the batch's deltas as owed: Play must not move the clock on (to
// a later record, of this collection or another) while the sink stamps
// them with it.
type owedSink struct {
	captured
	t *testing.T
}

func (s *owedSink) Handle(b informer.Batch) (bool, error) {
	p := s.p
	p.mu.Lock()
	f := p.byID[b.Informer.Target().ID()]
	owed := 0
	if f != nil {
		owed = len(f.expected)
	}
	p.mu.Unlock()
	if owed < len(b.Items) {
		s.t.Errorf("a batch of %d deltas handed on with %d owed: the clock may move on before they are stamped", len(b.Items), owed)
	}
	return s.captured.Handle(b)
}

// TestReplayDeltasLandAfterTheSink: the gate lands a batch's deltas only
// once the sink has handled it.
func TestReplayDeltasLandAfterTheSink(t *testing.T) {
	lines := playWindowInto(t, t0.Add(150*time.Millisecond), t0.Add(5500*time.Millisecond), &owedSink{t: t})
	if len(lines) != 6 {
		t.Errorf("%d deltas, want 6:\n%s", len(lines), strings.Join(lines, "\n"))
	}
}

func TestReplayWindow(t *testing.T) {
	// At +350ms: a updated, b, c added; nothing after.
	at := t0.Add(350 * time.Millisecond)
	got := playWindow(t, at, at)
	want := []string{"Replaced ConfigMap/a@4 +350ms initial", "Replaced ConfigMap/b@2 +350ms initial", "Replaced ConfigMap/c@6 +350ms initial"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("at +350ms:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// From +150ms to +5500ms: the state then, c added, the relist.
	got = playWindow(t, t0.Add(150*time.Millisecond), t0.Add(5500*time.Millisecond))
	want = []string{
		"Replaced ConfigMap/a@4 +150ms initial", "Replaced ConfigMap/b@2 +150ms initial",
		"Added ConfigMap/c@6 +300ms",
		"Replaced ConfigMap/a@8 +5000ms", "Replaced ConfigMap/c@6 +5000ms unchanged", "Deleted ConfigMap/b@2 +5000ms tombstone",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("from +150ms to +5500ms:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestReplayTwoRecordings: the ConfigMaps and the Secrets of the test
// recording, recorded apart, replay as one stream in the order of their
// times: as the recording of both does.
func TestReplayTwoRecordings(t *testing.T) {
	lines := strings.Split(strings.TrimSpace(testRecording()), "\n")
	cms := []string{strings.Replace(header, `,{"apiVersion":"v1","kind":"Secret","resource":"secrets","namespace":"ns","role":"root"}`, "", 1)}
	secrets := []string{strings.Replace(header, `{"apiVersion":"v1","kind":"ConfigMap","resource":"configmaps","namespace":"ns","role":"root"},`, "", 1)}
	for _, l := range lines[1:] {
		if strings.Contains(l, `"resource":"secrets"`) {
			secrets = append(secrets, l)
		} else {
			cms = append(cms, l)
		}
	}
	one, _, err := play(t, testRecording(), nil, nil)
	if !errors.Is(err, informer.ErrSourceEnded) {
		t.Fatal(err)
	}
	two, _, err := playMany(t, []string{strings.Join(secrets, "\n") + "\n", strings.Join(cms, "\n") + "\n"}, nil, nil)
	if !errors.Is(err, informer.ErrSourceEnded) {
		t.Fatal(err)
	}
	// The initial lists may come in either order; after them, the same.
	if len(one) != len(two) || strings.Join(one[3:], "\n") != strings.Join(two[3:], "\n") {
		t.Errorf("two recordings:\n%s\nwant what the recording of both gives:\n%s", strings.Join(two, "\n"), strings.Join(one, "\n"))
	}
}

// TestReplaySelectorLeaves: with -l, a change that takes an object out of
// the selection is its deletion, one that brings it in its addition, as a
// server's watch says them.
func TestReplaySelectorLeaves(t *testing.T) {
	relabel := func(l, from, to string) string { return strings.Replace(l, `"app":"`+from+`"`, `"app":"`+to+`"`, 1) }
	data := strings.Join([]string{
		header,
		rec("Replaced", true, "configmaps", "a", "1", 0, ""),
		relabel(rec("Updated", false, "configmaps", "a", "2", 100, ""), "a", "other"),
		relabel(rec("Updated", false, "configmaps", "b", "3", 200, ""), "b", "a"),
		rec("Deleted", false, "configmaps", "c", "4", 300, ""),
	}, "\n") + "\n"
	pick := func(ts []informer.Target) []informer.Target { return ts[:1] }
	got, _, err := play(t, data, pick, labels.SelectorFromSet(labels.Set{"app": "a"}))
	if !errors.Is(err, informer.ErrSourceEnded) {
		t.Fatal(err)
	}
	want := []string{"Replaced ConfigMap/a@1 +0ms initial", "Deleted ConfigMap/a@2 +100ms", "Added ConfigMap/b@3 +200ms"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("handed:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestTheReplaysClockTicks: between two records the recording's time
// stops at each timer due — the engine's checks run at the times they
// ran live, before the next record is handed out — and runs on past the
// last record to the recording's last Heartbeat; a --timeout inside a
// silence ends the run at its time, with the record after it never
// handed out.
func TestTheReplaysClockTicks(t *testing.T) {
	data := strings.Join([]string{
		header,
		rec("Replaced", true, "configmaps", "a", "1", 0, ""),
		`{"type":"Heartbeat","time":"2026-11-26T10:40:00.5Z"}`,
		rec("Updated", false, "configmaps", "a", "2", 3500, ""),
		`{"type":"Heartbeat","time":"2026-11-26T10:40:06Z"}`,
	}, "\n") + "\n"
	run := func(timeout time.Duration) (checks []string, handed []string, err error) {
		t.Helper()
		r, rerr := recording.NewReader("rec.jsonl", strings.NewReader(data))
		if rerr != nil {
			t.Fatal(rerr)
		}
		p, oerr := Open(&bytes.Buffer{}, r)
		if oerr != nil {
			t.Fatal(oerr)
		}
		if err := p.Select(p.Recorded(), nil); err != nil {
			t.Fatal(err)
		}
		engine := informer.New(informer.Config{NewListerWatcher: p.NewListerWatcher, Clock: p.Clock(), NewBackoff: p.NewBackoff}, &bytes.Buffer{})
		for _, target := range p.Recorded() {
			if _, err := engine.Add(target); err != nil {
				t.Fatal(err)
			}
		}
		sink := &captured{p: p}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		playCtx, stopPlaying := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); p.Play(playCtx) }()
		err = engine.Run(ctx, p.Gate(sink), informer.RunOptions{
			SourceDone: p.Done(), Barrier: p.Barrier(), Timeout: timeout, CheckEvery: time.Second,
			Check: func() (bool, error) {
				// Once per time and state: the initial list is checked
				// once or twice (its last batch, and the FIFO's synced).
				c := fmt.Sprintf("+%dms/%d", p.Now().Sub(t0).Milliseconds(), len(sink.lines))
				if len(checks) == 0 || checks[len(checks)-1] != c {
					checks = append(checks, c)
				}
				return false, nil
			},
		})
		stopPlaying()
		<-done
		return checks, sink.lines, err
	}

	checks, handed, err := run(0)
	if !errors.Is(err, informer.ErrSourceEnded) {
		t.Fatalf("Run: %v", err)
	}
	// A check after the initial list and each record, and one each second
	// of the recording's time, with what was handed out by then.
	want := "+0ms/1 +1000ms/1 +2000ms/1 +3000ms/1 +3500ms/2 +4000ms/2 +5000ms/2 +6000ms/2"
	if got := strings.Join(checks, " "); got != want {
		t.Errorf("checks (time/records handed out): %s\nwant %s", got, want)
	}
	if len(handed) != 2 {
		t.Errorf("handed out %q", handed)
	}

	checks, handed, err = run(2500 * time.Millisecond)
	if !errors.Is(err, informer.ErrTimedOut) || len(handed) != 1 {
		t.Fatalf("a --timeout of 2.5s: Run %v, handed out %q (checks %q); want the initial list only, timed out", err, handed, checks)
	}
	if len(checks) == 0 || checks[len(checks)-1] != "+2000ms/1" {
		t.Fatalf("checks before the timeout: %q, want the last at +2000ms", checks)
	}
	if got := checks[len(checks)-1]; got != "+2000ms/1" {
		t.Errorf("the last check before the timeout: %s", got)
	}
}
