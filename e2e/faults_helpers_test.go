//go:build faults

package e2e

// Helpers of the fault-injection suite (make e2e-faults): a kubectl deltas
// run whose JSON records feed a ledger as they come, dedicated control
// planes for the destructive scenarios, and a writer that logs every
// successful write with the resourceVersion the server answered.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-deltas/kubectl-deltas/test/controlplane"
)

// cluster is a control plane with an admin client.
type cluster struct {
	cp     *controlplane.ControlPlane
	client kubernetes.Interface
}

// sharedCluster is the package's control plane: for scenarios that do not
// disturb the servers.
func sharedCluster() *cluster {
	return &cluster{cp: testEnv.cp, client: testEnv.client}
}

// startCluster starts a dedicated control plane with extra kube-apiserver
// flags, stopped at the end of the test.
func startCluster(t *testing.T, apiserverFlags ...string) *cluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(bg, 3*time.Minute)
	defer cancel()
	began := time.Now()
	cp, err := controlplane.Start(ctx, controlplane.Options{APIServerFlags: apiserverFlags})
	if err != nil {
		t.Fatalf("starting a dedicated control plane: %v", err)
	}
	t.Cleanup(cp.Stop)
	config, err := clientcmd.BuildConfigFromFlags("", cp.AdminKubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	config.QPS, config.Burst = 500, 1000
	t.Logf("dedicated control plane %s %v ready in %s", cp.Server(), apiserverFlags, time.Since(began).Round(100*time.Millisecond))
	return &cluster{cp: cp, client: kubernetes.NewForConfigOrDie(config)}
}

// namespace creates a namespace unique to the test.
func (c *cluster) namespace(t *testing.T) string {
	t.Helper()
	name := fmt.Sprintf("f-%d-%d", os.Getpid()%10000, nsSeq.Add(1))
	if _, err := c.client.CoreV1().Namespaces().Create(bg, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
	return name
}

// state lists the ConfigMaps of ns as key → resourceVersion.
func (c *cluster) state(ctx context.Context, ns string) (map[string]string, error) {
	list, err := c.client.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, cm := range list.Items {
		out[cm.Namespace+"/"+cm.Name] = cm.ResourceVersion
	}
	return out, nil
}

// deltasRun is a running kubectl deltas -o json whose records feed a
// ledger as they are printed.
type deltasRun struct {
	t      *testing.T
	args   []string
	cmd    *exec.Cmd
	led    *ledger
	stderr *syncBuffer
	// readDelay, if set, is waited before reading each line: a slow
	// reader.
	readDelay atomic.Int64
	// eof is closed when stdout ends; done when the process has exited.
	eof  chan struct{}
	done chan struct{}
	err  error
	// pid is the plugin's pid (kubectl execs the plugin in place).
	pid int
}

// startJSON runs `kubectl deltas args… -o json` with kubeconfig.
func startJSON(t *testing.T, kubeconfig string, args ...string) *deltasRun {
	t.Helper()
	args = append(args, "-o", "json")
	relistAll := false
	for _, a := range args {
		if a == "--relist=all" {
			relistAll = true
		}
	}
	cmd := command(context.Background(), kubeconfig, args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	d := &deltasRun{t: t, args: args, cmd: cmd, led: newLedger(relistAll), stderr: &syncBuffer{}, eof: make(chan struct{}), done: make(chan struct{})}
	cmd.Stderr = d.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	d.pid = cmd.Process.Pid
	go func() {
		defer close(d.eof)
		// A small buffer, so that a slow reader really is slow: the
		// plugin's writes block once the pipe is full.
		r := bufio.NewReaderSize(stdout, 4096)
		for {
			if delay := time.Duration(d.readDelay.Load()); delay > 0 {
				time.Sleep(delay)
			}
			line, err := r.ReadString('\n')
			if line != "" {
				d.led.applyLine(strings.TrimSuffix(line, "\n"))
			}
			if err != nil {
				return
			}
		}
	}()
	go func() {
		<-d.eof
		d.err = cmd.Wait()
		close(d.done)
	}()
	t.Cleanup(func() { d.stop() })
	return d
}

// describe is the run's state for failure messages.
func (d *deltasRun) describe() string {
	return fmt.Sprintf("kubectl deltas %s\n%s\nstderr:\n%s", strings.Join(d.args, " "), d.led.tail(40), d.stderr.String())
}

// waitFor polls cond until it holds, failing the test after limit or if
// the plugin exits first.
func (d *deltasRun) waitFor(what string, limit time.Duration, cond func() bool) {
	d.t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		select {
		case <-d.done:
			if !cond() {
				d.t.Fatalf("waiting for %s: kubectl deltas exited (%v)\n%s", what, d.err, d.describe())
			}
			return
		default:
		}
		if time.Now().After(deadline) {
			d.t.Fatalf("waiting for %s: not within %s\n%s", what, limit, d.describe())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitKeys waits until the stream shows exactly the given number of
// objects.
func (d *deltasRun) waitKeys(n int, limit time.Duration) {
	d.t.Helper()
	d.waitFor(fmt.Sprintf("%d objects in the stream", n), limit, func() bool { return len(d.led.snapshot()) == n })
}

// waitRecord waits for a record matching.
func (d *deltasRun) waitRecord(what string, limit time.Duration, match func(*deltaRecord) bool) {
	d.t.Helper()
	d.waitFor(what, limit, func() bool { return d.led.has(match) })
}

// waitStderr waits until stderr contains s.
func (d *deltasRun) waitStderr(s string, limit time.Duration) {
	d.t.Helper()
	d.waitFor(fmt.Sprintf("%q on stderr", s), limit, func() bool { return strings.Contains(d.stderr.String(), s) })
}

// converge waits until the stream's state equals the server's list of
// the ConfigMaps in ns, then checks the ledger's rules.
func (d *deltasRun) converge(c *cluster, ns string, limit time.Duration) map[string]string {
	d.t.Helper()
	deadline := time.Now().Add(limit)
	for {
		server, err := c.state(bg, ns)
		if err == nil {
			diff := stateDiff(d.led.snapshot(), server)
			if len(diff) == 0 {
				d.checkRules()
				return server
			}
			if time.Now().After(deadline) {
				d.t.Fatalf("the stream's state never matched the server's within %s:\n  %s\nledger rules broken:\n  %s\n%s",
					limit, strings.Join(diff, "\n  "), strings.Join(d.led.violations(), "\n  "), d.describe())
			}
		} else if time.Now().After(deadline) {
			d.t.Fatalf("listing the server: %v", err)
		}
		select {
		case <-d.done:
			d.t.Fatalf("kubectl deltas exited (%v) before the stream matched the server\n%s", d.err, d.describe())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// checkRules fails the test for every broken ledger rule.
func (d *deltasRun) checkRules() {
	d.t.Helper()
	if v := d.led.violations(); len(v) > 0 {
		d.t.Errorf("the stream broke %d ledger rules:\n  %s\n%s", len(v), strings.Join(v, "\n  "), d.describe())
	}
}

// stderrLines returns the lines of stderr starting with prefix.
func (d *deltasRun) stderrLines(prefix string) []string {
	var out []string
	for _, l := range strings.Split(d.stderr.String(), "\n") {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return out
}

// checkOutages requires exactly n "warning:" lines and n "info:
// connection restored" lines on stderr, and nothing else.
func (d *deltasRun) checkOutages(n int) {
	d.t.Helper()
	warnings, infos := d.stderrLines("warning: "), d.stderrLines("info: connection restored after ")
	if len(warnings) != n || len(infos) != n {
		d.t.Errorf("want %d outage(s): %d warning and %d \"info: connection restored\" line(s), got %d and %d; stderr:\n%s",
			n, n, n, len(warnings), len(infos), d.stderr.String())
	}
	for _, l := range strings.Split(strings.TrimSpace(d.stderr.String()), "\n") {
		if l != "" && !strings.HasPrefix(l, "warning: ") && !strings.HasPrefix(l, "info: connection restored after ") {
			d.t.Errorf("unexpected stderr line %q", l)
		}
	}
}

// signal sends sig to the plugin.
func (d *deltasRun) signal(sig os.Signal) {
	_ = d.cmd.Process.Signal(sig)
}

// wait waits for the exit and returns the code.
func (d *deltasRun) wait(limit time.Duration) int {
	d.t.Helper()
	select {
	case <-d.done:
	case <-time.After(limit):
		d.t.Fatalf("kubectl deltas did not exit within %s\n%s", limit, d.describe())
	}
	var exit *exec.ExitError
	if errors.As(d.err, &exit) {
		return exit.ExitCode()
	}
	return 0
}

// stop interrupts the plugin (if still running) and returns its exit code.
func (d *deltasRun) stop() int {
	select {
	case <-d.done:
	default:
		d.signal(os.Interrupt)
		select {
		case <-d.done:
		case <-time.After(20 * time.Second):
			_ = d.cmd.Process.Kill()
			<-d.done
		}
	}
	var exit *exec.ExitError
	if errors.As(d.err, &exit) {
		return exit.ExitCode()
	}
	return 0
}

// procStatus reads a field of /proc/PID/status in kB.
func procStatusKB(pid int, field string) (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, pid)
}

// procExe is the executable of pid.
func procExe(pid int) string {
	exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	return filepath.Base(exe)
}

// pluginPID finds the kubectl-deltas process of the run: kubectl execs the
// plugin in place (same pid) on Linux; a child process is looked for too.
func (d *deltasRun) pluginPID(limit time.Duration) int {
	d.t.Helper()
	deadline := time.Now().Add(limit)
	for {
		if procExe(d.pid) == "kubectl-deltas" {
			return d.pid
		}
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
			if err != nil {
				continue
			}
			// pid (comm) state ppid …
			if i := strings.LastIndexByte(string(stat), ')'); i > 0 {
				f := strings.Fields(string(stat)[i+1:])
				if len(f) > 1 && f[1] == strconv.Itoa(d.pid) && procExe(pid) == "kubectl-deltas" {
					return pid
				}
			}
		}
		if time.Now().After(deadline) {
			d.t.Fatalf("no kubectl-deltas process for pid %d (%s)", d.pid, procExe(d.pid))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// writer makes ConfigMap writes and logs each successful one with the
// resourceVersion the server answered. It tolerates failures (a server
// that is down): an ambiguous outcome is resolved by the next write's
// answer (AlreadyExists, NotFound). Safe for concurrent use on distinct
// names.
type writer struct {
	client kubernetes.Interface
	ns     string
	// payload is added to every object's data.
	payload string

	mu       sync.Mutex
	ops      map[string][]writeOp
	exists   map[string]bool
	updates  map[string]int
	failures int
	seq      int
}

func newWriter(client kubernetes.Interface, ns string) *writer {
	return &writer{client: client, ns: ns, ops: map[string][]writeOp{}, exists: map[string]bool{}, updates: map[string]int{}}
}

func (w *writer) key(name string) string { return w.ns + "/" + name }

func (w *writer) record(name, op, rv string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	k := w.key(name)
	w.ops[k] = append(w.ops[k], writeOp{op: op, rv: rv})
	switch op {
	case "create":
		w.exists[name], w.updates[name] = true, 0
	case "update":
		w.updates[name]++
	case "delete":
		w.exists[name] = false
	}
}

func (w *writer) failed(err error) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.failures++
	return err
}

func (w *writer) next() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seq++
	return w.seq
}

// unclear reports whether err leaves the outcome of a write unknown: no
// answer from the server (a timeout, a broken connection), as opposed to
// an API error, which says the write was not made.
func unclear(err error) bool {
	var status apierrors.APIStatus
	return err != nil && !errors.As(err, &status)
}

// readBack gets name after a write whose outcome is unknown; nil if it
// cannot tell.
func (w *writer) readBack(name string) (cm *corev1.ConfigMap, gone bool) {
	ctx, cancel := context.WithTimeout(bg, 30*time.Second)
	defer cancel()
	cm, err := w.client.CoreV1().ConfigMaps(w.ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, true
	}
	if err != nil {
		return nil, false
	}
	return cm, false
}

func (w *writer) create(ctx context.Context, name string) error {
	n := strconv.Itoa(w.next())
	data := map[string]string{"n": n}
	if w.payload != "" {
		data["payload"] = w.payload
	}
	cm, err := w.client.CoreV1().ConfigMaps(w.ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: data}, metav1.CreateOptions{})
	return w.finish(name, "create", n, cm, err)
}

func (w *writer) update(ctx context.Context, name string) error {
	n := strconv.Itoa(w.next())
	patch := fmt.Sprintf(`{"data":{"n":%q}}`, n)
	cm, err := w.client.CoreV1().ConfigMaps(w.ns).Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	return w.finish(name, "update", n, cm, err)
}

// finish settles the create or update op of name that wrote n: an unclear
// outcome is decided by reading the object back (only this writer writes
// name, so if it holds n the write was made), an AlreadyExists or NotFound
// corrects what the writer believes exists, and a write made is logged.
func (w *writer) finish(name, op, n string, cm *corev1.ConfigMap, err error) error {
	if unclear(err) {
		if got, _ := w.readBack(name); got != nil && got.Data["n"] == n {
			cm, err = got, nil
		}
	}
	w.noteExists(name, err)
	if err != nil {
		return w.failed(err)
	}
	w.record(name, op, cm.ResourceVersion)
	return nil
}

// noteExists corrects what the writer believes of name after a write that
// failed with AlreadyExists or NotFound.
func (w *writer) noteExists(name string, err error) {
	switch {
	case apierrors.IsAlreadyExists(err):
		w.mu.Lock()
		w.exists[name] = true
		w.mu.Unlock()
	case apierrors.IsNotFound(err):
		w.mu.Lock()
		w.exists[name] = false
		w.mu.Unlock()
	}
}

// remove deletes name and logs the deletion's resourceVersion, read from
// the object the server returns.
func (w *writer) remove(ctx context.Context, name string) error {
	raw, err := w.client.CoreV1().RESTClient().Delete().Namespace(w.ns).Resource("configmaps").Name(name).Do(ctx).Raw()
	if unclear(err) {
		if _, gone := w.readBack(name); gone {
			raw, err = nil, nil
		}
	}
	w.noteExists(name, err)
	if err != nil {
		return w.failed(err)
	}
	var obj struct {
		Kind     string `json:"kind"`
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	rv := ""
	if json.Unmarshal(raw, &obj) == nil && obj.Kind == "ConfigMap" {
		rv = obj.Metadata.ResourceVersion
	}
	w.record(name, "delete", rv)
	return nil
}

// step makes the i-th write of a round-robin lifecycle over names: create,
// then updates, then delete, then create again.
func (w *writer) step(ctx context.Context, names []string, i, updatesPerLife int) error {
	name := names[i%len(names)]
	w.mu.Lock()
	exists, updates := w.exists[name], w.updates[name]
	w.mu.Unlock()
	switch {
	case !exists:
		return w.create(ctx, name)
	case updates < updatesPerLife:
		return w.update(ctx, name)
	default:
		return w.remove(ctx, name)
	}
}

// runPaced makes one write every interval until stopped (the returned
// function stops it, after the write under way, and returns the number of
// steps attempted).
func (w *writer) runPaced(names []string, interval time.Duration, updatesPerLife int) (stop func() int) {
	ctx, cancel := context.WithCancel(bg)
	done := make(chan int)
	go func() {
		ticker := time.NewTicker(interval)
		defer ticker.Stop()
		i := 0
		for {
			select {
			case <-ctx.Done():
				done <- i
				return
			case <-ticker.C:
			}
			// Not derived from ctx: stopping lets the write under way finish,
			// so that a write the server made is never logged as failed.
			reqCtx, reqCancel := context.WithTimeout(bg, 30*time.Second)
			_ = w.step(reqCtx, names, i, updatesPerLife)
			reqCancel()
			i++
		}
	}()
	var once sync.Once
	steps := 0
	return func() int {
		once.Do(func() {
			cancel()
			steps = <-done
		})
		return steps
	}
}

// writes returns a copy of the write log.
func (w *writer) writes() map[string][]writeOp {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make(map[string][]writeOp, len(w.ops))
	for k, v := range w.ops {
		out[k] = append([]writeOp(nil), v...)
	}
	return out
}

func (w *writer) total() (ok, failed int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, v := range w.ops {
		ok += len(v)
	}
	return ok, w.failures
}

// names returns prefix-0 … prefix-(n-1).
func names(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%d", prefix, i)
	}
	return out
}

// waitWatchingJSON proves the run's watch is open: it creates probe
// ConfigMaps in ns until one is printed as Added, then deletes it and
// waits for its Deleted. Probes are named probe-N; checkSequence ignores
// them.
func (d *deltasRun) waitWatchingJSON(c *cluster, ns string, limit time.Duration) {
	d.t.Helper()
	w := newWriter(c.client, ns)
	deadline := time.Now().Add(limit)
	for i := 0; ; i++ {
		name := fmt.Sprintf("probe-%d", probeSeq.Add(1))
		if err := w.create(bg, name); err != nil {
			d.t.Fatalf("creating probe: %v", err)
		}
		key := w.key(name)
		seen := func(typ string) func() bool {
			return func() bool {
				return d.led.has(func(r *deltaRecord) bool { return r.key() == key && r.Type == typ })
			}
		}
		ok := false
		for end := time.Now().Add(3 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
			if ok = seen("Added")(); ok {
				break
			}
		}
		if err := w.remove(bg, name); err != nil {
			d.t.Fatalf("deleting probe: %v", err)
		}
		if ok || d.led.has(func(r *deltaRecord) bool { return r.key() == key }) {
			d.waitFor("the probe's Deleted", 30*time.Second, seen("Deleted"))
			if ok {
				return
			}
		}
		if time.Now().After(deadline) {
			d.t.Fatalf("the stream never showed a probe as Added\n%s", d.describe())
		}
	}
}

// noStackTrace fails if stderr looks like a Go panic or stack dump.
func noStackTrace(t *testing.T, stderr string) {
	t.Helper()
	for _, s := range []string{"panic:", "goroutine ", "runtime.", "SIGPIPE", "signal: broken pipe"} {
		if strings.Contains(stderr, s) {
			t.Errorf("stderr contains %q (a crash?):\n%s", s, stderr)
		}
	}
}
