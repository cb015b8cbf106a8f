package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// saveJSON writes v, indented, to path.
func saveJSON(path string, v any) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(path), err)
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode results: %w", err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// loadScaleRuns reads every bench/results/scale-n*.json, by N.
func loadScaleRuns(benchDir string) ([]*scaleRun, error) {
	paths, err := filepath.Glob(filepath.Join(benchDir, "results", "scale-n*.json"))
	if err != nil {
		return nil, fmt.Errorf("find scale results: %w", err)
	}
	var runs []*scaleRun
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", p, err)
		}
		var r scaleRun
		if err := json.Unmarshal(b, &r); err != nil {
			return nil, fmt.Errorf("decode %s: %w (delete it or run make bench-scale again)", p, err)
		}
		if r.Version == resultsVersion {
			runs = append(runs, &r)
		}
	}
	sort.Slice(runs, func(i, j int) bool { return runs[i].N < runs[j].N })
	return runs, nil
}

func (r *scaleRun) client(id string) *clientResult {
	for i := range r.Clients {
		if r.Clients[i].ID == id {
			return &r.Clients[i]
		}
	}
	return nil
}

func (r *scaleRun) syncStat(id string, metric func(sample) float64) stat {
	if c := r.client(id); c != nil {
		return summarize(c.Sync, metric)
	}
	return stat{}
}

// best is the client among ids with the lowest median of metric.
func (r *scaleRun) best(ids []string, metric func(sample) float64) (stat, string) {
	var best stat
	var label string
	for _, id := range ids {
		s := r.syncStat(id, metric)
		if s.ok() && (!best.ok() || s.Median < best.Median) {
			best, label = s, r.client(id).Label
		}
	}
	return best, label
}

var (
	scalePaged   = []string{"a-page", "a-page-plain"}
	scaleClientG = []string{"b-typed-list", "b-typed-proto", "b-typed-stream", "b-dyn-list", "b-dyn-stream"}
)

// churnOf is the churn sample of client id at rate, nil if none.
func (r *scaleRun) churnOf(id string, rate int) *churnSample {
	for i := range r.Churn {
		if r.Churn[i].ID == id && r.Churn[i].Rate == rate {
			return &r.Churn[i]
		}
	}
	return nil
}

// rates are the churn rates measured, in order.
func (r *scaleRun) rates() []int {
	var out []int
	for _, c := range r.Churn {
		found := false
		for _, x := range out {
			found = found || x == c.Rate
		}
		if !found {
			out = append(out, c.Rate)
		}
	}
	return out
}

// rssFlat is the churn target's reading of "RSS flat over the churn": at
// the end at most 10% above the start.
const rssFlat = 1.10

func (r *scaleRun) targets() []target {
	const d = "d-json"
	var out []target
	add := func(name string, known, pass bool, measured string) {
		out = append(out, target{Name: name, N: r.N, Measured: measured, Pass: pass, Known: known})
	}
	dw, dc, dr := r.syncStat(d, wallOf), r.syncStat(d, cpuOf), r.syncStat(d, rssOf)
	if pw, label := r.best(scalePaged, wallOf); dw.ok() && pw.ok() {
		q := dw.Median / pw.Median
		add("initial sync (-o json) wall ≤ 1.2 × the paginated list", true, q <= 1.2,
			fmt.Sprintf("%s vs %s (%s) = %.2f×", secs(dw.Median), secs(pw.Median), strings.TrimPrefix(label, "(a) "), q))
	} else {
		add("initial sync (-o json) wall ≤ 1.2 × the paginated list", false, false, "not measured")
	}
	for _, m := range []struct {
		name   string
		d      stat
		metric func(sample) float64
		format func(float64) string
	}{
		{"initial sync wall ≤ 0.25 × client-go's best", dw, wallOf, secs},
		{"initial sync CPU ≤ 0.25 × client-go's best", dc, cpuOf, secs},
		{"initial sync peak RSS ≤ 0.25 × client-go's best", dr, rssOf, mibf},
	} {
		b, label := r.best(scaleClientG, m.metric)
		if !m.d.ok() || !b.ok() {
			add(m.name, false, false, "not measured")
			continue
		}
		q := m.d.Median / b.Median
		add(m.name, true, q <= 0.25, fmt.Sprintf("%s vs %s (%s) = %.2f×", m.format(m.d.Median), m.format(b.Median), strings.TrimPrefix(label, "(b) "), q))
	}
	if dr.ok() && r.Stats.StrippedBytes > 0 {
		store := float64(r.Stats.StrippedBytes) / (1 << 20)
		q := dr.Median / store
		measured := fmt.Sprintf("%s vs %s of Pods without managedFields = %.2f×", mibf(dr.Median), mibf(store), q)
		if da := r.syncStat(d, anonOf); da.ok() {
			measured += fmt.Sprintf(" (RssAnon %s = %.2f×)", mibf(da.Median), da.Median/store)
		}
		add("initial sync peak RSS ≤ 1.5 × the stripped objects' bytes", true, q <= 1.5, measured)
	} else {
		add("initial sync peak RSS ≤ 1.5 × the stripped objects' bytes", false, false, "not measured")
	}
	for _, rate := range r.rates() {
		c := r.churnOf(d, rate)
		name := fmt.Sprintf("churn at %s: p99 delay ≤ 1.1 × the plain watch's p99 + 20 ms", rateLabel(rate))
		if c == nil || c.Client.Matched == 0 || c.Reference.Matched == 0 {
			add(name, false, false, "not measured")
			continue
		}
		limit := 1.1*c.Reference.P99MS + 20
		add(name, true, c.Client.P99MS <= limit && c.Client.Missing == 0,
			fmt.Sprintf("%.1f ms vs %.1f ms (plain watch %.1f ms), %d writes at %.0f/s", c.Client.P99MS, limit, c.Reference.P99MS, c.Writes, float64(c.Writes)/c.WriteSeconds))
		name = fmt.Sprintf("churn at %s: RSS flat (end ≤ %.2f × start)", rateLabel(rate), rssFlat)
		if c.RSSStartKiB == 0 {
			add(name, false, false, "not measured")
			continue
		}
		measured := fmt.Sprintf("%.0f → %.0f MiB (max %.0f) over %.0f s", float64(c.RSSStartKiB)/1024, float64(c.RSSEndKiB)/1024, float64(c.RSSMaxKiB)/1024, c.WriteSeconds)
		if half := c.RSSSeriesKiB[len(c.RSSSeriesKiB)/2:]; len(half) > 1 {
			measured += fmt.Sprintf("; over the second half %.0f–%.0f MiB", float64(slices.Min(half))/1024, float64(slices.Max(half))/1024)
		}
		add(name, true, float64(c.RSSEndKiB) <= rssFlat*float64(c.RSSStartKiB), measured)
	}
	// Issue 12: watching everything costs little more than its largest
	// type; metadata only costs a fraction of whole objects.
	const allName = "(issue 12) --all-types -A sync wall ≤ 1.2 × its largest type (Pods) alone"
	if aw := r.syncStat("d-all", wallOf); aw.ok() && dw.ok() {
		q := aw.Median / dw.Median
		add(allName, true, q <= 1.2, fmt.Sprintf("%s vs %s (-o json) = %.2f×", secs(aw.Median), secs(dw.Median), q))
	} else {
		add(allName, false, false, "not measured")
	}
	const metaName = "(issue 12) --metadata-only peak RSS ≤ 0.25 × whole objects"
	if mr := r.syncStat("d-meta", rssOf); mr.ok() && dr.ok() {
		q := mr.Median / dr.Median
		add(metaName, true, q <= 0.25, fmt.Sprintf("%s vs %s (-o json) = %.2f×", mibf(mr.Median), mibf(dr.Median), q))
	} else {
		add(metaName, false, false, "not measured")
	}
	// Issue 46: the page costs the stream little.
	const pageName = "(issue 46) --timeline on the initial list (-o name): CPU ≤ 1.10 × without"
	if tc, nc := r.syncStat("d-name-tl", cpuOf), r.syncStat("d-name", cpuOf); tc.ok() && nc.ok() {
		q := tc.Median / nc.Median
		add(pageName, true, q <= 1.10, fmt.Sprintf("%s vs %s = %.2f×", secs(tc.Median), secs(nc.Median), q))
	} else {
		add(pageName, false, false, "not measured")
	}
	// Issue 23: the server's Tables cost the client nothing more.
	const wideWall, wideCPU = "(issue 23) -o wide initial sync wall ≤ 2 × -o json", "(issue 23) -o wide client CPU ≤ -o json"
	if ww, wc := r.syncStat("d-wide", wallOf), r.syncStat("d-wide", cpuOf); ww.ok() && wc.ok() && dc.ok() {
		dw := r.syncStat(d, wallOf)
		server := ""
		if ws, ds := r.syncStat("d-wide", serverOf), r.syncStat(d, serverOf); ws.ok() && ds.ok() {
			server = fmt.Sprintf("; server CPU %s vs %s (the Table rendering: %+.0f%%)", secs(ws.Median), secs(ds.Median), (ws.Median/ds.Median-1)*100)
		}
		add(wideWall, true, ww.Median <= 2*dw.Median, fmt.Sprintf("%s vs %s = %.2f×%s", secs(ww.Median), secs(dw.Median), ww.Median/dw.Median, server))
		add(wideCPU, true, wc.Median <= dc.Median, fmt.Sprintf("%s vs %s = %.2f×", secs(wc.Median), secs(dc.Median), wc.Median/dc.Median))
	} else {
		add(wideWall, false, false, "not measured")
		add(wideCPU, false, false, "not measured")
	}
	// Issue 22: judging every object's health costs little.
	const healthName = "(issue 22) health on: initial sync CPU ≤ 1.1 × --health=false"
	if nc := r.syncStat("d-json-nh", cpuOf); nc.ok() && dc.ok() {
		q := dc.Median / nc.Median
		add(healthName, true, q <= 1.1, fmt.Sprintf("%s vs %s = %.2f×", secs(dc.Median), secs(nc.Median), q))
	} else {
		add(healthName, false, false, "not measured")
	}
	for _, rate := range r.rates() {
		name := fmt.Sprintf("(issue 22) health on: churn at %s CPU per 1,000 events ≤ 1.1 × --health=false", rateLabel(rate))
		on, off := r.churnOf(d, rate), r.churnOf("d-json-nh", rate)
		if on == nil || off == nil || on.CPUPer1000MS() == 0 || off.CPUPer1000MS() == 0 {
			add(name, false, false, "not measured")
			continue
		}
		q := on.CPUPer1000MS() / off.CPUPer1000MS()
		add(name, true, q <= 1.1, fmt.Sprintf("%.0f ms vs %.0f ms = %.2f×", on.CPUPer1000MS(), off.CPUPer1000MS(), q))
	}
	// Issue 56: waiting for every Pod of the list costs little more than
	// the list.
	const untilName = "(issue 56) --until=status=Current on the initial list (-o name): CPU ≤ 1.2 × --until-synced"
	if uc, sc := r.syncStat("d-until", cpuOf), r.syncStat("d-synced", cpuOf); uc.ok() && sc.ok() {
		q := uc.Median / sc.Median
		add(untilName, true, q <= 1.2, fmt.Sprintf("%s vs %s = %.2f×", secs(uc.Median), secs(sc.Median), q))
	} else {
		add(untilName, false, false, "not measured")
	}
	if r.Tag != "" {
		// A run of some clients: only what it measured.
		out = slices.DeleteFunc(out, func(t target) bool { return !t.Known })
	}
	return out
}

// scaleMarkdown is the scale section of RESULTS.md.
func scaleMarkdown(benchDir string, runs []*scaleRun) string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	if len(runs) == 0 {
		return ""
	}
	w("\n## Scale: Pods on simulated nodes (issue 11)\n\n")
	w("Written by `make bench-scale` (`go run ./bench/harness -scale -n N`; `make bench-scale N=150000` for Kubernetes' supported limit per cluster) from `bench/results/scale-nN.json`. ")
	w("N realistic Pods (two containers with ports, probes, env, resources and a mount; labels and annotations; the size below) are created in namespace bench with %d parallel writers, each with `spec.nodeName` set to one of the simulated nodes, so that only etcd, kube-apiserver and kwok run (no controller-manager, no scheduler); kwok writes every status (Running, Ready, IPs). ", seedWriters)
	w("Once every Pod is Running, kwok is stopped: nothing notices (no controller-manager), the Pods stay as kwok left them, and the only writes from then on are the benchmark's (kwok would otherwise renew one lease per node every 10 s). ")
	w("Every client watches `pods -A`; the initial sync is measured as in the sections above (a separate process per run through bench/rusage, started once the server is idle, the clients alternating within a round). ")
	w("Then **steady churn**: for each rate and each watching client, a fresh client syncs, and 3 s later the writers patch Pods, one after the other, at that rate for the set time — even writes a label of the Pod, odd writes a condition in its status — while a plain HTTP watch of every Pod (`GET /api/v1/pods?watch=true&resourceVersion=…`, bench/rawclient, copying bytes) runs next to the client: the limit a watcher can reach on this server. ")
	w("The delay of a write is from its response to the harness to the line about it on the watcher's stdout (a negative delay: the event was printed before the writer saw the response); the client's CPU per 1,000 events and its RSS (RssAnon+RssFile, sampled each second) are read from /proc over the churn.\n")

	for _, r := range runs {
		tag := ""
		if r.Tag != "" {
			tag = fmt.Sprintf(" (run %q: %s)", r.Tag, clientLabels(r.Clients))
		}
		w("\n### %s Pods on %s nodes%s\n\n", numberWithCommas(r.N), numberWithCommas(r.Nodes), tag)
		st := r.Stats
		per := func(v int64) int64 { return v / int64(max(1, st.Items)) }
		plugin := ""
		if r.Plugin != "" {
			plugin = fmt.Sprintf(" (bin/kubectl-deltas: %s)", r.Plugin)
		}
		w("%s; commit `%s`%s; %d round(s), no warm-up runs (the discovery caches are warmed once); created in %.0f s, Running %.0f s later; whole run %.0f s. ",
			r.Date, r.Commit, plugin, r.Rounds, r.SeedSeconds, r.KwokSeconds, r.DurationSeconds)
		w("The paginated list is %s of JSON (%d bytes per Pod as served, %d without managedFields: **%s** for the Store to keep). ",
			mib(st.ListBytes), per(st.ObjectBytes), per(st.StrippedBytes), mib(st.StrippedBytes))
		w("kube-apiserver held %s RSS and etcd %s before the measurements; kube-apiserver's peak was %s.\n\n",
			gib(r.ServerRSSKiB), gib(r.EtcdRSSKiB), gib(r.ServerPeakKiB))
		w("Machine: %s, %d CPUs, %s RAM, %s; %s; kube-apiserver, etcd and kubectl %s, kwok v0.8.0, on the same machine (127.0.0.1). CPUs busy with other work: %.0f%% before the measurements, %.0f%% after.\n\n",
			r.Machine.CPU, r.Machine.CPUs, r.Machine.Memory, r.Machine.Kernel, r.Machine.GoVersion, r.Kube, 100*r.BusyBefore, 100*r.BusyAfter)

		if r.Interrupted != "" {
			w("**This run stopped before the end** (%s): what it measured until then is below.\n\n", oneLine(r.Interrupted))
		}
		w("| target (issues 11, 12) | measured (medians) | result |\n|---|---|---|\n")
		for _, t := range r.targets() {
			w("| %s | %s | **%s** |\n", t.Name, t.Measured, passWord(t))
		}

		w("\nInitial sync (wall ÷ (a): the faster paginated list; ÷ (b): client-go's best run for that metric):\n\n")
		pw, _ := r.best(scalePaged, wallOf)
		bw, _ := r.best(scaleClientG, wallOf)
		bc, _ := r.best(scaleClientG, cpuOf)
		br, _ := r.best(scaleClientG, rssOf)
		w("| client | wall | CPU | peak RSS | RssAnon / RssFile | server CPU | output | wall ÷ (a) | wall ÷ (b) | CPU ÷ (b) | RSS ÷ (b) |\n")
		w("|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|\n")
		for _, c := range displayOrder(r.Clients) {
			wall, cpu, rss := summarize(c.Sync, wallOf), summarize(c.Sync, cpuOf), summarize(c.Sync, rssOf)
			split, outs, srvs := "–", "–", "–"
			if anon := summarize(c.Sync, anonOf); anon.ok() {
				split = fmt.Sprintf("%.0f / %.0f MiB", anon.Median, summarize(c.Sync, fileOf).Median)
			}
			if out := summarize(c.Sync, bytesOf); out.ok() {
				outs = mib(int64(out.Median))
			}
			if srv := summarize(c.Sync, serverOf); srv.ok() {
				srvs = secs(srv.Median)
			}
			w("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", c.Label,
				spread(wall, secs), spread(cpu, secs), spread(rss, mibf), split, srvs, outs,
				ratio(wall, pw), ratio(wall, bw), ratio(cpu, bc), ratio(rss, br))
		}
		if len(r.Churn) > 0 {
			w("\nSteady churn, %.0f s per run, %d writers (delays in ms: p50 / p99 / max; the plain watch ran next to the client in the same run):\n\n", r.ChurnSeconds, r.ChurnWriters)
			w("| rate | client | writes (achieved rate) | client sync before | client delay | plain watch delay | client CPU per 1,000 events | RSS start → end (max) | server CPU |\n")
			w("|---|---|---:|---:|---|---|---:|---|---:|\n")
			for _, c := range r.Churn {
				rate := 0.0
				if c.WriteSeconds > 0 {
					rate = float64(c.Writes) / c.WriteSeconds
				}
				w("| %s | %s | %s (%.0f/s) | %s | %s | %s | %.0f ms | %.0f → %.0f MiB (%.0f) | %s |\n",
					rateLabel(c.Rate), c.Label, numberWithCommas(c.Writes), rate, secs(c.SyncMS),
					delayText(c.Client), delayText(c.Reference), c.CPUPer1000MS(),
					float64(c.RSSStartKiB)/1024, float64(c.RSSEndKiB)/1024, float64(c.RSSMaxKiB)/1024, secs(c.ServerCPUMS))
			}
		}
		var fails []string
		for _, c := range r.Clients {
			for _, s := range c.Sync {
				if s.Error != "" {
					fails = append(fails, fmt.Sprintf("- %s, sync round %d: %s", c.Label, s.Round, oneLine(s.Error)))
				}
			}
		}
		for _, c := range r.Churn {
			if c.Error != "" {
				fails = append(fails, fmt.Sprintf("- %s, churn at %s: %s", c.Label, rateLabel(c.Rate), oneLine(c.Error)))
			}
		}
		if len(fails) > 0 {
			w("\nFailures:\n\n%s\n", strings.Join(fails, "\n"))
		}
	}
	// Every client any run measured, described once.
	var described []clientResult
	seen := map[string]bool{}
	for _, r := range runs {
		for _, c := range r.Clients {
			if !seen[c.ID] {
				seen[c.ID] = true
				described = append(described, c)
			}
		}
	}
	w("\n### What was measured at scale\n\n")
	for _, c := range displayOrder(described) {
		w("- **%s**: %s\n", c.Label, c.Measured)
	}
	if note, err := os.ReadFile(filepath.Join(benchDir, "analysis-scale.md")); err == nil {
		w("\n%s", strings.TrimRight(string(note), "\n")+"\n")
	}
	for _, r := range runs {
		for _, p := range r.Profiles {
			w("\n### Profile of kubectl deltas, %s of %s Pods\n\n", strings.TrimPrefix(p.Name, "scale "), numberWithCommas(r.N))
			w("CPU profile of `%s` (in-process under `runtime/pprof`): %.2f s wall, %.2f s CPU.\n\n", p.Command, p.WallMS/1000, p.CPUMS/1000)
			w("`go tool pprof -top` (flat):\n\n```\n%s```\n\n", trimPprof(p.Flat))
			w("`go tool pprof -top -sample_index=alloc_space` (allocations):\n\n```\n%s```\n", trimPprof(p.Allocs))
		}
	}
	return b.String()
}

// displayOrder sorts the clients for the tables: by group, and within a
// group in the order of scaleDisplay (they are measured in another).
func displayOrder(cs []clientResult) []clientResult {
	rank := func(id string) int {
		if i := slices.Index(scaleDisplay, id); i >= 0 {
			return i
		}
		return len(scaleDisplay)
	}
	out := slices.Clone(cs)
	slices.SortStableFunc(out, func(a, b clientResult) int { return cmp.Compare(rank(a.ID), rank(b.ID)) })
	return out
}

var scaleDisplay = []string{"a-page", "a-page-plain", "a-full", "b-typed-list", "b-typed-proto", "b-typed-stream", "b-dyn-list", "b-dyn-stream", "c", "d-json", "d-json-nh", "d-handler", "d-handler-delta", "d-wide", "d-text", "d-name", "d-name-tl", "d-json-wl", "d-meta", "d-all"}

func passWord(t target) string {
	switch {
	case !t.Known:
		return "not measured"
	case t.Pass:
		return "PASS"
	}
	return "MISS"
}

func delayText(d delayStats) string {
	if d.Matched == 0 {
		return "–"
	}
	out := fmt.Sprintf("%.1f / %.1f / %.1f", d.P50MS, d.P99MS, d.MaxMS)
	if d.Missing > 0 {
		out += fmt.Sprintf(" (%d missing)", d.Missing)
	}
	return out
}

func gib(kib int64) string {
	if kib >= 1<<20 {
		return fmt.Sprintf("%.1f GiB", float64(kib)/(1<<20))
	}
	return fmt.Sprintf("%.0f MiB", float64(kib)/1024)
}

// clientLabels lists the clients of a run: "-o json, --metadata-only".
func clientLabels(clients []clientResult) string {
	labels := make([]string, len(clients))
	for i, c := range clients {
		labels[i] = c.Label
	}
	return strings.Join(labels, ", ")
}

// scaleSummary is the short report printed at the end of a scale run.
func scaleSummary(r *scaleRun) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n%d Pods, %d round(s) (medians):\n", r.N, r.Rounds)
	for _, c := range r.Clients {
		fmt.Fprintf(&b, "  %-36s wall %9s  cpu %9s  rss %8s\n", c.Label, secsOrDash(summarize(c.Sync, wallOf)), secsOrDash(summarize(c.Sync, cpuOf)), mibOrDash(summarize(c.Sync, rssOf)))
	}
	for _, c := range r.Churn {
		fmt.Fprintf(&b, "  churn %-12s %-36s p99 %7.1f ms (plain watch %7.1f ms)  CPU/1000 %5.0f ms  RSS %4.0f → %4.0f MiB\n",
			rateLabel(c.Rate), c.Label, c.Client.P99MS, c.Reference.P99MS, c.CPUPer1000MS(), float64(c.RSSStartKiB)/1024, float64(c.RSSEndKiB)/1024)
	}
	for _, t := range r.targets() {
		fmt.Fprintf(&b, "  %s  %s: %s\n", passWord(t), t.Name, t.Measured)
	}
	return b.String()
}
