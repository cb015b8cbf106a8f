package main

// The A/B section (-ab REF, part of make bench): the plugin built from
// another tree of the repository (REF, e6e90b4 by default: the tree before
// the CEL environment, health and the flag groups) against this tree's, on
// the same control plane, the two interleaved run by run: what a start-up
// and what each object cost now beside then, so that a regression of
// either shows. Results in bench/results/ab.json and a section of
// RESULTS.md.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// abEmptyNamespace is the namespace of the empty snapshot.
const abEmptyNamespace = "bench-empty"

// abRun is bench/results/ab.json.
type abRun struct {
	Date, Commit, Base string
	Machine            machineInfo
	N                  int
	Measures           []abMeasure
}

// abMeasure is one command measured for both trees: the samples of this
// tree (New) and of the base (Base), round by round.
type abMeasure struct {
	Name, Args, BaseArgs string
	// Target says what the measure must show, Limit the ratio of
	// medians (new/base) it allows, of Metric ("cpu" or "wall").
	Target string
	Metric string
	Limit  float64
	New    []abSample
	Base   []abSample
}

// abSample is one run: its wall and CPU time.
type abSample struct {
	WallMS, CPUMS float64
	MaxRSSKiB     int64  `json:",omitempty"`
	Error         string `json:",omitempty"`
}

// buildBase builds the plugin of the tree at ref into tools, from a
// worktree of the repository that is removed afterwards.
func buildBase(ctx context.Context, root, outDir, ref string) (string, error) {
	src := filepath.Join(outDir, "ab-src")
	_ = exec.CommandContext(ctx, "git", "-C", root, "worktree", "remove", "--force", src).Run()
	_ = os.RemoveAll(src)
	if out, err := exec.CommandContext(ctx, "git", "-C", root, "worktree", "add", "--detach", src, ref).CombinedOutput(); err != nil {
		return "", fmt.Errorf("git worktree add %s: %w: %s", ref, err, out)
	}
	defer func() {
		_ = exec.Command("git", "-C", root, "worktree", "remove", "--force", src).Run()
	}()
	bin := filepath.Join(outDir, "bin", "kubectl-deltas-base")
	build := exec.CommandContext(ctx, goTool(), "build", "-trimpath", "-ldflags", "-s -w", "-o", bin, "./cmd/kubectl-deltas")
	build.Dir = src
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build the plugin of %s: %w: %s", ref, err, out)
	}
	return bin, nil
}

// measureAB builds the base plugin, measures the A/B section and saves
// it.
func measureAB(ctx context.Context, e *env, cl *cluster, o options, root, benchDir, outDir string) error {
	logf("building the plugin of %s", o.ab)
	base, err := buildBase(ctx, root, outDir, o.ab)
	if err != nil {
		return err
	}
	r, err := runAB(ctx, e, cl, o, base)
	if err != nil {
		return err
	}
	r.Commit, r.Machine = gitDescribe(ctx, root), machine(ctx, root)
	logMeasures(r.Measures, 32)
	return saveAB(benchDir, r)
}

// runAB measures the empty snapshot (rounds*3 rounds) and the N
// ConfigMaps with health off (rounds rounds), this tree's plugin and
// base's alternating.
func runAB(ctx context.Context, e *env, cl *cluster, o options, base string) (*abRun, error) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: abEmptyNamespace}}
	if _, err := cl.client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("create namespace %s: %w", abEmptyNamespace, err)
	}
	plugin := filepath.Join(e.bin, "kubectl-deltas")
	conn := []string{"--kubeconfig", e.kubeconfig}
	kubectl := filepath.Join(e.bin, "kubectl")
	measures := []struct {
		abMeasure
		newArgs, baseArgs []string
		// baseBin runs baseArgs: base's plugin unless set (kubectl).
		baseBin string
		rounds  int
	}{{
		abMeasure: abMeasure{Name: "empty snapshot", Metric: "wall", Limit: 1.15,
			Target: "a snapshot of an empty namespace: wall within 15% of the base's"},
		newArgs:  []string{"cm", "-n", abEmptyNamespace, "--until-synced", "-o", "name"},
		baseArgs: []string{"cm", "-n", abEmptyNamespace, "--until-synced", "-o", "name"},
		rounds:   o.rounds * 3,
	}, {
		abMeasure: abMeasure{Name: "empty snapshot vs kubectl get", Metric: "wall", Limit: 0.5,
			Target: "the same snapshot in at most half of kubectl get's wall time (the \"base\" column is kubectl get)"},
		newArgs:  []string{"cm", "-n", abEmptyNamespace, "--until-synced", "-o", "name"},
		baseArgs: []string{"get", "cm", "-n", abEmptyNamespace, "-o", "name"},
		baseBin:  kubectl,
		rounds:   o.rounds * 3,
	}, {
		abMeasure: abMeasure{Name: fmt.Sprintf("%d ConfigMaps, health off", e.n), Metric: "cpu", Limit: 1.05,
			Target: "N ConfigMaps -o json with health off: CPU within 5% of the base's (which has no health)"},
		newArgs:  []string{"cm", "-n", benchNamespace, "--until-synced", "-o", "json", "--health=false"},
		baseArgs: []string{"cm", "-n", benchNamespace, "--until-synced", "-o", "json"},
		rounds:   o.rounds,
	}}
	res := &abRun{Date: time.Now().UTC().Format(time.RFC3339), Base: o.ab, N: e.n}
	for _, m := range measures {
		baseBin, baseName := base, "kubectl deltas "
		if m.baseBin != "" {
			baseBin, baseName = m.baseBin, "kubectl "
		}
		m.Args, m.BaseArgs = "kubectl deltas "+strings.Join(m.newArgs, " "), baseName+strings.Join(m.baseArgs, " ")
		logf("A/B %s: %d rounds, this tree against %s", m.Name, m.rounds, o.ab)
		for range o.warmup {
			abOnce(ctx, e, append([]string{plugin}, append(m.newArgs, conn...)...))
			abOnce(ctx, e, append([]string{baseBin}, append(m.baseArgs, conn...)...))
		}
		for range m.rounds {
			m.New = append(m.New, abOnce(ctx, e, append([]string{plugin}, append(m.newArgs, conn...)...)))
			m.Base = append(m.Base, abOnce(ctx, e, append([]string{baseBin}, append(m.baseArgs, conn...)...)))
		}
		res.Measures = append(res.Measures, m.abMeasure)
	}
	return res, nil
}

// abOnce runs args to completion under bench/rusage: its wall time (from
// the harness) and CPU time (from rusage).
func abOnce(ctx context.Context, e *env, args []string) abSample {
	report, err := os.CreateTemp(e.home, "rusage-*.json")
	if err != nil {
		return abSample{Error: err.Error()}
	}
	report.Close()
	defer os.Remove(report.Name())
	cmd := exec.CommandContext(ctx, filepath.Join(e.tools, "rusage"), append([]string{"-report", report.Name(), "--"}, args...)...)
	cmd.Env = append(os.Environ(), "HOME="+e.home, "NO_COLOR=1")
	began := time.Now()
	out, err := cmd.CombinedOutput()
	wall := time.Since(began)
	if err != nil {
		return abSample{Error: fmt.Sprintf("%v: %s", err, truncate(string(out), 300))}
	}
	b, err := os.ReadFile(report.Name())
	var r rusageReport
	if err != nil || json.Unmarshal(b, &r) != nil {
		return abSample{Error: "no resource usage report"}
	}
	return abSample{WallMS: ms(wall), CPUMS: ms(time.Duration(r.UserNanos + r.SystemNanos)), MaxRSSKiB: r.MaxRSSKiB}
}

// alternate measures newCmd into m.New and baseCmd into m.Base, one
// after the other, rounds times, after warmup unmeasured runs of each.
func alternate(ctx context.Context, e *env, warmup, rounds int, m *abMeasure, newCmd, baseCmd []string) {
	for range warmup {
		abOnce(ctx, e, newCmd)
		abOnce(ctx, e, baseCmd)
	}
	for range rounds {
		m.New = append(m.New, abOnce(ctx, e, newCmd))
		m.Base = append(m.Base, abOnce(ctx, e, baseCmd))
	}
}

// logMeasures logs each measure's ratio of medians, its name padded to
// width.
func logMeasures(measures []abMeasure, width int) {
	for _, m := range measures {
		newV, _ := abMedian(m.New, m.Metric)
		baseV, _ := abMedian(m.Base, m.Metric)
		logf("  %-*s %s %.1f vs %.1f = %.2f×", width, m.Name, m.Metric, newV, baseV, newV/max(baseV, 1e-9))
	}
}

// median of the samples' metric, and whether every sample is good.
func abMedian(samples []abSample, metric string) (float64, bool) {
	var v []float64
	for _, s := range samples {
		if s.Error != "" {
			return 0, false
		}
		switch metric {
		case "cpu":
			v = append(v, s.CPUMS)
		case "rss":
			v = append(v, float64(s.MaxRSSKiB))
		default:
			v = append(v, s.WallMS)
		}
	}
	if len(v) == 0 {
		return 0, false
	}
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2], true
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2, true
}

// saveAB writes bench/results/ab.json.
func saveAB(benchDir string, r *abRun) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(benchDir, "results", "ab.json"), append(b, '\n'), 0o644)
}

// loadABRun reads bench/results/ab.json; nil when there is none.
func loadABRun(benchDir string) (*abRun, error) { return loadResult[abRun](benchDir, "ab.json") }

// loadResult reads bench/results/NAME into a T; nil when there is none.
func loadResult[T any](benchDir, name string) (*T, error) {
	b, err := os.ReadFile(filepath.Join(benchDir, "results", name))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var r T
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	return &r, nil
}

// abCell is one side of a row: the medians of its samples.
func abCell(samples []abSample) string {
	wall, okW := abMedian(samples, "wall")
	cpu, okC := abMedian(samples, "cpu")
	if !okW || !okC {
		return "failed"
	}
	s := fmt.Sprintf("wall %.0f ms, CPU %.0f ms", wall, cpu)
	if rss, ok := abMedian(samples, "rss"); ok && rss > 0 {
		s += fmt.Sprintf(", RSS %.0f MiB", rss/1024)
	}
	return s + fmt.Sprintf(" (%d runs)", len(samples))
}

// abRatio is a measure's ratio of medians and whether it meets its limit.
func abRatio(m abMeasure) (ratio, result string) {
	newV, ok1 := abMedian(m.New, m.Metric)
	baseV, ok2 := abMedian(m.Base, m.Metric)
	if !ok1 || !ok2 || baseV <= 0 {
		return "–", "not measured"
	}
	return fmt.Sprintf("%.2f× %s", newV/baseV, m.Metric), passMiss(newV/baseV <= m.Limit)
}

// abMarkdown is the section of RESULTS.md for the A/B run.
func abMarkdown(r *abRun) string {
	if r == nil {
		return ""
	}
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("## A/B against `%s` (issue 32)\n\n", r.Base)
	w("Written by `make bench` (`-ab %s`, `make bench AB=REF` for another base) from `bench/results/ab.json`: ", r.Base)
	w("the plugin of `%s` built from a worktree (or kubectl, where the row says so), and this tree's, on the same control plane, alternating run by run; wall from start to exit, CPU user+system from rusage; medians.\n\n", r.Base)
	w("%s; commit `%s`; %s, %d CPUs.\n\n", r.Date, r.Commit, r.Machine.CPU, r.Machine.CPUs)
	w("| measure | this tree | base (`%s`) | ratio | target | result |\n|---|---|---|---:|---|---|\n", r.Base)
	for _, m := range r.Measures {
		ratio, result := abRatio(m)
		w("| %s (`%s` vs `%s`) | %s | %s | %s | %s | **%s** |\n", m.Name, m.Args, m.BaseArgs, abCell(m.New), abCell(m.Base), ratio, m.Target, result)
	}
	w("\n")
	return b.String()
}
