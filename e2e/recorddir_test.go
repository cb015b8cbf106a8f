package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-deltas/kubectl-deltas/internal/history/recording"
)

// churnNamespace changes ConfigMaps of ns until stop is closed — one
// write every 40 ms: a create, then updates, then a delete of an older
// one — and reports when it has stopped. Errors other than a conflict
// or a miss go to errs.
func churnNamespace(ns string, stop <-chan struct{}) (done <-chan struct{}, errs *syncBuffer) {
	errs = &syncBuffer{}
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		ctx := context.Background()
		cms := testEnv.client.CoreV1().ConfigMaps(ns)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(40 * time.Millisecond):
			}
			name := fmt.Sprintf("c%d", i/4)
			var err error
			switch i % 4 {
			case 0:
				_, err = cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"i": fmt.Sprint(i)}}, metav1.CreateOptions{})
			case 1, 2:
				_, err = cms.Update(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"i": fmt.Sprint(i)}}, metav1.UpdateOptions{})
			case 3:
				if i >= 40 {
					err = cms.Delete(ctx, fmt.Sprintf("c%d", i/4-10), metav1.DeleteOptions{})
				}
			}
			if err != nil && !strings.Contains(err.Error(), "not found") && !strings.Contains(err.Error(), "conflict") {
				fmt.Fprintf(errs, "%v\n", err)
			}
		}
	}()
	return finished, errs
}

// changeKeys are the records of -o json lines as "type name
// resourceVersion", once each, sorted: what a stream, or several runs of
// it, said changed.
func changeKeys(t *testing.T, lines []string) []string {
	t.Helper()
	seen := map[string]bool{}
	var out []string
	for _, l := range lines {
		if !strings.HasPrefix(l, "{") || strings.HasPrefix(l, `{"type":"Verdict"`) {
			continue
		}
		r := decodeRecord(t, l)
		k := r.Type + " " + r.Name + " " + r.ResourceVersion
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// dirStateAt is `--replay=rec --at=at`'s objects as "name resourceVersion",
// sorted, and its stderr.
func dirStateAt(t *testing.T, rec, at string) ([]string, string) {
	t.Helper()
	r := run(t, time.Minute, "--replay="+rec, "--at="+at, "-o", "json")
	if r.code != 0 {
		t.Fatalf("--replay=%s --at=%s: exit %d, stderr %q", rec, at, r.code, r.stderr)
	}
	var out []string
	for _, l := range lines(r.stdout) {
		rec := decodeRecord(t, l)
		out = append(out, rec.Name+" "+rec.ResourceVersion)
	}
	slices.Sort(out)
	return out, r.stderr
}

func lines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// TestRecordDirectory: a recorder into a directory under churn writes
// several segments; killed with SIGKILL and started again it goes on in
// them; the directory replays as the streams printed it (every change
// once); a segment from the middle replays alone from its checkpoint,
// as the state there; --at anywhere — in a segment, at its edges, inside
// the gap — shows what the segments read as one file show.
func TestRecordDirectory(t *testing.T) {
	ns := newNamespace(t)
	dir := filepath.Join(t.TempDir(), "rec") + "/"
	args := []string{"cm", "-n", ns, "-o", "json", "--record=" + dir, "--record-segment=2s"}
	stop := make(chan struct{})
	churned, churnErrs := churnNamespace(ns, stop)
	var once sync.Once
	stopChurn := func() { once.Do(func() { close(stop); <-churned }) }
	defer stopChurn()

	first := start(t, args...)
	segmentsAtLeast(t, dir, 3, time.Minute)
	if err := first.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-first.done
	drain(first)
	killedInRotation(t, dir)
	time.Sleep(2 * time.Second) // changes while nothing records: a gap
	second := start(t, args...)
	time.Sleep(8 * time.Second)
	stopChurn()
	time.Sleep(2 * time.Second) // the last changes printed
	if code := second.stop(); code != 0 && code != 130 {
		t.Fatalf("the second recorder exited %d: %s", code, second.stderr.String())
	}
	drain(second)
	if s := churnErrs.String(); s != "" {
		t.Fatalf("the churn failed: %s", s)
	}
	if strings.Contains(second.stderr.String(), "error") || !strings.Contains(second.stderr.String(), "index.jsonl ends torn") {
		t.Errorf("the second recorder said: %s", second.stderr.String())
	}
	if tmp, _ := filepath.Glob(filepath.Join(dir, ".*.tmp")); len(tmp) > 0 {
		t.Errorf("the second recorder left what the first left beginning a segment: %v", tmp)
	}
	if ix, err := recording.LoadIndex(dir, os.Stderr, true); err != nil || ix.Rebuilt {
		t.Errorf("the index after the second recorder: %v, rebuilt %v", err, ix != nil && ix.Rebuilt)
	}

	segs, err := recording.ListSegments(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(segs) < 3 {
		t.Fatalf("%d segments, want at least 3", len(segs))
	}
	// The directory replays as the streams printed it: every change once.
	replayed := run(t, time.Minute, "--replay="+dir, "-o", "json")
	if replayed.code != 0 {
		t.Fatalf("--replay=%s: exit %d, stderr %q", dir, replayed.code, replayed.stderr)
	}
	printed := changeKeys(t, append(slices.Clone(first.seen), second.seen...))
	got := changeKeys(t, lines(replayed.stdout))
	// The first recorder, killed, may lose what it printed in its last
	// second; the second catches it up by watching from the recording's
	// position. When the server no longer has that position (other
	// tests' ConfigMaps churn through the watch cache), it relists and
	// says so: the steps the first printed after the position are lost,
	// and said to be — nothing the second printed may be.
	relisted := strings.Contains(second.stderr.String(), "where the recording stopped (compacted): relisting")
	secondKeys := changeKeys(t, second.seen)
	lost := slices.DeleteFunc(minusAll(printed, got), func(k string) bool {
		_, bySecond := slices.BinarySearch(secondKeys, k)
		return relisted && !bySecond
	})
	if more := minusAll(got, printed); len(lost) > 0 || len(more) > 0 {
		t.Errorf("the directory replayed %d changes, the streams printed %d: missing %v, more %v (relisted: %v)\nthe second recorder said: %s", len(got), len(printed), lost[:min(len(lost), 5)], more[:min(len(more), 5)], relisted, second.stderr.String())
	}
	if !strings.Contains(replayed.stderr, "the recording has a gap from") {
		t.Errorf("the replay does not say the gap: %q", replayed.stderr)
	}

	// A middle segment alone: its checkpoint is its initial list, the
	// state of the directory where it begins.
	ix, err := recording.LoadIndex(dir, os.Stderr, false)
	if err != nil {
		t.Fatal(err)
	}
	middle := ix.Infos[1]
	alone := run(t, time.Minute, "--replay="+filepath.Join(dir, middle.Name), "-o", "json")
	if alone.code != 0 {
		t.Fatalf("--replay of the segment %s alone: exit %d, stderr %q", middle.Name, alone.code, alone.stderr)
	}
	var initial []string
	for _, l := range lines(alone.stdout) {
		if r := decodeRecord(t, l); r.Initial {
			initial = append(initial, r.Name+" "+r.ResourceVersion)
		}
	}
	slices.Sort(initial)
	atStart, _ := dirStateAt(t, dir, middle.Start.Format(time.RFC3339Nano))
	if len(initial) == 0 || !slices.Equal(initial, atStart) {
		t.Errorf("the segment %s alone lists %v, want the directory's state at its start %v", middle.Name, initial, atStart)
	}

	// The summary, from the index alone: the segments, the records the
	// segments hold, the span, the gap.
	summary := run(t, time.Minute, "recording", dir, "-o", "json")
	var s recording.Contents
	if summary.code != 0 || json.Unmarshal([]byte(summary.stdout), &s) != nil {
		t.Fatalf("kubectl deltas recording %s -o json: exit %d, stdout %q, stderr %q", dir, summary.code, summary.stdout, summary.stderr)
	}
	r, err := recording.OpenDir(ix, ix.StartAt(time.Time{}), os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	var recorded int64
	for {
		data, _, err := r.Next()
		if err != nil {
			break
		}
		if recording.IsRecordLine(data) {
			recorded++
		}
	}
	_ = r.Close()
	wholeSpan, err := ix.Span()
	if err != nil {
		t.Fatal(err)
	}
	if s.Kind != "directory" || len(s.Segments) != len(segs) || s.Records != recorded || !s.Start.Equal(wholeSpan.Start) ||
		len(s.Gaps) != 1 || s.Gaps[0].Why != "not recording" || s.Recording || s.Checkpoints < len(segs) {
		t.Errorf("the summary %+v; want %d segments, %d records, from %s, one gap, no recorder now", s, len(segs), recorded, wholeSpan.Start)
	}
	server := recording.APIServer{Context: currentContext(t), URL: testEnv.cp.Server()}
	if !slices.Equal(s.Servers, []recording.APIServer{server}) {
		t.Errorf("the summary's servers %+v, want the cluster recorded, %+v", s.Servers, server)
	}
	text := run(t, time.Minute, "recording", dir)
	for _, want := range []string{"a directory of", "Gaps:", "not recording", segs[0].Name, segs[len(segs)-1].Name, "configmaps in " + ns, "Clusters:", server.URL + fmt.Sprintf(" (context %q)", server.Context)} {
		if !strings.Contains(text.stdout, want) {
			t.Errorf("kubectl deltas recording %s does not say %q:\n%s", dir, want, text.stdout)
		}
	}

	// --at anywhere is what the segments read as one file say: at every
	// second, at each segment's edges, in the gap.
	whole := filepath.Join(t.TempDir(), "whole.jsonl")
	var all []byte
	for _, s := range segs {
		data, err := os.ReadFile(filepath.Join(dir, s.Name))
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, data...) // zstd frames one after another
	}
	if err := os.WriteFile(whole+".zst", all, 0o600); err != nil {
		t.Fatal(err)
	}
	span, err := ix.Span()
	if err != nil {
		t.Fatal(err)
	}
	var times []time.Time
	for at := span.Start; !at.After(span.End); at = at.Add(time.Second) {
		times = append(times, at)
	}
	for _, info := range ix.Infos {
		for _, cp := range info.Checkpoints {
			times = append(times, cp.Time.Add(-time.Millisecond), cp.Time, cp.Time.Add(time.Millisecond))
		}
		for _, g := range info.Gaps {
			times = append(times, g.From.Add(time.Second), g.Time.Add(-time.Millisecond))
		}
	}
	sawGap := false
	for _, at := range times {
		if at.Before(span.Start) || at.After(span.End) {
			continue
		}
		stamp := at.UTC().Format(time.RFC3339Nano)
		got, warn := dirStateAt(t, dir, stamp)
		want, _ := dirStateAt(t, whole+".zst", stamp)
		if !slices.Equal(got, want) {
			t.Errorf("--at=%s: the directory shows %d objects, the one file %d: missing %v, more %v", stamp, len(got), len(want), minus(want, got), minus(got, want))
		}
		sawGap = sawGap || strings.Contains(warn, "is inside a gap")
	}
	if !sawGap {
		t.Error("no --at fell inside the gap")
	}

	// A segment deleted by hand from the middle: the replay says it, as a
	// gap, and the next segment's checkpoint says what changed meanwhile —
	// the stream still ends in the state the directory ends in.
	if err := os.Remove(filepath.Join(dir, segs[1].Name)); err != nil {
		t.Fatal(err)
	}
	holed := run(t, time.Minute, "--replay="+dir, "-o", "json")
	if holed.code != 0 || !strings.Contains(holed.stderr, fmt.Sprintf("segment %06d is missing", segs[1].Seq)) || strings.Count(holed.stderr, "the recording has a gap from") != 2 {
		t.Errorf("--replay of %s without its segment %s: exit %d, stderr %q", dir, segs[1].Name, holed.code, holed.stderr)
	}
	end := map[string]string{}
	for _, l := range lines(holed.stdout) {
		r := decodeRecord(t, l)
		if r.Type == "Deleted" {
			delete(end, r.Name)
		} else {
			end[r.Name] = r.Name + " " + r.ResourceVersion
		}
	}
	var ended []string
	for _, v := range end {
		ended = append(ended, v)
	}
	slices.Sort(ended)
	atEnd, _ := dirStateAt(t, dir, "-0s")
	if !slices.Equal(ended, atEnd) {
		t.Errorf("the replay without a middle segment ends in %d objects, the directory in %d: missing %v, more %v", len(ended), len(atEnd), minus(atEnd, ended), minus(ended, atEnd))
	}
}

// killedInRotation makes dir, whose recorder was killed, what a kill in
// the middle of a rotation leaves at its worst: the next segment's start
// half written under its dot name, the newest segment renamed into place
// but not yet in the index, and the index's last line torn.
func killedInRotation(t *testing.T, dir string) {
	t.Helper()
	segs, err := recording.ListSegments(dir)
	if err != nil {
		t.Fatal(err)
	}
	newest := segs[len(segs)-1]
	next := "." + recording.SegmentName(newest.Seq+1, time.Now()) + ".tmp"
	if err := os.WriteFile(filepath.Join(dir, next), []byte{0x28, 0xb5, 0x2f, 0xfd, 0x04}, 0o600); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, recording.IndexName))
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, l := range lines(string(data)) {
		if !strings.Contains(l, newest.Name) {
			kept = append(kept, l)
		}
	}
	torn := strings.Join(kept, "\n") + "\n" + kept[len(kept)-1][:20]
	if err := os.WriteFile(filepath.Join(dir, recording.IndexName), []byte(torn), 0o600); err != nil {
		t.Fatal(err)
	}
}

// segmentsAtLeast waits until dir holds n segments.
func segmentsAtLeast(t *testing.T, dir string, n int, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if segs, err := recording.ListSegments(dir); err == nil && len(segs) >= n {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("%s did not reach %d segments within %s", dir, n, limit)
}

// drain reads what is left of a finished stream's output into its seen.
func drain(s *stream) {
	for l := range s.lines {
		s.seen = append(s.seen, l)
	}
}

// minus are the elements of a not in b (both sorted), at most 5.
func minus(a, b []string) []string {
	out := minusAll(a, b)
	return out[:min(len(out), 5)]
}

// minusAll is what of a (sorted) b (sorted) lacks.
func minusAll(a, b []string) []string {
	var out []string
	for _, x := range a {
		if _, found := slices.BinarySearch(b, x); !found {
			out = append(out, x)
		}
	}
	return out
}

// TestRecordDirectoryRetention: --record-keep by age and by size delete
// the oldest segments, never the newest; what is kept replays whole to
// the state at the end; a look back before it says what is kept.
func TestRecordDirectoryRetention(t *testing.T) {
	ns := newNamespace(t)
	byAge, bySize := filepath.Join(t.TempDir(), "age")+"/", filepath.Join(t.TempDir(), "size")+"/"
	stop := make(chan struct{})
	churned, churnErrs := churnNamespace(ns, stop)
	var wg sync.WaitGroup
	recorders := []*stream{
		start(t, "cm", "-n", ns, "-q", "--record="+byAge, "--record-segment=2s", "--record-keep=12s"),
		start(t, "cm", "-n", ns, "-q", "--record="+bySize, "--record-segment=2s", "--record-keep=6Ki"),
	}
	segmentsAtLeast(t, byAge, 2, time.Minute)
	time.Sleep(25 * time.Second)
	close(stop)
	<-churned
	time.Sleep(2 * time.Second)
	for _, r := range recorders {
		wg.Add(1)
		go func() { defer wg.Done(); r.stop() }()
	}
	wg.Wait()
	if s := churnErrs.String(); s != "" {
		t.Fatalf("the churn failed: %s", s)
	}
	final := run(t, time.Minute, "cm", "-n", ns, "--until-synced", "-o", "json")
	var want []string
	for _, l := range lines(final.stdout) {
		r := decodeRecord(t, l)
		want = append(want, r.Name+" "+r.ResourceVersion)
	}
	slices.Sort(want)
	for _, dir := range []string{byAge, bySize} {
		segs, err := recording.ListSegments(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(segs) == 0 || segs[0].Seq == 1 {
			t.Errorf("%s: no segment deleted: %v", dir, segs)
			continue
		}
		ix, err := recording.LoadIndex(dir, os.Stderr, false)
		if err != nil || ix.Rebuilt {
			t.Fatalf("%s: the index after retention: %v (rebuilt %v)", dir, err, ix != nil && ix.Rebuilt)
		}
		if dir == byAge && time.Since(ix.Infos[0].Start) > 12*time.Second+10*time.Second {
			t.Errorf("%s: the oldest segment kept began %s ago, want about --record-keep=12s", dir, time.Since(ix.Infos[0].Start))
		}
		if dir == bySize {
			var total int64
			for _, s := range segs[:len(segs)-1] {
				st, err := os.Stat(filepath.Join(dir, s.Name))
				if err != nil {
					t.Fatal(err)
				}
				total += st.Size()
			}
			if total > 6<<10 {
				t.Errorf("%s: the segments before the newest hold %d bytes, want at most 6Ki", dir, total)
			}
		}
		got, _ := dirStateAt(t, dir, "-0s")
		if !slices.Equal(got, want) {
			t.Errorf("%s: what is kept ends in %v, the cluster in %v", dir, got, want)
		}
		before := run(t, time.Minute, "--replay="+dir, "--at=2020-01-01T00:00:00Z")
		if before.code == 0 || before.stdout != "" || !strings.Contains(before.stderr, "is before what the recording keeps") || !strings.Contains(before.stderr, "keeps segments") {
			t.Errorf("%s: a look back before what is kept: exit %d, stdout %q, stderr %q", dir, before.code, before.stdout, before.stderr)
		}
	}
}

// TestRecordDirectoryBadInput: what cannot be a recording directory, or a
// policy that cannot be kept, is an error before anything is watched;
// a second recorder of a directory is refused.
func TestRecordDirectoryBadInput(t *testing.T) {
	ns := newNamespace(t)
	base := t.TempDir()
	file := filepath.Join(base, "file")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(base, "other")
	if err := os.MkdirAll(other, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, "notes.txt"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(base, "rec") + "/"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--record=" + file + "/"}, "is a file, not a directory"},
		{[]string{"--record=" + other}, "notes.txt, which no recording of kubectl deltas has"},
		{[]string{"--record=" + dir, "--record-segment=0"}, `invalid --record-segment "0"`},
		{[]string{"--record=" + dir, "--record-segment=1h", "--record-keep=30m"}, "is less than one segment"},
		{[]string{"--record=" + dir, "--record-keep=1Mi", "--record-segment=64Mi"}, "is less than one segment"},
		{[]string{"--record=" + filepath.Join(base, "x.zst"), "--record-keep=1h"}, "--record-keep is for a recording directory"},
		{[]string{"--record=" + dir, "--record-segment=soon"}, `invalid --record-segment "soon"`},
		{[]string{"--record=" + filepath.Join(base, "missing", "x.zst")}, "make its directory first (mkdir -p " + filepath.Join(base, "missing") + ")"},
	} {
		r := run(t, time.Minute, append([]string{"cm", "-n", ns}, c.args...)...)
		if r.code == 0 || r.stdout != "" || !strings.HasPrefix(r.stderr, "error: ") || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want an error saying %q", c.args, r.code, r.stdout, r.stderr, c.want)
		}
	}
	// -o json output is no recording: the summary says it names nothing.
	printed := filepath.Join(base, "printed.jsonl")
	createCM(t, ns, "one", nil, nil)
	out := run(t, time.Minute, "cm", "-n", ns, "--until-synced", "-o", "json")
	if err := os.WriteFile(printed, []byte(out.stdout), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := run(t, time.Minute, "recording", printed); r.code != 0 || !strings.Contains(r.stdout, "none named (no header: -o json output") || !regexp.MustCompile(`(?m)^Records:\s+1$`).MatchString(r.stdout) {
		t.Errorf("kubectl deltas recording of -o json output: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	first := start(t, "cm", "-n", ns, "-o", "json", "--record="+dir)
	segmentsAtLeast(t, dir, 1, time.Minute)
	r := run(t, time.Minute, "cm", "-n", ns, "--record="+dir)
	if r.code == 0 || r.stdout != "" || !strings.Contains(r.stderr, "is being recorded by another kubectl deltas (pid") {
		t.Errorf("a second recorder of %s: exit %d, stdout %q, stderr %q", dir, r.code, r.stdout, r.stderr)
	}
	first.stop()
	// One of its segments, as a file of its own: a second writer of it.
	segs, err := recording.ListSegments(dir)
	if err != nil || len(segs) == 0 {
		t.Fatalf("segments of %s: %v %v", dir, segs, err)
	}
	segment := filepath.Join(dir, segs[0].Name)
	before, err := os.ReadFile(segment)
	if err != nil {
		t.Fatal(err)
	}
	r = run(t, time.Minute, "cm", "-n", ns, "--record="+segment)
	after, _ := os.ReadFile(segment)
	if r.code != 1 || r.stdout != "" || !strings.HasPrefix(r.stderr, "error: --record=") || !strings.Contains(r.stderr, "is a segment of the recording directory") || !bytes.Equal(before, after) {
		t.Errorf("--record=%s: exit %d, stdout %q, stderr %q, the segment changed: %v; want an error naming the directory", segment, r.code, r.stdout, r.stderr, !bytes.Equal(before, after))
	}
	// The JSON of the index names what it says.
	data, err := os.ReadFile(filepath.Join(dir, recording.IndexName))
	if err != nil {
		t.Fatal(err)
	}
	var e recording.IndexEntry
	if err := json.Unmarshal([]byte(lines(string(data))[0]), &e); err != nil || e.Kind != recording.IndexSegment {
		t.Errorf("the index's first entry %q: %v", lines(string(data))[0], err)
	}
}

// TestRecordDirectoryKilledInRotation: a recorder killed with SIGKILL
// while it writes a new segment's start (a checkpoint of 24 MiB of
// ConfigMaps takes long enough to be caught at it) leaves a directory the
// next recorder goes on with: nothing recorded is lost, what changed
// meanwhile is caught up, and the replay ends in the cluster's state.
func TestRecordDirectoryKilledInRotation(t *testing.T) {
	ns := newNamespace(t)
	cms := testEnv.client.CoreV1().ConfigMaps(ns)
	big := strings.Repeat("x", 16<<10)
	var wg sync.WaitGroup
	errs := &syncBuffer{}
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < 1500; i += 8 {
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("big-%04d", i)}, Data: map[string]string{"v": big}}
				if _, err := cms.Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
					fmt.Fprintf(errs, "%v\n", err)
				}
			}
		}()
	}
	wg.Wait()
	if errs.String() != "" {
		t.Fatalf("creating the ConfigMaps: %s", errs.String())
	}
	dir := filepath.Join(t.TempDir(), "rec") + "/"
	args := []string{"cm", "-n", ns, "-q", "--record=" + dir, "--record-segment=1s"}
	first := start(t, args...)
	caught := ""
	deadline := time.Now().Add(time.Minute)
	for caught == "" && time.Now().Before(deadline) {
		if tmp, _ := filepath.Glob(filepath.Join(dir, ".0*.tmp")); len(tmp) > 0 {
			if err := first.cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			caught = tmp[0]
		}
		time.Sleep(time.Millisecond)
	}
	<-first.done
	if caught == "" {
		t.Fatalf("no rotation caught within a minute: %v", first.stderr.String())
	}
	t.Logf("killed while writing %s", filepath.Base(caught))
	updateCM(t, ns, "big-0001", "v", "changed while nothing recorded")
	deleteCM(t, ns, "big-0002")
	createCM(t, ns, "made-meanwhile", nil, map[string]string{"k": "v"})

	second := start(t, args...)
	time.Sleep(4 * time.Second)
	if code := second.stop(); code != 0 && code != 130 {
		t.Fatalf("the second recorder exited %d: %s", code, second.stderr.String())
	}
	if tmp, _ := filepath.Glob(filepath.Join(dir, ".*.tmp")); len(tmp) > 0 {
		t.Errorf("what the killed rotation left is still there: %v", tmp)
	}
	if ix, err := recording.LoadIndex(dir, os.Stderr, true); err != nil || ix.Rebuilt {
		t.Errorf("the index after the second recorder: %v, rebuilt %v", err, ix != nil && ix.Rebuilt)
	}
	list, err := cms.List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, cm := range list.Items {
		want = append(want, cm.Name+" "+cm.ResourceVersion)
	}
	slices.Sort(want)
	got, _ := dirStateAt(t, dir, "-0s")
	if !slices.Equal(got, want) {
		t.Errorf("the directory ends in %d objects, the cluster holds %d: missing %v, more %v", len(got), len(want), minus(want, got), minus(got, want))
	}
	replayed := run(t, 2*time.Minute, "--replay="+dir, "-o", "json", "--watch-only")
	for _, change := range []string{"Updated big-0001", "Deleted big-0002", "Added made-meanwhile"} {
		if !slices.ContainsFunc(lines(replayed.stdout), func(l string) bool {
			r := decodeRecord(t, l)
			return r.Type+" "+r.Name == change
		}) {
			t.Errorf("the replay does not say %q, made while nothing recorded", change)
		}
	}
}
