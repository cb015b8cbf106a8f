package main

// The history section (-history; make bench-history alone): a recording
// directory left running (issue 59). --at anywhere in a generated day of
// 5,000 Pods (historyRecords records, historygen.go) against --at in
// 100,000 records; --from/--to five minutes late in the day against
// early; the summary of the day; recording into a directory (with its
// checkpoints) against into one file, side by side under churn, and
// their sizes; a recorder's peak RSS after few and after many updates.
// Results in bench/results/history.json and a section of RESULTS.md.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/kubectl-deltas/kubectl-deltas/internal/history/recording"
)

// historyRun is bench/results/history.json.
type historyRun struct {
	Date, Commit string
	Machine      machineInfo
	// Records and SmallRecords are the generated recordings' records, of
	// Pods Pods; LongBytes the long one's size.
	Records, SmallRecords, Pods int
	LongBytes                   int64
	// N is how many ConfigMaps the churn rows update.
	N        int
	Measures []abMeasure
	// ChurnDirBytes and ChurnFileBytes are what the directory and the
	// file held after the same churn (the last round).
	ChurnDirBytes, ChurnFileBytes int64
	// FewKiB and ManyKiB are a recorder's peak RSS after FewUpdates and
	// after ManyUpdates updates of the N ConfigMaps; FileFewKiB and
	// FileManyKiB those of a recorder into one file beside it, and
	// PlainFewKiB and PlainManyKiB those of a stream that records nothing.
	FewUpdates, ManyUpdates   int
	FewKiB, ManyKiB           int64
	FileFewKiB, FileManyKiB   int64
	PlainFewKiB, PlainManyKiB int64
}

// historyChurn is how long the directory-against-file churn lasts: long
// enough for a checkpoint of the N ConfigMaps within the segment (every
// four times the objects' records).
const historyChurn = 100 * time.Second

// measureHistory runs the section and saves it.
func measureHistory(ctx context.Context, e *env, cl *cluster, o options, root, benchDir string) error {
	dir, err := os.MkdirTemp(e.home, "history-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	plugin := filepath.Join(e.bin, "kubectl-deltas")
	sh := func(cmd string) []string { return []string{"sh", "-c", cmd} }
	res := &historyRun{Date: time.Now().UTC().Format(time.RFC3339), Records: o.historyRecords, SmallRecords: 100_000, Pods: 5000, N: e.n}
	long, small := filepath.Join(dir, "long")+"/", filepath.Join(dir, "small")+"/"
	start := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	logf("history: generating a recording directory of %d records of %d Pods", res.Records, res.Pods)
	if err := genRecording(long, res.Pods, res.Records, start, historyEvery, recording.DirPolicy{}); err != nil {
		return err
	}
	if err := genRecording(small, res.Pods, res.SmallRecords, start, historyEvery, recording.DirPolicy{}); err != nil {
		return err
	}
	if res.LongBytes, err = dirSize(long); err != nil {
		return err
	}
	day := time.Duration(res.Records) * historyEvery
	at := func(d time.Duration) string { return start.Add(d).Format(time.RFC3339) }
	rows := []struct {
		abMeasure
		new, base []string
	}{}
	smallAt := sh(fmt.Sprintf("exec %s --replay=%s --at=-0s -o json > /dev/null", plugin, small))
	for _, f := range []float64{0.001, 0.25, 0.5, 0.75, 1} {
		when := at(time.Duration(f * float64(day)))
		if f == 1 {
			when = "-0s"
		}
		rows = append(rows, struct {
			abMeasure
			new, base []string
		}{
			abMeasure: abMeasure{Name: fmt.Sprintf("--at %s in %d records", when, res.Records), Metric: "wall", Limit: 1.5,
				Target: "≤ 1 s, and within 1.5× of --at in 100,000 records",
				Args:   "kubectl deltas --replay=DIR/ --at=T -o json > /dev/null", BaseArgs: "the same, --at its end, in 100,000 records"},
			new: sh(fmt.Sprintf("exec %s --replay=%s --at=%s -o json > /dev/null", plugin, long, when)), base: smallAt,
		})
	}
	window := func(from time.Duration) []string {
		return sh(fmt.Sprintf("exec %s --replay=%s --from=%s --to=%s -o json > /dev/null", plugin, long, at(from), at(from+5*time.Minute)))
	}
	rows = append(rows, struct {
		abMeasure
		new, base []string
	}{
		abMeasure: abMeasure{Name: fmt.Sprintf("five minutes at the end of %d records", res.Records), Metric: "wall", Limit: 1.5,
			Target: "time proportional to the five minutes, not to how far in: within 1.5× of five minutes near the start",
			Args:   "kubectl deltas --replay=DIR/ --from=T --to=T+5m -o json > /dev/null", BaseArgs: "the same, T ten minutes in"},
		new: window(day - 6*time.Minute), base: window(10 * time.Minute),
	}, struct {
		abMeasure
		new, base []string
	}{
		abMeasure: abMeasure{Name: fmt.Sprintf("kubectl deltas recording of %d records", res.Records), Metric: "wall", Limit: 1.5,
			Target: "≤ 1 s for any size: within 1.5× of the summary of 100,000 records",
			Args:   "kubectl deltas recording DIR/ -o json", BaseArgs: "the same, of 100,000 records"},
		new:  sh(fmt.Sprintf("exec %s recording %s -o json > /dev/null", plugin, long)),
		base: sh(fmt.Sprintf("exec %s recording %s -o json > /dev/null", plugin, small)),
	})
	for _, r := range rows {
		logf("history: %s, %d rounds", r.Name, o.rounds)
		alternate(ctx, e, 1, o.rounds, &r.abMeasure, r.new, r.base)
		res.Measures = append(res.Measures, r.abMeasure)
	}

	// Into a directory against into one file, under the same churn.
	recDir, recFile := filepath.Join(dir, "churn")+"/", filepath.Join(dir, "churn.jsonl.zst")
	m := abMeasure{Metric: "cpu", Limit: 1.10,
		Target: "recording into a directory, checkpoints and all, costs at most 10% more CPU than into one file",
		Args:   "kubectl deltas cm -q --record=DIR/", BaseArgs: "kubectl deltas cm -q --record=FILE.zst"}
	m, err = sideBySideChurning(ctx, e, cl, o.rounds, historyChurn, m,
		fmt.Sprintf("rm -rf %s; exec %%s cm -n %s -q --record=%s %%s", recDir, benchNamespace, recDir),
		fmt.Sprintf("rm -f %s; exec %%s cm -n %s -q --record=%s %%s", recFile, benchNamespace, recFile))
	if err != nil {
		return err
	}
	m.Name = fmt.Sprintf("record under churn (a median of %s)", m.Name)
	res.Measures = append(res.Measures, m)
	if res.ChurnDirBytes, err = dirSize(recDir); err != nil {
		return err
	}
	if res.ChurnFileBytes, err = fileSize(recFile); err != nil {
		return err
	}

	// A recorder's peak RSS after few and after many updates.
	if err := recorderGrowth(ctx, e, cl, dir, res); err != nil {
		return err
	}
	res.Commit, res.Machine = gitDescribe(ctx, root), machine(ctx, root)
	logMeasures(res.Measures, 48)
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(benchDir, "results", "history.json"), append(b, '\n'), 0o644)
}

// recorderGrowth runs a recorder into a directory, one into a file and
// a stream that records nothing, side by side, while the N ConfigMaps
// are updated, and notes the peak RSS of each after 5,000 updates and
// after 100,000.
func recorderGrowth(ctx context.Context, e *env, cl *cluster, dir string, res *historyRun) error {
	plugin := filepath.Join(e.bin, "kubectl-deltas")
	var procs []*exec.Cmd
	for _, args := range []string{
		"-q --record=" + filepath.Join(dir, "growth") + "/",
		"-q --record=" + filepath.Join(dir, "growth.jsonl.zst"),
		"-o json > /dev/null",
	} {
		c := commandIn(ctx, e, []string{"sh", "-c", fmt.Sprintf("exec %s cm -n %s --kubeconfig %s %s", plugin, benchNamespace, e.kubeconfig, args)})
		if err := c.Start(); err != nil {
			return err
		}
		procs = append(procs, c)
	}
	defer func() {
		for _, c := range procs {
			_ = c.Process.Signal(os.Interrupt)
			_ = c.Wait()
		}
	}()
	time.Sleep(churnSettle + 2*time.Second)
	res.FewUpdates, res.ManyUpdates = 5000, 100_000
	logf("history: a recorder's peak RSS after %d and %d updates", res.FewUpdates, res.ManyUpdates)
	done := 0
	for _, upTo := range []int{res.FewUpdates, res.ManyUpdates} {
		for done < upTo {
			n, err := churnConfigMaps(ctx, cl, e.n, 1000+done, time.Duration(upTo-done)*time.Second/churnRate)
			if err != nil {
				return err
			}
			done += max(n, 1)
		}
		time.Sleep(2 * time.Second) // handled
		dirKiB, fileKiB, plainKiB := peakKiB(procs[0].Process.Pid), peakKiB(procs[1].Process.Pid), peakKiB(procs[2].Process.Pid)
		if upTo == res.FewUpdates {
			res.FewKiB, res.FileFewKiB, res.PlainFewKiB = dirKiB, fileKiB, plainKiB
		} else {
			res.ManyKiB, res.FileManyKiB, res.PlainManyKiB = dirKiB, fileKiB, plainKiB
		}
		logf("  after %d updates: peak RSS %d KiB (into one file: %d KiB; recording nothing: %d KiB)", done, dirKiB, fileKiB, plainKiB)
	}
	return nil
}

// dirSize is the bytes of the files of dir.
func dirSize(dir string) (int64, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	var total int64
	for _, e := range entries {
		if info, err := e.Info(); err == nil && info.Mode().IsRegular() {
			total += info.Size()
		}
	}
	return total, nil
}

func loadHistoryRun(benchDir string) (*historyRun, error) {
	return loadResult[historyRun](benchDir, "history.json")
}

// historyMarkdown is the section of RESULTS.md for the history run.
func historyMarkdown(r *historyRun) string {
	if r == nil {
		return ""
	}
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("## Leave it recording: a directory (issue 59)\n\n")
	w("Written by `make bench` (`make bench-history` alone) from `bench/results/history.json`. ")
	w("The long recording is a day of %d Pods changing about 115 times a second, %d records (%s on disk), made by the harness's generator through the recorder's own code (`recording.NewDirRecorder`: its segments, checkpoints and index), each record a realistic Pod whose resourceVersion and one annotation change; the short one is the first %d records of the same. ", r.Pods, r.Records, mib(r.LongBytes), r.SmallRecords)
	w("The two commands of each row alternate run by run; wall from start to exit; medians. The churn row runs both recorders side by side on the control plane while its %d ConfigMaps are updated (%d a second at most, long enough for a checkpoint of them within the segment); the RSS row, one recorder into a directory while they are updated.\n\n", r.N, churnRate)
	w("%s; commit `%s`; %s, %d CPUs.\n\n", r.Date, r.Commit, r.Machine.CPU, r.Machine.CPUs)
	w("| measure | kubectl deltas | compared with | ratio | target | result |\n|---|---|---|---:|---|---|\n")
	for _, m := range r.Measures {
		ratio, result := abRatio(m)
		if strings.Contains(m.Target, "≤ 1 s") {
			if wall, ok := abMedian(m.New, "wall"); !ok || wall > 1000 {
				result = "MISS"
			}
		}
		w("| %s (`%s`) | %s | `%s`: %s | %s | %s | **%s** |\n", m.Name, m.Args, abCell(m.New), m.BaseArgs, abCell(m.Base), ratio, m.Target, result)
	}
	size := float64(r.ChurnDirBytes) / float64(max(r.ChurnFileBytes, 1))
	w("| size of the churn's recording | %s (DIR/) | FILE.zst: %s | %.3f× | the directory at most 1.3× the file | **%s** |\n", mib(r.ChurnDirBytes), mib(r.ChurnFileBytes), size, passMiss(size <= 1.3))
	growth := float64(r.ManyKiB) / float64(max(r.FewKiB, 1))
	w("| a recorder's peak RSS after %d updates | %d KiB | after %d: %d KiB | %.3f× | at most 1.2×: the objects watched, not the time recorded | **%s** |\n", r.ManyUpdates, r.ManyKiB, r.FewUpdates, r.FewKiB, growth, passMiss(growth <= 1.2))
	if r.FileFewKiB > 0 && r.PlainFewKiB > 0 {
		w("| beside it, into one file; recording nothing | %d and %d KiB | after %d: %d and %d KiB | %.3f× and %.3f× | (for comparison) | |\n", r.FileManyKiB, r.PlainManyKiB, r.FewUpdates, r.FileFewKiB, r.PlainFewKiB,
			float64(r.FileManyKiB)/float64(r.FileFewKiB), float64(r.PlainManyKiB)/float64(r.PlainFewKiB))
	}
	w("\n")
	return b.String()
}
