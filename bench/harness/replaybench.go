package main

// The recording section (-replay, part of make bench; make bench-replay
// alone): what --record costs beside -o json, how small its zstd file is,
// and how fast --replay and --at read a long recording beside jq, with
// the peak memory of a replay of all of it and of a fifth. Results in
// bench/results/replay.json and a section of RESULTS.md.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-deltas/kubectl-deltas/internal/history/recording"
)

// replayRun is bench/results/replay.json.
type replayRun struct {
	Date, Commit string
	Machine      machineInfo
	N, Records   int
	// ZstBytes and PlainBytes are the sizes of the recording of the N
	// ConfigMaps and of -o json's output of them.
	ZstBytes, PlainBytes int64
	Measures             []abMeasure
	// Timeline: the page of --timeline (timelinebench.go).
	Timeline *timelineRun `json:",omitempty"`
}

// replayUpdates is how many updates the long recording has for each
// ConfigMap: N*(1+replayUpdates) records in all.
const replayUpdates = 9

// measureReplay runs the section and saves it.
func measureReplay(ctx context.Context, e *env, cl *cluster, o options, root, benchDir string) error {
	dir, err := os.MkdirTemp(e.home, "replay-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	plugin := filepath.Join(e.bin, "kubectl-deltas")
	zst, plain := filepath.Join(dir, "cms.jsonl.zst"), filepath.Join(dir, "cms.jsonl")
	conn := "--kubeconfig " + e.kubeconfig
	sh := func(cmd string) []string { return []string{"sh", "-c", cmd} }
	res := &replayRun{Date: time.Now().UTC().Format(time.RFC3339), N: e.n}

	record := abMeasure{Name: fmt.Sprintf("record %d ConfigMaps to .zst", e.n), Metric: "cpu", Limit: 1.10,
		Target: "recording with .zst costs at most 10% more CPU than -o json > file",
		Args:   "kubectl deltas cm --until-synced -q --record=FILE.zst", BaseArgs: "kubectl deltas cm --until-synced -o json > FILE"}
	logf("recording: %s, %d rounds", record.Name, o.rounds)
	recordCmd := sh(fmt.Sprintf("rm -f %s; exec %s cm -n %s --until-synced -q --record=%s %s", zst, plugin, benchNamespace, zst, conn))
	printCmd := sh(fmt.Sprintf("exec %s cm -n %s --until-synced -o json %s > %s", plugin, benchNamespace, conn, plain))
	alternate(ctx, e, o.warmup, o.rounds, &record, recordCmd, printCmd)
	res.Measures = append(res.Measures, record)
	if res.ZstBytes, err = fileSize(zst); err != nil {
		return err
	}
	if res.PlainBytes, err = fileSize(plain); err != nil {
		return err
	}

	churned, err := recordUnderChurn(ctx, e, cl, dir, o.rounds)
	if err != nil {
		return err
	}
	res.Measures = append(res.Measures, churned)
	pageChurned, err := timelineUnderChurn(ctx, e, cl, dir, o.rounds)
	if err != nil {
		return err
	}
	res.Measures = append(res.Measures, pageChurned)

	long, fifth := filepath.Join(dir, "long.jsonl"), filepath.Join(dir, "fifth.jsonl")
	if res.Records, err = writeLongRecording(zst, long, fifth); err != nil {
		return err
	}
	jq := sh("exec jq -c . " + long + " > /dev/null")
	for _, m := range []struct {
		abMeasure
		new, base []string
	}{{
		abMeasure: abMeasure{Name: fmt.Sprintf("replay %d records", res.Records), Metric: "wall", Limit: 0.5,
			Target: "a replay -o json at least 2x faster than jq -c . on the same plain file",
			Args:   "kubectl deltas --replay=FILE -o json > /dev/null", BaseArgs: "jq -c . FILE > /dev/null"},
		new: sh(fmt.Sprintf("exec %s --replay=%s -o json > /dev/null", plugin, long)), base: jq,
	}, {
		abMeasure: abMeasure{Name: "--at its end", Metric: "wall", Limit: 0.5,
			Target: "--at within the same bound",
			Args:   "kubectl deltas --replay=FILE --at=-0s -o json > /dev/null", BaseArgs: "jq -c . FILE > /dev/null"},
		new: sh(fmt.Sprintf("exec %s --replay=%s --at=-0s -o json > /dev/null", plugin, long)), base: jq,
	}, {
		abMeasure: abMeasure{Name: "replay peak memory", Metric: "rss", Limit: 1.25,
			Target: "peak RSS bounded by the objects alive, not the recording's length: all of it within 25% of a fifth of it (the \"base\" column)",
			Args:   "kubectl deltas --replay=FILE -o json", BaseArgs: "kubectl deltas --replay=FIRST-FIFTH -o json"},
		new:  sh(fmt.Sprintf("exec %s --replay=%s -o json > /dev/null", plugin, long)),
		base: sh(fmt.Sprintf("exec %s --replay=%s -o json > /dev/null", plugin, fifth)),
	}} {
		logf("recording: %s, %d rounds", m.Name, o.rounds)
		alternate(ctx, e, 0, o.rounds, &m.abMeasure, m.new, m.base)
		res.Measures = append(res.Measures, m.abMeasure)
	}
	page, timeline, err := measureTimeline(ctx, e, o, long, dir)
	if err != nil {
		return err
	}
	res.Measures, res.Timeline = append(res.Measures, page), timeline
	res.Commit, res.Machine = gitDescribe(ctx, root), machine(ctx, root)
	logMeasures(res.Measures, 32)
	logf("  zst recording %d bytes, -o json %d bytes: %.1f%%", res.ZstBytes, res.PlainBytes, 100*float64(res.ZstBytes)/float64(max(res.PlainBytes, 1)))
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(benchDir, "results", "replay.json"), append(b, '\n'), 0o644)
}

func fileSize(name string) (int64, error) {
	st, err := os.Stat(name)
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

// writeLongRecording writes, as plain JSON Lines, the recording src (the N
// ConfigMaps' initial list) followed by replayUpdates updates of each,
// one every 10 ms of recorded time, each with a new resourceVersion and
// data: to long, and its first fifth to fifth. It returns the number of
// records of long.
func writeLongRecording(src, long, fifth string) (int, error) {
	header, initial, err := initialRecords(src)
	if err != nil {
		return 0, err
	}
	total := len(initial) * (1 + replayUpdates)
	fl, err := os.Create(long)
	if err != nil {
		return 0, err
	}
	defer fl.Close()
	ff, err := os.Create(fifth)
	if err != nil {
		return 0, err
	}
	defer ff.Close()
	wl, wf := bufio.NewWriter(fl), bufio.NewWriter(ff)
	written := 0
	write := func(line []byte) {
		_, _ = wl.Write(append(line, '\n'))
		if written <= total/5 {
			_, _ = wf.Write(append(line, '\n'))
		}
		written++
	}
	write(header)
	for _, l := range initial {
		write(l)
	}
	start := time.Now().UTC().Add(time.Minute)
	rv := 1 << 30
	for i := range len(initial) * replayUpdates {
		var rec map[string]any
		if err := json.Unmarshal(initial[i%len(initial)], &rec); err != nil {
			return 0, err
		}
		rv++
		obj, _ := rec["object"].(map[string]any)
		meta, _ := obj["metadata"].(map[string]any)
		data, _ := obj["data"].(map[string]any)
		if meta == nil {
			return 0, errors.New("a recorded ConfigMap has no metadata")
		}
		if data == nil {
			data = map[string]any{}
			obj["data"] = data
		}
		data["bench"] = strconv.Itoa(rv)
		asUpdate(rec, meta, rv, start.Add(time.Duration(i)*10*time.Millisecond))
		line, err := json.Marshal(rec)
		if err != nil {
			return 0, err
		}
		write(line)
	}
	if err := wl.Flush(); err != nil {
		return 0, err
	}
	return written - 1, wf.Flush()
}

// initialRecords reads the recording src: its header line and the records
// of its initial list (not the recorder's Heartbeats and Gaps).
func initialRecords(src string) (header []byte, initial [][]byte, err error) {
	lines, err := readLines(src, -1)
	if err != nil {
		return nil, nil, err
	}
	if len(lines) < 2 {
		return nil, nil, fmt.Errorf("the recording %s has no records", src)
	}
	for _, l := range lines[1:] {
		if !bytes.HasPrefix(l, []byte(`{"type":"Heartbeat"`)) && !bytes.HasPrefix(l, []byte(`{"type":"Gap"`)) {
			initial = append(initial, l)
		}
	}
	return lines[0], initial, nil
}

// asUpdate makes rec, a recorded object whose metadata is meta, the
// record of an update by the benchmark's writer: resourceVersion rv, at.
func asUpdate(rec, meta map[string]any, rv int, at time.Time) {
	meta["resourceVersion"] = strconv.Itoa(rv)
	rec["type"], rec["initial"], rec["resourceVersion"] = "Updated", false, strconv.Itoa(rv)
	rec["time"] = at.Format(time.RFC3339Nano)
	rec["manager"], rec["operation"] = "bench-writer", "Update"
}

// readLines reads the lines of the recording src (plain, .gz or .zst):
// all of them, or the first n when n >= 0.
func readLines(src string, n int) ([][]byte, error) {
	r, err := recording.Open(src, nil)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var lines [][]byte
	for n < 0 || len(lines) < n {
		line, _, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		lines = append(lines, append([]byte(nil), line...))
	}
	return lines, nil
}

// loadReplayRun reads bench/results/replay.json; nil when there is none.
func loadReplayRun(benchDir string) (*replayRun, error) {
	return loadResult[replayRun](benchDir, "replay.json")
}

// isTimelineMeasure: m is one of the timeline's rows.
func isTimelineMeasure(m abMeasure) bool { return strings.HasPrefix(m.Name, "--timeline") }

// replayMarkdown is the section of RESULTS.md for the recording run.
func replayMarkdown(r *replayRun) string {
	if r == nil {
		return ""
	}
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("## Recording and replay (issue 33)\n\n")
	w("Written by `make bench` (`make bench-replay` alone) from `bench/results/replay.json`: the two commands of each row alternating run by run on one control plane; wall from start to exit, CPU user+system and peak RSS from rusage; medians. ")
	w("The long recording is the recording of the %d ConfigMaps followed by %d updates of each (new data and resourceVersion, 10 ms apart): %d records, plain JSON Lines.\n\n", r.N, replayUpdates, r.Records)
	w("%s; commit `%s`; %s, %d CPUs.\n\n", r.Date, r.Commit, r.Machine.CPU, r.Machine.CPUs)
	w("| measure | kubectl deltas | compared with | ratio | target | result |\n|---|---|---|---:|---|---|\n")
	for _, m := range r.Measures {
		if isTimelineMeasure(m) {
			continue // timelineMarkdown's
		}
		ratio, result := abRatio(m)
		w("| %s (`%s`) | %s | `%s`: %s | %s | %s | **%s** |\n", m.Name, m.Args, abCell(m.New), m.BaseArgs, abCell(m.Base), ratio, m.Target, result)
	}
	ratio := float64(r.ZstBytes) / float64(max(r.PlainBytes, 1))
	w("| size of the recording of the %d ConfigMaps | %d bytes (.zst) | -o json's output: %d bytes | %.3f× | the .zst file at most 10%% of the plain JSON Lines | **%s** |\n", r.N, r.ZstBytes, r.PlainBytes, ratio, passMiss(ratio <= 0.10))
	w("\n")
	return b.String()
}

// churnRate and churnFor are the churn of the recording-under-churn row:
// updates of the N ConfigMaps, spread over them.
const (
	churnRate = 500
	churnFor  = 20 * time.Second
)

// recordUnderChurn runs, rounds times, a recorder (-q --record=FILE.zst)
// and a printer (-o json > file) side by side, both watching the N
// ConfigMaps, while they are updated at churnRate for churnFor: the CPU
// each used during the churn, from /proc.
func recordUnderChurn(ctx context.Context, e *env, cl *cluster, dir string, rounds int) (abMeasure, error) {
	m := abMeasure{Metric: "cpu", Limit: 1.10,
		Target: "recording with .zst costs at most 10% more CPU than -o json > file, under churn",
		Args:   "kubectl deltas cm -q --record=FILE.zst", BaseArgs: "kubectl deltas cm -o json > FILE"}
	zst := filepath.Join(dir, "churn.jsonl.zst")
	m, err := sideBySideUnderChurn(ctx, e, cl, rounds, m,
		fmt.Sprintf("rm -f %s; exec %%s cm -n %s -q --record=%s %%s", zst, benchNamespace, zst),
		fmt.Sprintf("exec %%s cm -n %s -o json %%s > %s", benchNamespace, filepath.Join(dir, "churn.jsonl")))
	m.Name = fmt.Sprintf("record under churn (a median of %s)", m.Name)
	return m, err
}

// timelineUnderChurn is recordUnderChurn's measure of --timeline: a live
// stream -o json with the page and one without, side by side.
func timelineUnderChurn(ctx context.Context, e *env, cl *cluster, dir string, rounds int) (abMeasure, error) {
	m := abMeasure{Metric: "cpu", Limit: 1.10,
		Target: "writing the page costs the stream at most 10% more CPU",
		Args:   "kubectl deltas cm -o json --timeline=PAGE > FILE", BaseArgs: "kubectl deltas cm -o json > FILE"}
	m, err := sideBySideUnderChurn(ctx, e, cl, rounds, m,
		fmt.Sprintf("exec %%s cm -n %s -o json --timeline=%s %%s > %s", benchNamespace, filepath.Join(dir, "churn.html"), filepath.Join(dir, "churn-page.jsonl")),
		fmt.Sprintf("exec %%s cm -n %s -o json %%s > %s", benchNamespace, filepath.Join(dir, "churn.jsonl")))
	m.Name = fmt.Sprintf("--timeline of a live stream under churn (a median of %s)", m.Name)
	return m, err
}

// sideBySideUnderChurn runs, rounds times, the shell commands newCmd and
// baseCmd side by side (each a format with the plugin's path and its
// connection flags to fill in), both watching the N ConfigMaps, while
// they are updated at churnRate for churnFor: the CPU each used during
// the churn, from /proc; which of the two starts first alternates. m.Name
// is set to how many updates were made.
func sideBySideUnderChurn(ctx context.Context, e *env, cl *cluster, rounds int, m abMeasure, newCmd, baseCmd string) (abMeasure, error) {
	return sideBySideChurning(ctx, e, cl, rounds, churnFor, m, newCmd, baseCmd)
}

// sideBySideChurning is sideBySideUnderChurn with a churn of d.
func sideBySideChurning(ctx context.Context, e *env, cl *cluster, rounds int, d time.Duration, m abMeasure, newCmd, baseCmd string) (abMeasure, error) {
	plugin := filepath.Join(e.bin, "kubectl-deltas")
	conn := "--kubeconfig " + e.kubeconfig
	logf("recording: %s under churn (one writer, at most %d updates/s for %s), %d rounds", m.Args, churnRate, d, rounds)
	var counts []int
	for round := range rounds {
		newLine, baseLine := fmt.Sprintf(newCmd, plugin, conn), fmt.Sprintf(baseCmd, plugin, conn)
		withPage, without, err := startSideBySide(ctx, e, round, newLine, baseLine)
		if err != nil {
			return m, err
		}
		time.Sleep(churnSettle + 2*time.Second) // both listed, watching
		newUsage, baseUsage := startUsage(withPage.Process.Pid, 0), startUsage(without.Process.Pid, 0)
		updated, churnErr := churnConfigMaps(ctx, cl, e.n, round, d)
		time.Sleep(2 * time.Second) // the last events handled
		newCPU, _ := newUsage.end()
		baseCPU, _ := baseUsage.end()
		for _, c := range []*exec.Cmd{withPage, without} {
			_ = c.Process.Signal(os.Interrupt)
			_ = c.Wait()
		}
		if churnErr != nil {
			return m, churnErr
		}
		logf("  round %d: %d updates; %.0f ms CPU, without %.0f ms", round+1, updated, newCPU, baseCPU)
		counts = append(counts, updated)
		m.New = append(m.New, abSample{CPUMS: newCPU, WallMS: ms(d)})
		m.Base = append(m.Base, abSample{CPUMS: baseCPU, WallMS: ms(d)})
	}
	slices.Sort(counts)
	m.Name = fmt.Sprintf("%d ConfigMap updates in %s, one writer", counts[len(counts)/2], d)
	return m, nil
}

// startSideBySide starts the shell commands newLine and baseLine, the one
// or the other first as round is even or odd: of two identical streams
// side by side, the one started first used about 7% less CPU during a
// churn here.
func startSideBySide(ctx context.Context, e *env, round int, newLine, baseLine string) (withNew, withBase *exec.Cmd, err error) {
	start := func(cmd string) (*exec.Cmd, error) {
		c := commandIn(ctx, e, []string{"sh", "-c", cmd})
		return c, c.Start()
	}
	first, second := newLine, baseLine
	if round%2 == 1 {
		first, second = baseLine, newLine
	}
	a, err := start(first)
	if err != nil {
		return nil, nil, err
	}
	b, err := start(second)
	if err != nil {
		_ = a.Process.Kill()
		return nil, nil, err
	}
	if round%2 == 1 {
		return b, a, nil
	}
	return a, b, nil
}

// churnConfigMaps updates the n ConfigMaps of the benchmark namespace in
// turn at churnRate for churnFor, and returns how many updates it made.
func churnConfigMaps(ctx context.Context, cl *cluster, n, round int, d time.Duration) (int, error) {
	tick := time.NewTicker(time.Second / churnRate)
	defer tick.Stop()
	end := time.Now().Add(d)
	done := 0
	cms := cl.client.CoreV1().ConfigMaps(benchNamespace)
	for time.Now().Before(end) {
		<-tick.C
		patch := fmt.Sprintf(`{"data":{"churn":"%d-%d"}}`, round, done)
		if _, err := cms.Patch(ctx, objectName(done%n), types.MergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: "bench-churn"}); err != nil {
			return done, fmt.Errorf("update a ConfigMap: %w", err)
		}
		done++
	}
	return done, nil
}
