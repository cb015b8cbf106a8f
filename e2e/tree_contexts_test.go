//go:build faults

package e2e

// --tree across clusters and the initial state of a tree on the busy
// cluster: every context's tree whole, whichever context comes first; no
// object older than the command printed as Added.

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kubectl-deltas/kubectl-deltas/test/controlplane"
)

// placeContext is one context of a kubeconfig: a cluster and a namespace.
type placeContext struct {
	name string
	c    *cluster
	ns   string
}

// contextsKubeconfig writes a kubeconfig whose contexts reach the given
// clusters' admin users, each in its namespace.
func contextsKubeconfig(t *testing.T, contexts ...placeContext) string {
	t.Helper()
	merged := clientcmdapi.NewConfig()
	for _, pc := range contexts {
		cfg, err := clientcmd.LoadFromFile(pc.c.cp.AdminKubeconfig())
		if err != nil {
			t.Fatal(err)
		}
		cur := cfg.Contexts[cfg.CurrentContext]
		key := pc.c.cp.Server()
		merged.Clusters[key] = cfg.Clusters[cur.Cluster]
		merged.AuthInfos[key] = cfg.AuthInfos[cur.AuthInfo]
		merged.Contexts[pc.name] = &clientcmdapi.Context{Cluster: key, AuthInfo: key, Namespace: pc.ns}
	}
	merged.CurrentContext = contexts[0].name
	path := filepath.Join(t.TempDir(), "kubeconfig")
	must(t, clientcmd.WriteToFile(*merged, path))
	return path
}

// startSecondBusyCluster starts a busy cluster of its own for the test,
// stopped at its end.
func startSecondBusyCluster(t *testing.T) *cluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(bg, 3*time.Minute)
	defer cancel()
	began := time.Now()
	cp, err := controlplane.Start(ctx, controlplane.Options{Nodes: 1})
	if err != nil {
		t.Fatalf("starting a second busy cluster: %v", err)
	}
	t.Cleanup(cp.Stop)
	config, err := clientcmd.BuildConfigFromFlags("", cp.AdminKubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	config.QPS, config.Burst = 200, 400
	t.Logf("second busy cluster %s ready in %s", cp.Server(), time.Since(began).Round(100*time.Millisecond))
	return &cluster{cp: cp, client: kubernetes.NewForConfigOrDie(config)}
}

// checkTreesByContext runs `deployment/web --tree --until-synced -o json`
// over the contexts in order and requires each context's records to be
// exactly its cluster's tree of web, each object once, Replaced and
// initial.
func checkTreesByContext(t *testing.T, kubeconfig string, order []placeContext) {
	t.Helper()
	names := make([]string, len(order))
	for i, pc := range order {
		names[i] = pc.name
	}
	res := runAs(t, kubeconfig, 2*time.Minute, "deployment/web", "--context="+strings.Join(names, ","), "--tree", "--until-synced", "-o", "json")
	if res.code != 0 {
		t.Fatalf("--context=%s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(names, ","), res.code, res.stdout, res.stderr)
	}
	got := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(res.stdout), "\n") {
		var rec deltaRecord
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("not a record: %q: %v", line, err)
		}
		if rec.Type != "Replaced" || !rec.Initial {
			t.Errorf("context %q: %s %s/%s initial=%v, want Replaced and initial", rec.Context, rec.Type, rec.Kind, rec.Name, rec.Initial)
		}
		got[rec.Context] = append(got[rec.Context], rec.Kind+" "+rec.key())
	}
	for _, pc := range order {
		objects, err := treeState(bg, pc.c, pc.ns, "Deployment", rolloutName)
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for key, o := range objects {
			want = append(want, o.kind+" "+key)
		}
		sort.Strings(want)
		sort.Strings(got[pc.name])
		if !slices.Equal(got[pc.name], want) || len(want) < 4 {
			t.Errorf("--context=%s: context %q printed\n  %s\nwant its whole tree\n  %s\nstderr:\n%s",
				strings.Join(names, ","), pc.name, strings.Join(got[pc.name], "\n  "), strings.Join(want, "\n  "), res.stderr)
		}
	}
}

// TestBusyTreeContexts: `deployment/web --context=A,B --tree` shows both
// trees whole, in both orders, repeated: two contexts of one server in
// two namespaces, then two servers.
func TestBusyTreeContexts(t *testing.T) {
	c := busyCluster(t)
	staging := &rollout{t: t, c: c, ns: c.namespace(t)}
	prod := &rollout{t: t, c: c, ns: c.namespace(t)}
	for _, r := range []*rollout{staging, prod} {
		r.create(2, "web:v1")
	}
	for _, r := range []*rollout{staging, prod} {
		r.waitRolledOut(90 * time.Second)
	}
	one := []placeContext{{"staging", c, staging.ns}, {"prod", c, prod.ns}}
	kubeconfig := contextsKubeconfig(t, one...)
	for round := range 3 {
		for _, order := range [][]placeContext{one, {one[1], one[0]}} {
			t.Run(fmt.Sprintf("one server/%s,%s/%d", order[0].name, order[1].name, round), func(t *testing.T) {
				checkTreesByContext(t, kubeconfig, order)
			})
		}
	}

	other := startSecondBusyCluster(t)
	west := &rollout{t: t, c: other, ns: other.namespace(t)}
	west.create(2, "web:v1")
	west.waitRolledOut(90 * time.Second)
	two := []placeContext{{"east", c, staging.ns}, {"west", other, west.ns}}
	kubeconfig = contextsKubeconfig(t, two...)
	for round := range 3 {
		for _, order := range [][]placeContext{two, {two[1], two[0]}} {
			t.Run(fmt.Sprintf("two servers/%s,%s/%d", order[0].name, order[1].name, round), func(t *testing.T) {
				checkTreesByContext(t, kubeconfig, order)
			})
		}
	}
}

// treeUIDs are the UIDs of web's Deployment, ReplicaSets and Pods in ns.
func treeUIDs(t *testing.T, c *cluster, ns string) map[string]string {
	t.Helper()
	objects, err := treeState(bg, c, ns, "Deployment", rolloutName)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for key, o := range objects {
		out[string(o.meta.UID)] = o.kind + " " + key
	}
	return out
}

// TestBusyTreeWatchOnlyDuringRollout: `--tree --watch-only` started while
// a rollout runs prints no Added for an object that existed before the
// command started, over 30 runs (a race that shows once in 10 runs is
// missed with a probability of 0.9^30 ≈ 4%), each started at a random
// moment of a rollout.
func TestBusyTreeWatchOnlyDuringRollout(t *testing.T) {
	c := busyCluster(t)
	r := &rollout{t: t, c: c, ns: c.namespace(t), minReadySeconds: 1}
	r.create(3, "web:v0")
	r.waitRolledOut(90 * time.Second)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	const runs = 30
	added := 0
	for i := range runs {
		r.setImage(fmt.Sprintf("web:v%d", i+1))
		time.Sleep(time.Duration(rng.IntN(400)) * time.Millisecond)
		before := treeUIDs(t, c, r.ns)
		d := startJSON(t, c.cp.AdminKubeconfig(), "deployment/web", "-n", r.ns, "--tree", "--watch-only")
		time.Sleep(2 * time.Second)
		if code := d.stop(); code != 130 {
			t.Fatalf("run %d: exit %d after SIGINT, want 130\n%s", i, code, d.describe())
		}
		for _, rec := range d.led.recordsFrom(0) {
			if what, existed := before[rec.UID]; existed && rec.Type == "Added" {
				added++
				t.Errorf("run %d: %s existed before the command and was printed as Added: %s", i, what, rec.brief())
			}
			if rec.Initial {
				t.Errorf("run %d: --watch-only printed an initial record: %s", i, rec.brief())
			}
		}
		if i%10 == 9 {
			r.waitRolledOut(90 * time.Second)
		}
	}
	t.Logf("%d runs during rollouts, %d objects older than the command printed as Added", runs, added)
	r.waitRolledOut(90 * time.Second)
	noFailure(t, c)
}
