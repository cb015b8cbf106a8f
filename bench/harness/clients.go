package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// clientDef is one benchmarked client: a separate process whose stdout the
// harness reads and counts.
type clientDef struct {
	ID    string // stable key in results files
	Group string // a, b, c, d
	Label string // what the tables show
	// Measured explains what "all N objects printed" means for it.
	Measured string
	mode     countMode
	// exits is true when the sync run ends by itself after N objects.
	exits bool
	// args builds the command line; watch is true for the update-burst
	// run, which must keep watching after the initial state.
	args func(e *env, watch bool) []string
	// extraEnv is added to the child's environment.
	extraEnv []string
	// noBurst leaves the client out of the update burst.
	noBurst bool
	// tee, when set, sees every byte of the client's stdout.
	tee func([]byte)
	// peakPerObject is roughly the client's peak RSS per object (bytes),
	// as measured at 50,000 Pods: the scale section skips the client when
	// the machine has not that much memory available for it.
	peakPerObject int64
}

// env is what the command lines need.
type env struct {
	bin        string // repo bin/ (kubectl, kubectl-deltas)
	tools      string // bench/out/bin (baseline, rawclient, profile)
	kubeconfig string
	server     string
	token      string
	home       string
	n          int
	// scale makes the kubectl deltas command lines watch every
	// namespace's Pods (the scale section) instead of ConfigMaps in the
	// benchmark namespace.
	scale bool
	// apiserverPID and etcdPID are the control plane's processes, whose
	// CPU time each run also records.
	apiserverPID, etcdPID int
	// maxForeign is the share of the CPUs other processes may use during
	// a sync run before it is repeated; attempts bounds the repeats.
	maxForeign float64
	attempts   int
	// serverGC makes kube-apiserver collect its garbage (see
	// cluster.serverGC); nil in tests.
	serverGC func(context.Context) error
}

func (e *env) deltas(format string, watch bool, extra ...string) []string {
	target := []string{"cm", "-n", benchNamespace}
	if e.scale {
		target = []string{"pods", "-A"}
	}
	args := append(append([]string{filepath.Join(e.bin, "kubectl-deltas")}, target...), "-o", format, "--kubeconfig", e.kubeconfig)
	if !watch {
		args = append(args, "--count="+strconv.Itoa(e.n))
	}
	return append(args, extra...)
}

func (e *env) baseline(watch bool) []string {
	args := []string{filepath.Join(e.tools, "baseline"), "-kubeconfig", e.kubeconfig, "-namespace", benchNamespace}
	if !watch {
		args = append(args, "-count", strconv.Itoa(e.n))
	}
	return args
}

func clients() []clientDef {
	return []clientDef{
		{
			ID: "a", Group: "a", Label: "(a) raw HTTP list",
			Measured: "one unpaginated GET of the collection (no gzip), body copied to stdout; done at the last object's name. In the update burst: one raw watch (?watch=true), done at the line of the last write.",
			mode:     markers(objectPrefix), exits: true,
			args: func(e *env, watch bool) []string {
				args := []string{filepath.Join(e.tools, "rawclient"), "-server", e.server}
				if watch {
					args = append(args, "-watch")
				}
				return args
			},
		},
		{
			ID: "a-gzip", Group: "a", Label: "(a) raw HTTP list, gzip",
			Measured: "as (a) but asking for gzip as client-go does (Accept-Encoding: gzip); the server compresses lists over 128 KiB.",
			mode:     markers(objectPrefix), exits: true, noBurst: true,
			args: func(e *env, _ bool) []string {
				return []string{filepath.Join(e.tools, "rawclient"), "-server", e.server, "-gzip"}
			},
		},
		{
			ID: "b-list", Group: "b", Label: "(b) client-go, list+watch",
			Measured: "bench/baseline: client-go Reflector+DeltaFIFO+Indexer, dynamic client, one encoding/json line per delta; KUBE_FEATURE_WatchListClient=false.",
			mode:     lines(), exits: true,
			args:     func(e *env, watch bool) []string { return e.baseline(watch) },
			extraEnv: []string{"KUBE_FEATURE_WatchListClient=false"},
		},
		{
			ID: "b-stream", Group: "b", Label: "(b) client-go, streaming list",
			Measured: "as above with KUBE_FEATURE_WatchListClient=true (client-go v0.36's default).",
			mode:     lines(), exits: true,
			args:     func(e *env, watch bool) []string { return e.baseline(watch) },
			extraEnv: []string{"KUBE_FEATURE_WatchListClient=true"},
		},
		{
			ID: "c", Group: "c", Label: "(c) kubectl get -w",
			Measured: "`kubectl get cm -n bench -w --output-watch-events -o json`: it prints each list page as ONE event holding a List, indented; done when N object names have been printed, then killed.",
			mode:     markers(objectPrefix), exits: false,
			args: func(e *env, _ bool) []string {
				return []string{filepath.Join(e.bin, "kubectl"), "get", "cm", "-n", benchNamespace, "-w", "--output-watch-events", "-o", "json", "--kubeconfig", e.kubeconfig}
			},
		},
		{
			ID: "d-json", Group: "d", Label: "(d) kubectl deltas -o json",
			Measured: "bin/kubectl-deltas cm -n bench -o json --count=N (default --watch-list=auto); one JSON line per delta.",
			mode:     lines(), exits: true,
			args: func(e *env, watch bool) []string { return e.deltas("json", watch) },
		},
		{
			ID: "d-text", Group: "d", Label: "(d) kubectl deltas -o text",
			Measured: "as above with -o text.",
			mode:     lines(), exits: true,
			args: func(e *env, watch bool) []string { return e.deltas("text", watch) },
		},
		{
			ID: "d-wide", Group: "d", Label: "(d) kubectl deltas -o wide",
			Measured: "-o wide --no-headers: the server's Table with each row's object (issue 23); one line per delta.",
			mode:     lines(), exits: true,
			args: func(e *env, watch bool) []string { return e.deltas("wide", watch, "--no-headers") },
		},
		{
			ID: "d-json-wl", Group: "d", Label: "(d) -o json --watch-list=true",
			Measured: "-o json --watch-list=true (streaming list).",
			mode:     lines(), exits: true,
			args: func(e *env, watch bool) []string { return e.deltas("json", watch, "--watch-list=true") },
		},
		{
			ID: "d-handler", Group: "d", Label: "(d) -o json --handler",
			Measured: "-o json --handler: the SharedIndexInformer's handler calls through the RealFIFO of client-go v0.36 (issue 43); one JSON line per call.",
			mode:     lines(), exits: true,
			args: func(e *env, watch bool) []string { return e.deltas("json", watch, "--handler") },
		},
		{
			ID: "d-handler-delta", Group: "d", Label: "(d) -o json --handler --fifo=delta",
			Measured: "as above through the DeltaFIFO (client-go v0.32 and earlier).",
			mode:     lines(), exits: true,
			args: func(e *env, watch bool) []string { return e.deltas("json", watch, "--handler", "--fifo=delta") },
		},
		{
			ID: "d-json-nowl", Group: "d", Label: "(d) -o json --watch-list=false",
			Measured: "-o json --watch-list=false (list, then watch).",
			mode:     lines(), exits: true,
			args: func(e *env, watch bool) []string { return e.deltas("json", watch, "--watch-list=false") },
		},
	}
}

// sample is one measured run of one client.
type sample struct {
	Round int `json:"round"`
	// WallMS is from the process start until the read that completed the
	// N-th object returned.
	WallMS float64 `json:"wallMs"`
	// CPUMS is user+system time of the process (rusage), until it exited
	// or was stopped right after the N-th object.
	CPUMS float64 `json:"cpuMs"`
	// MaxRSSKiB is the process's peak resident set (rusage ru_maxrss).
	MaxRSSKiB int64 `json:"maxRssKiB"`
	// MaxAnonKiB and MaxFileKiB are the largest RssAnon (heap, stacks)
	// and RssFile (mapped executable and libraries) seen when sampling
	// /proc/PID/status every 10 ms.
	MaxAnonKiB int64 `json:"maxAnonKiB"`
	MaxFileKiB int64 `json:"maxFileKiB"`
	// ServerCPUMS is the CPU time kube-apiserver spent during the run
	// (utime+stime from /proc, 10 ms resolution).
	ServerCPUMS float64 `json:"serverCpuMs"`
	// Foreign is the share of the CPUs (0-1) that processes other than
	// the client, the control plane and the harness used during the run;
	// Attempts is how many runs it took to get one below the limit.
	Foreign  float64 `json:"foreign"`
	Attempts int     `json:"attempts,omitempty"`
	// Bytes is how much the client printed.
	Bytes int64 `json:"bytes"`
	// BurstDelayMS is, in a burst run, from the last write's response to
	// the client's output of the last of the M writes.
	BurstDelayMS float64 `json:"burstDelayMs,omitempty"`
	// BurstWriteMS is how long the M writes took.
	BurstWriteMS float64 `json:"burstWriteMs,omitempty"`
	Error        string  `json:"error,omitempty"`
}

// process is a started client, run through bench/rusage.
type process struct {
	cmd      *exec.Cmd
	counter  *streamCounter
	start    time.Time
	readDone chan struct{}
	stderr   *tailBuffer
	report   string // bench/rusage's report file
	sampler  *anonSampler
	// samplerDone is closed when the sampler has stopped.
	samplerDone chan struct{}
}

// rusageReport is bench/rusage's report.
type rusageReport struct {
	StartUnixNano int64  `json:"startUnixNano"`
	UserNanos     int64  `json:"userNanos"`
	SystemNanos   int64  `json:"systemNanos"`
	MaxRSSKiB     int64  `json:"maxRssKiB"`
	ExitCode      int    `json:"exitCode"`
	Signal        string `json:"signal"`
}

func startClient(c *clientDef, e *env, watch bool) (*process, error) {
	report, err := os.CreateTemp(e.home, "rusage-*.json")
	if err != nil {
		return nil, fmt.Errorf("create a report file: %w", err)
	}
	report.Close()
	args := append([]string{filepath.Join(e.tools, "rusage"), "-report", report.Name(), "--"}, c.args(e, watch)...)
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), "HOME="+e.home, "BENCH_TOKEN="+e.token, "NO_COLOR=1")
	cmd.Env = append(cmd.Env, c.extraEnv...)
	// Its own process group, so that a hung client can be killed with
	// everything it started.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("stdout pipe: %w", err)
	}
	p := &process{cmd: cmd, counter: newStreamCounter(c.mode), readDone: make(chan struct{}), stderr: &tailBuffer{max: 4096}, report: report.Name()}
	p.counter.tee = c.tee
	cmd.Stderr = p.stderr
	p.start = time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", args[4], err)
	}
	go func() {
		defer close(p.readDone)
		p.counter.run(stdout)
	}()
	p.sampler = &anonSampler{wrapperPID: cmd.Process.Pid}
	p.samplerDone = make(chan struct{})
	go func() {
		defer close(p.samplerDone)
		p.sampler.run(10*time.Millisecond, p.readDone)
	}()
	return p, nil
}

// killGroup kills the client's process group.
func (p *process) killGroup() {
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
}

// stop ends the client (SIGTERM, which bench/rusage forwards and follows
// with SIGKILL after 3 s; the whole group is killed after 10 s) and waits
// for it.
func (p *process) stop() {
	if p.cmd.ProcessState != nil {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	timer := time.AfterFunc(10*time.Second, p.killGroup)
	defer timer.Stop()
	<-p.readDone
	_ = p.cmd.Wait()
}

// end stops the client and reaps it, its figures unused.
func (p *process) end() {
	p.stop()
	var u sample
	p.usage(&u)
}

// wait waits for the client to exit by itself within timeout, killing it
// after that.
func (p *process) wait(timeout time.Duration) error {
	timer := time.AfterFunc(timeout, p.killGroup)
	defer timer.Stop()
	<-p.readDone
	if err := p.cmd.Wait(); err != nil {
		return fmt.Errorf("%w; stderr: %s", err, truncate(p.stderr.String(), 400))
	}
	return nil
}

// usage fills the rusage figures of an exited client and returns the time
// the client itself was started (p.start if the report is missing).
func (p *process) usage(s *sample) time.Time {
	_, s.Bytes = p.counter.Objects()
	<-p.samplerDone
	s.MaxAnonKiB, s.MaxFileKiB = p.sampler.maxAnonKiB, p.sampler.maxFileKiB
	b, err := os.ReadFile(p.report)
	_ = os.Remove(p.report)
	var r rusageReport
	if err != nil || json.Unmarshal(b, &r) != nil || r.StartUnixNano == 0 {
		if s.Error == "" {
			s.Error = "no resource usage report (the client was killed)"
		}
		return p.start
	}
	s.CPUMS = ms(time.Duration(r.UserNanos + r.SystemNanos))
	s.MaxRSSKiB = r.MaxRSSKiB
	return time.Unix(0, r.StartUnixNano)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// waitObjects waits until the client printed n objects (as registered by
// w, from p.counter.WaitFor), the stream ended, or timeout.
func (p *process) waitObjects(ctx context.Context, w <-chan time.Time, n int, timeout time.Duration) (time.Time, error) {
	select {
	case t, ok := <-w:
		if !ok {
			got, _ := p.counter.Objects()
			return time.Time{}, fmt.Errorf("output ended after %d of %d objects; stderr: %s", got, n, truncate(p.stderr.String(), 400))
		}
		return t, nil
	case <-time.After(timeout):
		got, _ := p.counter.Objects()
		return time.Time{}, fmt.Errorf("timed out after %s with %d of %d objects; stderr: %s", timeout, got, n, truncate(p.stderr.String(), 400))
	case <-ctx.Done():
		return time.Time{}, ctx.Err()
	}
}

// syncRun measures the initial sync of one client, again (up to
// e.attempts times) when other processes took more than e.maxForeign of
// the CPUs meanwhile: this machine may be shared.
func syncRun(ctx context.Context, c *clientDef, e *env, round int, timeout time.Duration) sample {
	var s sample
	for attempt := 1; attempt <= max(1, e.attempts); attempt++ {
		s = syncRunOnce(ctx, c, e, round, timeout)
		s.Attempts = attempt
		if s.Error != "" || s.Foreign < 0 || s.Foreign <= e.maxForeign || ctx.Err() != nil || attempt == max(1, e.attempts) {
			break
		}
		logf("  %-32s other processes used %.0f%% of the CPUs meanwhile: measuring again", c.Label, 100*s.Foreign)
		time.Sleep(2 * time.Second)
	}
	return s
}

// serverIdle is how little CPU kube-apiserver and etcd may use over
// serverIdleWindow before a sample starts: the server finishes (and
// garbage-collects after) the previous client's requests first, so that no
// client pays for the one before it (kubectl get -w's paged lists leave the
// server busy for a second or more at 50,000 objects).
const (
	serverIdle       = 20 * time.Millisecond
	serverIdleWindow = 250 * time.Millisecond
	serverIdleMax    = 15 * time.Second
)

// waitServerIdle makes kube-apiserver collect its garbage, then waits, at
// most serverIdleMax, until kube-apiserver and etcd together used at most
// serverIdle of CPU over serverIdleWindow.
func waitServerIdle(ctx context.Context, e *env) {
	if e.serverGC != nil {
		if err := e.serverGC(ctx); err != nil {
			logf("%v (measuring anyway)", err)
		}
	}
	deadline := time.Now().Add(serverIdleMax)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		a0, e0 := procCPU(e.apiserverPID), procCPU(e.etcdPID)
		time.Sleep(serverIdleWindow)
		a1, e1 := procCPU(e.apiserverPID), procCPU(e.etcdPID)
		if a0 < 0 || a1 < 0 || (a1-a0)+max(0, e1-e0) <= serverIdle {
			return
		}
	}
}

func syncRunOnce(ctx context.Context, c *clientDef, e *env, round int, timeout time.Duration) sample {
	s := sample{Round: round}
	waitServerIdle(ctx, e)
	cont := startContention(e.apiserverPID, e.etcdPID)
	server0 := procCPU(e.apiserverPID)
	p, err := startClient(c, e, false)
	if err != nil {
		s.Error = err.Error()
		return s
	}
	t, err := p.waitObjects(ctx, p.counter.WaitFor(e.n), e.n, timeout)
	if err != nil {
		s.Error = err.Error()
		p.stop()
		p.usage(&s)
		return s
	}
	if c.exits {
		if err := p.wait(30 * time.Second); err != nil {
			s.Error = "after the sync: " + err.Error()
		}
	} else {
		p.stop()
	}
	start := p.usage(&s)
	s.WallMS = ms(t.Sub(start))
	s.Foreign = cont.foreign(time.Duration(s.CPUMS * float64(time.Millisecond)))
	if server0 >= 0 {
		if server1 := procCPU(e.apiserverPID); server1 >= 0 {
			s.ServerCPUMS = ms(server1 - server0)
		}
	}
	return s
}

// settle is the pause between a client's initial sync and the update
// burst, so that its watch is open and the sync's garbage collected.
const settle = 500 * time.Millisecond

// burstRun starts a watching client, waits for its initial sync, makes m
// updates and measures how long after the last write's response the client
// printed the last of them.
func burstRun(ctx context.Context, c *clientDef, e *env, cl *cluster, round, first, m int, timeout time.Duration) (s sample) {
	s.Round = round
	p, err := startClient(c, e, true)
	if err != nil {
		s.Error = err.Error()
		return s
	}
	var synced time.Time
	defer func() {
		p.stop()
		start := p.usage(&s)
		if !synced.IsZero() {
			s.WallMS = ms(synced.Sub(start))
		}
		if s.Error == "" || strings.HasPrefix(s.Error, "no resource usage") {
			// The client was stopped by the harness; its rusage is not
			// what this run measures.
			s.Error = ""
		}
	}()
	synced, err = p.waitObjects(ctx, p.counter.WaitFor(e.n), e.n, timeout)
	if err != nil {
		s.Error = "initial sync: " + err.Error()
		return s
	}
	time.Sleep(settle)
	if got, _ := p.counter.Objects(); got != e.n {
		s.Error = fmt.Sprintf("the client printed %d objects before the burst, want %d", got, e.n)
		return s
	}
	// Registered before the writes, so that the time is when the count
	// was reached, even if that was before the last response.
	all := p.counter.WaitFor(e.n + m)
	b, err := cl.burst(ctx, fmt.Sprintf("r%d-%s", round, c.ID), first, m, e.n)
	if err != nil {
		s.Error = err.Error()
		return s
	}
	s.BurstWriteMS = ms(b.took)
	seen, err := p.waitObjects(ctx, all, e.n+m, 60*time.Second)
	if err != nil {
		s.Error = "burst: " + err.Error()
		return s
	}
	s.BurstDelayMS = ms(seen.Sub(b.lastResponse))
	return s
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = append(t.buf[:0:0], t.buf[len(t.buf)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
