package replay

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-deltas/kubectl-deltas/internal/history/recording"
	"github.com/kubectl-deltas/kubectl-deltas/internal/informer"
)

// gapRecording is a recording that went on after a gap, as a recorder
// writes it: its run's Heartbeat of the (empty) initial lists comes
// before the changes its watches caught up, and a Heartbeat may come
// between those; a caught-up record is dated when its change was made,
// inside the gap (or at its end when the object does not say).
func gapRecording() string {
	return strings.Join(append(goneOnAt10s(),
		rec("Added", false, "configmaps", "b", "5", 3000, `,"caughtUp":"creationTimestamp"`),
		`{"type":"Heartbeat","time":"2026-11-26T10:40:10.2Z"}`,
		rec("Added", false, "configmaps", "c", "6", 7000, `,"caughtUp":"creationTimestamp"`),
		rec("Deleted", false, "configmaps", "a", "7", 10000, `,"caughtUp":"gap"`),
		rec("Added", false, "configmaps", "d", "8", 10300, ""),
		`{"type":"Heartbeat","time":"2026-11-26T10:40:11Z"}`,
	), "\n") + "\n"
}

// goneOnAt10s is the beginning of a recording that went on after a gap:
// a's list, the recorder down from +1s to +10s, the run that went on
// then, up to the Heartbeat of its (empty) initial lists.
func goneOnAt10s() []string {
	return []string{
		header,
		rec("Replaced", true, "configmaps", "a", "1", 0, ""),
		`{"type":"Heartbeat","time":"2026-11-26T10:40:01Z"}`,
		// Down from +1s to +10s.
		`{"type":"Recording","time":"2026-11-26T10:40:10Z","schema":"v1","version":"v0.0.0","targets":[` +
			`{"apiVersion":"v1","kind":"ConfigMap","resource":"configmaps","namespace":"ns","role":"root"},` +
			`{"apiVersion":"v1","kind":"Secret","resource":"secrets","namespace":"ns","role":"root"}]}`,
		`{"type":"Gap","time":"2026-11-26T10:40:10Z","from":"2026-11-26T10:40:01Z","to":"2026-11-26T10:40:10Z"}`,
		`{"type":"Heartbeat","time":"2026-11-26T10:40:10.05Z"}`,
	}
}

// playGap replays gapRecording's ConfigMaps from from to to (zero: as
// recorded) and returns what the sink was handed and the warnings. file:
// the recording is a file, which a look ahead opens again; otherwise it
// is read once, as standard input is.
func playGap(t *testing.T, from, to time.Time, file bool) ([]string, string) {
	t.Helper()
	return playRecording(t, gapRecording(), from, to, file)
}

// playRecording is playGap of the recording data.
func playRecording(t *testing.T, data string, from, to time.Time, file bool) ([]string, string) {
	t.Helper()
	r, err := recording.NewReader("rec.jsonl", strings.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	var warn bytes.Buffer
	p, err := Open(&warn, r)
	if err != nil {
		t.Fatal(err)
	}
	reopened := 0
	if file {
		p.parts[0].reopen = func() (*recording.Reader, error) {
			reopened++
			return recording.NewReader("rec.jsonl", strings.NewReader(data))
		}
	}
	p.SetWindow(from, to)
	cms := p.Recorded()[:1]
	if err := p.Select(cms, nil); err != nil {
		t.Fatal(err)
	}
	engine := informer.New(informer.Config{NewListerWatcher: p.NewListerWatcher, Clock: p.Clock(), NewBackoff: p.NewBackoff}, &warn)
	if _, err := engine.Add(cms[0]); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sink := &captured{p: p}
	go p.Play(ctx)
	if err := engine.Run(ctx, p.Gate(sink), informer.RunOptions{SourceDone: p.Done(), Barrier: p.Barrier()}); !errors.Is(err, informer.ErrSourceEnded) {
		t.Fatal(err)
	}
	if file && from.After(t0.Add(time.Second)) && !from.Equal(to) && reopened == 0 {
		t.Errorf("from +%s to %s: the recording was not opened again to look ahead", from.Sub(t0), to)
	}
	return sink.lines, warn.String()
}

// stateAt is what a replay of gapRecording with --at=at hands out: the
// names of the ConfigMaps, and its warnings.
func stateAt(t *testing.T, at time.Time) ([]string, string) {
	t.Helper()
	lines, warn := playGap(t, at, at, false)
	var names []string
	for _, l := range lines {
		_, rest, _ := strings.Cut(l, "ConfigMap/")
		name, _, _ := strings.Cut(rest, "@")
		names = append(names, name)
	}
	return names, warn
}

// TestReplayAtSeesWhatWasCaughtUp: the state at a time holds every change
// dated before it, also one caught up after a Heartbeat (or a record of
// this run) that is later than the time.
func TestReplayAtSeesWhatWasCaughtUp(t *testing.T) {
	for _, c := range []struct {
		at    time.Duration
		want  string
		inGap bool
	}{
		{500 * time.Millisecond, "a", false},
		{2 * time.Second, "a", true},
		{5 * time.Second, "a b", true},
		{8 * time.Second, "a b c", true},
		{10*time.Second + 20*time.Millisecond, "b c", false}, // after the gap, before the first Heartbeat of its run
		{10*time.Second + 100*time.Millisecond, "b c", false},
		{10*time.Second + 500*time.Millisecond, "b c d", false},
		{11 * time.Second, "b c d", false},
	} {
		names, warn := stateAt(t, t0.Add(c.at))
		if got := strings.Join(names, " "); got != c.want {
			t.Errorf("--at=+%s: %q, want %q (warnings %q)", c.at, got, c.want, warn)
		}
		if got := strings.Contains(warn, "inside a gap"); got != c.inGap {
			t.Errorf("--at=+%s: warned of the gap: %v, want %v (%q)", c.at, got, c.inGap, warn)
		}
	}
}

// TestReplayFromAndToSeeWhatWasCaughtUp: a replay that starts (--from)
// or stops (--to) where a caught-up record lies past a later line plays
// it once, before the start or before the stop; whether the recording
// opens again (a file) or not (standard input).
func TestReplayFromAndToSeeWhatWasCaughtUp(t *testing.T) {
	for _, file := range []bool{true, false} {
		// From inside the gap: b and c (dated before) are in the state
		// it starts from; a's deletion (dated at the gap's end) and d
		// come after.
		got, _ := playGap(t, t0.Add(8*time.Second), time.Time{}, file)
		want := []string{
			"Replaced ConfigMap/a@1 +8000ms initial", "Replaced ConfigMap/b@5 +8000ms initial", "Replaced ConfigMap/c@6 +8000ms initial",
			"Deleted ConfigMap/a@7 +10000ms", "Added ConfigMap/d@8 +10300ms",
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("file %v, from +8s:\n%s\nwant:\n%s", file, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		// From just after the gap, before its run's first Heartbeat: all
		// three caught-up changes are before it.
		got, _ = playGap(t, t0.Add(10*time.Second+20*time.Millisecond), time.Time{}, file)
		want = []string{
			"Replaced ConfigMap/b@5 +10020ms initial", "Replaced ConfigMap/c@6 +10020ms initial",
			"Added ConfigMap/d@8 +10300ms",
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("file %v, from +10.02s:\n%s\nwant:\n%s", file, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
	// To just after the gap: the replay plays every change caught up (at
	// its time), the last two after the Heartbeat it stopped at; d comes
	// after.
	got, _ := playGap(t, time.Time{}, t0.Add(10*time.Second+100*time.Millisecond), false)
	want := []string{
		"Replaced ConfigMap/a@1 +0ms initial",
		"Added ConfigMap/b@5 +3000ms", "Added ConfigMap/c@6 +7000ms", "Deleted ConfigMap/a@7 +10000ms",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("to +10.1s:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestGapMessagesSayMilliseconds: a recorder started again at once leaves
// a gap of under a second, which whole seconds would misstate.
func TestGapMessagesSayMilliseconds(t *testing.T) {
	g := recording.Gap{From: t0.Add(496 * time.Millisecond), To: t0.Add(1578 * time.Millisecond)}
	if got := gapTime(g.From) + " to " + gapTime(g.To) + " (" + gapLength(g).String() + ")"; got != "2026-11-26T10:40:00.496Z to 2026-11-26T10:40:01.578Z (1.082s)" {
		t.Errorf("a gap of 1.082s: %s", got)
	}
	g.To = t0.Add(90*time.Minute + 1500*time.Millisecond)
	if got := gapTime(g.To) + " (" + gapLength(g).String() + ")"; got != "2026-11-26T12:10:01.5Z (1h30m1s)" {
		t.Errorf("a gap of 1h30m1s: %s", got)
	}
}

// TestReplayPlaysACaughtUpRunInTime: a run's caught-up records, written
// as their watches brought them (another object's first, one after a
// live record), each dated when its object says, are played in the order
// of their times as the run's Gap is played; an object's own stay in
// order. From standard input, read once, those before the run's first
// live record are.
func TestReplayPlaysACaughtUpRunInTime(t *testing.T) {
	data := strings.Join(append(goneOnAt10s(),
		rec("Added", false, "configmaps", "c", "6", 7000, `,"caughtUp":"creationTimestamp"`),
		rec("Added", false, "configmaps", "b", "5", 3000, `,"caughtUp":"creationTimestamp"`),
		rec("Updated", false, "configmaps", "b", "7", 4000, `,"caughtUp":"managedFields"`),
		rec("Added", false, "configmaps", "d", "9", 10300, ""),
		rec("Deleted", false, "configmaps", "a", "8", 9000, `,"caughtUp":"deletionTimestamp"`),
		`{"type":"Heartbeat","time":"2026-11-26T10:40:11Z"}`,
	), "\n") + "\n"
	for _, c := range []struct {
		file bool
		want []string
	}{
		{file: true, want: []string{
			"Replaced ConfigMap/a@1 +0ms initial",
			"Added ConfigMap/b@5 +3000ms", "Updated ConfigMap/b@7 +4000ms", "Added ConfigMap/c@6 +7000ms",
			"Deleted ConfigMap/a@8 +9000ms", "Added ConfigMap/d@9 +10300ms",
		}},
		{file: false, want: []string{
			"Replaced ConfigMap/a@1 +0ms initial",
			"Added ConfigMap/b@5 +3000ms", "Updated ConfigMap/b@7 +4000ms", "Added ConfigMap/c@6 +7000ms",
			// Past the run's first live record: where it was written.
			"Added ConfigMap/d@9 +10300ms", "Deleted ConfigMap/a@8 +9000ms",
		}},
	} {
		got, warn := playRecording(t, data, time.Time{}, time.Time{}, c.file)
		if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
			t.Errorf("file %v:\n%s\nwant:\n%s\n(warnings %q)", c.file, strings.Join(got, "\n"), strings.Join(c.want, "\n"), warn)
		}
	}
	// The state in the gap, and after it, has what is dated before.
	for _, c := range []struct {
		at   time.Duration
		want string
	}{{3500 * time.Millisecond, "a b"}, {8 * time.Second, "a b c"}, {9500 * time.Millisecond, "b c"}, {11 * time.Second, "b c d"}} {
		got, _ := playRecording(t, data, t0.Add(c.at), t0.Add(c.at), true)
		var names []string
		for _, l := range got {
			_, rest, _ := strings.Cut(l, "ConfigMap/")
			name, _, _ := strings.Cut(rest, "@")
			names = append(names, name)
		}
		if strings.Join(names, " ") != c.want {
			t.Errorf("--at=+%s: %q, want %q", c.at, names, c.want)
		}
	}
}

// TestReadEndKeepsWhatIsPastARestatedPosition: a run that went on from a
// position states in its first Heartbeat where its own watch has got to
// — the same position, or one behind what the run before recorded —
// before its watch brought the rest; killed then, the recording ends
// there, and the records past that position, written by the run before,
// must still be dropped by a recorder going on from it (Resumed.Seen),
// or it records them a second time, back in resourceVersion.
func TestReadEndKeepsWhatIsPastARestatedPosition(t *testing.T) {
	for _, restated := range []string{"1", "2"} {
		t.Run("restated at "+restated, func(t *testing.T) { readEndAfterRestating(t, restated) })
	}
}

// readEndAfterRestating is TestReadEndKeepsWhatIsPastARestatedPosition
// with the second run's Heartbeat at rv restated.
func readEndAfterRestating(t *testing.T, restated string) {
	position := `{"type":"Heartbeat","time":"%s","positions":[{"apiVersion":"v1","kind":"ConfigMap","resource":"configmaps","namespace":"ns","role":"root","resourceVersion":"%s"}]}`
	data := strings.Join([]string{
		header,
		rec("Replaced", true, "configmaps", "a", "1", 0, ""),
		fmt.Sprintf(position, "2026-11-26T10:40:00.5Z", "1"),
		rec("Updated", false, "configmaps", "a", "2", 1000, ""),
		rec("Added", false, "configmaps", "b", "3", 2000, ""),
		// Killed; gone on from rv 1, and killed again at once.
		`{"type":"Recording","time":"2026-11-26T10:40:10Z","schema":"v1","version":"v0.0.0","targets":[` +
			`{"apiVersion":"v1","kind":"ConfigMap","resource":"configmaps","namespace":"ns","role":"root"},` +
			`{"apiVersion":"v1","kind":"Secret","resource":"secrets","namespace":"ns","role":"root"}]}`,
		`{"type":"Gap","time":"2026-11-26T10:40:10Z","from":"2026-11-26T10:40:02Z","to":"2026-11-26T10:40:10Z"}`,
		fmt.Sprintf(position, "2026-11-26T10:40:10.1Z", restated),
	}, "\n") + "\n"
	path := filepath.Join(t.TempDir(), "r.jsonl")
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	end, err := ReadEnd(path, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var cms informer.Target
	for _, r := range end.Recorded {
		if r.Resource.Resource == "configmaps" {
			cms = r
		}
	}
	res, ok := end.Resumes[cms.ID()]
	if !ok || res.ResourceVersion != restated || res.Seen["ns/a"] != "2" || res.Seen["ns/b"] != "3" {
		t.Errorf("resumes %+v, %v; want from rv %s, with a@2 and b@3 seen", res, ok, restated)
	}
}

// TestReplayOfALiveRecordingSaysSo: a recording a recorder is writing
// (it holds its lock) is replayed as far as it is whole, with one line
// saying it is live, and its cut end — where the recorder is — is no
// torn recording to warn of; the same file, its recorder gone, is.
func TestReplayOfALiveRecordingSaysSo(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.jsonl")
	data := header + "\n" + rec("Replaced", true, "configmaps", "a", "1", 0, "") + "\n" + `{"type":"Heartb`
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	lock, err := recording.LockRecording(path)
	if err != nil {
		t.Fatal(err)
	}
	var warn bytes.Buffer
	p, err := OpenFiles([]string{path}, Window{}, nil, &warn)
	if err != nil {
		t.Fatal(err)
	}
	_ = p.Close()
	if got := warn.String(); !strings.Contains(got, "info: "+path+" is being recorded by another kubectl deltas") || strings.Contains(got, "warning:") {
		t.Errorf("a live recording: %q, want it said live and no torn end", got)
	}
	if err := lock.Unlock(); err != nil {
		t.Fatal(err)
	}
	warn.Reset()
	if p, err = OpenFiles([]string{path}, Window{}, nil, &warn); err != nil {
		t.Fatal(err)
	}
	_ = p.Close()
	if got := warn.String(); strings.Contains(got, "is being recorded") || !strings.Contains(got, "warning: "+path+":3: the last line is cut short") {
		t.Errorf("the recording, its recorder gone: %q, want its torn end warned of", got)
	}
}
