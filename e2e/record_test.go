package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubectl-deltas/kubectl-deltas/internal/history/recording"
)

// readRecording returns a recording's header and record lines (not its
// Heartbeats and Gaps), and what ended the reading (io.EOF, or a
// *recording.TornError).
func readRecording(t *testing.T, path string) (header string, records []string, end error) {
	t.Helper()
	lines, end := readLines(t, path)
	for _, line := range lines {
		switch {
		case header == "":
			header = line
		case isMark(line):
		default:
			records = append(records, line)
		}
	}
	return header, records, end
}

// isMark reports whether a recording's line is a Heartbeat or a Gap.
func isMark(line string) bool {
	return strings.HasPrefix(line, `{"type":"Heartbeat"`) || strings.HasPrefix(line, `{"type":"Gap"`)
}

// readLines returns every line of a recording, and what ended the reading.
func readLines(t *testing.T, path string) ([]string, error) {
	t.Helper()
	r, err := recording.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = r.Close() }()
	var lines []string
	for {
		line, _, err := r.Next()
		if err != nil {
			return lines, err
		}
		lines = append(lines, string(line))
	}
}

// recordTypes are the type and name of each record line.
func recordTypes(t *testing.T, lines []string) []string {
	t.Helper()
	var out []string
	for _, line := range lines {
		r := decodeRecord(t, line)
		out = append(out, r.Type+" "+r.Name)
	}
	return out
}

// TestRecordIsTheStream: with -o json and no filter, the recording holds
// exactly the records printed (--diff's changes included), after a header
// naming what was watched; Secrets are redacted there too. With the
// printed stream filtered, the recording still holds every delta.
func TestRecordIsTheStream(t *testing.T) {
	ns := newNamespace(t)
	createCM(t, ns, "a", nil, map[string]string{"k": "1"})
	if _, err := testEnv.client.CoreV1().Secrets(ns).Create(bg, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "s"},
		StringData: map[string]string{"password": "hunter2"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	all, deletions := filepath.Join(dir, "all.jsonl.zst"), filepath.Join(dir, "filtered.jsonl.gz")
	s := start(t, "cm,secrets", "-n", ns, "-o", "json", "--diff", "--record="+all)
	filtered := start(t, "cm", "-n", ns, "--types=Deleted", "--record="+deletions)
	for range 2 {
		s.next(30 * time.Second)
	}
	waitFileSize(t, deletions)
	updateCM(t, ns, "a", "k", "2")
	deleteCM(t, ns, "a")
	if !s.waitFor(func(l string) bool { return strings.HasPrefix(l, `{"type":"Deleted"`) }, 30*time.Second) {
		t.Fatal("no Deleted record")
	}
	filtered.expect("Deleted: a")
	if code := s.stop(); code != 130 {
		t.Errorf("exit %d after Ctrl-C, want 130", code)
	}
	filtered.stop()

	header, records, end := readRecording(t, all)
	if !errors.Is(end, io.EOF) {
		t.Fatalf("the recording of a stopped run ends with %v, want its end", end)
	}
	var h struct {
		Type    string `json:"type"`
		Schema  string `json:"schema"`
		Targets []struct {
			Resource, Namespace, Role string
		} `json:"targets"`
	}
	if err := json.Unmarshal([]byte(header), &h); err != nil || h.Type != "Recording" || h.Schema != "v1" || len(h.Targets) != 2 ||
		h.Targets[0].Resource+h.Targets[1].Resource != "configmapssecrets" || h.Targets[0].Namespace != ns || h.Targets[0].Role != "root" {
		t.Errorf("header %s (%v)", header, err)
	}
	if strings.Join(records, "\n") != strings.Join(s.seen, "\n") {
		t.Errorf("the recording differs from the printed stream:\nrecorded:\n%s\nprinted:\n%s", strings.Join(records, "\n"), strings.Join(s.seen, "\n"))
	}
	for _, r := range records {
		if strings.Contains(r, "hunter2") || strings.Contains(r, "aHVudGVyMg") {
			t.Errorf("a Secret's value is in the recording: %s", r)
		}
	}
	if got := recordTypes(t, records); strings.Join(got, ",") != "Replaced a,Replaced s,Updated a,Deleted a" && strings.Join(got, ",") != "Replaced s,Replaced a,Updated a,Deleted a" {
		t.Errorf("recorded %v", got)
	}

	_, records, end = readRecording(t, deletions)
	if got := recordTypes(t, records); !errors.Is(end, io.EOF) || strings.Join(got, ",") != "Replaced a,Updated a,Deleted a" {
		t.Errorf("printing Deleted alone, the recording holds %v (%v), want every delta", got, end)
	}
}

// waitFileSize waits until the recorder has written its header: the
// stream has started.
func waitFileSize(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if st, err := os.Stat(path); err == nil && st.Size() > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s was not written within 30s", path)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestRecordSurvivesSIGKILL: a recorder killed with SIGKILL leaves a
// recording that reads back whole up to its last second; cut inside its
// last frame, it reads back up to there, with the end reported torn.
func TestRecordSurvivesSIGKILL(t *testing.T) {
	ns := newNamespace(t)
	path := filepath.Join(t.TempDir(), "r.jsonl.zst")
	s := start(t, "cm", "-n", ns, "-o", "json", "--record="+path)
	waitFileSize(t, path)
	for i := range 5 {
		createCM(t, ns, "cm-"+string(rune('a'+i)), nil, map[string]string{"k": "v"})
	}
	for range 5 {
		s.next(30 * time.Second)
	}
	// Twice the recorder's cut interval: the records are in the file.
	time.Sleep(2 * recording.CutInterval)
	if err := s.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-s.done
	_, records, end := readRecording(t, path)
	if !errors.Is(end, io.EOF) {
		t.Errorf("the recording of a killed run ends with %v, want every frame whole", end)
	}
	if strings.Join(records, "\n") != strings.Join(s.seen, "\n") {
		t.Errorf("the recording of a killed run:\n%s\nwant what it printed:\n%s", strings.Join(records, "\n"), strings.Join(s.seen, "\n"))
	}

	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	torn := filepath.Join(t.TempDir(), "torn.jsonl.zst")
	if err := os.WriteFile(torn, data[:len(data)-7], 0o600); err != nil {
		t.Fatal(err)
	}
	_, tornRecords, end := readRecording(t, torn)
	var tornErr *recording.TornError
	if !errors.As(end, &tornErr) || len(tornRecords) >= len(records) || strings.Join(tornRecords, "\n") != strings.Join(records[:len(tornRecords)], "\n") {
		t.Errorf("a recording cut short: %d of %d records, ended by %v; want a prefix and a TornError", len(tornRecords), len(records), end)
	}
}

// TestReplayIsTheStream: a recording replayed prints what the recorded run
// printed — -o json with --diff byte for byte, text with --diff line for
// line — at the recorded times, through the informer machinery (types
// picked by short name, a name, --until on the recording); bad input is an
// error naming the line.
func TestReplayIsTheStream(t *testing.T) {
	ns := newNamespace(t)
	createCM(t, ns, "a", nil, map[string]string{"k": "1"})
	path := filepath.Join(t.TempDir(), "r.jsonl.zst")
	live := start(t, "cm,secrets", "-n", ns, "-o", "json", "--diff", "--record="+path)
	text := start(t, "cm,secrets", "-n", ns, "--diff")
	live.next(30 * time.Second)
	text.expect("Replaced: configmap a")
	// One change at a time, each seen by both streams before the next:
	// the order across types is the same in both.
	step := func(change func(), want ...string) {
		t.Helper()
		change()
		live.next(30 * time.Second)
		text.expect(want...)
	}
	step(func() { createCM(t, ns, "b", nil, map[string]string{"k": "2"}) }, "Added: configmap b")
	step(func() { updateCM(t, ns, "a", "k", "9") }, "Updated: configmap a by e2e-writer", `  ~ data.k: "1" → "9"`)
	step(func() {
		if _, err := testEnv.client.CoreV1().Secrets(ns).Create(bg, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}, StringData: map[string]string{"p": "x"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}, "Added: secret s")
	step(func() { deleteCM(t, ns, "b") }, "Deleted: configmap b")
	live.stop()
	text.stop()

	replayed := run(t, time.Minute, "--replay="+path, "-o", "json", "--diff")
	if replayed.code != 0 || replayed.stdout != strings.Join(live.seen, "\n")+"\n" {
		t.Errorf("replay -o json --diff: exit %d, stderr %q\n%s\nwant what was printed live:\n%s", replayed.code, replayed.stderr, replayed.stdout, strings.Join(live.seen, "\n"))
	}
	// The -o json output itself replays (a CI job's log), as the types it
	// holds, with a note.
	output := filepath.Join(t.TempDir(), "output.jsonl")
	if err := os.WriteFile(output, []byte(strings.Join(live.seen, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fromOutput := run(t, time.Minute, "--replay="+output, "-o", "json", "--diff")
	if fromOutput.code != 0 || fromOutput.stdout != strings.Join(live.seen, "\n")+"\n" || !strings.Contains(fromOutput.stderr, `has no "Recording" line`) {
		t.Errorf("replay of -o json output: exit %d, stderr %q\n%s\nwant what was printed live:\n%s", fromOutput.code, fromOutput.stderr, fromOutput.stdout, strings.Join(live.seen, "\n"))
	}
	replayed = run(t, time.Minute, "--replay="+path, "-n", ns, "--diff")
	if replayed.code != 0 || replayed.stdout != strings.Join(text.seen, "\n")+"\n" {
		t.Errorf("replay --diff (text): exit %d, stderr %q\n%s\nwant what was printed live:\n%s", replayed.code, replayed.stderr, replayed.stdout, strings.Join(text.seen, "\n"))
	}

	// A name, a short name, a condition met in the recording.
	replayed = run(t, time.Minute, "cm/b", "--replay="+path, "--until=create", "-o", "name")
	if replayed.code != 0 || replayed.stdout != "configmap/b\n" {
		t.Errorf("replay cm/b --until=create: exit %d, stdout %q, stderr %q", replayed.code, replayed.stdout, replayed.stderr)
	}
	// A name the recording never holds: its end says so.
	missing := run(t, time.Minute, "cm/nosuch", "--replay="+path)
	if missing.code != 0 || missing.stdout != "" || strings.Contains(missing.stderr, "to be created") ||
		!strings.Contains(missing.stderr, "info: configmaps/nosuch in "+ns+" never appears in the recording") {
		t.Errorf("replay cm/nosuch: exit %d, stdout %q, stderr %q", missing.code, missing.stdout, missing.stderr)
	}
	// A condition the recording never meets: its end says so.
	replayed = run(t, time.Minute, "cm/a", "--replay="+path, "--until=delete")
	if replayed.code != 1 || !strings.Contains(replayed.stderr, "error: the recording ended before the condition was met on configmaps/a") {
		t.Errorf("replay --until never met: exit %d, stderr %q", replayed.code, replayed.stderr)
	}

	// --at between two changes: the earlier state. The update of a came
	// at the time of its record; a nanosecond before, a was still "1".
	var update struct {
		Time time.Time `json:"time"`
	}
	if err := json.Unmarshal([]byte(live.seen[2]), &update); err != nil || !strings.Contains(live.seen[2], `"type":"Updated"`) {
		t.Fatalf("the third record is not the update of a: %s (%v)", live.seen[2], err)
	}
	for _, tc := range []struct {
		at   time.Time
		want string
	}{{update.Time.Add(-time.Nanosecond), `"k":"1"`}, {update.Time, `"k":"9"`}} {
		r := run(t, time.Minute, "cm/a", "--replay="+path, "--at="+tc.at.Format(time.RFC3339Nano), "-o", "json")
		lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
		if r.code != 0 || len(lines) != 1 || !strings.Contains(lines[0], `"type":"Replaced","time":"`+tc.at.UTC().Format(time.RFC3339Nano)+`","initial":true`) ||
			!strings.Contains(lines[0], tc.want) {
			t.Errorf("--at=%s: exit %d, stderr %q, stdout:\n%s\nwant a at that time with %s", tc.at.Format(time.RFC3339Nano), r.code, r.stderr, r.stdout, tc.want)
		}
	}
	r := run(t, time.Minute, "--replay="+path, "--at=-0s", "-o", "name")
	if r.code != 0 || r.stdout != "configmap/a\nsecret/s\n" && r.stdout != "secret/s\nconfigmap/a\n" {
		t.Errorf("--at the end: exit %d, stdout %q, stderr %q; want a and s", r.code, r.stdout, r.stderr)
	}

	dir := t.TempDir()
	notRecording := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notRecording, []byte("hello\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--replay=" + notRecording}, "error: " + notRecording + ":1: not a record of kubectl deltas"},
		{[]string{"--replay=" + filepath.Join(dir, "missing.jsonl")}, "error: --replay: cannot read the recording"},
		{[]string{"--replay=" + path, "--resource-version=5"}, "error: --resource-version asks a server, and --replay plays a recording"},
		{[]string{"--replay=" + path, "deployments"}, `error: the recording ` + path + ` has no "deployments"`},
		{[]string{"--replay=" + path, "--at=2000-01-01T00:00:00Z"}, "error: --at 2000-01-01T00:00:00Z is before the recording's start: it spans "},
		{[]string{"cm", "--at=-5m"}, "error: --at looks back in a recording: give it --replay=FILE"},
	} {
		r := run(t, time.Minute, tc.args...)
		if r.code != 1 || r.stdout != "" || !strings.HasPrefix(r.stderr, tc.want) {
			t.Errorf("kubectl deltas %s: exit %d, stdout %q, stderr %q; want exit 1, nothing on stdout, %q", strings.Join(tc.args, " "), r.code, r.stdout, r.stderr, tc.want)
		}
	}

	// A torn recording (plain, its last line cut in half): everything
	// before the cut, one warning, exit 0.
	header, records, _ := readRecording(t, path)
	last := records[len(records)-1]
	torn := filepath.Join(dir, "torn.jsonl")
	tornData := header + "\n" + strings.Join(records[:len(records)-1], "\n") + "\n" + last[:len(last)/2]
	if err := os.WriteFile(torn, []byte(tornData), 0o600); err != nil {
		t.Fatal(err)
	}
	r = run(t, time.Minute, "--replay="+torn, "-o", "json", "--diff")
	if want := strings.Join(live.seen[:len(live.seen)-1], "\n") + "\n"; r.code != 0 || r.stdout != want ||
		!strings.Contains(r.stderr, fmt.Sprintf("warning: %s:%d: the last line is cut short", torn, len(records)+1)) {
		t.Errorf("a torn recording: exit %d, stderr %q, stdout:\n%s\nwant:\n%s", r.code, r.stderr, r.stdout, want)
	}
}

// stderrOnTerminal runs kubectl deltas args with stderr on a
// pseudo-terminal and stdout to a file: what each got.
func stderrOnTerminal(t *testing.T, args ...string) (stdout, terminal string) {
	t.Helper()
	pty, tty, err := openPTY()
	if err != nil {
		t.Fatal(err)
	}
	defer pty.Close()
	out, err := os.CreateTemp(t.TempDir(), "stdout")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := command(ctx, testEnv.cp.AdminKubeconfig(), args...)
	cmd.Stdout, cmd.Stderr = out, tty
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	var seen bytes.Buffer
	read := make(chan struct{})
	go func() {
		defer close(read)
		_, _ = io.Copy(&seen, pty) // ends with EIO once the program exited
	}()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("kubectl deltas %s: %v\n%s", strings.Join(args, " "), err, seen.String())
	}
	<-read
	data, err := os.ReadFile(out.Name())
	if err != nil {
		t.Fatal(err)
	}
	return string(data), seen.String()
}

// TestProgressLine: with stderr on a terminal and stdout elsewhere, an
// initial list and a replay show one line on stderr, drawn over itself and
// cleared at the end; never with -q, never when stderr is not a terminal,
// never with --progress=false. (--progress-after=0s: the line from the
// start, instead of after a second.)
func TestProgressLine(t *testing.T) {
	ns := newNamespace(t)
	for i := range 3 {
		createCM(t, ns, fmt.Sprintf("cm-%d", i), nil, map[string]string{"k": "v"})
	}
	path := filepath.Join(t.TempDir(), "r.jsonl.zst")
	stdout, terminal := stderrOnTerminal(t, "cm", "-n", ns, "--until-synced", "-o", "name", "--progress-after=0s", "--record="+path)
	if strings.Count(stdout, "\n") != 3 || !strings.Contains(terminal, "\r\x1b[Klisting 1 type: ") || !strings.HasSuffix(terminal, "\r\x1b[K") {
		t.Errorf("a list: stdout %q, terminal %q; want the three names, and a progress line drawn then cleared", stdout, terminal)
	}
	stdout, terminal = stderrOnTerminal(t, "--replay="+path, "-o", "name", "--progress-after=0s")
	if strings.Count(stdout, "\n") != 3 || !strings.Contains(terminal, "\r\x1b[Kreplaying "+path+": at ") || !strings.HasSuffix(terminal, "\r\x1b[K") {
		t.Errorf("a replay: stdout %q, terminal %q; want the three names, and a progress line drawn then cleared", stdout, terminal)
	}
	for _, args := range [][]string{
		{"cm", "-n", ns, "--until-synced", "-o", "name", "--progress-after=0s", "--progress=false"},
		{"cm", "-n", ns, "--until-synced", "-q", "--progress-after=0s", "--record=" + filepath.Join(t.TempDir(), "q.jsonl")},
	} {
		if _, terminal := stderrOnTerminal(t, args...); terminal != "" {
			t.Errorf("kubectl deltas %s wrote %q on the terminal, want nothing", strings.Join(args, " "), terminal)
		}
	}
	r := run(t, time.Minute, "cm", "-n", ns, "--until-synced", "-o", "name", "--progress-after=0s")
	if r.code != 0 || r.stderr != "" {
		t.Errorf("stderr a pipe: exit %d, stderr %q; want no progress line", r.code, r.stderr)
	}
}

// TestReplayTree: --tree on the replay of a recording made with --tree
// prints what the live stream printed: the members found then, with their
// owner paths, initial or not as they were, and the changes after, in
// order; objects outside the tree are left out as they were.
func TestReplayTree(t *testing.T) {
	ns := newNamespace(t)
	root := createCM(t, ns, "root", nil, map[string]string{"k": "1"})
	owned := func(owner *metav1.ObjectMeta, kind string) []metav1.OwnerReference {
		return []metav1.OwnerReference{{APIVersion: "v1", Kind: kind, Name: owner.Name, UID: owner.UID, Controller: ptr.To(true)}}
	}
	createOwned := func(name string, owner *metav1.ObjectMeta) *corev1.ConfigMap {
		t.Helper()
		cm, err := testEnv.client.CoreV1().ConfigMaps(ns).Create(bg, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: name, OwnerReferences: owned(owner, "ConfigMap")}, Data: map[string]string{"k": "1"},
		}, metav1.CreateOptions{FieldManager: "e2e-writer"})
		if err != nil {
			t.Fatal(err)
		}
		return cm
	}
	child := createOwned("child", &root.ObjectMeta)
	if _, err := testEnv.client.CoreV1().Secrets(ns).Create(bg, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "grandchild", OwnerReferences: owned(&child.ObjectMeta, "ConfigMap")}, StringData: map[string]string{"p": "x"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	createCM(t, ns, "stranger", nil, map[string]string{"k": "1"})

	path := filepath.Join(t.TempDir(), "tree.jsonl.zst")
	live := start(t, "cm/root", "-n", ns, "--tree", "--events", "--diff", "--record="+path)
	initial := []string{
		"Replaced: configmap root",
		"Replaced: configmap child (configmap root)",
		"Replaced: secret grandchild (configmap root → configmap child)",
	}
	wait := func(want string) {
		t.Helper()
		if !live.waitFor(func(l string) bool { return l == want }, 30*time.Second) {
			t.Fatalf("no %q; lines:\n%s\nstderr:\n%s", want, strings.Join(live.seen, "\n"), live.stderr.String())
		}
	}
	for _, want := range initial {
		if !slices.Contains(live.seen, want) {
			wait(want)
		}
	}
	updateCM(t, ns, "child", "k", "2")
	wait(`  ~ data.k: "1" → "2"`)
	// An Event about a member, and one about an object outside the tree.
	for _, about := range []*metav1.ObjectMeta{&child.ObjectMeta, {Name: "stranger", Namespace: ns, UID: "not-in-the-tree"}} {
		if _, err := testEnv.client.CoreV1().Events(ns).Create(bg, &corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{GenerateName: about.Name + "."},
			InvolvedObject: corev1.ObjectReference{APIVersion: "v1", Kind: "ConfigMap", Namespace: ns, Name: about.Name, UID: about.UID},
			Type:           corev1.EventTypeNormal, Reason: "Checked", Message: "looked at " + about.Name, Count: 1,
			FirstTimestamp: metav1.Now(), LastTimestamp: metav1.Now(), Source: corev1.EventSource{Component: "e2e"},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	wait("Event: configmap child Normal Checked: looked at child")
	createOwned("child2", &root.ObjectMeta)
	wait("Added: configmap child2 (configmap root)")
	createCM(t, ns, "stranger2", nil, nil)
	if err := testEnv.client.CoreV1().Secrets(ns).Delete(bg, "grandchild", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	wait("Deleted: secret grandchild (configmap root → configmap child)")
	live.stop()

	replayed := run(t, time.Minute, "cm/root", "-n", ns, "--tree", "--events", "--diff", "--replay="+path)
	got := strings.Split(strings.TrimSuffix(replayed.stdout, "\n"), "\n")
	if replayed.code != 0 || len(got) != len(live.seen) {
		t.Fatalf("replay --tree: exit %d, stderr %q\n%s\nwant what was printed live:\n%s", replayed.code, replayed.stderr, replayed.stdout, strings.Join(live.seen, "\n"))
	}
	// The initial lists of several types come in any order; what follows
	// comes in the recording's.
	n := len(initial)
	gotInitial, liveInitial := slices.Clone(got[:n]), slices.Clone(live.seen[:n])
	slices.Sort(gotInitial)
	slices.Sort(liveInitial)
	if !slices.Equal(gotInitial, liveInitial) || !slices.Equal(got[n:], live.seen[n:]) {
		t.Errorf("replay --tree printed:\n%s\nlive:\n%s", replayed.stdout, strings.Join(live.seen, "\n"))
	}
	for _, l := range got {
		if strings.Contains(l, "stranger") {
			t.Errorf("an object outside the tree: %q", l)
		}
	}
	// Bare, the recording plays as it was recorded: its trees and Events.
	bare := run(t, time.Minute, "--diff", "--replay="+path)
	gotBare := strings.Split(strings.TrimSuffix(bare.stdout, "\n"), "\n")
	if bare.code != 0 || len(gotBare) != len(live.seen) || strings.Contains(bare.stderr, "leaves out") {
		t.Fatalf("a bare replay: exit %d, stderr %q\n%s\nwant what was printed live:\n%s", bare.code, bare.stderr, bare.stdout, strings.Join(live.seen, "\n"))
	}
	gotBareInitial := slices.Clone(gotBare[:n])
	slices.Sort(gotBareInitial)
	if !slices.Equal(gotBareInitial, liveInitial) || !slices.Equal(gotBare[n:], live.seen[n:]) {
		t.Errorf("a bare replay printed:\n%s\nlive:\n%s", bare.stdout, strings.Join(live.seen, "\n"))
	}
	// Given a type and no --tree nor --events, it says what it leaves out.
	narrow := run(t, time.Minute, "cm/root", "--replay="+path)
	if narrow.code != 0 || narrow.stdout != "Replaced: root\n" ||
		!strings.Contains(narrow.stderr, "info: the replay leaves out what the recording also holds: what its roots own (--tree); its Events (--events)") {
		t.Errorf("replay cm/root of a --tree --events recording: exit %d, stdout %q, stderr %q", narrow.code, narrow.stdout, narrow.stderr)
	}

	// A recording made without --events has none to replay.
	r0 := run(t, time.Minute, "cm", "-n", ns, "--events", "--replay="+recordOnly(t, ns))
	if r0.code != 1 || !strings.Contains(r0.stderr, "holds no Events") {
		t.Errorf("replay --events of a recording without Events: exit %d, stderr %q", r0.code, r0.stderr)
	}

	// Without a name or a selector there is nothing to follow.
	r := run(t, time.Minute, "cm", "--tree", "--replay="+path)
	if r.code != 1 || !strings.Contains(r.stderr, "--tree follows what given objects own") {
		t.Errorf("replay cm --tree: exit %d, stderr %q", r.code, r.stderr)
	}
}

// recordOnly records the ConfigMaps of ns, a snapshot, and returns the
// recording.
func recordOnly(t *testing.T, ns string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "cms.jsonl")
	if r := run(t, time.Minute, "cm", "-n", ns, "--until-synced", "-q", "--record="+path); r.code != 0 {
		t.Fatalf("recording: exit %d, stderr %q", r.code, r.stderr)
	}
	return path
}

// TestRecordGoesOnAfterAGap: a recorder killed with SIGKILL and started
// again on its recording (--events too) goes on from where each
// collection stood — the collection's resourceVersion, not its newest
// object's — so that nothing deleted before the recording began turns up,
// no record is there twice (the Events included), the changes made while
// it was down are there once, after a Gap, at the times their objects
// give; a replay inside the gap warns that the state then is not known.
func TestRecordGoesOnAfterAGap(t *testing.T) {
	ns := newNamespace(t)
	a := createCM(t, ns, "a", nil, map[string]string{"k": "1"})
	// Deleted before the recording begins: the collection's
	// resourceVersion is past every object's.
	createCM(t, ns, "early", nil, nil)
	updateCM(t, ns, "early", "k", "2")
	deleteCM(t, ns, "early")
	recordEvent(t, ns, "first", cmRef(a), "Normal", "Tested", "before the recording")
	path := filepath.Join(t.TempDir(), "r.jsonl")
	args := []string{"cm", "-n", ns, "--events", "-o", "json", "--record=" + path}
	run := start(t, args...)
	run.next(30 * time.Second)
	run.next(30 * time.Second)
	// A Heartbeat that says where both collections stand is in the file.
	waitHeartbeat(t, path, 2)
	if err := run.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-run.done

	killed := time.Now()
	b := createCM(t, ns, "b", nil, map[string]string{"k": "1"})
	recordEvent(t, ns, "second", cmRef(b), "Normal", "Tested", "while the recorder was down")
	deleteCM(t, ns, "a")
	run = start(t, args...)
	run.waitFor(func(l string) bool { return strings.Contains(l, `"name":"second"`) }, 30*time.Second)
	run.waitFor(func(l string) bool {
		return strings.Contains(l, `"type":"Deleted"`) && strings.Contains(l, `"name":"a"`)
	}, 30*time.Second)
	waitHeartbeat(t, path, 2)
	run.stop()

	lines, end := readLines(t, path)
	if !errors.Is(end, io.EOF) {
		t.Fatalf("reading the recording: %v", end)
	}
	var headers, gaps []int
	seen := map[string]int{}
	var restart, bAt time.Time
	var gap recording.Gap
	for i, line := range lines {
		var r struct {
			Type            string    `json:"type"`
			Time            time.Time `json:"time"`
			Kind            string    `json:"kind"`
			Name            string    `json:"name"`
			ResourceVersion string    `json:"resourceVersion"`
			CaughtUp        string    `json:"caughtUp"`
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		switch r.Type {
		case "Recording":
			headers = append(headers, i)
			restart = r.Time
			continue
		case "Gap":
			gaps = append(gaps, i)
			if err := json.Unmarshal([]byte(line), &gap); err != nil {
				t.Fatal(err)
			}
			continue
		case "Heartbeat":
			continue
		}
		id := r.Type + " " + r.Kind + " " + r.Name + " " + r.ResourceVersion
		seen[id]++
		if seen[id] > 1 {
			t.Errorf("recorded twice: %s", id)
		}
		if r.Name == "early" {
			t.Errorf("line %d: a record of a ConfigMap deleted before the recording began: %s", i+1, line)
		}
		if len(headers) == 2 && r.Name == "b" && r.Type == "Added" {
			bAt = r.Time
			if r.CaughtUp != "creationTimestamp" || !r.Time.Before(restart) || r.Time.Before(gap.From) {
				t.Errorf("b, created while the recorder was down: %s; want it caught up at its creationTimestamp, inside the gap", line)
			}
			// creationTimestamp is in seconds: created in the second the
			// recorder last beat, it is dated from that beat (or from the
			// caught-up record before it, which is never later).
			if created := b.CreationTimestamp.Time; r.Time.Before(created) || r.Time.Sub(created) >= 2*time.Second {
				t.Errorf("b recorded at %s, created at %s, the gap from %s", r.Time, created, gap.From)
			}
		}
	}
	if len(headers) != 2 || len(gaps) != 1 || gaps[0] != headers[1]+1 {
		t.Errorf("headers at lines %v, Gaps at %v; want two parts, the second's header followed by a Gap", headers, gaps)
	}
	if !gap.From.Before(killed) || killed.Sub(gap.From) > recording.HeartbeatInterval+2*time.Second || !gap.To.Equal(restart) {
		t.Errorf("Gap from %s to %s; the recorder was killed at %s, started again at %s", gap.From, gap.To, killed, restart)
	}
	for _, want := range []string{"Replaced Event first", "Added Event second", "Added ConfigMap b", "Deleted ConfigMap a"} {
		n := 0
		for id, c := range seen {
			if strings.HasPrefix(id, want+" ") {
				n += c
			}
		}
		if n != 1 {
			t.Errorf("%q recorded %d times, want once; records: %v", want, n, seen)
		}
	}

	// Inside the gap, the state is not known for sure: a replay says so.
	at := gap.From.Add(gap.To.Sub(gap.From) / 2).Format(time.RFC3339Nano)
	replayed := runAs(t, testEnv.cp.AdminKubeconfig(), time.Minute, "--replay="+path, "--at="+at, "-o", "name")
	if replayed.code != 0 || !strings.Contains(replayed.stderr, "is inside a gap of the recording") || !strings.Contains(replayed.stdout, "configmap/a") {
		t.Errorf("--at inside the gap: exit %d, stdout %q, stderr %q; want a, and a warning", replayed.code, replayed.stdout, replayed.stderr)
	}
	// At the gap's end, the changes made while it was down are in the
	// state, though the run that caught them up wrote a Heartbeat (of
	// its initial lists) before them; inside the gap, those dated
	// before: b once created.
	for _, c := range []struct {
		at   time.Time
		want string
	}{{gap.To, "configmap/b\n"}, {bAt, "configmap/a\nconfigmap/b\n"}} {
		at := c.at.Format(time.RFC3339Nano)
		replayed = runAs(t, testEnv.cp.AdminKubeconfig(), time.Minute, "cm", "--replay="+path, "--at="+at, "-o", "name")
		if replayed.code != 0 || replayed.stdout != c.want {
			t.Errorf("--at=%s (the gap from %s to %s): exit %d, stdout %q, want %q; stderr %q", at, gap.From, gap.To, replayed.code, replayed.stdout, c.want, replayed.stderr)
		}
	}
	// Replayed through, the gap is said once.
	replayed = runAs(t, testEnv.cp.AdminKubeconfig(), time.Minute, "--replay="+path, "-o", "name")
	if replayed.code != 0 || strings.Count(replayed.stderr, "the recording has a gap from") != 1 {
		t.Errorf("replay: exit %d, stderr %q; want one warning of the gap", replayed.code, replayed.stderr)
	}
}

// waitHeartbeat waits until the plain recording at path holds, after
// its last header, a Heartbeat that gives the position of n collections
// or more.
func waitHeartbeat(t *testing.T, path string, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		data, _ := os.ReadFile(path)
		all := strings.Split(strings.TrimSpace(string(data)), "\n")
		for i := len(all) - 1; i >= 0 && !strings.HasPrefix(all[i], `{"type":"Recording"`); i-- {
			var h recording.Heartbeat
			if strings.HasPrefix(all[i], `{"type":"Heartbeat"`) && json.Unmarshal([]byte(all[i]), &h) == nil && len(h.Positions) >= n {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no Heartbeat with %d positions in the recording's last part within 30s:\n%s", n, data)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestRecordTreeGoesOnAfterAGap: a --tree recorder killed and started
// again lists what the root owns anew (only the roots and the Events
// resume); what was deleted while it was down is deleted in the replay,
// and gone from its state at the end; what was made then is there.
func TestRecordTreeGoesOnAfterAGap(t *testing.T) {
	ns := newNamespace(t)
	root := createCM(t, ns, "root", nil, map[string]string{"k": "1"})
	owned := []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: root.Name, UID: root.UID, Controller: ptr.To(true)}}
	createOwned := func(name string) {
		t.Helper()
		if _, err := testEnv.client.CoreV1().ConfigMaps(ns).Create(bg, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: name, OwnerReferences: owned},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	createOwned("kept")
	createOwned("gone")
	createOwned("changed")
	path := filepath.Join(t.TempDir(), "tree.jsonl")
	args := []string{"cm/root", "-n", ns, "--tree", "-o", "name", "--record=" + path}
	rec := start(t, args...)
	if !rec.waitFor(func(l string) bool { return l == "configmap/gone" }, 30*time.Second) {
		t.Fatalf("no configmap/gone; lines %q, stderr %q", rec.seen, rec.stderr.String())
	}
	waitHeartbeat(t, path, 1)
	if err := rec.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-rec.done

	deleteCM(t, ns, "gone")
	updateCM(t, ns, "changed", "k", "2")
	createOwned("new")
	rec = start(t, args...)
	if !rec.waitFor(func(l string) bool { return l == "configmap/gone" }, 30*time.Second) {
		t.Fatalf("the recorder going on did not say configmap/gone went; lines %q, stderr %q", rec.seen, rec.stderr.String())
	}
	waitHeartbeat(t, path, 1)
	rec.stop()
	// It showed what changed while it was down: new came, changed
	// changed (from what the recording showed), gone went (once the
	// initial state was out); kept, found again unchanged, is no news.
	shown := slices.Clone(rec.seen)
	slices.Sort(shown)
	if want := []string{"configmap/changed", "configmap/gone", "configmap/new"}; !slices.Equal(shown, want) {
		t.Errorf("the recorder going on showed %q, want %q", shown, want)
	}
	lines, tail := readLines(t, path)
	if !errors.Is(tail, io.EOF) {
		t.Fatalf("reading the recording: %v", tail)
	}
	var after []string // the records of the run that went on
	var gap recording.Gap
	parts := 0
	for _, line := range lines {
		var r struct {
			Type, Name, CaughtUp string
			Time                 time.Time
		}
		must(t, json.Unmarshal([]byte(line), &r))
		switch {
		case r.Type == "Recording":
			parts++
		case r.Type == "Gap":
			must(t, json.Unmarshal([]byte(line), &gap))
		case parts == 2 && r.Name != "":
			after = append(after, r.Type+" "+r.Name+" "+strconv.FormatBool(strings.Contains(line, `"finalStateUnknown":true`)))
			// What changed while it was down is dated inside the gap.
			if caughtUp := r.Name == "gone" || r.Name == "changed"; caughtUp != (r.CaughtUp != "") ||
				caughtUp && (r.Time.Before(gap.From) || r.Time.After(gap.To)) {
				t.Errorf("%s: caught up %q at %s, the gap from %s to %s", r.Name, r.CaughtUp, r.Time, gap.From, gap.To)
			}
		}
	}
	slices.Sort(after)
	if want := []string{"Added new false", "Deleted gone true", "Replaced changed false"}; !slices.Equal(after, want) {
		t.Errorf("the run that went on recorded %q, want %q", after, want)
	}
	// At the gap's end, gone is gone. (new is there from when the run
	// found it: a member the tree finds is not dated back.)
	atEnd := run(t, time.Minute, "cm/root", "-n", ns, "--tree", "--replay="+path, "--at="+gap.To.Format(time.RFC3339Nano), "-o", "name")
	got := slices.DeleteFunc(strings.Fields(atEnd.stdout), func(name string) bool { return name == "configmap/new" })
	slices.Sort(got)
	if want := []string{"configmap/changed", "configmap/kept", "configmap/root"}; atEnd.code != 0 || !slices.Equal(got, want) {
		t.Errorf("the state at the gap's end: exit %d, %q (and maybe configmap/new), want %q; stderr %q", atEnd.code, got, want, atEnd.stderr)
	}

	replay := []string{"cm/root", "-n", ns, "--tree", "--replay=" + path}
	end := run(t, time.Minute, append(replay, "--at=-0s", "-o", "name")...)
	got = strings.Fields(end.stdout)
	slices.Sort(got)
	if want := []string{"configmap/changed", "configmap/kept", "configmap/new", "configmap/root"}; end.code != 0 || !slices.Equal(got, want) {
		data, _ := os.ReadFile(path)
		t.Errorf("the state at the end: exit %d, %q, want %q; stderr %q; the recording:\n%s", end.code, got, want, end.stderr, data)
	}
	all := run(t, time.Minute, append(replay, "--types=Deleted", "-o", "name")...)
	if all.code != 0 || all.stdout != "configmap/gone\n" {
		t.Errorf("the replay's deletions: exit %d, %q, want configmap/gone; stderr %q", all.code, all.stdout, all.stderr)
	}
}
