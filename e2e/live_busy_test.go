//go:build faults

package e2e

// --live on the busy cluster, in a pseudo-terminal: the byte stream is one
// full draw then bracketed redraws; the last frame stays with the verdict
// below it; folding, resizing and Ctrl-C.

import (
	"context"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"
	"unsafe"
)

// The sequences --live writes.
const (
	liveSyncBegin  = "\x1b[?2026h"
	liveSyncEnd    = "\x1b[?2026l"
	liveClear      = "\x1b[2J"
	liveShowCursor = "\x1b[?25h"
)

// liveRun is kubectl deltas running in a pseudo-terminal of a given size:
// what it writes to the terminal kept byte for byte, stderr apart.
type liveRun struct {
	t      *testing.T
	cmd    *exec.Cmd
	pty    *os.File
	out    *syncBuffer
	stderr *syncBuffer
	done   chan struct{}
	err    error
}

// setWinsize sets the terminal's size (the program is sent SIGWINCH).
func setWinsize(f *os.File, cols, rows int) error {
	ws := struct{ rows, cols, x, y uint16 }{uint16(rows), uint16(cols), 0, 0}
	return ioctl(f.Fd(), syscall.TIOCSWINSZ, uintptr(unsafe.Pointer(&ws)))
}

// startLive starts kubectl deltas args in a cols × rows terminal; it is
// killed, with its session, at the end of the test.
func startLive(t *testing.T, kubeconfig string, cols, rows int, args ...string) *liveRun {
	t.Helper()
	pty, tty, err := openPTY()
	if err != nil {
		t.Fatal(err)
	}
	if err := setWinsize(pty, cols, rows); err != nil {
		t.Fatal(err)
	}
	cmd := command(context.Background(), kubeconfig, args...)
	r := &liveRun{t: t, cmd: cmd, pty: pty, out: &syncBuffer{}, stderr: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, r.stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		pty.Close()
		tty.Close()
		t.Fatal(err)
	}
	tty.Close()
	read := make(chan struct{})
	go func() {
		defer close(read)
		_, _ = io.Copy(r.out, pty) // ends with EIO once the terminal is closed
	}()
	go func() {
		r.err = cmd.Wait()
		<-read
		pty.Close()
		close(r.done)
	}()
	t.Cleanup(func() {
		if r.cmd.Process != nil {
			_ = syscall.Kill(-r.cmd.Process.Pid, syscall.SIGKILL)
		}
		<-r.done
	})
	return r
}

// waitExit waits for the run to end and returns its exit code.
func (r *liveRun) waitExit(limit time.Duration) int {
	r.t.Helper()
	select {
	case <-r.done:
	case <-time.After(limit):
		r.t.Fatalf("still running after %s; last frame:\n%s\nstderr: %s", limit, strings.Join(lastFrame(r.out.String()), "\n"), r.stderr.String())
	}
	return r.cmd.ProcessState.ExitCode()
}

// waitFrame waits until a frame (as lines) satisfies match.
func (r *liveRun) waitFrame(what string, limit time.Duration, match func([]string) bool) {
	r.t.Helper()
	deadline := time.Now().Add(limit)
	for {
		for _, f := range frames(r.out.String()) {
			if match(screenLines(f)) {
				return
			}
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("no frame %s within %s; last frame:\n%s", what, limit, strings.Join(lastFrame(r.out.String()), "\n"))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// frames splits the byte stream into its frames, each without its
// brackets.
func frames(stream string) []string {
	var out []string
	for _, part := range strings.Split(stream, liveSyncBegin)[1:] {
		frame, _, ok := strings.Cut(part, liveSyncEnd)
		if ok {
			out = append(out, frame)
		}
	}
	return out
}

// csi matches a control sequence.
var csi = regexp.MustCompile(`\x1b\[[0-9;?]*[A-Za-z]`)

// screenLines is a frame as the lines a user sees.
func screenLines(frame string) []string {
	text := strings.ReplaceAll(csi.ReplaceAllString(frame, ""), "\r", "")
	return strings.Split(text, "\n")
}

// lastFrame is the last frame of the stream, as lines.
func lastFrame(stream string) []string {
	fs := frames(stream)
	if len(fs) == 0 {
		return nil
	}
	return screenLines(fs[len(fs)-1])
}

// checkStream checks the frame discipline of a finished run: every byte
// before the cursor is shown again is inside a bracketed frame, the
// screen is cleared once, in the first frame, and the stream ends by
// showing the cursor.
func checkStream(t *testing.T, stream string) {
	t.Helper()
	fs := frames(stream)
	if len(fs) == 0 {
		t.Fatalf("no frame in %q", stream)
	}
	if !strings.HasPrefix(stream, liveSyncBegin) {
		t.Errorf("the stream begins %q, not with a frame", stream[:min(len(stream), 40)])
	}
	rest := stream
	for len(rest) > 0 {
		if !strings.HasPrefix(rest, liveSyncBegin) {
			break
		}
		_, after, ok := strings.Cut(rest, liveSyncEnd)
		if !ok {
			t.Fatalf("a frame without its closing bracket: %q", rest[:min(len(rest), 80)])
		}
		rest = after
	}
	if strings.TrimSpace(strings.ReplaceAll(rest, liveShowCursor, "")) != "" || !strings.Contains(rest, liveShowCursor) {
		t.Errorf("after the frames: %q, want only a newline and the cursor shown again", rest)
	}
	if !strings.Contains(fs[0], liveClear) {
		t.Errorf("the first frame does not clear the screen: %q", fs[0][:min(len(fs[0]), 80)])
	}
	for i, f := range fs[1:] {
		if strings.Contains(f, liveClear) {
			t.Errorf("frame %d clears the screen again", i+1)
		}
	}
}

// rowOf returns the row of the frame for kind/name ("pod/web-1"), "" if
// none.
func rowOf(lines []string, kindName string) string {
	for _, l := range lines {
		if f := strings.Fields(l); len(f) > 0 && f[0] == kindName {
			return l
		}
	}
	return ""
}

// TestBusyLiveRollout: a new Deployment rolled out under --live: one full
// draw, then bracketed redraws only; the last frame shows every object the
// line mode shows, with the same health; exit 0 with the verdict on
// stderr.
func TestBusyLiveRollout(t *testing.T) {
	c := busyCluster(t)
	r := &rollout{t: t, c: c, ns: c.namespace(t)}
	live := startLive(t, c.cp.AdminKubeconfig(), 160, 50, "deployment/web", "-n", r.ns, "--live", "--tree", "--health", "--events",
		"--until=status=Current", "--timeout=3m")
	live.waitFrame("waiting for the Deployment", 30*time.Second, func(l []string) bool { return len(l) > 0 && strings.HasPrefix(l[0], "kubectl deltas ") })
	r.create(3, "web:v1")
	if code := live.waitExit(3 * time.Minute); code != 0 {
		t.Fatalf("exit %d, want 0; stderr: %s", code, live.stderr.String())
	}
	stream := live.out.String()
	checkStream(t, stream)
	final := lastFrame(stream)
	t.Logf("%d frames, %d bytes; the last one:\n%s", len(frames(stream)), len(stream), strings.Join(final, "\n"))
	if !strings.Contains(live.stderr.String(), "condition met") {
		t.Errorf("stderr %q lacks the verdict", live.stderr.String())
	}

	// The line mode, now: every object it shows is in the last frame
	// with the same health.
	lines := runAs(t, c.cp.AdminKubeconfig(), time.Minute, "deployment/web", "-n", r.ns, "--tree", "--health", "--until-synced")
	if lines.code != 0 {
		t.Fatalf("line mode: exit %d: %s", lines.code, lines.stderr)
	}
	objects := regexp.MustCompile(`^Replaced: (\S+) (\S+)(?: \(.*\))? (Current|InProgress|Failed|Terminating|Unknown)\b`)
	seen := 0
	for _, l := range strings.Split(strings.TrimSpace(lines.stdout), "\n") {
		m := objects.FindStringSubmatch(l)
		if m == nil {
			t.Errorf("line mode printed %q", l)
			continue
		}
		kind := strings.SplitN(m[1], ".", 2)[0]
		row := rowOf(final, kind+"/"+m[2])
		if row == "" || !strings.Contains(row, " "+m[3]+" ") {
			t.Errorf("%s/%s is %s in line mode; the last frame's row: %q\n%s", kind, m[2], m[3], row, strings.Join(final, "\n"))
		}
		seen++
	}
	if seen < 5 { // the Deployment, its ReplicaSet, three Pods
		t.Errorf("line mode showed %d objects, want at least 5:\n%s", seen, lines.stdout)
	}
	if !strings.Contains(final[1], "--until=status=Current: holds") {
		t.Errorf("the header does not say the condition holds:\n%s", strings.Join(final[:3], "\n"))
	}
	noFailure(t, c)
}

// TestBusyLiveUnschedulable: a rollout whose Pod cannot be scheduled ends
// with exit 2 under --fail-when=status=Failed, the blocking Pod Failed and
// its FailedScheduling Warning in the last frame.
func TestBusyLiveUnschedulable(t *testing.T) {
	c := busyCluster(t)
	ns := c.namespace(t)
	createBroken(t, c, ns, "stuck", nil, map[string]string{"deltas.test/nowhere": "true"})
	live := startLive(t, c.cp.AdminKubeconfig(), 200, 40, "deployment/stuck", "-n", ns, "--live", "--tree", "--health", "--events",
		"--until=status=Current", "--fail-when=status=Failed", "--timeout=2m")
	if code := live.waitExit(2 * time.Minute); code != 2 {
		t.Fatalf("exit %d, want 2; stderr: %s", code, live.stderr.String())
	}
	checkStream(t, live.out.String())
	final := lastFrame(live.out.String())
	text := strings.Join(final, "\n")
	t.Logf("the last frame:\n%s\nstderr:\n%s", text, live.stderr.String())
	var pod string
	for _, l := range final {
		if f := strings.Fields(l); len(f) > 1 && strings.HasPrefix(f[0], "pod/stuck-") {
			pod = l
		}
	}
	if !strings.Contains(pod, " Failed ") {
		t.Errorf("the blocking Pod's row %q is not Failed:\n%s", pod, text)
	}
	if !strings.Contains(text, "⚠ Warning FailedScheduling") {
		t.Errorf("no FailedScheduling Warning in the last frame:\n%s", text)
	}
	if !strings.Contains(live.stderr.String(), "matched --fail-when=status=Failed") {
		t.Errorf("stderr %q lacks the verdict", live.stderr.String())
	}
}

// TestBusyLiveFolds: in a 120×20 terminal, a 40-Pod Deployment that is
// Current and quiet folds its Pods into rows with a count; no frame is
// taller than the terminal.
func TestBusyLiveFolds(t *testing.T) {
	c := busyCluster(t)
	r := &rollout{t: t, c: c, ns: c.namespace(t)}
	r.create(40, "web:v1")
	r.waitRolledOut(2 * time.Minute)
	live := startLive(t, c.cp.AdminKubeconfig(), 120, 20, "deployment/web", "-n", r.ns, "--live", "--tree",
		"--until=status=Current", "--stable-for=5s", "--timeout=2m")
	if code := live.waitExit(2 * time.Minute); code != 0 {
		t.Fatalf("exit %d, want 0; stderr: %s", code, live.stderr.String())
	}
	checkStream(t, live.out.String())
	for i, f := range frames(live.out.String()) {
		if n := len(screenLines(f)); n > 20 {
			t.Errorf("frame %d is %d lines, taller than the terminal", i, n)
		}
	}
	final := strings.Join(lastFrame(live.out.String()), "\n")
	folded := regexp.MustCompile(`… (\d+) pods Current, quiet`).FindAllStringSubmatch(final, -1)
	n := 0
	for _, m := range folded {
		k, err := strconv.Atoi(m[1])
		if err != nil {
			t.Fatalf("a fold's count %q: %v", m[1], err)
		}
		n += k
	}
	if n < 30 || !strings.Contains(final, "deployment/web") || !strings.Contains(final, "replicaset/web-") {
		t.Errorf("the last frame folds %d Pods, want most of the 40 under the Deployment and its ReplicaSet:\n%s", n, final)
	}
}

// TestBusyLiveResizeAndInterrupt: a terminal resized is drawn to its new
// width (SIGWINCH); Ctrl-C ends the run with 130 and the cursor shown.
func TestBusyLiveResizeAndInterrupt(t *testing.T) {
	c := busyCluster(t)
	ns := c.namespace(t)
	live := startLive(t, c.cp.AdminKubeconfig(), 100, 20, "configmaps", "-n", ns, "--live")
	width := func(n int) func([]string) bool {
		return func(l []string) bool { return len(l) > 0 && utf8.RuneCountInString(l[0]) == n }
	}
	live.waitFrame("100 columns wide", 30*time.Second, width(100))
	if err := setWinsize(live.pty, 70, 15); err != nil {
		t.Fatal(err)
	}
	live.waitFrame("70 columns wide after the resize", 10*time.Second, width(70))
	_ = syscall.Kill(-live.cmd.Process.Pid, syscall.SIGINT)
	if code := live.waitExit(30 * time.Second); code != 130 {
		t.Errorf("exit %d after Ctrl-C, want 130; stderr: %s", code, live.stderr.String())
	}
	checkStream(t, live.out.String())
}

// TestBusyLiveBadInput: on a terminal, --live with a format of records,
// with -q or with --queue is an error before any request, nothing drawn;
// --live=auto off a terminal prints lines.
func TestBusyLiveBadInput(t *testing.T) {
	c := busyCluster(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"cm", "--live", "-o", "json"}, "error: --live draws its own view and -o json prints records: drop one of them"},
		{[]string{"cm", "--live", "-q", "--until=delete"}, "error: --live draws the stream and -q prints nothing of it"},
		{[]string{"cm", "--live", "--handler", "--queue"}, "error: --live draws objects and --queue prints reconciles as lines"},
	} {
		live := startLive(t, c.cp.AdminKubeconfig(), 100, 20, tc.args...)
		if code := live.waitExit(30 * time.Second); code != 1 || !strings.HasPrefix(live.stderr.String(), tc.want) || strings.Contains(live.out.String(), liveSyncBegin) {
			t.Errorf("%v: exit %d, stderr %q, terminal %q; want 1, %q and nothing drawn", tc.args, code, live.stderr.String(), live.out.String(), tc.want)
		}
	}
	ns := c.namespace(t)
	lines := runAs(t, c.cp.AdminKubeconfig(), time.Minute, "configmaps", "-n", ns, "--live=auto", "--until-synced")
	if lines.code != 0 || strings.Contains(lines.stdout, liveSyncBegin) || !strings.Contains(lines.stdout, "Replaced: kube-root-ca.crt") {
		t.Errorf("--live=auto into a pipe: exit %d, stdout %q, stderr %q; want the lines", lines.code, lines.stdout, lines.stderr)
	}
}
