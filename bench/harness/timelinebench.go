package main

// The timeline rows of the recording section: what --timeline costs a
// stream of timelineDeltas deltas (a replay of the first records of the
// long recording, with and without the page), how large the page is, and
// how long headless Chromium takes to draw it (navigation to data-ready).

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/chromedp/chromedp"
)

// timelineDeltas is the size of the stream drawn: issue 34's 50,000.
const timelineDeltas = 50000

// Targets of the page.
const (
	pageLimitBytes = 25 << 20
	readyLimit     = 3 * time.Second
)

// timelineRun is what the timeline rows hold, in replay.json.
type timelineRun struct {
	Deltas    int
	PageBytes int64
	// ReadyMS are the times from navigation to data-ready, one a round.
	ReadyMS []float64
}

// measureTimeline measures the page of the first timelineDeltas records
// of the recording long, in dir.
func measureTimeline(ctx context.Context, e *env, o options, long, dir string) (abMeasure, *timelineRun, error) {
	src := filepath.Join(dir, "timeline.jsonl")
	n, err := firstRecords(long, src, timelineDeltas)
	if err != nil {
		return abMeasure{}, nil, err
	}
	plugin := filepath.Join(e.bin, "kubectl-deltas")
	page := filepath.Join(dir, "timeline.html")
	m := abMeasure{Name: fmt.Sprintf("--timeline of %d deltas", n), Metric: "cpu", Limit: 1.10,
		Target: "writing the page costs the stream at most 10% more CPU",
		Args:   "kubectl deltas --replay=FILE -o json --timeline=PAGE > /dev/null", BaseArgs: "kubectl deltas --replay=FILE -o json > /dev/null"}
	with := []string{"sh", "-c", fmt.Sprintf("exec %s --replay=%s -o json --timeline=%s > /dev/null", plugin, src, page)}
	without := []string{"sh", "-c", fmt.Sprintf("exec %s --replay=%s -o json > /dev/null", plugin, src)}
	logf("recording: %s, %d rounds", m.Name, o.rounds)
	for range o.rounds {
		m.New = append(m.New, abOnce(ctx, e, with))
		m.Base = append(m.Base, abOnce(ctx, e, without))
	}
	run := &timelineRun{Deltas: n}
	if run.PageBytes, err = fileSize(page); err != nil {
		return m, nil, err
	}
	logf("recording: drawing the page in headless Chromium, %d rounds", o.rounds)
	for range o.rounds {
		took, err := timeToReady(ctx, e, page)
		if err != nil {
			return m, nil, err
		}
		run.ReadyMS = append(run.ReadyMS, ms(took))
	}
	return m, run, nil
}

// firstRecords copies the header and the first n records of the plain
// recording src to dst, and returns how many it copied.
func firstRecords(src, dst string, n int) (int, error) {
	lines, err := readLines(src, n+1) // the header, then n records
	if err != nil {
		return 0, err
	}
	var b []byte
	for _, l := range lines {
		b = append(append(b, l...), '\n')
	}
	return len(lines) - 1, os.WriteFile(dst, b, 0o644)
}

// timeToReady opens page in a fresh headless Chromium and returns the
// time from the navigation to the page's data-ready.
func timeToReady(ctx context.Context, e *env, page string) (time.Duration, error) {
	browser, err := chromiumPath()
	if err != nil {
		return 0, err
	}
	profile, err := os.MkdirTemp(e.home, "chromium-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(profile)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(browser), chromedp.NoSandbox, chromedp.UserDataDir(profile), chromedp.WindowSize(1400, 900),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-quic", true),
	)
	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	defer cancelAlloc()
	tab, cancel := chromedp.NewContext(alloc)
	defer cancel()
	if err := chromedp.Do(tab, chromedp.Navigate("about:blank")); err != nil { // the browser up first
		return 0, fmt.Errorf("starting %s: %w", browser, err)
	}
	limited, stop := context.WithTimeout(tab, time.Minute)
	defer stop()
	began := time.Now()
	if err := chromedp.Do(limited, chromedp.Navigate("file://"+page), chromedp.WaitReady(chromedp.CSS("[data-timeline][data-ready]"))); err != nil {
		return 0, fmt.Errorf("drawing %s: %w", page, err)
	}
	return time.Since(began), nil
}

// chromiumPath is the browser of the page rows.
func chromiumPath() (string, error) {
	for _, name := range []string{os.Getenv("DELTAS_CHROMIUM"), "chromium", "chromium-browser", "google-chrome"} {
		if name == "" {
			continue
		}
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errors.New("the timeline rows need Chromium: install it (apt-get install chromium), or name one with DELTAS_CHROMIUM")
}

// timelineMarkdown is the timeline's rows of RESULTS.md.
func timelineMarkdown(r *replayRun) string {
	t := r.Timeline
	if t == nil {
		return ""
	}
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("## Timeline page (issue 34)\n\n")
	w("Written by `make bench` (`make bench-replay` alone) from `bench/results/replay.json`: the stream is a replay of the first %d records of the long recording above (the %d ConfigMaps' initial list, then their updates), with and without `--timeline`, alternating run by run; the page it wrote is then opened from file:// in a fresh headless Chromium (%s) each round, timed from the navigation to the page's `data-ready`; medians. The live row runs the stream with and without the page side by side on the control plane while the ConfigMaps are updated, as the recording-under-churn row does, which of the two starts first alternating round by round (of two identical streams, the first used about 7%% less CPU here): the CPU each used during the churn.\n\n", t.Deltas, r.N, "Debian's chromium")
	w("| measure | kubectl deltas | compared with | ratio | target | result |\n|---|---|---|---:|---|---|\n")
	for _, m := range r.Measures {
		if !isTimelineMeasure(m) {
			continue
		}
		ratio, result := abRatio(m)
		w("| %s (`%s`) | %s | `%s`: %s | %s | %s | **%s** |\n", m.Name, m.Args, abCell(m.New), m.BaseArgs, abCell(m.Base), ratio, m.Target, result)
	}
	w("| size of the page | %.1f MB | | | at most %d MB for 50,000 deltas | **%s** |\n", float64(t.PageBytes)/1e6, pageLimitBytes>>20, passMiss(t.PageBytes <= pageLimitBytes))
	ready := slices.Clone(t.ReadyMS)
	slices.Sort(ready)
	median := 0.0
	if len(ready) > 0 {
		median = ready[len(ready)/2]
	}
	w("| interactive in headless Chromium | %.0f ms (%d runs, %.0f–%.0f) | | | within %s | **%s** |\n", median, len(ready), first(ready), last(ready), readyLimit, passMiss(len(ready) > 0 && median <= float64(readyLimit.Milliseconds())))
	w("\n")
	return b.String()
}

func first(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	return v[0]
}

func last(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	return v[len(v)-1]
}

// timelineOf is timelineMarkdown of a recording run that may be missing.
func timelineOf(r *replayRun) string {
	if r == nil {
		return ""
	}
	return timelineMarkdown(r)
}
