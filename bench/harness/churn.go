package main

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// churnSample is one client watching while the writers patch Pods for a
// while at a fixed rate (or as fast as they go), next to a plain HTTP
// watch of the same Pods started at the same time.
type churnSample struct {
	ID    string `json:"id"`
	Label string `json:"label"`
	// Rate is the target in writes per second, 0 for as fast as the
	// writers go.
	Rate int `json:"rate"`
	// Writes is how many writes succeeded, WriteSeconds from the first
	// write's start to the last one's response.
	Writes       int     `json:"writes"`
	WriteSeconds float64 `json:"writeSeconds"`
	// SyncMS is how long the client's initial sync took before the churn.
	SyncMS float64 `json:"syncMs"`
	// Client and Reference are the delays from each write's response to
	// its line on the client's stdout and on the plain watch's.
	Client    delayStats `json:"client"`
	Reference delayStats `json:"reference"`
	// CPUMS is the client's CPU time over the churn (from the first write
	// until it printed the last one).
	CPUMS float64 `json:"cpuMs"`
	// RSS (RssAnon+RssFile) and RssAnon of the client at the first write,
	// after the last one, and the largest seen in between (sampled every
	// second).
	RSSStartKiB  int64 `json:"rssStartKiB"`
	RSSEndKiB    int64 `json:"rssEndKiB"`
	RSSMaxKiB    int64 `json:"rssMaxKiB"`
	AnonStartKiB int64 `json:"anonStartKiB"`
	AnonEndKiB   int64 `json:"anonEndKiB"`
	// RSSSeriesKiB is the RSS sampled every second over the churn.
	RSSSeriesKiB []int64 `json:"rssSeriesKiB,omitempty"`
	// ServerCPUMS is kube-apiserver's CPU time over the churn.
	ServerCPUMS float64 `json:"serverCpuMs"`
	Error       string  `json:"error,omitempty"`
}

// CPUPer1000MS is the client's CPU time per 1,000 events it printed.
func (s churnSample) CPUPer1000MS() float64 {
	if s.Client.Matched == 0 {
		return 0
	}
	return s.CPUMS / float64(s.Client.Matched) * 1000
}

// delayStats summarises the delays of one watcher.
type delayStats struct {
	// Lines is how many lines about benchmark Pods the watcher printed
	// during the churn, Matched how many of them were paired with a write,
	// Missing how many writes it never printed.
	Lines   int     `json:"lines"`
	Matched int     `json:"matched"`
	Missing int     `json:"missing"`
	P50MS   float64 `json:"p50Ms"`
	P99MS   float64 `json:"p99Ms"`
	MaxMS   float64 `json:"maxMs"`
}

// lineMatcher sees a watcher's stdout (a streamCounter tee) and, once
// active, notes when each line about a benchmark Pod arrived, by Pod.
type lineMatcher struct {
	mu       sync.Mutex
	active   bool
	partial  []byte
	arrivals [][]int64 // by Pod index: unix nanos of its lines, in order
	lines    int
	// index finds the object a line is about; podIndex by default.
	index func(line []byte) (int, bool)
}

func newLineMatcher(n int) *lineMatcher {
	return &lineMatcher{arrivals: make([][]int64, n), index: podIndex}
}

func (m *lineMatcher) activate() {
	m.mu.Lock()
	m.active = true
	m.mu.Unlock()
}

// reset forgets the lines seen so far.
func (m *lineMatcher) reset() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := range m.arrivals {
		m.arrivals[i] = m.arrivals[i][:0]
	}
	m.lines = 0
}

func (m *lineMatcher) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.lines
}

// tee is the streamCounter's tee: b is what one read returned.
func (m *lineMatcher) tee(b []byte) {
	now := time.Now().UnixNano()
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.active {
		// The initial sync: keep the unfinished line only.
		if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
			m.partial = append(m.partial[:0], b[i+1:]...)
		} else {
			m.partial = append(m.partial, b...)
		}
		return
	}
	data := make([]byte, 0, len(m.partial)+len(b))
	data = append(append(data, m.partial...), b...)
	for {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			break
		}
		if idx, ok := m.index(data[:i]); ok && idx < len(m.arrivals) {
			m.arrivals[idx] = append(m.arrivals[idx], now)
			m.lines++
		}
		data = data[i+1:]
	}
	m.partial = append(m.partial[:0:0], data...)
}

// podIndex finds the first benchmark Pod name in a line and returns its
// number.
func podIndex(line []byte) (int, bool) {
	i := bytes.Index(line, []byte(podPrefix))
	if i < 0 || i+len(podPrefix)+podDigits > len(line) {
		return 0, false
	}
	idx, err := strconv.Atoi(string(line[i+len(podPrefix) : i+len(podPrefix)+podDigits]))
	return idx, err == nil
}

// write is one churn write: the Pod and the unix nanos of its response.
type write struct {
	pod  int32
	resp int64
}

// delays pairs the writes with the watcher's lines, Pod by Pod in order
// (the writes to one Pod are seconds apart, so their events arrive in the
// order of the responses), and summarises the delays.
func (m *lineMatcher) delays(writes []write) delayStats {
	m.mu.Lock()
	defer m.mu.Unlock()
	st := delayStats{Lines: m.lines}
	// In the order of the responses: the writers' lists are joined one
	// after the other.
	writes = slices.Clone(writes)
	slices.SortFunc(writes, func(a, b write) int { return cmp.Compare(a.resp, b.resp) })
	seen := make(map[int32]int, len(writes))
	ds := make([]float64, 0, len(writes))
	for _, w := range writes {
		k := seen[w.pod]
		seen[w.pod] = k + 1
		a := m.arrivals[w.pod]
		if k >= len(a) {
			st.Missing++
			continue
		}
		ds = append(ds, float64(a[k]-w.resp)/1e6)
	}
	st.Matched = len(ds)
	if len(ds) > 0 {
		slices.Sort(ds)
		st.P50MS = ds[(len(ds)-1)/2]
		st.P99MS = ds[(len(ds)-1)*99/100]
		st.MaxMS = ds[len(ds)-1]
	}
	return st
}

// churnConfig is one churn run's parameters.
type churnConfig struct {
	run, rate, writers, first int
	duration, timeout         time.Duration
}

// churn patches Pods first, first+1, … (modulo n) for cfg.duration, at
// cfg.rate writes per second in all (0: as fast as cfg.writers go), and
// returns every successful write. Even writes set a label (a merge patch
// of the Pod), odd ones a condition of the status (a strategic merge patch
// of the status subresource): both are one MODIFIED event each.
func (c *cluster) churn(ctx context.Context, cfg churnConfig, n int) ([]write, time.Duration, error) {
	hc := writeClient()
	defer hc.CloseIdleConnections()
	var period time.Duration
	if cfg.rate > 0 {
		period = time.Second / time.Duration(cfg.rate)
	}
	var next atomic.Int64
	var mu sync.Mutex
	var writes []write
	var firstErr error
	var wg sync.WaitGroup
	begin := time.Now()
	end := begin.Add(cfg.duration)
	var last atomic.Int64
	for range max(1, cfg.writers) {
		wg.Go(func() {
			mine := make([]write, 0, 1024)
			defer func() {
				mu.Lock()
				writes = append(writes, mine...)
				mu.Unlock()
			}()
			for ctx.Err() == nil {
				j := next.Add(1) - 1
				at := begin.Add(time.Duration(j) * period)
				// Writes the server could not take in time are dropped, not
				// sent late: the run lasts its duration, and the achieved
				// rate is what the server sustained.
				if (period > 0 && !at.Before(end)) || !time.Now().Before(end) {
					return
				}
				time.Sleep(time.Until(at))
				pod := (cfg.first + int(j)) % n
				tag := fmt.Sprintf("r%d-%d", cfg.run, j)
				base := "/api/v1/namespaces/" + benchNamespace + "/pods/" + podName(pod)
				var status int
				var body []byte
				var err error
				if j%2 == 0 {
					status, body, err = c.send(ctx, hc, http.MethodPatch, base+"?fieldManager=bench-churn", "application/merge-patch+json",
						[]byte(`{"metadata":{"labels":{"bench-churn":"`+tag+`"}}}`))
				} else {
					status, body, err = c.send(ctx, hc, http.MethodPatch, base+"/status?fieldManager=bench-churn", "application/strategic-merge-patch+json",
						[]byte(`{"status":{"conditions":[{"type":"example.com/Churn","status":"True","reason":"Churn","message":"`+tag+`"}]}}`))
				}
				now := time.Now()
				if err == nil && status != http.StatusOK {
					err = fmt.Errorf("status %d: %s", status, truncate(string(body), 300))
				}
				if err != nil {
					mu.Lock()
					if firstErr == nil && ctx.Err() == nil {
						firstErr = fmt.Errorf("patch %s: %w", podName(pod), err)
					}
					mu.Unlock()
					return
				}
				mine = append(mine, write{pod: int32(pod), resp: now.UnixNano()})
				for {
					l := last.Load()
					if now.UnixNano() <= l || last.CompareAndSwap(l, now.UnixNano()) {
						break
					}
				}
			}
		})
	}
	wg.Wait()
	return writes, time.Duration(last.Load() - begin.UnixNano()), firstErr
}

// churnSettle is the pause between a client's initial sync and the first
// write, so that its watch is open and the sync's garbage collected.
const churnSettle = 3 * time.Second

// churnRun starts a watching client, waits for its initial sync, starts a
// plain HTTP watch of every Pod from the current resourceVersion next to
// it, churns, and measures both.
func churnRun(ctx context.Context, c *clientDef, e *env, cl *cluster, cfg churnConfig) (s churnSample) {
	s.ID, s.Label, s.Rate = c.ID, c.Label, cfg.rate
	waitServerIdle(ctx, e)
	cm := newLineMatcher(e.n)
	def := *c
	def.tee = cm.tee
	p, err := startClient(&def, e, true)
	if err != nil {
		s.Error = err.Error()
		return s
	}
	defer p.end()
	synced, err := p.waitObjects(ctx, p.counter.WaitFor(e.n), e.n, cfg.timeout)
	if err != nil {
		s.Error = "initial sync: " + err.Error()
		return s
	}
	s.SyncMS = ms(synced.Sub(p.start))
	time.Sleep(churnSettle)
	pid := firstChild(p.cmd.Process.Pid)
	if pid == 0 {
		s.Error = "cannot find the client's process"
		return s
	}

	rv, err := cl.currentRV(ctx, "/api/v1/pods")
	if err != nil {
		s.Error = err.Error()
		return s
	}
	rm := newLineMatcher(e.n)
	rp, err := startReference(e, rm, "/api/v1/pods", rv)
	if err != nil {
		s.Error = err.Error()
		return s
	}
	defer rp.end()
	// A canary write that both must print before the churn starts: then
	// both watches are open and the delays measure delivery only.
	cm.activate()
	rm.activate()
	canary := cfg.first % e.n
	status, body, err := cl.send(ctx, cl.http, http.MethodPatch, "/api/v1/namespaces/"+benchNamespace+"/pods/"+podName(canary)+"?fieldManager=bench-churn",
		"application/merge-patch+json", []byte(fmt.Sprintf(`{"metadata":{"labels":{"bench-churn":"canary-r%d"}}}`, cfg.run)))
	if err == nil && status != http.StatusOK {
		err = fmt.Errorf("status %d: %s", status, truncate(string(body), 300))
	}
	if err != nil {
		s.Error = "canary write: " + err.Error()
		return s
	}
	deadline := time.Now().Add(30 * time.Second)
	for cm.count() < 1 || rm.count() < 1 {
		if time.Now().After(deadline) || ctx.Err() != nil {
			s.Error = fmt.Sprintf("the canary write was not printed within 30 s (client: %d lines, plain watch: %d)", cm.count(), rm.count())
			return s
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond)
	cm.reset()
	rm.reset()

	usage := startUsage(pid, e.apiserverPID)
	s.RSSStartKiB, s.AnonStartKiB = usage.samples.last, usage.samples.lastAnon
	writes, took, err := cl.churn(ctx, cfg, e.n)
	s.Writes, s.WriteSeconds = len(writes), took.Seconds()
	if err != nil {
		s.Error = err.Error()
	}
	// Every write printed by both, or 30 s more.
	deadline = time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) && ctx.Err() == nil && (cm.count() < len(writes) || rm.count() < len(writes)) {
		time.Sleep(50 * time.Millisecond)
	}
	s.CPUMS, s.ServerCPUMS = usage.end()
	samples := &usage.samples
	s.RSSEndKiB, s.AnonEndKiB, s.RSSMaxKiB, s.RSSSeriesKiB = samples.last, samples.lastAnon, samples.max, samples.all
	s.Client, s.Reference = cm.delays(writes), rm.delays(writes)
	if s.Error == "" && (s.Client.Missing > 0 || s.Reference.Missing > 0) {
		s.Error = fmt.Sprintf("writes never printed within 30 s: %d by the client, %d by the plain watch", s.Client.Missing, s.Reference.Missing)
	}
	return s
}

// startReference starts a plain HTTP watch of the collection at path from
// resourceVersion rv (bench/rawclient, copying bytes), whose lines m sees:
// the limit a watcher can reach on this server.
func startReference(e *env, m *lineMatcher, path, rv string) (*process, error) {
	ref := clientDef{ID: "reference", mode: lines(), tee: m.tee, args: func(e *env, _ bool) []string {
		return []string{filepath.Join(e.tools, "rawclient"), "-server", e.server, "-path", path, "-watch", "-rv", rv}
	}}
	return startClient(&ref, e, true)
}

// usageWindow follows a client's CPU time and resident memory (sampled
// every second) and the server's CPU time over a window of writes.
type usageWindow struct {
	pid, serverPID int
	samples        rssSeries
	cpu0, server0  time.Duration
	stop, done     chan struct{}
}

// startUsage opens the window: a first sample now, then one a second.
func startUsage(pid, serverPID int) *usageWindow {
	u := &usageWindow{pid: pid, serverPID: serverPID, stop: make(chan struct{}), done: make(chan struct{})}
	u.samples.add(pid)
	u.cpu0, u.server0 = procCPU(pid), procCPU(serverPID)
	go func() {
		defer close(u.done)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-u.stop:
				return
			case <-t.C:
				u.samples.add(pid)
			}
		}
	}()
	return u
}

// end closes the window with a last sample, and returns the CPU time the
// client and the server used in it (0 when /proc could not tell).
func (u *usageWindow) end() (cpuMS, serverMS float64) {
	cpu1, server1 := procCPU(u.pid), procCPU(u.serverPID)
	close(u.stop)
	<-u.done
	u.samples.add(u.pid)
	if u.cpu0 >= 0 && cpu1 >= 0 {
		cpuMS = ms(cpu1 - u.cpu0)
	}
	if u.server0 >= 0 && server1 >= 0 {
		serverMS = ms(server1 - u.server0)
	}
	return cpuMS, serverMS
}

// rssSeries follows a process's resident memory.
type rssSeries struct {
	mu                  sync.Mutex
	last, lastAnon, max int64
	all                 []int64
}

func (r *rssSeries) add(pid int) {
	anon, file, ok := rssKiB(pid)
	if !ok {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.last, r.lastAnon = anon+file, anon
	r.max = max(r.max, r.last)
	r.all = append(r.all, r.last)
}

// peakKiB is a process's peak resident set (VmHWM), 0 if unknown.
func peakKiB(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range bytes.Split(b, []byte{'\n'}) {
		if v, ok := bytes.CutPrefix(line, []byte("VmHWM:")); ok {
			f := bytes.Fields(v)
			if len(f) > 0 {
				if n, err := strconv.ParseInt(string(f[0]), 10, 64); err == nil {
					return n
				}
			}
		}
	}
	return 0
}

// commandIn is a command run like a measured client: the fresh $HOME, the
// admin token, no colors.
func commandIn(ctx context.Context, e *env, args []string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Env = append(os.Environ(), "HOME="+e.home, "BENCH_TOKEN="+e.token, "NO_COLOR=1")
	return cmd
}
