// Command harness is `make bench`: it starts the local control plane
// (test/controlplane), creates N ConfigMaps in namespace bench, and
// measures side by side, alternating the clients round by round,
//
//	(a) a raw unpaginated HTTP list (the wire limit),
//	(b) client-go's own Reflector+DeltaFIFO printing JSON lines
//	    (bench/baseline), with and without the streaming list,
//	(c) kubectl get -w --output-watch-events -o json,
//	(d) kubectl deltas -o json, -o text, --watch-list=true|false,
//
// each as a separate process: the wall time until all N objects have been
// printed (read from the child's stdout), its CPU time and peak RSS
// (rusage). Then, with each client watching, an update burst of M writes:
// the delay from the last write's response to the client's output of it.
// Finally a CPU profile of kubectl deltas' sync (bench/profile) and the
// in-process benchmarks (bench/pipeline).
//
// Results go to bench/results/nN.json (the raw samples of this N), and
// bench/RESULTS.md and bench/results.svg are rendered from every results
// file present, so runs with N=10000 and N=50000 end up side by side.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/kubectl-deltas/kubectl-deltas/internal/history/recording"
	"github.com/kubectl-deltas/kubectl-deltas/test/controlplane"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
		os.Exit(1)
	}
}

type options struct {
	n, m, rounds, burstRounds, warmup int
	profileRepeat                     int
	pipeline, profile                 bool
	only                              string
	tag                               string
	hold                              bool
	record                            string
	renderOnly                        bool
	quietLimit                        float64
	quietWait                         time.Duration
	maxForeign                        float64
	attempts                          int
	// The --events section (-events).
	events bool
	// The scale section (-scale).
	scale        bool
	nodes        int
	churnRates   string
	churnFor     time.Duration
	churnWriters int
	churnClients string
	// The A/B section (-ab REF; -ab-only for it alone).
	ab     string
	abOnly bool
	// The recording section (-replay; -replay-only for it alone).
	replay, replayOnly bool
	// The waiting section (-conditions; -conditions-only for it alone).
	conditions, conditionsOnly bool
	// The history section (-history; -history-only for it alone), of a
	// generated recording of historyRecords records.
	history, historyOnly bool
	historyRecords       int
	// The OpenTelemetry section (-otlp; -otlp-only for it alone).
	otlp, otlpOnly bool
	// growthOnly: only the RSS of recorders under churn (for experiments).
	growthOnly bool
	// genHistory, when set, only writes a generated recording directory
	// of genRecords records of genPods Pods there (for experiments).
	genHistory          string
	genRecords, genPods int
}

func run() error {
	var o options
	flag.IntVar(&o.n, "n", 10000, "number of ConfigMaps")
	flag.IntVar(&o.m, "m", 1000, "updates in each update burst (at most n)")
	flag.IntVar(&o.rounds, "rounds", 5, "rounds of the initial-sync measurement (every client once per round)")
	flag.IntVar(&o.burstRounds, "burst-rounds", 0, "rounds of the update burst (0 = -rounds)")
	flag.IntVar(&o.warmup, "warmup", 1, "unmeasured runs of every client before the rounds")
	flag.IntVar(&o.profileRepeat, "profile-repeat", 0, "initial syncs in each profiled process (0 = 200000/n, from 2 to 20)")
	flag.BoolVar(&o.profile, "profile", true, "profile kubectl deltas' initial sync and put `go tool pprof -top` into RESULTS.md")
	flag.BoolVar(&o.pipeline, "pipeline", true, "run the in-process benchmarks (go test -bench ./bench/pipeline) and put them into RESULTS.md")
	flag.StringVar(&o.only, "only", "", "comma-separated client IDs to measure (default all; for experiments)")
	flag.StringVar(&o.tag, "tag", "", "with -scale: save the run as bench/results/scale-nN-TAG.json, beside the full run (with -only, for a few clients)")
	flag.BoolVar(&o.hold, "hold", false, "start and seed the control plane, print its kubeconfig and wait for Ctrl-C (for experiments)")
	flag.StringVar(&o.record, "record", "", "record a watch stream of the seeded objects plus one update burst into this file (gzip) and exit")
	flag.BoolVar(&o.renderOnly, "render", false, "only render RESULTS.md and results.svg from bench/results/*.json")
	flag.Float64Var(&o.quietLimit, "quiet", 0.25, "before measuring, wait until the machine's CPUs are at most this busy (0-1) with other work")
	flag.DurationVar(&o.quietWait, "quiet-wait", 5*time.Minute, "how long to wait for -quiet at most")
	flag.Float64Var(&o.maxForeign, "max-foreign", 0.15, "repeat an initial-sync run when other processes used more than this share of the CPUs (0-1) meanwhile")
	flag.IntVar(&o.attempts, "attempts", 3, "runs per initial-sync sample at most (see -max-foreign)")
	flag.BoolVar(&o.events, "events", false, "the --events section (make bench-events): Events created at 1,000/s, 1 in 100 about a watched ConfigMap, for -churn-for; results in bench/results/events.json")
	flag.BoolVar(&o.scale, "scale", false, "the scale section (make bench-scale): -n realistic Pods on simulated kwok nodes, initial sync and steady churn; results in bench/results/scale-nN.json")
	flag.IntVar(&o.nodes, "nodes", 0, "with -scale: simulated nodes (0 = 1,000 for 50,000 Pods, 5,000 above 100,000, n/50 below 50,000)")
	flag.StringVar(&o.churnRates, "churn-rates", "1000,max", "with -scale: churn rates in writes per second, comma-separated; max = as fast as -churn-writers go")
	flag.DurationVar(&o.churnFor, "churn-for", 60*time.Second, "with -scale: how long each churn run writes")
	flag.IntVar(&o.churnWriters, "churn-writers", 16, "with -scale: parallel writers of the churn")
	flag.StringVar(&o.ab, "ab", "", "also measure the plugin of this git ref against this tree's, alternating (an empty snapshot, and -n ConfigMaps with health off): bench/results/ab.json and a section of RESULTS.md")
	flag.BoolVar(&o.abOnly, "ab-only", false, "with -ab: measure only the A/B section")
	flag.BoolVar(&o.replay, "replay", false, "also measure --record and --replay: recording -n ConfigMaps to .zst against -o json > file, and replaying a recording of them and 9 updates each against jq: bench/results/replay.json and a section of RESULTS.md")
	flag.BoolVar(&o.replayOnly, "replay-only", false, "with -replay: measure only the recording section")
	flag.BoolVar(&o.conditions, "conditions", false, "also measure --until and --fail-when (issue 56): a replay of 3,000 ConfigMaps and 3,000 updates with each kind of condition against the plain replay, and a live stream of the -n ConfigMaps under churn with --fail-when against the plain stream: bench/results/conditions.json and a section of RESULTS.md")
	flag.BoolVar(&o.conditionsOnly, "conditions-only", false, "with -conditions: measure only the waiting section")
	flag.StringVar(&o.churnClients, "churn-clients", "", "with -scale: comma-separated client IDs to churn with (default every client that watches)")
	flag.BoolVar(&o.history, "history", false, "also measure a recording directory (issue 59): --at and --from/--to in a generated day of 5,000 Pods against 100,000 records, its summary, recording into a directory against one file under churn, a recorder's RSS after 5,000 and 100,000 updates: bench/results/history.json and a section of RESULTS.md")
	flag.BoolVar(&o.historyOnly, "history-only", false, "with -history: measure only the history section")
	flag.BoolVar(&o.otlp, "otlp", false, "also measure --otlp (issue 60): exporting -n ConfigMaps to a local OpenTelemetry collector (bin/otelcol) against -o json > file, listed and under churn, checking that the collector received every record, and the binary's growth since the tree before --otlp: bench/results/otlp.json and a section of RESULTS.md")
	flag.BoolVar(&o.otlpOnly, "otlp-only", false, "with -otlp: measure only the OpenTelemetry section")
	flag.BoolVar(&o.growthOnly, "growth-only", false, "only run the history section's recorders under churn and log their peak RSS (for experiments)")
	flag.IntVar(&o.historyRecords, "history-records", 10_000_000, "with -history: records of the generated day")
	flag.StringVar(&o.genHistory, "gen-history", "", "only write a generated recording `DIR` of -gen-records records of -gen-pods Pods (a day at 115 changes a second), and exit")
	flag.IntVar(&o.genRecords, "gen-records", 10_000_000, "with -gen-history: records")
	flag.IntVar(&o.genPods, "gen-pods", 5000, "with -gen-history: Pods")
	flag.Parse()
	if o.genHistory != "" {
		start := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
		return genRecording(o.genHistory, o.genPods, o.genRecords, start, historyEvery, recording.DirPolicy{})
	}
	if o.n < 1 || o.m < 1 || o.m > o.n || o.rounds < 1 {
		return fmt.Errorf("need -n >= 1, 1 <= -m <= -n and -rounds >= 1 (got n=%d m=%d rounds=%d)", o.n, o.m, o.rounds)
	}
	if o.burstRounds == 0 {
		o.burstRounds = o.rounds
	}
	if o.scale && (o.churnFor <= 0 || o.churnWriters < 1 || o.n >= 1000000) {
		return fmt.Errorf("with -scale, need -churn-for > 0, -churn-writers >= 1 and -n < 1000000 (got %s, %d, %d)", o.churnFor, o.churnWriters, o.n)
	}

	root, err := controlplane.FindRepoRoot(".")
	if err != nil {
		return err
	}
	benchDir := filepath.Join(root, "bench")
	if o.renderOnly {
		return render(benchDir)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	begin := time.Now()

	binDir := filepath.Join(root, "bin")
	needed := []string{"kubectl-deltas", "kubectl", "kube-apiserver", "etcd"}
	if o.scale {
		needed = append(needed, "kwok")
	}
	for _, b := range needed {
		if _, err := os.Stat(filepath.Join(binDir, b)); err != nil {
			return fmt.Errorf("%s is missing: run \"make build controlplane\" (or \"make bench\", which does): %w", filepath.Join(binDir, b), err)
		}
	}
	if o.otlp {
		if err := needOtelcol(binDir); err != nil {
			return err
		}
	}
	outDir := filepath.Join(benchDir, "out")
	tools := filepath.Join(outDir, "bin")
	logf("building bench/baseline, bench/rawclient, bench/rusage and bench/profile into %s", rel(root, tools))
	if err := goBuild(ctx, root, tools, "./bench/baseline", "./bench/rawclient", "./bench/rusage", "./bench/profile"); err != nil {
		return err
	}
	if o.scale {
		return runScale(ctx, o, root, benchDir, begin)
	}
	if o.events {
		return runEvents(ctx, o, root, benchDir, begin)
	}

	cp, cl, stopCP, err := startControlPlane(ctx)
	if err != nil {
		return err
	}
	defer stopCP()
	seedBegin := time.Now()
	logf("creating %d ConfigMaps in namespace %s", o.n, benchNamespace)
	if err := cl.seed(ctx, o.n, func(done int) { logf("  %d created", done) }); err != nil {
		return err
	}
	seedTime := time.Since(seedBegin)
	items, listBytes, err := cl.listStats(ctx)
	if err != nil {
		return err
	}
	if items != o.n {
		return fmt.Errorf("namespace %s holds %d ConfigMaps, want %d", benchNamespace, items, o.n)
	}
	logf("created in %s: the list is %s of JSON, %d bytes per object", seedTime.Round(time.Millisecond), mib(int64(listBytes)), listBytes/o.n)

	home := filepath.Join(outDir, "home")
	if err := freshDir(home); err != nil {
		return err
	}
	e := &env{
		bin: binDir, tools: tools, kubeconfig: cp.AdminKubeconfig(), server: cp.Server(), token: cp.AdminToken(), home: home, n: o.n,
		apiserverPID: cp.APIServerPID(), etcdPID: findPID("--data-dir=" + filepath.Join(cp.Dir(), "etcd-data")),
		maxForeign: o.maxForeign, attempts: o.attempts, serverGC: cl.serverGC,
	}

	if o.hold {
		fmt.Printf("kubeconfig: %s\nserver: %s\ntoken: %s\nPress Ctrl-C to stop.\n", e.kubeconfig, e.server, e.token)
		<-ctx.Done()
		return nil
	}
	if o.record != "" {
		return record(ctx, cl, e, o.record, o.m)
	}

	if o.ab != "" {
		if err := measureAB(ctx, e, cl, o, root, benchDir, outDir); err != nil {
			return err
		}
		if o.abOnly {
			return render(benchDir)
		}
	}
	if o.replay {
		if err := measureReplay(ctx, e, cl, o, root, benchDir); err != nil {
			return err
		}
		if o.replayOnly {
			return render(benchDir)
		}
	}
	if o.growthOnly {
		dir, err := os.MkdirTemp(e.home, "growth-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		return recorderGrowth(ctx, e, cl, dir, &historyRun{})
	}
	if o.history {
		if err := measureHistory(ctx, e, cl, o, root, benchDir); err != nil {
			return err
		}
		if o.historyOnly {
			return render(benchDir)
		}
	}
	if o.conditions {
		if err := measureConditions(ctx, e, cl, o, root, benchDir); err != nil {
			return err
		}
		if o.conditionsOnly {
			return render(benchDir)
		}
	}
	if o.otlp {
		if err := measureOTLP(ctx, e, cl, o, root, benchDir); err != nil {
			return err
		}
		if o.otlpOnly {
			return render(benchDir)
		}
	}

	defs := selectClients(clients(), o.only)
	timeout := 60*time.Second + time.Duration(o.n)*2*time.Millisecond

	res := &runFile{
		Version: resultsVersion, Date: time.Now().UTC().Format(time.RFC3339),
		N: o.n, M: o.m, Rounds: o.rounds, BurstRounds: o.burstRounds, Warmup: o.warmup, Writers: writers,
		ListBytes: listBytes, SeedSeconds: seedTime.Seconds(),
		Machine: machine(ctx, root), Kube: cl.serverVersion(ctx), Commit: gitDescribe(ctx, root),
	}
	byID := map[string]*clientResult{}
	for _, d := range defs {
		res.Clients = append(res.Clients, clientResult{ID: d.ID, Group: d.Group, Label: d.Label, Measured: d.Measured})
	}
	for i := range res.Clients {
		byID[res.Clients[i].ID] = &res.Clients[i]
	}

	busy, err := waitQuiet(ctx, o.quietLimit, o.quietWait)
	if err != nil {
		return err
	}
	res.BusyBefore = busy
	logf("the machine is %.0f%% busy before the measurements", 100*busy)
	for w := 1; w <= o.warmup; w++ {
		logf("warm-up %d/%d (not measured)", w, o.warmup)
		for i := range defs {
			s := syncRun(ctx, &defs[i], e, 0, timeout)
			if s.Error != "" {
				return fmt.Errorf("warm-up of %s: %s", defs[i].Label, s.Error)
			}
		}
	}
	for r := 1; r <= o.rounds; r++ {
		logf("initial sync, round %d/%d", r, o.rounds)
		for i := range defs {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			s := syncRun(ctx, &defs[i], e, r, timeout)
			byID[defs[i].ID].Sync = append(byID[defs[i].ID].Sync, s)
			logSample(defs[i].Label, s, false)
		}
	}
	for r := 1; r <= o.burstRounds; r++ {
		logf("update burst of %d writes, round %d/%d", o.m, r, o.burstRounds)
		for i := range defs {
			if defs[i].noBurst {
				continue
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			first := ((r-1)*len(defs) + i) * o.m % o.n
			s := burstRun(ctx, &defs[i], e, cl, r, first, o.m, timeout)
			byID[defs[i].ID].Burst = append(byID[defs[i].ID].Burst, s)
			logSample(defs[i].Label, s, true)
		}
	}

	if busy, err := busyFraction(ctx, 2*time.Second); err == nil {
		res.BusyAfter = busy
	}
	if o.profile || o.pipeline {
		if _, err := waitQuiet(ctx, o.quietLimit, time.Minute); err != nil {
			return err
		}
	}
	if o.profile {
		for _, variant := range []struct{ name, flag string }{{"list", "--watch-list=false"}, {"streaming list", "--watch-list=true"}} {
			logf("profiling kubectl deltas -o json %s (in-process, bench/profile)", variant.flag)
			p, err := profileDeltas(ctx, e, outDir, o.profileRepeat, variant.name, variant.flag)
			if err != nil {
				return err
			}
			res.Profiles = append(res.Profiles, *p)
		}
	}
	if o.pipeline {
		logf("running the in-process benchmarks (go test -bench ./bench/pipeline)")
		out, err := pipelineBench(ctx, root)
		if err != nil {
			return err
		}
		res.Pipeline = out
	}
	res.DurationSeconds = time.Since(begin).Seconds()

	path := filepath.Join(benchDir, "results", fmt.Sprintf("n%d.json", o.n))
	if err := res.save(path); err != nil {
		return err
	}
	logf("wrote %s", rel(root, path))
	if err := render(benchDir); err != nil {
		return err
	}
	logf("wrote bench/RESULTS.md and bench/results.svg in %s total", time.Since(begin).Round(time.Second))
	fmt.Print(summaryText(res))
	return nil
}

func logSample(label string, s sample, burst bool) {
	switch {
	case s.Error != "":
		logf("  %-32s FAILED: %s", label, s.Error)
	case burst:
		logf("  %-32s sync %7.0f ms, writes took %6.0f ms, last write printed %6.1f ms after its response", label, s.WallMS, s.BurstWriteMS, s.BurstDelayMS)
	default:
		logf("  %-32s wall %7.0f ms  cpu %7.0f ms  peak RSS %6.1f MiB  out %s", label, s.WallMS, s.CPUMS, float64(s.MaxRSSKiB)/1024, mib(s.Bytes))
	}
}

// startControlPlane starts a plain control plane (etcd and kube-apiserver
// on loopback) and a cluster client of it; stop stops it.
func startControlPlane(ctx context.Context) (cp *controlplane.ControlPlane, cl *cluster, stop func(), err error) {
	logf("starting the local control plane (kube-apiserver + etcd on 127.0.0.1)")
	if cp, err = controlplane.Start(ctx, controlplane.Options{Log: prefixWriter{os.Stderr}}); err != nil {
		return nil, nil, nil, err
	}
	stop = func() {
		logf("stopping the control plane")
		cp.Stop()
	}
	if cl, err = newCluster(cp.Server(), cp.AdminToken(), cp.AdminKubeconfig()); err != nil {
		stop()
		return nil, nil, nil, err
	}
	return cp, cl, stop, nil
}

// freshDir makes dir an empty directory, only its owner's (the clients'
// $HOME: nothing cached from an earlier run).
func freshDir(dir string) error {
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("clean %s: %w", dir, err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	return nil
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench: "+format+"\n", args...)
}

// prefixWriter marks the control plane's progress lines.
type prefixWriter struct{ w io.Writer }

func (p prefixWriter) Write(b []byte) (int, error) {
	if _, err := fmt.Fprintf(p.w, "bench: %s", b); err != nil {
		return 0, err
	}
	if len(b) > 0 && b[len(b)-1] != '\n' {
		fmt.Fprintln(p.w)
	}
	return len(b), nil
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

func rel(root, path string) string {
	if r, err := filepath.Rel(root, path); err == nil {
		return r
	}
	return path
}

// goBuild builds main packages into dir.
func goBuild(ctx context.Context, root, dir string, pkgs ...string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	args := append([]string{"build", "-trimpath", "-o", dir + string(filepath.Separator)}, pkgs...)
	cmd := exec.CommandContext(ctx, goTool(), args...)
	cmd.Dir = root
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go %s: %w", strings.Join(args, " "), err)
	}
	return nil
}

// goTool is the go command: $GO as make passes it, else go on PATH.
func goTool() string {
	if g := os.Getenv("GO"); g != "" {
		return g
	}
	return "go"
}

// profileDeltas runs kubectl deltas' initial sync in-process under the CPU
// profiler and returns `go tool pprof -top` views of it.
func profileDeltas(ctx context.Context, e *env, outDir string, repeat int, name, flag string) (*profileResult, error) {
	if repeat <= 0 {
		// Some seconds of samples: 20 syncs of 10,000 objects, 4 of
		// 50,000.
		repeat = max(2, min(20, 200000/max(1, e.n)))
	}
	file := strings.ReplaceAll(name, " ", "-")
	cpu := filepath.Join(outDir, "deltas-"+file+"-cpu.pprof")
	mem := filepath.Join(outDir, "deltas-"+file+"-allocs.pprof")
	args := e.deltas("json", false)[1:]
	if flag != "" {
		args = append(args, flag)
	}
	def := clientDef{ID: "profile", mode: lines(), exits: true, args: func(e *env, _ bool) []string {
		return append([]string{filepath.Join(e.tools, "profile"), "-cpuprofile", cpu, "-memprofile", mem, "-repeat", strconv.Itoa(repeat), "--"}, args...)
	}}
	begin := time.Now()
	p, err := startClient(&def, e, false)
	if err != nil {
		return nil, err
	}
	if _, err := p.waitObjects(ctx, p.counter.WaitFor(e.n*repeat), e.n*repeat, time.Duration(repeat)*(60*time.Second+time.Duration(e.n)*2*time.Millisecond)); err != nil {
		p.stop()
		return nil, fmt.Errorf("profiled run: %w", err)
	}
	if err := p.wait(60 * time.Second); err != nil {
		return nil, fmt.Errorf("profiled run: %w", err)
	}
	var s sample
	p.usage(&s)
	res := &profileResult{
		Name:    name,
		Command: "bench/profile -repeat " + strconv.Itoa(repeat) + " -- kubectl-deltas " + strings.Join(redactArgs(args), " "),
		Repeat:  repeat, WallMS: ms(time.Since(begin)), CPUMS: s.CPUMS,
	}
	views := []struct {
		dst  *string
		args []string
	}{
		{&res.Flat, []string{"tool", "pprof", "-top", "-nodecount=35", cpu}},
		{&res.Cum, []string{"tool", "pprof", "-top", "-cum", "-nodecount=35", cpu}},
		{&res.Allocs, []string{"tool", "pprof", "-top", "-sample_index=alloc_space", "-nodecount=20", mem}},
	}
	for _, v := range views {
		out, err := exec.CommandContext(ctx, goTool(), v.args...).CombinedOutput()
		if err != nil {
			return nil, fmt.Errorf("go %s: %w: %s", strings.Join(v.args, " "), err, out)
		}
		*v.dst = string(out)
	}
	return res, nil
}

// redactArgs drops the temporary kubeconfig path from a shown command.
func redactArgs(args []string) []string {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		if args[i] == "--kubeconfig" && i+1 < len(args) {
			out = append(out, "--kubeconfig", "ADMIN")
			i++
			continue
		}
		out = append(out, args[i])
	}
	return out
}

// pipelineBench runs the in-process benchmarks and returns their output.
func pipelineBench(ctx context.Context, root string) (string, error) {
	cmd := exec.CommandContext(ctx, goTool(), "test", "-run", "^$", "-bench", ".", "-benchmem", "-count", "1", "./bench/pipeline/")
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go test -bench ./bench/pipeline: %w: %s", err, out)
	}
	return string(out), nil
}
