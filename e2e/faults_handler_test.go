//go:build faults

package e2e

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// TestFaultHandlerCallsThroughARelist: `kubectl deltas --handler -o json`
// and client-go v0.36's SharedIndexInformer watch one namespace through
// the same proxy; both are cut off while objects change, are deleted and
// are created, etcd is compacted and kube-apiserver restarted, so that
// both must relist. Run after run, both make the same calls: in the same
// order as long as the watches hold, and, for each relist, the same calls
// — its tombstones first — which client-go makes in its store's map
// order (compared as sets). DELTAS_HANDLER_RUNS sets how many outages
// one run goes through (default 1: outages in a row make both back off
// longer and longer, up to a minute, as client-go's reflector does); the
// bar is ten runs of the test out of ten (-count=10).
func TestFaultHandlerCallsThroughARelist(t *testing.T) {
	t.Parallel()
	runs := 1
	if n, err := strconv.Atoi(os.Getenv("DELTAS_HANDLER_RUNS")); err == nil && n > 0 {
		runs = n
	}
	c := startCluster(t)
	ns := c.namespace(t)
	w := newWriter(c.client, ns)
	known := names("cm", 6)
	for _, n := range known {
		if err := w.create(bg, n); err != nil {
			t.Fatal(err)
		}
	}
	p := newFaultProxy(t, c.cp.Server())
	kubeconfig := p.kubeconfig(c.cp.AdminToken())
	config, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	theirs := watchWithClientGoOf(t, kubernetes.NewForConfigOrDie(config), ns)
	s := startAs(t, kubeconfig, "cm", "-n", ns, "--handler", "-o", "json")
	ours := readCalls(t, s, len(known))
	waitCalls(t, theirs, len(ours))
	if got := theirs.snapshot(); !slices.Equal(sortInitial(ours), sortInitial(got)) {
		t.Fatalf("initial list:\nkubectl deltas:\n  %s\nclient-go:\n  %s", strings.Join(ours, "\n  "), strings.Join(got, "\n  "))
	}

	for run := range runs {
		// Changes both watch.
		for _, n := range known[:2] {
			if err := w.update(bg, n); err != nil {
				t.Fatal(err)
			}
		}
		from := len(ours)
		ours = append(ours, readCalls(t, s, 2)...)
		waitCalls(t, theirs, len(ours))
		if got := theirs.snapshot(); !slices.Equal(ours[from:], got[from:]) {
			t.Fatalf("run %d, watched changes:\nkubectl deltas:\n  %s\nclient-go:\n  %s", run, strings.Join(ours[from:], "\n  "), strings.Join(got[from:], "\n  "))
		}

		// Cut off: one object changed, one deleted, one created and one
		// created and deleted, which neither may see.
		p.refuse()
		waitStderrOf(t, s, "warning: ", time.Minute)
		if err := w.update(bg, known[0]); err != nil {
			t.Fatal(err)
		}
		gone := known[len(known)-1]
		if err := w.remove(bg, gone); err != nil {
			t.Fatal(err)
		}
		fresh, brief := "new-"+strconv.Itoa(run), "tmp-"+strconv.Itoa(run)
		for _, n := range []string{fresh, brief} {
			if err := w.create(bg, n); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.remove(bg, brief); err != nil {
			t.Fatal(err)
		}
		known = append(slices.Clone(known[:len(known)-1]), fresh)
		if _, err := c.cp.CompactEtcd(bg); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(bg, 2*time.Minute)
		err := c.cp.RestartAPIServer(ctx)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		mark := len(ours)
		p.restore()

		// The relist: a call per object there is, and the tombstone of
		// the one deleted.
		// Both back off between failed watches (client-go's reflector up
		// to 30 s, jittered up to twice that), so the relist may come
		// that long after.
		relist := readCallsWithin(t, s, len(known)+1, 150*time.Second)
		ours = append(ours, relist...)
		waitCalls(t, theirs, len(ours))
		got := theirs.snapshot()
		if len(got) != len(ours) {
			t.Fatalf("run %d: client-go made %d calls, kubectl deltas %d:\nkubectl deltas:\n  %s\nclient-go:\n  %s", run, len(got), len(ours), strings.Join(ours, "\n  "), strings.Join(got, "\n  "))
		}
		theirRelist := got[mark:]
		if !strings.HasPrefix(relist[0], "OnDelete "+gone+"@") || !strings.HasSuffix(relist[0], "tombstone=true") ||
			!strings.HasPrefix(theirRelist[0], "OnDelete "+gone+"@") {
			t.Fatalf("run %d: the relist does not begin with the tombstone of %s:\nkubectl deltas:\n  %s\nclient-go:\n  %s", run, gone, strings.Join(relist, "\n  "), strings.Join(theirRelist, "\n  "))
		}
		if !slices.Equal(slices.Sorted(slices.Values(relist)), slices.Sorted(slices.Values(theirRelist))) {
			t.Fatalf("run %d, the relist:\nkubectl deltas:\n  %s\nclient-go:\n  %s", run, strings.Join(relist, "\n  "), strings.Join(theirRelist, "\n  "))
		}
		if !slices.ContainsFunc(relist, func(l string) bool {
			return strings.HasPrefix(l, "OnAdd "+fresh+"@") && strings.HasSuffix(l, "initial=false")
		}) {
			t.Fatalf("run %d: no OnAdd of %s in the relist:\n  %s", run, fresh, strings.Join(relist, "\n  "))
		}
		t.Logf("run %d: %d calls alike, the relist's %d", run, len(ours), len(relist))
	}
}

// waitCalls waits until client-go's handler has n calls.
func waitCalls(t *testing.T, h *handlerCalls, n int) {
	t.Helper()
	deadline := time.Now().Add(150 * time.Second)
	for len(h.snapshot()) < n {
		if time.Now().After(deadline) {
			t.Fatalf("client-go's handler: %d calls within 150s, want %d:\n  %s", len(h.snapshot()), n, strings.Join(h.snapshot(), "\n  "))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestBusyQueueKeyOwnerDuringARollout: `pods --handler --queue
// --queue-key=owner` during a rollout on the busy cluster reconciles the
// Pods' ReplicaSets, never a Pod, and every call of a Pod is folded into
// a reconcile of its ReplicaSet.
func TestBusyQueueKeyOwnerDuringARollout(t *testing.T) {
	c := busyCluster(t)
	r := &rollout{t: t, c: c, ns: c.namespace(t)}
	r.create(3, "web:v1")
	r.waitRolledOut(90 * time.Second)
	s := startAs(t, c.cp.AdminKubeconfig(), "pods", "-n", r.ns, "--handler", "--queue", "--queue-key=owner", "--reconcile-time=20ms", "-o", "json")
	if !s.waitFor(func(l string) bool { return strings.Contains(l, `"type":"Reconcile"`) }, 30*time.Second) {
		t.Fatalf("no reconcile of the initial list; lines:\n%s", strings.Join(s.seen, "\n"))
	}
	r.setImage("web:v2")
	r.waitRolledOut(90 * time.Second)
	s.waitFor(func(string) bool { return false }, 2*time.Second) // the last calls and their reconciles
	s.stop()
	for l := range s.lines {
		s.seen = append(s.seen, l)
	}
	var calls, folded int
	replicaSets := map[string]bool{}
	for _, l := range s.seen {
		var rec struct {
			Type, Kind, Name string
			Calls            int
		}
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatalf("not JSON: %q", l)
		}
		switch rec.Type {
		case "OnAdd", "OnUpdate", "OnDelete":
			calls++
		case "Reconcile":
			if rec.Kind != "ReplicaSet" {
				t.Errorf("a reconcile of %s %s, not of a ReplicaSet", rec.Kind, rec.Name)
			}
			replicaSets[rec.Name] = true
			folded += rec.Calls
		}
	}
	if len(replicaSets) != 2 || folded != calls {
		t.Fatalf("%d calls, %d folded into reconciles of %v; lines:\n%s", calls, folded, replicaSets, strings.Join(s.seen, "\n"))
	}
	t.Logf("%d handler calls of Pods, reconciles of ReplicaSets %v", calls, replicaSets)
}

// TestBusyHandlerTree: --handler keeps --tree, --health and --until
// working: a Deployment created while the stream waits for it, followed
// as handler calls until it is Current, its tree's members' calls among
// them.
func TestBusyHandlerTree(t *testing.T) {
	c := busyCluster(t)
	r := &rollout{t: t, c: c, ns: c.namespace(t)}
	s := startAs(t, c.cp.AdminKubeconfig(), "deploy/web", "-n", r.ns, "--tree", "--health", "--handler", "--until=status=Current", "--timeout=2m")
	waitStderrOf(t, s, "waiting for it to be created", 30*time.Second)
	r.create(2, "web:v1")
	for l := range s.lines {
		s.seen = append(s.seen, l)
	}
	if code := s.stop(); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, s.stderr.String())
	}
	var updates, pods int
	for _, l := range s.seen {
		switch {
		case strings.HasPrefix(l, "OnUpdate: deployment.apps web "):
			updates++
		case strings.HasPrefix(l, "OnAdd: pod web-"):
			pods++
		case strings.HasPrefix(l, "OnAdd: deployment.apps web (initial list)"):
			t.Errorf("web was created while the stream ran, not listed: %q", l)
		case strings.HasPrefix(l, "Added:"), strings.HasPrefix(l, "Updated:"), strings.HasPrefix(l, "Replaced:"), strings.HasPrefix(l, "Deleted:"):
			t.Errorf("a delta line in a --handler stream: %q", l)
		}
	}
	if updates == 0 || pods < 2 || !strings.Contains(s.stderr.String(), "condition met") {
		t.Fatalf("%d updates of web, %d Pods added; lines:\n%s\nstderr:\n%s", updates, pods, strings.Join(s.seen, "\n"), s.stderr.String())
	}
}
