package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

const resultsVersion = 1

// runFile is everything one `make bench` run measured, saved as
// bench/results/nN.json.
type runFile struct {
	Version         int         `json:"version"`
	Date            string      `json:"date"`
	N               int         `json:"n"`
	M               int         `json:"m"`
	Rounds          int         `json:"rounds"`
	BurstRounds     int         `json:"burstRounds"`
	Warmup          int         `json:"warmup"`
	Writers         int         `json:"writers"`
	ListBytes       int         `json:"listBytes"`
	SeedSeconds     float64     `json:"seedSeconds"`
	DurationSeconds float64     `json:"durationSeconds"`
	Machine         machineInfo `json:"machine"`
	// BusyBefore and BusyAfter are the share of the CPUs busy with other
	// work over 2 s before the first and after the last measurement.
	BusyBefore float64         `json:"busyBefore"`
	BusyAfter  float64         `json:"busyAfter"`
	Kube       string          `json:"kube"`
	Commit     string          `json:"commit"`
	Clients    []clientResult  `json:"clients"`
	Profiles   []profileResult `json:"profiles,omitempty"`
	Pipeline   string          `json:"pipeline,omitempty"`
}

type clientResult struct {
	ID       string   `json:"id"`
	Group    string   `json:"group"`
	Label    string   `json:"label"`
	Measured string   `json:"measured"`
	Sync     []sample `json:"sync"`
	Burst    []sample `json:"burst,omitempty"`
}

type profileResult struct {
	Name    string  `json:"name"`
	Command string  `json:"command"`
	Repeat  int     `json:"repeat"`
	WallMS  float64 `json:"wallMs"`
	CPUMS   float64 `json:"cpuMs"`
	Flat    string  `json:"flat"`
	Cum     string  `json:"cum"`
	Allocs  string  `json:"allocs"`
}

func (r *runFile) save(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(path), err)
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encode results: %w", err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// loadRuns reads every bench/results/n*.json, by N.
func loadRuns(benchDir string) ([]*runFile, error) {
	paths, err := filepath.Glob(filepath.Join(benchDir, "results", "n*.json"))
	if err != nil {
		return nil, fmt.Errorf("find results: %w", err)
	}
	var runs []*runFile
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", p, err)
		}
		var r runFile
		if err := json.Unmarshal(b, &r); err != nil {
			return nil, fmt.Errorf("decode %s: %w", p, err)
		}
		if r.Version != resultsVersion {
			continue
		}
		runs = append(runs, &r)
	}
	sort.Slice(runs, func(i, j int) bool { return runs[i].N < runs[j].N })
	return runs, nil
}

// stat summarises the successful samples of one metric.
type stat struct {
	Median, Min, Max float64
	Count, Failed    int
}

func (s stat) ok() bool { return s.Count > 0 }

func summarize(samples []sample, metric func(sample) float64) stat {
	var v []float64
	failed := 0
	for _, s := range samples {
		if s.Error != "" {
			failed++
			continue
		}
		v = append(v, metric(s))
	}
	if len(v) == 0 {
		return stat{Failed: failed}
	}
	slices.Sort(v)
	med := v[len(v)/2]
	if len(v)%2 == 0 {
		med = (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	return stat{Median: med, Min: v[0], Max: v[len(v)-1], Count: len(v), Failed: failed}
}

func wallOf(s sample) float64   { return s.WallMS }
func cpuOf(s sample) float64    { return s.CPUMS }
func rssOf(s sample) float64    { return float64(s.MaxRSSKiB) / 1024 }
func bytesOf(s sample) float64  { return float64(s.Bytes) }
func anonOf(s sample) float64   { return float64(s.MaxAnonKiB) / 1024 }
func fileOf(s sample) float64   { return float64(s.MaxFileKiB) / 1024 }
func delayOf(s sample) float64  { return s.BurstDelayMS }
func serverOf(s sample) float64 { return s.ServerCPUMS }
func writeOf(s sample) float64  { return s.BurstWriteMS }

func (r *runFile) client(id string) *clientResult {
	for i := range r.Clients {
		if r.Clients[i].ID == id {
			return &r.Clients[i]
		}
	}
	return nil
}

func (r *runFile) syncStat(id string, metric func(sample) float64) stat {
	c := r.client(id)
	if c == nil {
		return stat{}
	}
	return summarize(c.Sync, metric)
}

// bestB is the lower median of the two client-go baselines for a metric,
// and which one it was: the stricter comparison.
func (r *runFile) bestB(metric func(sample) float64) (stat, string) {
	var best stat
	var label string
	for _, id := range []string{"b-list", "b-stream"} {
		s := r.syncStat(id, metric)
		if s.ok() && (!best.ok() || s.Median < best.Median) {
			best, label = s, r.client(id).Label
		}
	}
	return best, label
}

// bestA is the faster raw list: without gzip (as curl sends it) or with
// it (as client-go asks for it), whichever has the lower median wall time.
func (r *runFile) bestA() (stat, string) {
	var best stat
	var label string
	for _, id := range []string{"a", "a-gzip"} {
		s := r.syncStat(id, wallOf)
		if s.ok() && (!best.ok() || s.Median < best.Median) {
			best, label = s, r.client(id).Label
		}
	}
	return best, label
}

// target is one pass/miss line.
type target struct {
	Name     string
	N        int
	Measured string
	Pass     bool
	Known    bool
}

func (r *runFile) targets() []target {
	const d = "d-json"
	n := r.N
	var out []target
	add := func(name string, known, pass bool, measured string) {
		out = append(out, target{Name: name, N: n, Measured: measured, Pass: pass, Known: known})
	}
	dw, dc, dr := r.syncStat(d, wallOf), r.syncStat(d, cpuOf), r.syncStat(d, rssOf)
	aw, alabel := r.bestA()
	if dw.ok() && aw.ok() {
		q := dw.Median / aw.Median
		measured := fmt.Sprintf("%s vs %s (%s) = %.2f×", secs(dw.Median), secs(aw.Median), strings.TrimPrefix(alabel, "(a) "), q)
		if plain := r.syncStat("a", wallOf); plain.ok() && alabel != r.client("a").Label {
			measured += fmt.Sprintf("; vs the list without gzip (%s): %.2f×", secs(plain.Median), dw.Median/plain.Median)
		}
		add("(d) -o json wall ≤ 1.5 × (a) raw list", true, q <= 1.5, measured)
	} else {
		add("(d) -o json wall ≤ 1.5 × (a) raw list", false, false, "not measured")
	}
	for _, m := range []struct {
		name   string
		d      stat
		metric func(sample) float64
		format func(float64) string
	}{
		{"(d) -o json wall ≤ 0.5 × (b) client-go", dw, wallOf, secs},
		{"(d) -o json CPU ≤ 0.5 × (b) client-go", dc, cpuOf, secs},
		{"(d) -o json peak RSS ≤ 0.5 × (b) client-go", dr, rssOf, mibf},
	} {
		b, label := r.bestB(m.metric)
		if !m.d.ok() || !b.ok() {
			add(m.name, false, false, "not measured")
			continue
		}
		q := m.d.Median / b.Median
		measured := fmt.Sprintf("%s vs %s (%s) = %.2f×", m.format(m.d.Median), m.format(b.Median), strings.TrimPrefix(label, "(b) "), q)
		if m.name == "(d) -o json peak RSS ≤ 0.5 × (b) client-go" {
			da := r.syncStat(d, anonOf)
			ba, alabel := r.bestB(anonOf)
			if da.ok() && ba.ok() && ba.Median > 0 {
				measured += fmt.Sprintf("; without the mapped executable (RssAnon, sampled): %s vs %s (%s) = %.2f×", mibf(da.Median), mibf(ba.Median), strings.TrimPrefix(alabel, "(b) "), da.Median/ba.Median)
			}
			measured += "; the executable's size: see \"What the executable weighs\" below"
		}
		add(m.name, true, q <= 0.5, measured)
	}
	cw := r.syncStat("c", wallOf)
	if dw.ok() && cw.ok() {
		add("(d) -o json faster than (c) kubectl get -w", true, dw.Median < cw.Median, fmt.Sprintf("%s vs %s = %.2f×", secs(dw.Median), secs(cw.Median), dw.Median/cw.Median))
	} else {
		add("(d) -o json faster than (c) kubectl get -w", false, false, "not measured")
	}
	ww, wc, ws := r.syncStat("d-wide", wallOf), r.syncStat("d-wide", cpuOf), r.syncStat("d-wide", serverOf)
	if ww.ok() && dw.ok() && wc.ok() && dc.ok() {
		server := ""
		if ds := r.syncStat(d, serverOf); ws.ok() && ds.ok() {
			server = fmt.Sprintf("; server CPU %s vs %s (the Table rendering: %+.0f%%)", secs(ws.Median), secs(ds.Median), (ws.Median/ds.Median-1)*100)
		}
		add("(issue 23) -o wide initial sync wall ≤ 2 × -o json", true, ww.Median <= 2*dw.Median, fmt.Sprintf("%s vs %s = %.2f×%s", secs(ww.Median), secs(dw.Median), ww.Median/dw.Median, server))
		add("(issue 23) -o wide client CPU ≤ -o json", true, wc.Median <= dc.Median, fmt.Sprintf("%s vs %s = %.2f×", secs(wc.Median), secs(dc.Median), wc.Median/dc.Median))
	} else {
		add("(issue 23) -o wide initial sync wall ≤ 2 × -o json", false, false, "not measured")
		add("(issue 23) -o wide client CPU ≤ -o json", false, false, "not measured")
	}
	if c := r.client(d); c != nil && len(c.Burst) > 0 {
		s := summarize(c.Burst, delayOf)
		if s.ok() {
			add("update burst: (d) -o json prints the last write ≤ 100 ms after its response (median)", true, s.Median <= 100, fmt.Sprintf("%.1f ms (%.1f–%.1f), %d writes", s.Median, s.Min, s.Max, r.M))
		}
	}
	return out
}

func secs(ms float64) string { return fmt.Sprintf("%.3f s", ms/1000) }
func mibf(v float64) string  { return fmt.Sprintf("%.0f MiB", v) }

// spread is "median unit (min–max)".
func spread(s stat, format func(float64) string) string {
	if !s.ok() {
		if s.Failed > 0 {
			return fmt.Sprintf("failed (%d)", s.Failed)
		}
		return "–"
	}
	num := func(v float64) string {
		f, _, _ := strings.Cut(format(v), " ")
		return f
	}
	out := fmt.Sprintf("%s (%s–%s)", format(s.Median), num(s.Min), num(s.Max))
	if s.Failed > 0 {
		out += fmt.Sprintf(", %d failed", s.Failed)
	}
	return out
}

func ratio(a, b stat) string {
	if !a.ok() || !b.ok() || b.Median == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f×", a.Median/b.Median)
}

func numberWithCommas(n int) string {
	s := fmt.Sprint(n)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// render writes RESULTS.md and results.svg from every results file.
func render(benchDir string) error {
	runs, err := loadRuns(benchDir)
	if err != nil {
		return err
	}
	if len(runs) == 0 {
		return fmt.Errorf("no results in %s: run make bench first", filepath.Join(benchDir, "results"))
	}
	scale, err := loadScaleRuns(benchDir)
	if err != nil {
		return err
	}
	events, err := loadEventsRun(benchDir)
	if err != nil {
		return err
	}
	ab, err := loadABRun(benchDir)
	if err != nil {
		return err
	}
	replayed, err := loadReplayRun(benchDir)
	if err != nil {
		return err
	}
	waited, err := loadConditionsRun(benchDir)
	if err != nil {
		return err
	}
	kept, err := loadHistoryRun(benchDir)
	if err != nil {
		return err
	}
	exported, err := loadOTLPRun(benchDir)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(benchDir, "RESULTS.md"), []byte(markdown(benchDir, runs, scale)+eventsMarkdown(events)+abMarkdown(ab)+replayMarkdown(replayed)+timelineOf(replayed)+conditionsMarkdown(waited)+historyMarkdown(kept)+otlpMarkdown(exported)), 0o644); err != nil {
		return fmt.Errorf("write RESULTS.md: %w", err)
	}
	if err := os.WriteFile(filepath.Join(benchDir, "results.svg"), []byte(chartSVG(runs)), 0o644); err != nil {
		return fmt.Errorf("write results.svg: %w", err)
	}
	return nil
}

func markdown(benchDir string, runs []*runFile, scale []*scaleRun) string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("# Benchmark results\n\n")
	w("Written by `make bench` (bench/harness) from the raw samples in `bench/results/`; do not edit by hand. ")
	w("`make bench` measures N=10,000 (`make bench N=50000 ROUNDS=3` adds the 50,000 section). ")
	w("Every client is a separate process, started once kube-apiserver has collected its garbage (`/debug/pprof/heap?gc=1`) and it and etcd are idle (at most 20 ms of CPU in 250 ms), so that no client pays for the work the one before left on the server; wall time is from its start until the harness has read the N-th object from its stdout, CPU is user+system and peak RSS is `ru_maxrss` from rusage. ")
	w("Medians with min–max over the rounds; the clients alternate within each round (A B C D A B C D …). ")
	w("In the ratio columns and targets, (a) is the faster of the two raw lists and (b) the faster of the two client-go runs for that metric (the stricter comparison). ")
	w("Server CPU is what kube-apiserver burned during the run (from /proc, 10 ms ticks): the server shares the 2 CPUs with the client. ")
	w("RssAnon / RssFile are the peaks of `/proc/PID/status` sampled every 10 ms: anonymous memory (heap, stacks) and mapped files (mostly the executable, which this kernel maps in 2 MiB folios).\n\n")
	w("![Benchmark chart](results.svg)\n\n")

	w("## Targets (issue 5)\n\n")
	w("| target | N | measured (medians) | result |\n|---|---:|---|---|\n")
	for _, r := range runs {
		for _, t := range r.targets() {
			res := "MISS"
			switch {
			case !t.Known:
				res = "not measured"
			case t.Pass:
				res = "PASS"
			}
			w("| %s | %s | %s | **%s** |\n", t.Name, numberWithCommas(t.N), t.Measured, res)
		}
	}
	if len(runs) > 1 {
		w("\nGrowth from N=%s to N=%s (×%.0f objects), medians of `-o json` and of client-go:\n\n", numberWithCommas(runs[0].N), numberWithCommas(runs[len(runs)-1].N), float64(runs[len(runs)-1].N)/float64(runs[0].N))
		first, last := runs[0], runs[len(runs)-1]
		if first.Commit != last.Commit {
			w("Caution: the two sizes were measured on different code (`%s` on %s, `%s` on %s); rerun both to compare growth.\n\n", first.Commit, first.Date, last.Commit, last.Date)
		}
		w("| client | wall | CPU | peak RSS |\n|---|---:|---:|---:|\n")
		for _, id := range []string{"a", "b-list", "b-stream", "c", "d-json"} {
			c := last.client(id)
			if c == nil || first.client(id) == nil {
				continue
			}
			w("| %s | %s | %s | %s |\n", c.Label,
				ratio(last.syncStat(id, wallOf), first.syncStat(id, wallOf)),
				ratio(last.syncStat(id, cpuOf), first.syncStat(id, cpuOf)),
				ratio(last.syncStat(id, rssOf), first.syncStat(id, rssOf)))
		}
	}

	for _, r := range runs {
		w("\n## Initial sync of %s ConfigMaps\n\n", numberWithCommas(r.N))
		w("%s; commit `%s`; %d rounds after %d warm-up run(s); list of %s as JSON (%d bytes per object); created in %.1f s; whole run %.0f s.\n\n",
			r.Date, r.Commit, r.Rounds, r.Warmup, mib(int64(r.ListBytes)), r.ListBytes/max(1, r.N), r.SeedSeconds, r.DurationSeconds)
		w("Machine: %s, %d CPUs, %s RAM, %s; %s; kube-apiserver, etcd and kubectl %s on the same machine (127.0.0.1). CPUs busy with other work: %.0f%% before the measurements, %.0f%% after (2 s samples of /proc/stat).\n\n",
			r.Machine.CPU, r.Machine.CPUs, r.Machine.Memory, r.Machine.Kernel, r.Machine.GoVersion, r.Kube, 100*r.BusyBefore, 100*r.BusyAfter)
		aw, _ := r.bestA()
		bw, _ := r.bestB(wallOf)
		bc, _ := r.bestB(cpuOf)
		br, _ := r.bestB(rssOf)
		w("| client | wall | CPU | peak RSS | RssAnon / RssFile | server CPU | output | wall ÷ (a) | wall ÷ (b) | CPU ÷ (b) | RSS ÷ (b) |\n")
		w("|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|\n")
		for _, c := range r.Clients {
			wall, cpu, rss := summarize(c.Sync, wallOf), summarize(c.Sync, cpuOf), summarize(c.Sync, rssOf)
			anon, file := summarize(c.Sync, anonOf), summarize(c.Sync, fileOf)
			split := "–"
			if anon.ok() {
				split = fmt.Sprintf("%.0f / %.0f MiB", anon.Median, file.Median)
			}
			out := summarize(c.Sync, bytesOf)
			outs := "–"
			if out.ok() {
				outs = mib(int64(out.Median))
			}
			srv := summarize(c.Sync, serverOf)
			srvs := "–"
			if srv.ok() {
				srvs = secs(srv.Median)
			}
			w("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", c.Label,
				spread(wall, secs), spread(cpu, secs), spread(rss, mibf), split, srvs, outs,
				ratio(wall, aw), ratio(wall, bw), ratio(cpu, bc), ratio(rss, br))
		}
		var retried, samples int
		var foreign []float64
		for _, c := range r.Clients {
			for _, x := range c.Sync {
				samples++
				if x.Attempts > 1 {
					retried++
				}
				if x.Foreign >= 0 {
					foreign = append(foreign, x.Foreign)
				}
			}
		}
		if len(foreign) > 0 {
			slices.Sort(foreign)
			w("\nOther processes on the machine used %.0f%% of the CPUs during the median sync run (at most %.0f%%); %d of %d sync samples were measured again because they exceeded %s.\n",
				100*foreign[len(foreign)/2], 100*foreign[len(foreign)-1], retried, samples, "the -max-foreign limit")
		}
		if hasBurst(r) {
			w("\n### Update burst (N=%s)\n\n", numberWithCommas(r.N))
			w("With the client watching after its initial sync (and a %s pause), the harness patches %d distinct ConfigMaps with %d parallel writers as fast as the server takes them; ", settle, r.M, r.Writers)
			w("the delay is from the response of the last write to the moment the client's output showed every one of the %d writes (the last event of the stream is the write committed last). %d rounds.\n\n", r.M, r.BurstRounds)
			w("| client | delay after the last write | the %d writes took |\n|---|---|---|\n", r.M)
			for _, c := range r.Clients {
				if len(c.Burst) == 0 {
					continue
				}
				w("| %s | %s | %s |\n", c.Label, spread(summarize(c.Burst, delayOf), msf), spread(summarize(c.Burst, writeOf), secs))
			}
		}
		if errs := failures(r); errs != "" {
			w("\nFailures:\n\n%s", errs)
		}
	}

	b.WriteString(scaleMarkdown(benchDir, scale))

	last := runs[len(runs)-1]
	w("\n## What was measured\n\n")
	for _, c := range last.Clients {
		w("- **%s**: %s\n", c.Label, c.Measured)
	}
	w("\nAll clients talk to the API server with the admin token of the local control plane; kubectl and kubectl deltas share a fresh `$HOME` (discovery cache warmed by the warm-up run). `kubectl deltas` is `bin/kubectl-deltas` run directly (`kubectl deltas` would exec the same binary).\n")

	if analysis, err := os.ReadFile(filepath.Join(benchDir, "analysis.md")); err == nil {
		w("\n%s", strings.TrimRight(string(analysis), "\n")+"\n")
	}
	for _, r := range runs {
		for _, p := range r.Profiles {
			w("\n## Profile of kubectl deltas, %s (N=%s)\n\n", p.Name, numberWithCommas(r.N))
			w("CPU profile of `%s` (the same code as bin/kubectl-deltas, run in-process by bench/profile under `runtime/pprof`, %d syncs in a row to collect enough samples): %.2f s wall, %.2f s CPU in total, so %.0f ms wall and %.0f ms CPU per sync.\n\n",
				p.Command, p.Repeat, p.WallMS/1000, p.CPUMS/1000, p.WallMS/float64(p.Repeat), p.CPUMS/float64(p.Repeat))
			w("`go tool pprof -top` (flat):\n\n```\n%s```\n\n", trimPprof(p.Flat))
			w("`go tool pprof -top -cum`:\n\n```\n%s```\n\n", trimPprof(p.Cum))
			w("`go tool pprof -top -sample_index=alloc_space` (allocations):\n\n```\n%s```\n", trimPprof(p.Allocs))
		}
	}
	for i := len(runs) - 1; i >= 0; i-- {
		if runs[i].Pipeline != "" {
			w("\n## In-process benchmarks (no server)\n\n")
			w("`go test -run '^$' -bench . -benchmem ./bench/pipeline/` on the recorded watch stream in `bench/testdata/` (run %s):\n\n```\n%s```\n", runs[i].Date, strings.TrimRight(runs[i].Pipeline, "\n")+"\n")
			break
		}
	}
	return b.String()
}

func msf(v float64) string { return fmt.Sprintf("%.1f ms", v) }

func hasBurst(r *runFile) bool {
	for _, c := range r.Clients {
		if len(c.Burst) > 0 {
			return true
		}
	}
	return false
}

func failures(r *runFile) string {
	var b strings.Builder
	for _, c := range r.Clients {
		for _, s := range c.Sync {
			if s.Error != "" {
				fmt.Fprintf(&b, "- %s, sync round %d: %s\n", c.Label, s.Round, oneLine(s.Error))
			}
		}
		for _, s := range c.Burst {
			if s.Error != "" {
				fmt.Fprintf(&b, "- %s, burst round %d: %s\n", c.Label, s.Round, oneLine(s.Error))
			}
		}
	}
	return b.String()
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// trimPprof drops pprof's header lines about files and build IDs.
func trimPprof(s string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "File: ") || strings.HasPrefix(l, "Build ID: ") || strings.HasPrefix(l, "Time: ") {
			continue
		}
		out = append(out, l)
	}
	return strings.TrimRight(strings.Join(out, "\n"), "\n") + "\n"
}

// summaryText is the short report printed at the end of a run.
func summaryText(r *runFile) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\nN=%d, %d rounds (medians):\n", r.N, r.Rounds)
	for _, c := range r.Clients {
		fmt.Fprintf(&b, "  %-34s wall %8s  cpu %8s  rss %7s", c.Label, secsOrDash(summarize(c.Sync, wallOf)), secsOrDash(summarize(c.Sync, cpuOf)), mibOrDash(summarize(c.Sync, rssOf)))
		if d := summarize(c.Burst, delayOf); d.ok() {
			fmt.Fprintf(&b, "  burst delay %6.1f ms", d.Median)
		}
		b.WriteByte('\n')
	}
	for _, t := range r.targets() {
		res := "MISS"
		if t.Pass {
			res = "PASS"
		} else if !t.Known {
			res = "----"
		}
		fmt.Fprintf(&b, "  %s  %s: %s\n", res, t.Name, t.Measured)
	}
	return b.String()
}

func secsOrDash(s stat) string {
	if !s.ok() {
		return "–"
	}
	return secs(s.Median)
}

func mibOrDash(s stat) string {
	if !s.ok() || math.IsNaN(s.Median) {
		return "–"
	}
	return mibf(s.Median)
}
