package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
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
}

func (e *env) deltas(format string, watch bool, extra ...string) []string {
	args := []string{filepath.Join(e.bin, "kubectl-deltas"), "cm", "-n", benchNamespace, "-o", format, "--kubeconfig", e.kubeconfig}
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
			ID: "d-json-wl", Group: "d", Label: "(d) -o json --watch-list=true",
			Measured: "-o json --watch-list=true (streaming list).",
			mode:     lines(), exits: true,
			args: func(e *env, watch bool) []string { return e.deltas("json", watch, "--watch-list=true") },
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
	// Bytes is how much the client printed.
	Bytes int64 `json:"bytes"`
	// BurstDelayMS is, in a burst run, from the last write's response to
	// the client's output of the last of the M writes.
	BurstDelayMS float64 `json:"burstDelayMs,omitempty"`
	// BurstWriteMS is how long the M writes took.
	BurstWriteMS float64 `json:"burstWriteMs,omitempty"`
	Error        string  `json:"error,omitempty"`
}

// process is a started client.
type process struct {
	cmd      *exec.Cmd
	counter  *streamCounter
	start    time.Time
	readDone chan struct{}
	stderr   *tailBuffer
}

func startClient(c *clientDef, e *env, watch bool) (*process, error) {
	args := c.args(e, watch)
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), "HOME="+e.home, "BENCH_TOKEN="+e.token, "NO_COLOR=1")
	cmd.Env = append(cmd.Env, c.extraEnv...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("stdout pipe: %w", err)
	}
	p := &process{cmd: cmd, counter: newStreamCounter(c.mode), readDone: make(chan struct{}), stderr: &tailBuffer{max: 4096}}
	p.counter.tee = c.tee
	cmd.Stderr = p.stderr
	p.start = time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", args[0], err)
	}
	go func() {
		defer close(p.readDone)
		p.counter.run(stdout)
	}()
	return p, nil
}

// stop ends the process (SIGTERM, then SIGKILL after a grace period) and
// waits for it.
func (p *process) stop() {
	if p.cmd.ProcessState == nil {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		exited := make(chan struct{})
		go func() {
			select {
			case <-exited:
			case <-time.After(3 * time.Second):
				_ = p.cmd.Process.Kill()
			}
		}()
		<-p.readDone
		_ = p.cmd.Wait()
		close(exited)
	}
}

// wait waits for the process to exit by itself within timeout, killing it
// after that.
func (p *process) wait(timeout time.Duration) error {
	timer := time.AfterFunc(timeout, func() { _ = p.cmd.Process.Kill() })
	defer timer.Stop()
	<-p.readDone
	err := p.cmd.Wait()
	if err != nil {
		return fmt.Errorf("%w; stderr: %s", err, truncate(p.stderr.String(), 400))
	}
	return nil
}

// usage fills the rusage figures of an exited process.
func (p *process) usage(s *sample) {
	ps := p.cmd.ProcessState
	if ps == nil {
		return
	}
	s.CPUMS = ms(ps.UserTime() + ps.SystemTime())
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		s.MaxRSSKiB = ru.Maxrss
	}
	_, s.Bytes = p.counter.Objects()
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// waitObjects waits until the client printed n objects, the stream ended,
// or timeout.
func (p *process) waitObjects(ctx context.Context, n int, timeout time.Duration) (time.Time, error) {
	select {
	case t, ok := <-p.counter.WaitFor(n):
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

// syncRun measures the initial sync of one client.
func syncRun(ctx context.Context, c *clientDef, e *env, round int, timeout time.Duration) sample {
	s := sample{Round: round}
	p, err := startClient(c, e, false)
	if err != nil {
		s.Error = err.Error()
		return s
	}
	t, err := p.waitObjects(ctx, e.n, timeout)
	if err != nil {
		s.Error = err.Error()
		p.stop()
		p.usage(&s)
		return s
	}
	s.WallMS = ms(t.Sub(p.start))
	if c.exits {
		if err := p.wait(30 * time.Second); err != nil {
			s.Error = "after the sync: " + err.Error()
		}
	} else {
		p.stop()
	}
	p.usage(&s)
	return s
}

// settle is the pause between a client's initial sync and the update
// burst, so that its watch is open and the sync's garbage collected.
const settle = 500 * time.Millisecond

// burstRun starts a watching client, waits for its initial sync, makes m
// updates and measures how long after the last write's response the client
// printed the last of them.
func burstRun(ctx context.Context, c *clientDef, e *env, cl *cluster, round, first, m int, timeout time.Duration) sample {
	s := sample{Round: round}
	p, err := startClient(c, e, true)
	if err != nil {
		s.Error = err.Error()
		return s
	}
	defer func() {
		p.stop()
		p.usage(&s)
	}()
	t, err := p.waitObjects(ctx, e.n, timeout)
	if err != nil {
		s.Error = "initial sync: " + err.Error()
		return s
	}
	s.WallMS = ms(t.Sub(p.start))
	time.Sleep(settle)
	if got, _ := p.counter.Objects(); got != e.n {
		s.Error = fmt.Sprintf("the client printed %d objects before the burst, want %d", got, e.n)
		return s
	}
	b, err := cl.burst(ctx, fmt.Sprintf("r%d-%s", round, c.ID), first, m, e.n)
	if err != nil {
		s.Error = err.Error()
		return s
	}
	s.BurstWriteMS = ms(b.took)
	seen, err := p.waitObjects(ctx, e.n+m, 60*time.Second)
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
