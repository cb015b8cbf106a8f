package main

// The scale section (issue 11): N realistic Pods on simulated kwok nodes,
// the initial sync of every client at that size, then steady churn.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/kubectl-deltas/kubectl-deltas/test/controlplane"
)

// scaleNodes is the default number of simulated nodes for n Pods: 1,000
// for the 50,000 of issue 11 (5,000 above 100,000 Pods, as for its
// 150,000), fewer for a quick small run (50 Pods a node, at least 10).
func scaleNodes(n int) int {
	switch {
	case n > 100000:
		return 5000
	case n >= 50000:
		return 1000
	default:
		return max(10, min(1000, n/50))
	}
}

// kwokOptionsYAML raises kwok's parallelism for the Pods' status writes;
// kwok reads it next to its stages (--config may be given more than once).
// A configuration read from a file gets no defaults, so it repeats them
// and the command line's values (test/controlplane's kwokArgs).
const kwokOptionsYAML = `apiVersion: config.kwok.x-k8s.io/v1alpha1
kind: KwokConfiguration
options:
  podPlayStageParallelism: 16
  nodePlayStageParallelism: 4
  nodeLeaseParallelism: 4
  podsOnNodeSyncParallelism: 1
  enablePodsOnNodeSyncListPager: true
  enablePodsOnNodeSyncStreamWatch: false
  manageAllNodes: false
  manageNodesWithAnnotationSelector: kwok.x-k8s.io/node=fake
  cidr: 10.64.0.1/10
  nodeIP: 10.0.0.1
  nodeLeaseDurationSeconds: 40
`

// scaleClients are the clients of the scale section, all over every
// namespace's Pods.
func scaleClients() []clientDef {
	baseline := func(e *env, watch bool, extra ...string) []string {
		args := []string{filepath.Join(e.tools, "baseline"), "-kubeconfig", e.kubeconfig, "-namespace", "", "-resource", "pods"}
		if !watch {
			args = append(args, "-count", strconv.Itoa(e.n))
		}
		return append(args, extra...)
	}
	raw := func(e *env, extra ...string) []string {
		return append([]string{filepath.Join(e.tools, "rawclient"), "-server", e.server, "-path", "/api/v1/pods"}, extra...)
	}
	// In the order they are measured: the comparisons of issue 11's
	// targets first, so that a run stopped early has them.
	return []clientDef{
		{
			ID: "a-page", Group: "a", Label: "(a) raw paginated list",
			Measured: "GET /api/v1/pods?limit=500, following the continue token page after page as client-go's pager does (the plugin's page size), with gzip as client-go asks for it; bodies copied to stdout.",
			mode:     markers(podPrefix), exits: true, noBurst: true,
			args: func(e *env, _ bool) []string { return raw(e, "-limit", "500", "-gzip") },
		},
		{
			ID: "d-json", Group: "d", Label: "(d) kubectl deltas -o json",
			Measured:      "bin/kubectl-deltas pods -A -o json --count=N (default --watch-list=auto: list, then watch); one JSON line per delta.",
			peakPerObject: 6000,
			mode:          lines(), exits: true,
			args: func(e *env, watch bool) []string { return e.deltas("json", watch) },
		},
		{
			ID: "d-json-nh", Group: "d", Label: "(d) -o json --health=false",
			Measured:      "-o json --health=false: records without the kstatus verdict, for the cost of health (issue 22).",
			peakPerObject: 6000,
			mode:          lines(), exits: true,
			args: func(e *env, watch bool) []string { return e.deltas("json", watch, "--health=false") },
		},
		{
			ID: "d-handler", Group: "d", Label: "(d) -o json --handler",
			Measured:      "-o json --handler: the handler calls through client-go v0.36's RealFIFO (issue 43).",
			peakPerObject: 6000,
			mode:          lines(), exits: true,
			args: func(e *env, watch bool) []string { return e.deltas("json", watch, "--handler") },
		},
		{
			ID: "d-handler-delta", Group: "d", Label: "(d) -o json --handler --fifo=delta",
			Measured:      "as above through the DeltaFIFO (client-go v0.32 and earlier).",
			peakPerObject: 6000,
			mode:          lines(), exits: true,
			args: func(e *env, watch bool) []string { return e.deltas("json", watch, "--handler", "--fifo=delta") },
		},
		{
			ID: "d-wide", Group: "d", Label: "(d) kubectl deltas -o wide",
			Measured:      "-o wide --no-headers: the server's Table of Pods with each row's object (issue 23); one line per delta.",
			peakPerObject: 6000,
			mode:          lines(), exits: true, noBurst: true,
			args: func(e *env, watch bool) []string { return e.deltas("wide", watch, "--no-headers") },
		},
		{
			ID: "b-typed-list", Group: "b", Label: "(b) client-go typed, list+watch",
			Measured:      "bench/baseline -typed: the typed Pod informer's ListWatch (clientset, *corev1.Pod, JSON), Reflector+DeltaFIFO+Indexer, managedFields stripped in the transformer, one encoding/json line per delta; KUBE_FEATURE_WatchListClient=false.",
			peakPerObject: 26000,
			mode:          lines(), exits: true,
			args:     func(e *env, watch bool) []string { return baseline(e, watch, "-typed") },
			extraEnv: []string{"KUBE_FEATURE_WatchListClient=false"},
		},
		{
			ID: "b-typed-proto", Group: "b", Label: "(b) client-go typed, protobuf",
			Measured:      "as above with the clientset speaking protobuf (as kube-controller-manager does); list+watch.",
			peakPerObject: 28000,
			mode:          lines(), exits: true, noBurst: true,
			args:     func(e *env, watch bool) []string { return baseline(e, watch, "-typed", "-protobuf") },
			extraEnv: []string{"KUBE_FEATURE_WatchListClient=false"},
		},
		{
			ID: "b-dyn-list", Group: "b", Label: "(b) client-go dynamic, list+watch",
			Measured:      "bench/baseline: the dynamic informer's ListWatch (*unstructured.Unstructured), otherwise as the typed one; KUBE_FEATURE_WatchListClient=false.",
			peakPerObject: 140000,
			mode:          lines(), exits: true,
			args:     func(e *env, watch bool) []string { return baseline(e, watch) },
			extraEnv: []string{"KUBE_FEATURE_WatchListClient=false"},
		},
		{
			ID: "d-text", Group: "d", Label: "(d) kubectl deltas -o text",
			Measured:      "as above with -o text.",
			peakPerObject: 6000,
			mode:          lines(), exits: true,
			args: func(e *env, watch bool) []string { return e.deltas("text", watch) },
		},
		{
			ID: "d-name", Group: "d", Label: "(d) kubectl deltas -o name",
			Measured:      "as above with -o name: the printed stream needs no health (issue 46's reference for --timeline).",
			peakPerObject: 6000,
			mode:          lines(), exits: true, noBurst: true,
			args: func(e *env, watch bool) []string { return e.deltas("name", watch) },
		},
		{
			ID: "d-name-tl", Group: "d", Label: "(d) -o name --timeline",
			Measured:      "-o name --timeline=PAGE: the same stream, and the page of its deltas (each Pod's health judged for it) written when the run ends (issue 46).",
			peakPerObject: 6000,
			mode:          lines(), exits: true, noBurst: true,
			args: func(e *env, watch bool) []string {
				return e.deltas("name", watch, "--timeline="+filepath.Join(e.home, "timeline.html"))
			},
		},
		{
			ID: "d-json-wl", Group: "d", Label: "(d) -o json --watch-list=true",
			Measured:      "-o json --watch-list=true (streaming list).",
			peakPerObject: 6000,
			mode:          lines(), exits: true,
			args: func(e *env, watch bool) []string { return e.deltas("json", watch, "--watch-list=true") },
		},
		{
			ID: "a-page-plain", Group: "a", Label: "(a) raw paginated list, no gzip",
			Measured: "as above without gzip.",
			mode:     markers(podPrefix), exits: true, noBurst: true,
			args: func(e *env, _ bool) []string { return raw(e, "-limit", "500") },
		},
		{
			ID: "a-full", Group: "a", Label: "(a) raw unpaginated list",
			Measured: "one GET /api/v1/pods without a limit (the server builds the whole list), with gzip.",
			mode:     markers(podPrefix), exits: true, noBurst: true,
			args: func(e *env, _ bool) []string { return raw(e, "-gzip") },
		},
		{
			ID: "b-typed-stream", Group: "b", Label: "(b) client-go typed, streaming list",
			Measured:      "the typed informer with KUBE_FEATURE_WatchListClient=true (client-go v0.36's default).",
			peakPerObject: 18000,
			mode:          lines(), exits: true, noBurst: true,
			args:     func(e *env, watch bool) []string { return baseline(e, watch, "-typed") },
			extraEnv: []string{"KUBE_FEATURE_WatchListClient=true"},
		},
		{
			ID: "c", Group: "c", Label: "(c) kubectl get pods -A -w",
			Measured:      "`kubectl get pods -A -w` (its default table, one row per Pod and per change); done when N Pod names have been printed, then killed.",
			peakPerObject: 72000,
			mode:          markers(podPrefix), exits: false,
			args: func(e *env, _ bool) []string {
				return []string{filepath.Join(e.bin, "kubectl"), "get", "pods", "-A", "-w", "--kubeconfig", e.kubeconfig}
			},
		},
		{
			ID: "d-synced", Group: "d", Label: "(d) -o name --until-synced",
			Measured:      "pods -A -o name --until-synced: the initial list printed, then exit (the base of issue 56's --until row).",
			peakPerObject: 6000,
			mode:          lines(), exits: true, noBurst: true,
			args: func(e *env, _ bool) []string {
				return []string{filepath.Join(e.bin, "kubectl-deltas"), "pods", "-A", "-o", "name", "--kubeconfig", e.kubeconfig, "--until-synced"}
			},
		},
		{
			ID: "d-until", Group: "d", Label: "(d) -o name --until=status=Current",
			Measured:      "pods -A -o name --until=status=Current: the initial list printed, every Pod judged, exit once all are Current (issue 56).",
			peakPerObject: 6000,
			mode:          lines(), exits: true, noBurst: true,
			args: func(e *env, _ bool) []string {
				return []string{filepath.Join(e.bin, "kubectl-deltas"), "pods", "-A", "-o", "name", "--kubeconfig", e.kubeconfig, "--until=status=Current"}
			},
		},
		{
			ID: "d-meta", Group: "d", Label: "(d) -o json --metadata-only",
			Measured:      "-o json --metadata-only: PartialObjectMetadata lists and watches, the record's object the metadata (issue 12).",
			peakPerObject: 6000,
			mode:          lines(), exits: true, noBurst: true,
			args: func(e *env, watch bool) []string { return e.deltas("json", watch, "--metadata-only") },
		},
		{
			ID: "d-all", Group: "d", Label: "(d) --all-types -A -o json",
			Measured:      "--all-types -A -o json --until-synced: every type the server serves (Events and Leases left out by default), the Pods by far the largest; wall is when the last Pod's record is out; the run exits once every type has synced (issue 12).",
			peakPerObject: 6000,
			mode:          markers(`"resource":"pods"`), exits: true, noBurst: true,
			args: func(e *env, _ bool) []string {
				return []string{filepath.Join(e.bin, "kubectl-deltas"), "--all-types", "-A", "-o", "json", "--kubeconfig", e.kubeconfig, "--until-synced"}
			},
		},
		{
			ID: "b-dyn-stream", Group: "b", Label: "(b) client-go dynamic, streaming list",
			Measured:      "the dynamic informer with KUBE_FEATURE_WatchListClient=true (client-go v0.36's default).",
			peakPerObject: 50000,
			mode:          lines(), exits: true, noBurst: true,
			args:     func(e *env, watch bool) []string { return baseline(e, watch) },
			extraEnv: []string{"KUBE_FEATURE_WatchListClient=true"},
		},
	}
}

// scaleRun is the scale section: everything runScale measured, saved as
// bench/results/scale-nN.json.
type scaleRun struct {
	Version int    `json:"version"`
	Date    string `json:"date"`
	N       int    `json:"n"`
	Nodes   int    `json:"nodes"`
	Rounds  int    `json:"rounds"`
	// SeedSeconds is how long the seedWriters took to create the Pods;
	// KwokSeconds how much longer until kwok had made every one Running.
	SeedSeconds float64  `json:"seedSeconds"`
	KwokSeconds float64  `json:"kwokSeconds"`
	Stats       podStats `json:"stats"`
	// ServerRSSKiB and EtcdRSSKiB are kube-apiserver's and etcd's RSS
	// before the measurements; ServerPeakKiB kube-apiserver's peak (VmHWM)
	// at the end.
	ServerRSSKiB    int64          `json:"serverRssKiB"`
	EtcdRSSKiB      int64          `json:"etcdRssKiB"`
	ServerPeakKiB   int64          `json:"serverPeakKiB"`
	DurationSeconds float64        `json:"durationSeconds"`
	Machine         machineInfo    `json:"machine"`
	BusyBefore      float64        `json:"busyBefore"`
	BusyAfter       float64        `json:"busyAfter"`
	Kube            string         `json:"kube"`
	Commit          string         `json:"commit"`
	Clients         []clientResult `json:"clients"`
	// ChurnSeconds, ChurnWriters and ChurnRates describe the churn runs.
	ChurnSeconds float64         `json:"churnSeconds"`
	ChurnWriters int             `json:"churnWriters"`
	Churn        []churnSample   `json:"churn,omitempty"`
	Profiles     []profileResult `json:"profiles,omitempty"`
	// Interrupted says why the run stopped before the end, if it did.
	Interrupted string `json:"interrupted,omitempty"`
	// Plugin is what bin/kubectl-deltas says it was built from: the
	// harness runs the binary it finds, which may be newer than Commit.
	Plugin string `json:"plugin,omitempty"`
	// Tag names a run of some clients only (-tag), kept beside the full
	// run of the same N.
	Tag string `json:"tag,omitempty"`
}

// runScale is `make bench-scale`.
func runScale(ctx context.Context, o options, root, benchDir string, begin time.Time) error {
	binDir := filepath.Join(root, "bin")
	outDir := filepath.Join(benchDir, "out")
	tools := filepath.Join(outDir, "bin")
	nodes := o.nodes
	if nodes <= 0 {
		nodes = scaleNodes(o.n)
	}
	rates, err := parseRates(o.churnRates)
	if err != nil {
		return err
	}
	// kwok plays 4 Pod stages at a time by default: about 100 Pods made
	// Running a second here, 25 minutes for 150,000.
	kwokOptions := filepath.Join(outDir, "kwok-options.yaml")
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", outDir, err)
	}
	if err := os.WriteFile(kwokOptions, []byte(kwokOptionsYAML), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", kwokOptions, err)
	}
	cpOpts := controlplane.Options{
		Log: prefixWriter{os.Stderr}, Nodes: nodes, KwokOnly: true, ReadyTimeout: 5 * time.Minute,
		KwokFlags: []string{"--config=" + kwokOptions},
	}
	if err := controlplane.Check(cpOpts); err != nil {
		return fmt.Errorf("%w (make bench-scale builds them)", err)
	}
	logf("starting the control plane: etcd, kube-apiserver and kwok with %d simulated nodes (no controller-manager or scheduler: the Pods name their node)", nodes)
	cp, err := controlplane.Start(ctx, cpOpts)
	if err != nil {
		return err
	}
	defer func() {
		logf("stopping the control plane")
		cp.Stop()
	}()
	cl, err := newCluster(cp.Server(), cp.AdminToken(), cp.AdminKubeconfig())
	if err != nil {
		return err
	}

	res := &scaleRun{
		Version: resultsVersion, Date: time.Now().UTC().Format(time.RFC3339), N: o.n, Nodes: nodes, Rounds: o.rounds,
		Machine: machine(ctx, root), Kube: cl.serverVersion(ctx), Commit: gitDescribe(ctx, root),
		ChurnSeconds: o.churnFor.Seconds(), ChurnWriters: o.churnWriters,
	}
	seedBegin := time.Now()
	logf("creating %d Pods in namespace %s with %d writers", o.n, benchNamespace, seedWriters)
	if err := cl.seedPods(ctx, o.n, nodes, func(done int) {
		logf("  %d created (%s)", done, time.Since(seedBegin).Round(time.Second))
	}); err != nil {
		return err
	}
	res.SeedSeconds = time.Since(seedBegin).Seconds()
	logf("created in %.1f s; waiting for kwok to make every Pod Running", res.SeedSeconds)
	kwokBegin := time.Now()
	if err := cl.waitPodsRunning(ctx, 10*time.Minute+time.Duration(o.n)*4*time.Millisecond, func(name string) {
		logf("  not yet Running: %s … (%s)", name, time.Since(kwokBegin).Round(time.Second))
	}); err != nil {
		return err
	}
	res.KwokSeconds = time.Since(kwokBegin).Seconds()
	// Nothing but the benchmark writes from here on: kwok would renew a
	// lease per node every 10 s (500 writes/s with 5,000 nodes) and keep
	// the server busy between samples.
	if err := cp.StopKwok(); err != nil {
		return err
	}
	st, err := cl.listPods(ctx)
	if err != nil {
		return err
	}
	res.Stats = st
	if st.Items != o.n || st.Running != o.n {
		return fmt.Errorf("the cluster holds %d Pods, %d of them Running; want %d and %d: check the control plane's logs", st.Items, st.Running, o.n, o.n)
	}
	logf("%d Pods Running after %.1f s more: the paginated list is %s of JSON (%d bytes per Pod; %d without managedFields)",
		st.Items, res.KwokSeconds, mib(st.ListBytes), st.ObjectBytes/int64(st.Items), st.StrippedBytes/int64(st.Items))

	// Its own $HOME, so that a scale run of another N can run at the same
	// time (while this one is still seeding, say).
	home := filepath.Join(outDir, fmt.Sprintf("home-scale-n%d", o.n))
	if err := freshDir(home); err != nil {
		return err
	}
	e := &env{
		bin: binDir, tools: tools, kubeconfig: cp.AdminKubeconfig(), server: cp.Server(), token: cp.AdminToken(), home: home, n: o.n, scale: true,
		apiserverPID: cp.APIServerPID(), etcdPID: findPID("--data-dir=" + filepath.Join(cp.Dir(), "etcd-data")),
		maxForeign: o.maxForeign, attempts: o.attempts, serverGC: cl.serverGC,
	}
	res.ServerRSSKiB, res.EtcdRSSKiB = rssTotalKiB(e.apiserverPID), rssTotalKiB(e.etcdPID)
	if o.hold {
		fmt.Printf("kubeconfig: %s\nserver: %s\ntoken: %s\nPress Ctrl-C to stop.\n", e.kubeconfig, e.server, e.token)
		<-ctx.Done()
		return nil
	}

	defs := selectClients(scaleClients(), o.only)
	byID := map[string]*clientResult{}
	for _, d := range defs {
		res.Clients = append(res.Clients, clientResult{ID: d.ID, Group: d.Group, Label: d.Label, Measured: d.Measured})
	}
	for i := range res.Clients {
		byID[res.Clients[i].ID] = &res.Clients[i]
	}
	timeout := 2*time.Minute + time.Duration(o.n)*4*time.Millisecond

	name := fmt.Sprintf("scale-n%d.json", o.n)
	if o.tag != "" {
		// A run of a few clients (-only) beside the full one, say.
		name = fmt.Sprintf("scale-n%d-%s.json", o.n, o.tag)
		res.Tag = o.tag
	}
	path := filepath.Join(benchDir, "results", name)
	// Saved after every sample, so that an interrupted run (Ctrl-C, a
	// deadline) leaves what it measured.
	checkpoint := func() {
		res.DurationSeconds = time.Since(begin).Seconds()
		if err := saveJSON(path, res); err != nil {
			logf("%v", err)
		}
	}
	measure := func() error {
		busy, err := waitQuiet(ctx, o.quietLimit, o.quietWait)
		if err != nil {
			return err
		}
		res.BusyBefore = busy
		res.Plugin = pluginVersion(ctx, e)
		logf("warming the discovery caches of kubectl and kubectl deltas (not measured)")
		if err := warmDiscovery(ctx, e); err != nil {
			return err
		}
		for r := 1; r <= o.rounds; r++ {
			logf("initial sync of %d Pods, round %d/%d", o.n, r, o.rounds)
			for i := range defs {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				if why := tooBig(&defs[i], e.n); why != "" {
					logf("  %-32s skipped: %s", defs[i].Label, why)
					byID[defs[i].ID].Sync = append(byID[defs[i].ID].Sync, sample{Round: r, Error: "skipped: " + why})
					checkpoint()
					continue
				}
				s := syncRun(ctx, &defs[i], e, r, timeout)
				byID[defs[i].ID].Sync = append(byID[defs[i].ID].Sync, s)
				logSample(defs[i].Label, s, false)
				checkpoint()
			}
		}

		churnDefs := selectClients(defs, o.churnClients)
		run := 0
		for _, rate := range rates {
			for i := range churnDefs {
				if churnDefs[i].noBurst {
					continue
				}
				if ctx.Err() != nil {
					return ctx.Err()
				}
				if why := tooBig(&churnDefs[i], e.n); why != "" {
					logf("steady churn at %s: %s skipped: %s", rateLabel(rate), churnDefs[i].Label, why)
					res.Churn = append(res.Churn, churnSample{ID: churnDefs[i].ID, Label: churnDefs[i].Label, Rate: rate, Error: "skipped: " + why})
					continue
				}
				run++
				logf("steady churn at %s for %s: %s", rateLabel(rate), o.churnFor, churnDefs[i].Label)
				s := churnRun(ctx, &churnDefs[i], e, cl, churnConfig{
					run: run, rate: rate, duration: o.churnFor, writers: o.churnWriters, timeout: timeout,
					first: (run - 1) * 7919 % o.n,
				})
				res.Churn = append(res.Churn, s)
				logChurn(s)
				checkpoint()
			}
		}
		if busy, err := busyFraction(ctx, 2*time.Second); err == nil {
			res.BusyAfter = busy
		}
		if o.profile {
			if _, err := waitQuiet(ctx, o.quietLimit, time.Minute); err != nil {
				return err
			}
			logf("profiling kubectl deltas -o json over %d Pods (in-process, bench/profile)", o.n)
			p, err := profileDeltas(ctx, e, outDir, 1, "scale list", "--watch-list=false")
			if err != nil {
				return err
			}
			res.Profiles = append(res.Profiles, *p)
		}
		return nil
	}
	err = measure()
	if err != nil {
		res.Interrupted = err.Error()
		logf("stopped early (%v): saving what was measured", err)
	}
	res.ServerPeakKiB = peakKiB(e.apiserverPID)
	checkpoint()
	logf("wrote %s", rel(root, path))
	if rerr := render(benchDir); rerr != nil {
		return errors.Join(err, rerr)
	}
	logf("wrote bench/RESULTS.md in %s total", time.Since(begin).Round(time.Second))
	fmt.Print(scaleSummary(res))
	return err
}

// selectClients keeps the clients whose IDs are in the comma-separated
// list, all of them when it is empty.
func selectClients(defs []clientDef, only string) []clientDef {
	if only == "" {
		return defs
	}
	keep := map[string]bool{}
	for _, id := range strings.Split(only, ",") {
		keep[strings.TrimSpace(id)] = true
	}
	var sel []clientDef
	for _, d := range defs {
		if keep[d.ID] {
			sel = append(sel, d)
		}
	}
	return sel
}

// parseRates reads -churn-rates: writes per second, or "max" (0) for as
// fast as the writers go.
func parseRates(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		switch f {
		case "":
			continue
		case "max":
			out = append(out, 0)
		default:
			r, err := strconv.Atoi(f)
			if err != nil || r <= 0 {
				return nil, fmt.Errorf("-churn-rates %q: want positive writes per second or max, comma-separated", s)
			}
			out = append(out, r)
		}
	}
	return out, nil
}

func rateLabel(rate int) string {
	if rate == 0 {
		return "full speed"
	}
	return numberWithCommas(rate) + " writes/s"
}

// warmDiscovery runs kubectl and kubectl deltas once against a small
// collection, so that their discovery caches in $HOME are warm for every
// measured run (as `make bench`'s warm-up run does).
func warmDiscovery(ctx context.Context, e *env) error {
	for _, args := range [][]string{
		{filepath.Join(e.bin, "kubectl"), "get", "namespaces", "--kubeconfig", e.kubeconfig},
		{filepath.Join(e.bin, "kubectl-deltas"), "namespaces", "--until-synced", "--kubeconfig", e.kubeconfig},
	} {
		cmd := commandIn(ctx, e, args)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("%s: %w: %s", strings.Join(args[:2], " "), err, truncate(string(out), 300))
		}
	}
	return nil
}

// rssTotalKiB is RssAnon+RssFile of pid, 0 if unknown.
func rssTotalKiB(pid int) int64 {
	anon, file, ok := rssKiB(pid)
	if !ok {
		return 0
	}
	return anon + file
}

func logChurn(s churnSample) {
	if s.Error != "" {
		logf("  FAILED: %s", s.Error)
	}
	if s.Writes == 0 {
		return
	}
	logf("  %d writes in %.1f s (%.0f/s); delay p50 %.1f ms p99 %.1f ms max %.1f ms (plain watch: %.1f / %.1f / %.1f); client CPU %.0f ms per 1,000 events; RSS %.0f → %.0f MiB (max %.0f)",
		s.Writes, s.WriteSeconds, float64(s.Writes)/s.WriteSeconds, s.Client.P50MS, s.Client.P99MS, s.Client.MaxMS,
		s.Reference.P50MS, s.Reference.P99MS, s.Reference.MaxMS, s.CPUPer1000MS(),
		float64(s.RSSStartKiB)/1024, float64(s.RSSEndKiB)/1024, float64(s.RSSMaxKiB)/1024)
}

// tooBig says why client c cannot run over n objects on this machine now
// ("" if it can): its expected peak RSS, with a fifth and 1 GiB to spare,
// exceeds MemAvailable (kube-apiserver holds about 12 GB at 150,000 Pods,
// and the OOM killer would pick the server or someone else's process).
func tooBig(c *clientDef, n int) string {
	if c.peakPerObject == 0 {
		return ""
	}
	need := c.peakPerObject * int64(n)
	avail := memAvailable()
	if avail == 0 || need+need/5+1<<30 <= avail {
		return ""
	}
	return fmt.Sprintf("it would need about %.1f GiB (%d KB per Pod, as measured at 50,000 Pods) and the machine has %.1f GiB available", float64(need)/(1<<30), c.peakPerObject/1000, float64(avail)/(1<<30))
}

// memAvailable is /proc/meminfo's MemAvailable in bytes, 0 if unknown.
func memAvailable() int64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "MemAvailable:"); ok {
			f := strings.Fields(v)
			if len(f) > 0 {
				if kb, err := strconv.ParseInt(f[0], 10, 64); err == nil {
					return kb * 1024
				}
			}
		}
	}
	return 0
}

// pluginVersion is bin/kubectl-deltas' own account of its build.
func pluginVersion(ctx context.Context, e *env) string {
	out, err := commandIn(ctx, e, []string{filepath.Join(e.bin, "kubectl-deltas"), "version", "--client"}).Output()
	if err != nil {
		return "unknown"
	}
	var parts []string
	for _, line := range strings.Split(string(out), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && (k == "Client Version" || k == "Build Date") {
			parts = append(parts, strings.TrimSpace(v))
		}
	}
	return strings.Join(parts, ", built ")
}
