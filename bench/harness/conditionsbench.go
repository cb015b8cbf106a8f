package main

// The waiting section (-conditions, part of make bench; make
// bench-conditions alone): what --until and --fail-when cost beside the
// same stream without them (issue 56). A replay of conditionObjects
// ConfigMaps and as many updates, with each kind of condition (health,
// JSONPath, CEL) against the plain replay; and a live stream of the N
// ConfigMaps under churn with --fail-when=status=Failed against the plain
// stream, side by side: the CPU each used, and how long after the
// writer's last update each had printed every update. Results in
// bench/results/conditions.json and a section of RESULTS.md.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// conditionsRun is bench/results/conditions.json.
type conditionsRun struct {
	Date, Commit string
	Machine      machineInfo
	// Objects and Updates make the replayed recording; N the live
	// stream's ConfigMaps.
	Objects, Updates, N int
	Measures            []abMeasure
	// Lags are the live rows' delays, by round: from the writer's last
	// update to the moment each stream had printed every update.
	Lags []conditionLag
}

// conditionLag is one live round's delays, in milliseconds (-1: not
// every update was printed within lagLimit).
type conditionLag struct {
	Updates           int
	NewMS, BaseMS     float64
	NewArgs, BaseArgs string
}

// conditionObjects is how many ConfigMaps the replayed recording has, each
// updated once.
const conditionObjects = 3000

// lagLimit bounds the wait for a live stream to print every update.
const lagLimit = 30 * time.Second

// conditionReplays are the replayed rows: each condition holds only at
// the recording's last record (every ConfigMap relabelled v=2) or never.
// The last reads each object's name: no two objects share a verdict, so
// none is kept (condition.memo), and each is judged for itself; it has no
// target (limit 0), it says what that costs.
var conditionReplays = []struct {
	name, flag string
	limit      float64
}{
	{"--fail-when on health", "--fail-when=status=Failed", 1.5},
	{"--until on a JSONPath", "--until=jsonpath='{.metadata.labels.v}'=2", 1.5},
	{"--until on CEL", `--until=cel='object.metadata.labels.v == "2"'`, 1.5},
	{"--until on CEL that names each object (no verdict shared)", `--until=cel='object.metadata.labels.v == "2" && name != ""'`, 0},
}

// measureConditions runs the section and saves it.
func measureConditions(ctx context.Context, e *env, cl *cluster, o options, root, benchDir string) error {
	dir, err := os.MkdirTemp(e.home, "conditions-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	plugin := filepath.Join(e.bin, "kubectl-deltas")
	res := &conditionsRun{Date: time.Now().UTC().Format(time.RFC3339), N: e.n}

	zst, plain := filepath.Join(dir, "cms.jsonl.zst"), filepath.Join(dir, "relabelled.jsonl")
	if out, err := commandIn(ctx, e, []string{plugin, "cm", "-n", benchNamespace, "--until-synced", "-q", "--record=" + zst, "--kubeconfig", e.kubeconfig}).CombinedOutput(); err != nil {
		return fmt.Errorf("recording the ConfigMaps: %w: %s", err, out)
	}
	if res.Objects, res.Updates, err = writeRelabelled(zst, plain, conditionObjects); err != nil {
		return err
	}
	sh := func(cmd string) []string { return []string{"sh", "-c", cmd} }
	base := sh(fmt.Sprintf("exec %s --replay=%s -o json > /dev/null", plugin, plain))
	for _, c := range conditionReplays {
		m := abMeasure{Name: fmt.Sprintf("replay of %d ConfigMaps and %d updates, %s", res.Objects, res.Updates, c.name), Metric: "wall", Limit: c.limit,
			Target: fmt.Sprintf("at most %g× the wall time of the same replay without it", c.limit),
			Args:   "kubectl deltas --replay=FILE -o json " + c.flag, BaseArgs: "kubectl deltas --replay=FILE -o json"}
		if c.limit == 0 {
			m.Target = "none: what kept verdicts cannot help, each object judged for itself"
		}
		cmd := sh(fmt.Sprintf("exec %s --replay=%s -o json %s > /dev/null", plugin, plain, c.flag))
		logf("conditions: %s, %d rounds", m.Name, o.rounds)
		alternate(ctx, e, o.warmup, o.rounds, &m, cmd, base)
		res.Measures = append(res.Measures, m)
	}

	live, lags, err := conditionUnderChurn(ctx, e, cl, dir, o.rounds)
	if err != nil {
		return err
	}
	res.Measures, res.Lags = append(res.Measures, live), lags
	res.Commit, res.Machine = gitDescribe(ctx, root), machine(ctx, root)
	logMeasures(res.Measures, 60)
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(benchDir, "results", "conditions.json"), append(b, '\n'), 0o644)
}

// writeRelabelled writes, as plain JSON Lines, the first n ConfigMaps of
// the recording src labelled v=1, then one update of each that labels it
// v=2 (a new resourceVersion, 10 ms of recorded time apart). It returns
// how many objects and updates it wrote.
func writeRelabelled(src, dst string, n int) (objects, updates int, err error) {
	header, lines, err := initialRecords(src)
	if err != nil {
		return 0, 0, err
	}
	var initial []map[string]any
	for _, l := range lines[:min(n, len(lines))] {
		var rec map[string]any
		if err := json.Unmarshal(l, &rec); err != nil {
			return 0, 0, err
		}
		initial = append(initial, rec)
	}
	f, err := os.Create(dst)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	w := bufio.NewWriter(f)
	write := func(rec map[string]any) error {
		line, err := json.Marshal(rec)
		if err != nil {
			return err
		}
		_, err = w.Write(append(line, '\n'))
		return err
	}
	label := func(rec map[string]any, v string) error {
		obj, _ := rec["object"].(map[string]any)
		meta, _ := obj["metadata"].(map[string]any)
		if meta == nil {
			return errors.New("a recorded ConfigMap has no metadata")
		}
		labels, _ := meta["labels"].(map[string]any)
		if labels == nil {
			labels = map[string]any{}
			meta["labels"] = labels
		}
		labels["v"] = v
		return nil
	}
	if _, err := w.Write(append(header, '\n')); err != nil {
		return 0, 0, err
	}
	for _, rec := range initial {
		if err := label(rec, "1"); err != nil {
			return 0, 0, err
		}
		if err := write(rec); err != nil {
			return 0, 0, err
		}
	}
	start := time.Now().UTC().Add(time.Minute)
	rv := 1 << 30
	for i, rec := range initial {
		if err := label(rec, "2"); err != nil {
			return 0, 0, err
		}
		rv++
		asUpdate(rec, rec["object"].(map[string]any)["metadata"].(map[string]any), rv, start.Add(time.Duration(i)*10*time.Millisecond))
		if err := write(rec); err != nil {
			return 0, 0, err
		}
	}
	return len(initial), len(initial), w.Flush()
}

// conditionUnderChurn runs, rounds times, a live stream of the N
// ConfigMaps with --fail-when=status=Failed and one without, side by side
// (which starts first alternates), while they are updated at churnRate
// for churnFor: the CPU each used during the churn, from /proc, and how
// long after the last update each had printed all of them.
func conditionUnderChurn(ctx context.Context, e *env, cl *cluster, dir string, rounds int) (abMeasure, []conditionLag, error) {
	m := abMeasure{Metric: "cpu", Limit: 1.3,
		Target: "at most 1.3× the CPU of the plain stream, every update printed within 1 s of the writer's last",
		Args:   "kubectl deltas cm -o json --fail-when=status=Failed > FILE", BaseArgs: "kubectl deltas cm -o json > FILE"}
	plugin := filepath.Join(e.bin, "kubectl-deltas")
	conn := "--kubeconfig " + e.kubeconfig
	newOut, baseOut := filepath.Join(dir, "fail-when.jsonl"), filepath.Join(dir, "plain.jsonl")
	newLine := fmt.Sprintf("exec %s cm -n %s -o json --fail-when=status=Failed %s > %s", plugin, benchNamespace, conn, newOut)
	baseLine := fmt.Sprintf("exec %s cm -n %s -o json %s > %s", plugin, benchNamespace, conn, baseOut)
	logf("conditions: %s under churn (one writer, at most %d updates/s for %s), %d rounds", m.Args, churnRate, churnFor, rounds)
	var lags []conditionLag
	var counts []int
	for round := range rounds {
		withCond, without, err := startSideBySide(ctx, e, round, newLine, baseLine)
		if err != nil {
			return m, nil, err
		}
		stop := func() {
			for _, c := range []*exec.Cmd{withCond, without} {
				_ = c.Process.Signal(os.Interrupt)
				_ = c.Wait()
			}
		}
		time.Sleep(churnSettle + 2*time.Second) // both listed, watching
		newUsage, baseUsage := startUsage(withCond.Process.Pid, 0), startUsage(without.Process.Pid, 0)
		updated, churnErr := churnConfigMaps(ctx, cl, e.n, round+100, churnFor)
		churned := time.Now()
		if churnErr != nil {
			stop()
			return m, nil, churnErr
		}
		want := e.n + updated
		lag := conditionLag{Updates: updated, NewArgs: m.Args, BaseArgs: m.BaseArgs}
		var wg sync.WaitGroup
		wg.Go(func() { lag.NewMS = printedAll(newOut, want, churned) })
		wg.Go(func() { lag.BaseMS = printedAll(baseOut, want, churned) })
		wg.Wait()
		if rest := 2*time.Second - time.Since(churned); rest > 0 {
			time.Sleep(rest) // the last events handled, as the other rows
		}
		newCPU, _ := newUsage.end()
		baseCPU, _ := baseUsage.end()
		stop()
		logf("  round %d: %d updates; %.0f ms CPU, without %.0f ms; every update printed %.0f ms after the last, without %.0f ms", round+1, updated, newCPU, baseCPU, lag.NewMS, lag.BaseMS)
		counts = append(counts, updated)
		lags = append(lags, lag)
		m.New = append(m.New, abSample{CPUMS: newCPU, WallMS: ms(churnFor)})
		m.Base = append(m.Base, abSample{CPUMS: baseCPU, WallMS: ms(churnFor)})
	}
	slices.Sort(counts)
	m.Name = fmt.Sprintf("live, --fail-when on health, %d ConfigMap updates in %s, one writer", counts[len(counts)/2], churnFor)
	return m, lags, nil
}

// printedAll waits until the file holds want lines and returns how long
// after since that was, in milliseconds; -1 when it did not within
// lagLimit. It reads only what was written since its last look, so as
// not to take the CPU the streams measured need.
func printedAll(file string, want int, since time.Time) float64 {
	f, err := os.Open(file)
	if err != nil {
		return -1
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	lines := 0
	for time.Since(since) < lagLimit {
		for {
			n, err := f.Read(buf)
			lines += bytes.Count(buf[:n], []byte{'\n'})
			if n == 0 || err != nil {
				break
			}
		}
		if lines >= want {
			return ms(time.Since(since))
		}
		time.Sleep(20 * time.Millisecond)
	}
	return -1
}

// loadConditionsRun reads bench/results/conditions.json; nil when there
// is none.
func loadConditionsRun(benchDir string) (*conditionsRun, error) {
	return loadResult[conditionsRun](benchDir, "conditions.json")
}

// conditionsMarkdown is the section of RESULTS.md for the waiting run.
func conditionsMarkdown(r *conditionsRun) string {
	if r == nil {
		return ""
	}
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("## Waiting: --until and --fail-when (issue 56)\n\n")
	w("Written by `make bench` (`make bench-conditions` alone) from `bench/results/conditions.json`. ")
	w("The replayed recording is the first %d ConfigMaps of the %d, labelled v=1, then one update of each that labels it v=2 (plain JSON Lines, %d records): each command alternates run by run with the plain replay; wall from start to exit, medians. ", r.Objects, r.N, r.Objects+r.Updates)
	w("The live row runs both streams side by side over the %d ConfigMaps while one writer updates them at %d/s for %s; CPU during the churn from /proc, medians.\n\n", r.N, churnRate, churnFor)
	w("%s; commit `%s`; %s, %d CPUs.\n\n", r.Date, r.Commit, r.Machine.CPU, r.Machine.CPUs)
	w("| measure | kubectl deltas | compared with | ratio | target | result |\n|---|---|---|---:|---|---|\n")
	for _, m := range r.Measures {
		ratio, result := abRatio(m)
		if m.Limit == 0 {
			result = "measured"
		}
		w("| %s (`%s`) | %s | `%s`: %s | %s | %s | **%s** |\n", m.Name, m.Args, abCell(m.New), m.BaseArgs, abCell(m.Base), ratio, m.Target, result)
	}
	if len(r.Lags) > 0 {
		var newMS, baseMS []float64
		late := false
		for _, l := range r.Lags {
			newMS, baseMS = append(newMS, l.NewMS), append(baseMS, l.BaseMS)
			late = late || l.NewMS < 0 || l.NewMS > 1000
		}
		w("| live: every update printed after the writer's last (`%s`), by round | %s ms | `%s`: %s ms | – | within 1 s in every round | **%s** |\n",
			r.Lags[0].NewArgs, joinMS(newMS), r.Lags[0].BaseArgs, joinMS(baseMS), passMiss(!late))
	}
	w("\n")
	return b.String()
}

// joinMS prints delays in milliseconds, "never" for -1.
func joinMS(v []float64) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = fmt.Sprintf("%.0f", x)
		if x < 0 {
			parts[i] = "never"
		}
	}
	return strings.Join(parts, ", ")
}
