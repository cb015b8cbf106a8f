package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The --events section (make bench-events, issue 22): writers create
// Events in one namespace at a fixed rate, 1 in eventsWatchedEvery about
// one of a few watched ConfigMaps and the others about objects nobody
// watches; kubectl deltas watches the ConfigMaps with --events. It must
// keep up with a plain watch of the Events (the delays of the Events
// about watched objects) and its memory must not grow with the Events it
// does not show. For contrast, kubectl deltas watching the Events as a
// type, which keeps every one.

const (
	eventsNamespace    = "bench-events"
	eventsPrefix       = "bench-ev-"
	eventsDigits       = 8
	eventsWatched      = 10
	eventsWatchedEvery = 100
	// canaries bounds the canary Events of a run, one a second.
	canaries = 60
)

// eventsRun is one run of the section, saved as bench/results/events.json.
type eventsRun struct {
	Version  int            `json:"version"`
	Date     string         `json:"date"`
	Commit   string         `json:"commit"`
	Machine  machineInfo    `json:"machine"`
	Kube     string         `json:"kube"`
	Rate     int            `json:"rate"`
	Seconds  float64        `json:"seconds"`
	Writers  int            `json:"writers"`
	Samples  []eventsSample `json:"samples"`
	WallSecs float64        `json:"wallSeconds"`
}

// eventsSample is one client during the Events' churn, next to a plain
// watch of every Event of the namespace.
type eventsSample struct {
	ID    string `json:"id"`
	Label string `json:"label"`
	// Writes is how many Events were created, Watched how many of them
	// were about a watched ConfigMap: the delays are theirs.
	Writes       int     `json:"writes"`
	Watched      int     `json:"watched"`
	WriteSeconds float64 `json:"writeSeconds"`
	Client       delayStats
	Reference    delayStats
	CPUMS        float64 `json:"cpuMs"`
	RSSStartKiB  int64   `json:"rssStartKiB"`
	RSSEndKiB    int64   `json:"rssEndKiB"`
	RSSMaxKiB    int64   `json:"rssMaxKiB"`
	RSSSeriesKiB []int64 `json:"rssSeriesKiB,omitempty"`
	ServerCPUMS  float64 `json:"serverCpuMs"`
	Error        string  `json:"error,omitempty"`
}

// eventIndex finds the number of the benchmark Event a line names.
func eventIndex(line []byte) (int, bool) {
	i := bytes.Index(line, []byte(eventsPrefix))
	if i < 0 || i+len(eventsPrefix)+eventsDigits > len(line) {
		return 0, false
	}
	idx, err := strconv.Atoi(string(line[i+len(eventsPrefix) : i+len(eventsPrefix)+eventsDigits]))
	return idx, err == nil
}

// eventsClients are the measured clients of the section.
func eventsClients() []clientDef {
	deltas := func(e *env, args ...string) []string {
		return append([]string{filepath.Join(e.bin, "kubectl-deltas")}, append(args, "-n", eventsNamespace, "-o", "json", "--watch-only", "--kubeconfig", e.kubeconfig)...)
	}
	return []clientDef{
		{
			ID: "d-events", Label: "kubectl deltas cm -l bench-watched --events -o json", mode: lines(),
			args: func(e *env, _ bool) []string { return deltas(e, "cm", "-l", "bench-watched=true", "--events") },
		},
		{
			ID: "d-events-type", Label: "kubectl deltas events.events.k8s.io -o json (every Event kept)", mode: lines(),
			args: func(e *env, _ bool) []string { return deltas(e, "events.events.k8s.io") },
		},
	}
}

// runEvents is the --events section: a control plane, the watched
// ConfigMaps, then each client in turn during rate Events/s for d.
func runEvents(ctx context.Context, o options, root, benchDir string, begin time.Time) error {
	rate := 1000
	cp, cl, stopCP, err := startControlPlane(ctx)
	if err != nil {
		return err
	}
	defer stopCP()
	uids, err := cl.seedEvents(ctx)
	if err != nil {
		return err
	}
	home := filepath.Join(benchDir, "out", "home-events")
	if err := freshDir(home); err != nil {
		return err
	}
	e := &env{
		bin: filepath.Join(root, "bin"), tools: filepath.Join(benchDir, "out", "bin"), kubeconfig: cp.AdminKubeconfig(),
		server: cp.Server(), token: cp.AdminToken(), home: home, apiserverPID: cp.APIServerPID(),
	}
	res := &eventsRun{
		Version: resultsVersion, Date: time.Now().UTC().Format(time.RFC3339), Commit: gitDescribe(ctx, root),
		Machine: machine(ctx, root), Kube: cl.serverVersion(ctx), Rate: rate, Seconds: o.churnFor.Seconds(), Writers: o.churnWriters,
	}
	first := 0
	for _, c := range selectClients(eventsClients(), o.only) {
		logf("%d Events/s for %s, 1 in %d about a watched ConfigMap: %s", rate, o.churnFor, eventsWatchedEvery, c.Label)
		s := eventsChurnRun(ctx, &c, e, cl, uids, rate, first, o)
		first += canaries*eventsWatchedEvery + int(float64(rate)*o.churnFor.Seconds()/eventsWatchedEvery+1)*eventsWatchedEvery
		logf("  %d Events in %.1f s (%.0f/s), %d about watched objects: delay p50 %.1f ms p99 %.1f ms (plain watch %.1f / %.1f); CPU %.0f ms; RSS %d → %d MiB (max %d)%s",
			s.Writes, s.WriteSeconds, float64(s.Writes)/max(s.WriteSeconds, 0.001), s.Watched, s.Client.P50MS, s.Client.P99MS, s.Reference.P50MS, s.Reference.P99MS,
			s.CPUMS, s.RSSStartKiB>>10, s.RSSEndKiB>>10, s.RSSMaxKiB>>10, errSuffix(s.Error))
		res.Samples = append(res.Samples, s)
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	res.WallSecs = time.Since(begin).Seconds()
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	path := filepath.Join(benchDir, "results", "events.json")
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	logf("wrote %s", rel(root, path))
	return render(benchDir)
}

func errSuffix(s string) string {
	if s == "" {
		return ""
	}
	return "; error: " + s
}

// seedEvents creates the namespace and the watched ConfigMaps, and
// returns their UIDs.
func (c *cluster) seedEvents(ctx context.Context) ([]string, error) {
	status, body, err := c.send(ctx, c.http, http.MethodPost, "/api/v1/namespaces", "application/json",
		[]byte(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"`+eventsNamespace+`"}}`))
	if err == nil && status != http.StatusCreated {
		err = fmt.Errorf("status %d: %s", status, truncate(string(body), 300))
	}
	if err != nil {
		return nil, fmt.Errorf("create namespace %s: %w", eventsNamespace, err)
	}
	uids := make([]string, eventsWatched)
	for i := range uids {
		status, body, err := c.send(ctx, c.http, http.MethodPost, "/api/v1/namespaces/"+eventsNamespace+"/configmaps", "application/json",
			[]byte(fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"watched-%d","labels":{"bench-watched":"true"}}}`, i)))
		if err == nil && status != http.StatusCreated {
			err = fmt.Errorf("status %d: %s", status, truncate(string(body), 300))
		}
		if err != nil {
			return nil, fmt.Errorf("create ConfigMap watched-%d: %w", i, err)
		}
		var cm struct {
			Metadata struct{ UID string } `json:"metadata"`
		}
		if err := json.Unmarshal(body, &cm); err != nil || cm.Metadata.UID == "" {
			return nil, fmt.Errorf("no uid in the ConfigMap created (%v)", err)
		}
		uids[i] = cm.Metadata.UID
	}
	return uids, nil
}

// eventBody is core/v1 Event j: about watched ConfigMap j/eventsWatchedEvery
// (modulo) when j is a multiple of eventsWatchedEvery, else about an object
// nobody watches.
func eventBody(j int, uids []string) []byte {
	name, uid := fmt.Sprintf("elsewhere-%d", j), fmt.Sprintf("00000000-0000-0000-0000-%012d", j)
	if j%eventsWatchedEvery == 0 {
		k := j / eventsWatchedEvery % len(uids)
		name, uid = fmt.Sprintf("watched-%d", k), uids[k]
	}
	now := time.Now().UTC().Format(time.RFC3339)
	return []byte(fmt.Sprintf(`{"apiVersion":"v1","kind":"Event","metadata":{"name":"%s%0*d"},`+
		`"involvedObject":{"apiVersion":"v1","kind":"ConfigMap","namespace":%q,"name":%q,"uid":%q},`+
		`"type":"Normal","reason":"Bench","message":"benchmark event %d, as long as a controller's message tends to be","count":1,`+
		`"firstTimestamp":%q,"lastTimestamp":%q,"source":{"component":"bench"}}`,
		eventsPrefix, eventsDigits, j, eventsNamespace, name, uid, j, now, now))
}

// createEvents creates Events first, first+1, … at rate per second for d
// with writers in parallel, and returns the writes about watched objects.
func (c *cluster) createEvents(ctx context.Context, uids []string, rate, writers, first int, d time.Duration) (watched []write, total int, took time.Duration, err error) {
	hc := writeClient()
	defer hc.CloseIdleConnections()
	period := time.Second / time.Duration(rate)
	var next, count, last atomic.Int64
	var mu sync.Mutex
	var wg sync.WaitGroup
	begin := time.Now()
	end := begin.Add(d)
	for range max(1, writers) {
		wg.Go(func() {
			for ctx.Err() == nil {
				j := next.Add(1) - 1
				at := begin.Add(time.Duration(j) * period)
				if !at.Before(end) || !time.Now().Before(end) {
					return
				}
				time.Sleep(time.Until(at))
				idx := first + int(j)
				status, body, sendErr := c.send(ctx, hc, http.MethodPost, "/api/v1/namespaces/"+eventsNamespace+"/events", "application/json", eventBody(idx, uids))
				now := time.Now().UnixNano()
				if sendErr == nil && status != http.StatusCreated {
					sendErr = fmt.Errorf("status %d: %s", status, truncate(string(body), 300))
				}
				mu.Lock()
				if sendErr != nil {
					if err == nil && ctx.Err() == nil {
						err = fmt.Errorf("create event %d: %w", idx, sendErr)
					}
					mu.Unlock()
					return
				}
				if idx%eventsWatchedEvery == 0 {
					watched = append(watched, write{pod: int32(idx), resp: now})
				}
				mu.Unlock()
				count.Add(1)
				for {
					l := last.Load()
					if now <= l || last.CompareAndSwap(l, now) {
						break
					}
				}
			}
		})
	}
	wg.Wait()
	return watched, int(count.Load()), time.Duration(last.Load() - begin.UnixNano()), err
}

// eventsChurnRun runs one client and a plain watch of the Events while
// the writers create Events, and measures the client.
func eventsChurnRun(ctx context.Context, c *clientDef, e *env, cl *cluster, uids []string, rate, first int, o options) (s eventsSample) {
	s.ID, s.Label = c.ID, c.Label
	capacity := first + canaries*eventsWatchedEvery + int(float64(rate)*o.churnFor.Seconds()) + 1000
	cm := newLineMatcher(capacity)
	cm.index = eventIndex
	def := *c
	def.tee = cm.tee
	p, err := startClient(&def, e, true)
	if err != nil {
		s.Error = err.Error()
		return s
	}
	defer p.end()
	eventsPath := "/apis/events.k8s.io/v1/namespaces/" + eventsNamespace + "/events"
	rv, err := cl.currentRV(ctx, eventsPath)
	if err != nil {
		s.Error = err.Error()
		return s
	}
	rm := newLineMatcher(capacity)
	rm.index = eventIndex
	rp, err := startReference(e, rm, eventsPath, rv)
	if err != nil {
		s.Error = err.Error()
		return s
	}
	defer rp.end()
	// Canary Events about a watched object, one a second, until both
	// print one: both watches are open (one created before the client's
	// list would be part of its initial state, which --watch-only hides).
	cm.activate()
	rm.activate()
	for k := 0; cm.count() < 1 || rm.count() < 1; k++ {
		if k == canaries || ctx.Err() != nil {
			s.Error = fmt.Sprintf("no canary Event was printed within %d s (client: %d lines, plain watch: %d); stderr: %s", canaries, cm.count(), rm.count(), truncate(p.stderr.String(), 300))
			return s
		}
		if _, _, _, err := cl.createEvents(ctx, uids, 1, 1, first+k*eventsWatchedEvery, 500*time.Millisecond); err != nil {
			s.Error = "canary: " + err.Error()
			return s
		}
		time.Sleep(time.Second)
	}
	time.Sleep(churnSettle)
	cm.reset()
	rm.reset()
	pid := firstChild(p.cmd.Process.Pid)
	usage := startUsage(pid, e.apiserverPID)
	s.RSSStartKiB = usage.samples.last
	watched, total, took, err := cl.createEvents(ctx, uids, rate, o.churnWriters, first+canaries*eventsWatchedEvery, o.churnFor)
	s.Writes, s.Watched, s.WriteSeconds = total, len(watched), took.Seconds()
	if err != nil {
		s.Error = err.Error()
	}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) && ctx.Err() == nil && (matched(cm, watched) < len(watched) || matched(rm, watched) < len(watched)) {
		time.Sleep(50 * time.Millisecond)
	}
	s.CPUMS, s.ServerCPUMS = usage.end()
	s.RSSEndKiB, s.RSSMaxKiB, s.RSSSeriesKiB = usage.samples.last, usage.samples.max, usage.samples.all
	s.Client, s.Reference = cm.delays(watched), rm.delays(watched)
	if s.Error == "" && (s.Client.Missing > 0 || s.Reference.Missing > 0) {
		s.Error = fmt.Sprintf("Events never printed within 30 s: %d by the client, %d by the plain watch", s.Client.Missing, s.Reference.Missing)
	}
	return s
}

// matched is how many of the watched writes m has seen a line of.
func matched(m *lineMatcher, watched []write) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, w := range watched {
		if int(w.pod) < len(m.arrivals) && len(m.arrivals[w.pod]) > 0 {
			n++
		}
	}
	return n
}

// loadEventsRun reads bench/results/events.json; nil when there is none.
func loadEventsRun(benchDir string) (*eventsRun, error) {
	b, err := os.ReadFile(filepath.Join(benchDir, "results", "events.json"))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var r eventsRun
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("read events.json: %w", err)
	}
	return &r, nil
}

// eventsMarkdown is the section of RESULTS.md for the --events run.
func eventsMarkdown(r *eventsRun) string {
	if r == nil {
		return ""
	}
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("## `--events` on a busy namespace (issue 22)\n\n")
	w("Written by `make bench-events` (`go run ./bench/harness -events`) from `bench/results/events.json`. ")
	w("%d writers create core/v1 Events in namespace %s at %s Events/s for %.0f s; 1 in %d is about one of %d ConfigMaps labelled `bench-watched=true`, the others about objects nobody watches. ",
		r.Writers, eventsNamespace, numberWithCommas(r.Rate), r.Seconds, eventsWatchedEvery, eventsWatched)
	w("Each client runs alone (`--watch-only -o json`), next to a plain HTTP watch of every Event of the namespace (bench/rawclient); the delay of an Event about a watched ConfigMap is from its create's response to its line on stdout. ")
	w("RSS (RssAnon+RssFile) is sampled every second over the churn; CPU is the client's over the churn.\n\n")
	w("%s; commit `%s`; %s, %d CPUs; kube-apiserver and etcd %s on the same machine.\n\n", r.Date, r.Commit, r.Machine.CPU, r.Machine.CPUs, r.Kube)
	byID := map[string]*eventsSample{}
	for i := range r.Samples {
		byID[r.Samples[i].ID] = &r.Samples[i]
	}
	w("| target | measured | result |\n|---|---|---|\n")
	if s := byID["d-events"]; s != nil && s.Error == "" {
		limit := s.Reference.P99MS + 20
		w("| --events keeps up: p99 delay ≤ the plain watch's p99 + 20 ms | %.1f ms vs %.1f ms (plain watch %.1f ms) | **%s** |\n", s.Client.P99MS, limit, s.Reference.P99MS, passMiss(s.Client.P99MS <= limit))
		mid := s.RSSStartKiB
		if n := len(s.RSSSeriesKiB); n > 0 {
			mid = s.RSSSeriesKiB[n/2]
		}
		grow := float64(s.RSSEndKiB) / float64(max(mid, 1))
		w("| --events RSS does not grow with the Events of unwatched objects: end ≤ 1.1 × the RSS half-way (Events wait up to 10 s for their subject, then are dropped) | %d MiB at the start, %d half-way, %d at the end (max %d) = %.2f× | **%s** |\n",
			s.RSSStartKiB>>10, mid>>10, s.RSSEndKiB>>10, s.RSSMaxKiB>>10, grow, passMiss(grow <= 1.1))
		if t := byID["d-events-type"]; t != nil && t.Error == "" {
			w("| for contrast, the Events watched as a type (every one kept) | %d → %d MiB | – |\n", t.RSSStartKiB>>10, t.RSSEndKiB>>10)
		}
	} else {
		w("| --events at %s Events/s | not measured | **not measured** |\n", numberWithCommas(r.Rate))
	}
	w("\n| client | Events created (rate) | about watched objects | client delay p50 / p99 / max | plain watch delay p50 / p99 / max | client CPU | RSS start → end (max) | server CPU |\n")
	w("|---|---:|---:|---|---|---:|---|---:|\n")
	for _, s := range r.Samples {
		w("| %s | %s (%.0f/s) | %s | %.1f / %.1f / %.1f ms | %.1f / %.1f / %.1f ms | %.0f ms | %d → %d MiB (%d) | %.0f ms |\n",
			s.Label, numberWithCommas(s.Writes), float64(s.Writes)/max(s.WriteSeconds, 0.001), numberWithCommas(s.Watched),
			s.Client.P50MS, s.Client.P99MS, s.Client.MaxMS, s.Reference.P50MS, s.Reference.P99MS, s.Reference.MaxMS,
			s.CPUMS, s.RSSStartKiB>>10, s.RSSEndKiB>>10, s.RSSMaxKiB>>10, s.ServerCPUMS)
		if s.Error != "" {
			w("\n%s: %s\n\n", s.Label, oneLine(s.Error))
		}
	}
	w("\n")
	return b.String()
}

func passMiss(ok bool) string {
	if ok {
		return "PASS"
	}
	return "MISS"
}
