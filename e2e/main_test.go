// Package e2e runs the built kubectl-deltas binary the way users do,
// `kubectl deltas …` with the plugin on PATH, against a real kube-apiserver
// and etcd started by test/controlplane.
package e2e

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-deltas/kubectl-deltas/test/controlplane"
)

// env is the shared test environment: one control plane for the package,
// the plugin on PATH next to a real kubectl.
type env struct {
	cp      *controlplane.ControlPlane
	pathDir string
	kubectl string
	config  *rest.Config
	client  kubernetes.Interface
	dynamic dynamic.Interface

	// busy is the busy cluster (controllers, scheduler, simulated nodes)
	// of the rollout tests: started on first use, stopped with the rest.
	busyOnce sync.Once
	busy     *controlplane.ControlPlane
	busyErr  error
}

var (
	testEnv *env
	nsSeq   atomic.Int64
)

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	// One line, not a failure per test, on a fresh clone.
	if err := controlplane.Check(controlplane.Options{Nodes: 1}); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		return 1
	}
	e, cleanup, err := setup()
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e setup: %v\n", err)
		return 1
	}
	testEnv = e
	code := m.Run()
	cleanup()
	return code
}

func setup() (*env, func(), error) {
	root, err := controlplane.FindRepoRoot(".")
	if err != nil {
		return nil, nil, err
	}
	kubectl := filepath.Join(root, "bin", "kubectl")
	if _, err := os.Stat(kubectl); err != nil {
		return nil, nil, fmt.Errorf("kubectl not found in %s: run \"make controlplane\" first", filepath.Dir(kubectl))
	}
	pathDir, err := os.MkdirTemp("", "deltas-e2e-path-")
	if err != nil {
		return nil, nil, err
	}
	buildArgs := []string{"build", "-o", filepath.Join(pathDir, "kubectl-deltas")}
	if os.Getenv("DELTAS_E2E_RACE") != "" {
		// The plugin itself under the race detector (slower): a data race
		// makes it print "WARNING: DATA RACE" and exit 66.
		buildArgs = append(buildArgs, "-race")
	}
	build := exec.Command("go", append(buildArgs, "./cmd/kubectl-deltas")...)
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		return nil, nil, fmt.Errorf("building the plugin: %v\n%s", err, out)
	}
	if err := os.Symlink(kubectl, filepath.Join(pathDir, "kubectl")); err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cp, err := controlplane.Start(ctx, controlplane.Options{})
	if err != nil {
		return nil, nil, err
	}
	config, err := clientcmd.BuildConfigFromFlags("", cp.AdminKubeconfig())
	if err != nil {
		cp.Stop()
		return nil, nil, err
	}
	config.QPS, config.Burst = 200, 400
	e := &env{cp: cp, pathDir: pathDir, kubectl: kubectl, config: config}
	e.client = kubernetes.NewForConfigOrDie(config)
	e.dynamic = dynamic.NewForConfigOrDie(config)
	return e, func() {
		if e.busy != nil {
			e.busy.Stop()
		}
		cp.Stop()
		os.RemoveAll(pathDir)
	}, nil
}

// newNamespace creates a namespace unique to the test.
func newNamespace(t *testing.T) string {
	t.Helper()
	name := fmt.Sprintf("e2e-%d-%d", os.Getpid()%10000, nsSeq.Add(1))
	_, err := testEnv.client.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
	return name
}

// command returns `kubectl deltas args…` with the plugin on PATH and the
// admin kubeconfig in KUBECONFIG.
func command(ctx context.Context, kubeconfig string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, filepath.Join(testEnv.pathDir, "kubectl"), append([]string{"deltas"}, args...)...)
	cmd.Env = append(os.Environ(),
		"PATH="+testEnv.pathDir+string(os.PathListSeparator)+os.Getenv("PATH"),
		"KUBECONFIG="+kubeconfig,
		"NO_COLOR=1",
		"HOME="+testEnv.cp.Dir(),
	)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	return cmd
}

// result is a finished run.
type result struct {
	stdout, stderr string
	code           int
}

// run runs `kubectl deltas args…` to completion (bounded by limit).
func run(t *testing.T, limit time.Duration, args ...string) result {
	t.Helper()
	return runAs(t, testEnv.cp.AdminKubeconfig(), limit, args...)
}

func runAs(t *testing.T, kubeconfig string, limit time.Duration, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := command(ctx, kubeconfig, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("kubectl deltas %s did not finish within %s\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), limit, stdout.String(), stderr.String())
	}
	code := 0
	if err != nil {
		exit, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("running kubectl deltas: %v", err)
		}
		code = exit.ExitCode()
	}
	return result{stdout: stdout.String(), stderr: stderr.String(), code: code}
}

// stream is a running `kubectl deltas` whose stdout lines are read as they
// come.
type stream struct {
	t      *testing.T
	cmd    *exec.Cmd
	lines  chan string
	stderr *syncBuffer
	done   chan struct{}
	// seen keeps every line read, for failure messages.
	seen []string
	err  error
}

// start runs `kubectl deltas args…` in the background; it is stopped at
// the end of the test.
func start(t *testing.T, args ...string) *stream {
	t.Helper()
	return startAs(t, testEnv.cp.AdminKubeconfig(), args...)
}

func startAs(t *testing.T, kubeconfig string, args ...string) *stream {
	t.Helper()
	cmd := command(context.Background(), kubeconfig, args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	s := &stream{t: t, cmd: cmd, lines: make(chan string, 100000), stderr: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stderr = s.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			s.lines <- sc.Text()
		}
		close(s.lines)
	}()
	go func() {
		s.err = cmd.Wait()
		close(s.done)
	}()
	t.Cleanup(func() { s.stop() })
	return s
}

// next returns the next stdout line, failing the test after limit.
func (s *stream) next(limit time.Duration) string {
	s.t.Helper()
	select {
	case line, ok := <-s.lines:
		if !ok {
			s.t.Fatalf("kubectl deltas ended its output; lines so far:\n%s\nstderr:\n%s", strings.Join(s.seen, "\n"), s.stderr.String())
		}
		s.seen = append(s.seen, line)
		return line
	case <-time.After(limit):
		s.t.Fatalf("no output line within %s; lines so far:\n%s\nstderr:\n%s", limit, strings.Join(s.seen, "\n"), s.stderr.String())
	}
	return ""
}

// expect reads the next lines and requires them to equal want, in order.
func (s *stream) expect(want ...string) {
	s.t.Helper()
	for _, w := range want {
		if got := s.next(30 * time.Second); got != w {
			s.t.Fatalf("got line %q, want %q; lines so far:\n%s\nstderr:\n%s", got, w, strings.Join(s.seen, "\n"), s.stderr.String())
		}
	}
}

// waitFor reads lines until one matches (true) or d passes (false).
func (s *stream) waitFor(match func(string) bool, d time.Duration) bool {
	s.t.Helper()
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		select {
		case line, ok := <-s.lines:
			if !ok {
				s.t.Fatalf("kubectl deltas ended its output; lines so far:\n%s\nstderr:\n%s", strings.Join(s.seen, "\n"), s.stderr.String())
			}
			s.seen = append(s.seen, line)
			if match(line) {
				return true
			}
		case <-timer.C:
			return false
		}
	}
}

// waitStderrOf waits until the stream's stderr holds sub.
func waitStderrOf(t *testing.T, s *stream, sub string, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !strings.Contains(s.stderr.String(), sub) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q on stderr within %s; stderr:\n%s\nlines:\n%s", sub, limit, s.stderr.String(), strings.Join(s.seen, "\n"))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// quiet requires that no line arrives for d.
func (s *stream) quiet(d time.Duration) {
	s.t.Helper()
	select {
	case line, ok := <-s.lines:
		if ok {
			s.t.Fatalf("unexpected line %q; lines so far:\n%s", line, strings.Join(s.seen, "\n"))
		}
	case <-time.After(d):
	}
}

// stop interrupts the plugin and returns its exit code.
func (s *stream) stop() int {
	select {
	case <-s.done:
	default:
		_ = s.cmd.Process.Signal(os.Interrupt)
		select {
		case <-s.done:
		case <-time.After(20 * time.Second):
			_ = s.cmd.Process.Kill()
			<-s.done
		}
	}
	if exit, ok := s.err.(*exec.ExitError); ok {
		return exit.ExitCode()
	}
	return 0
}

// syncBuffer is a bytes.Buffer safe for a writer and readers.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

var _ io.Writer = (*syncBuffer)(nil)
