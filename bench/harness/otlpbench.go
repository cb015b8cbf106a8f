package main

// The OpenTelemetry section (-otlp, part of make bench; make bench-otlp
// alone): what --otlp costs beside -o json (issue 60). A real collector
// (test/otelcol: bin/otelcol, make otelcol, with hack/otelcol/collector.yaml,
// the OTLP/HTTP receiver, the batch processor and the file exporter) runs
// on a free loopback port for the section; the N ConfigMaps are exported
// to it against printed -o json to a file, listed and under churn; then
// the log records the collector wrote are counted, and an export that lost
// records fails the section. Last, the growth of the binary since the tree
// before --otlp (otlpBase). Results in bench/results/otlp.json and a
// section of RESULTS.md.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/kubectl-deltas/kubectl-deltas/test/otelcol"
)

// otlpBase is the tree before --otlp existed: the binary's growth is
// measured against its plugin.
const otlpBase = "9174f09"

// otlpRun is bench/results/otlp.json.
type otlpRun struct {
	Date, Commit string
	Machine      machineInfo
	N            int
	// Runs is how many times the list row ran the exporting command
	// (warm-up included): each exports the N ConfigMaps.
	Runs     int
	Measures []abMeasure
	// ListReceived is how many log records the collector had written
	// after the list row, ListWant how many it must have (Runs×N);
	// ChurnReceived how many more it wrote during the churn row, and
	// ChurnWant how many lines -o json printed beside the exporter
	// (the same records).
	ListReceived, ListWant   int
	ChurnReceived, ChurnWant int
	// Base is otlpBase; BaseBytes and NewBytes the sizes of its plugin
	// and of this tree's, both built as BuildFlags say.
	Base                string
	BaseBytes, NewBytes int64
	BuildFlags          string
}

// lost says whether the collector received fewer records than exported.
func (r *otlpRun) lost() bool {
	return r.ListReceived < r.ListWant || r.ChurnReceived < r.ChurnWant
}

// measureOTLP runs the section and saves it.
func measureOTLP(ctx context.Context, e *env, cl *cluster, o options, root, benchDir string) error {
	if err := needOtelcol(e.bin); err != nil {
		return err
	}
	dir, err := os.MkdirTemp(e.home, "otlp-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	res := &otlpRun{Date: time.Now().UTC().Format(time.RFC3339), N: e.n, Base: otlpBase, Runs: o.warmup + o.rounds}

	// The builds first: no compiler beside the measurements.
	if err := otlpSizes(ctx, root, dir, res); err != nil {
		return err
	}
	logf("otlp: starting bin/otelcol")
	col, err := otelcol.Start(ctx, otelcol.Options{Root: root, Dir: dir})
	if err != nil {
		return err
	}
	defer col.Kill()

	plugin := filepath.Join(e.bin, "kubectl-deltas")
	conn := "--kubeconfig " + e.kubeconfig
	plain := filepath.Join(dir, "cms.jsonl")
	export := abMeasure{Name: fmt.Sprintf("export %d ConfigMaps", e.n), Metric: "cpu", Limit: 1.15,
		Target: "--otlp to a local collector costs at most 15% more CPU than -o json > file",
		Args:   "kubectl deltas cm --until-synced -q --otlp=http://127.0.0.1:PORT", BaseArgs: "kubectl deltas cm --until-synced -o json > FILE"}
	logf("otlp: %s, %d rounds, to the collector at %s", export.Name, o.rounds, col.URL())
	exportCmd := []string{"sh", "-c", fmt.Sprintf("exec %s cm -n %s --until-synced -q --otlp=%s %s", plugin, benchNamespace, col.URL(), conn)}
	printCmd := []string{"sh", "-c", fmt.Sprintf("exec %s cm -n %s --until-synced -o json %s > %s", plugin, benchNamespace, conn, plain)}
	alternate(ctx, e, o.warmup, o.rounds, &export, exportCmd, printCmd)
	res.Measures = append(res.Measures, export)
	res.ListWant = res.Runs * e.n
	if res.ListReceived, err = waitRecords(ctx, col, res.ListWant); err != nil {
		return err
	}
	logf("otlp: the collector received %d log records from the list row (%d runs of %d ConfigMaps: %d)", res.ListReceived, res.Runs, e.n, res.ListWant)

	// Under churn; -o json appends, so that its file holds every round's
	// records: as many as the exporter must have sent.
	printed := filepath.Join(dir, "churn.jsonl")
	churned := abMeasure{Metric: "cpu", Limit: 1.15,
		Target: "--otlp to a local collector costs at most 15% more CPU than -o json > file, under churn",
		Args:   "kubectl deltas cm -q --otlp=http://127.0.0.1:PORT", BaseArgs: "kubectl deltas cm -o json >> FILE"}
	churned, err = sideBySideUnderChurn(ctx, e, cl, o.rounds, churned,
		fmt.Sprintf("exec %%s cm -n %s -q --otlp=%s %%s", benchNamespace, col.URL()),
		fmt.Sprintf("exec %%s cm -n %s -o json %%s >> %s", benchNamespace, printed))
	if err != nil {
		return err
	}
	churned.Name = fmt.Sprintf("export under churn (a median of %s)", churned.Name)
	res.Measures = append(res.Measures, churned)
	if res.ChurnWant, err = countLines(printed); err != nil {
		return err
	}
	total, err := waitRecords(ctx, col, res.ListReceived+res.ChurnWant)
	if err != nil {
		return err
	}
	res.ChurnReceived = total - res.ListReceived
	logf("otlp: the collector received %d log records from the churn row (-o json printed %d beside it); %d in all", res.ChurnReceived, res.ChurnWant, total)

	res.Commit, res.Machine = gitDescribe(ctx, root), machine(ctx, root)
	logMeasures(res.Measures, 48)
	logf("  binary size: %s (%s: %s), %+.1f MiB", mib(res.NewBytes), res.Base, mib(res.BaseBytes), float64(res.NewBytes-res.BaseBytes)/(1<<20))
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(benchDir, "results", "otlp.json"), append(b, '\n'), 0o644); err != nil {
		return err
	}
	if res.lost() {
		return fmt.Errorf("the collector received %d of the list row's %d records and %d of the churn row's %d: --otlp lost records (bench/results/otlp.json; its rows say LOST)",
			res.ListReceived, res.ListWant, res.ChurnReceived, res.ChurnWant)
	}
	return nil
}

// needOtelcol fails unless the collector is built.
func needOtelcol(binDir string) error {
	bin := filepath.Join(binDir, "otelcol")
	if _, err := os.Stat(bin); err != nil {
		return fmt.Errorf("%s is missing: run \"make otelcol\" (or \"make bench-otlp\", which does): %w", bin, err)
	}
	return nil
}

// waitRecords counts the log records the collector has written until
// there are at least want, or their count has not moved for 10 seconds
// (the collector batches for 100 ms and flushes every 100 ms), and
// returns the count.
func waitRecords(ctx context.Context, col *otelcol.Collector, want int) (int, error) {
	last, since := -1, time.Now()
	for {
		n, err := otelcol.CountLogs(col.LogsFile)
		if err != nil {
			return 0, err
		}
		if n >= want || (n == last && time.Since(since) > 10*time.Second) {
			return n, nil
		}
		if n != last {
			last, since = n, time.Now()
		}
		select {
		case <-col.Exited():
			return n, fmt.Errorf("bin/otelcol exited: %s", col.Output())
		case <-ctx.Done():
			return n, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// countLines counts the lines of the file name.
func countLines(name string) (int, error) {
	f, err := os.Open(name)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	n := 0
	buf := make([]byte, 1<<20)
	for {
		k, err := f.Read(buf)
		n += bytes.Count(buf[:k], []byte{'\n'})
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return 0, err
		}
	}
}

// otlpSizes builds the plugin of otlpBase (from a worktree removed
// afterwards) and of this tree, as make build does, and notes their
// sizes.
func otlpSizes(ctx context.Context, root, dir string, res *otlpRun) error {
	src := filepath.Join(dir, "base-src")
	if out, err := exec.CommandContext(ctx, "git", "-C", root, "worktree", "add", "--detach", src, otlpBase).CombinedOutput(); err != nil {
		return fmt.Errorf("git worktree add %s: %w: %s", otlpBase, err, out)
	}
	defer func() {
		if out, err := exec.Command("git", "-C", root, "worktree", "remove", "--force", src).CombinedOutput(); err != nil {
			logf("otlp: git worktree remove %s: %v: %s", src, err, out)
		}
	}()
	date := time.Now().UTC().Format(time.RFC3339)
	var err error
	logf("otlp: building the plugin of %s and of this tree as make build does", otlpBase)
	if res.BaseBytes, err = buildPluginLikeMake(ctx, src, filepath.Join(dir, "kubectl-deltas-base"), date, &res.BuildFlags); err != nil {
		return err
	}
	res.NewBytes, err = buildPluginLikeMake(ctx, root, filepath.Join(dir, "kubectl-deltas-new"), date, &res.BuildFlags)
	return err
}

// buildPluginLikeMake builds the plugin of the tree src into bin with
// make build's flags (CGO_ENABLED=0, -trimpath, -ldflags "-s -w" and the
// version, commit and date; date is the same for every build), and
// returns its size; flags is set to the command, for RESULTS.md.
func buildPluginLikeMake(ctx context.Context, src, bin, date string, flags *string) (int64, error) {
	const module = "github.com/kubectl-deltas/kubectl-deltas"
	commit, err := exec.CommandContext(ctx, "git", "-C", src, "rev-parse", "HEAD").Output()
	if err != nil {
		return 0, fmt.Errorf("git rev-parse HEAD in %s: %w", src, err)
	}
	ldflags := fmt.Sprintf("-s -w -X %[1]s/internal/version.version=%[2]s -X %[1]s/internal/version.commit=%[3]s -X %[1]s/internal/version.date=%[4]s",
		module, gitDescribe(ctx, src), strings.TrimSpace(string(commit)), date)
	build := exec.CommandContext(ctx, goTool(), "build", "-trimpath", "-ldflags", ldflags, "-o", bin, "./cmd/kubectl-deltas")
	build.Dir = src
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return 0, fmt.Errorf("build the plugin in %s: %w: %s", src, err, out)
	}
	*flags = `CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X …version=… -X …commit=… -X …date=…"`
	return fileSize(bin)
}

func loadOTLPRun(benchDir string) (*otlpRun, error) {
	return loadResult[otlpRun](benchDir, "otlp.json")
}

// otlpMarkdown is the section of RESULTS.md for the OpenTelemetry run.
func otlpMarkdown(r *otlpRun) string {
	if r == nil {
		return ""
	}
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("## Export to OpenTelemetry (issue 60)\n\n")
	w("Written by `make bench` (`make bench-otlp` alone) from `bench/results/otlp.json`: the two commands of each row alternating run by run on one control plane; wall from start to exit, CPU user+system from rusage; medians. ")
	w("The collector is `bin/otelcol` (`make otelcol`, hack/otelcol/collector.yaml): the OTLP/HTTP receiver, the batch processor and the file exporter, on loopback on the same machine, its CPU not counted. ")
	w("The churn row runs both streams side by side while the %d ConfigMaps are updated (one writer, %d a second at most, for %s): the CPU each used during the churn, from /proc; -o json appends to its file, so that it holds every round's records. ", r.N, churnRate, churnFor)
	w("The collector wrote %d log records for the list row's %d runs (%d wanted) and %d for the churn row's (-o json printed %d beside them). ", r.ListReceived, r.Runs, r.ListWant, r.ChurnReceived, r.ChurnWant)
	w("The binary is built as `make build` builds it (`%s`) at `%s`, the tree before --otlp, and at this tree.\n\n", r.BuildFlags, r.Base)
	w("%s; commit `%s`; %s, %d CPUs.\n\n", r.Date, r.Commit, r.Machine.CPU, r.Machine.CPUs)
	w("| measure | kubectl deltas | compared with | ratio | target | result |\n|---|---|---|---:|---|---|\n")
	for i, m := range r.Measures {
		ratio, result := abRatio(m)
		if (i == 0 && r.ListReceived < r.ListWant) || (i > 0 && r.ChurnReceived < r.ChurnWant) {
			result = "LOST records"
		}
		w("| %s (`%s`) | %s | `%s`: %s | %s | %s | **%s** |\n", m.Name, m.Args, abCell(m.New), m.BaseArgs, abCell(m.Base), ratio, m.Target, result)
	}
	growth := float64(r.NewBytes-r.BaseBytes) / (1 << 20)
	w("| binary size | %s (%d bytes) | `%s`: %s (%d bytes) | %+.1f MiB (%.2f×) | grows by at most 8 MiB | **%s** |\n",
		mib(r.NewBytes), r.NewBytes, r.Base, mib(r.BaseBytes), r.BaseBytes, growth, float64(r.NewBytes)/float64(max(r.BaseBytes, 1)), passMiss(growth <= 8))
	w("\n")
	return b.String()
}
