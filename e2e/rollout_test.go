//go:build faults

package e2e

// Rollouts on the busy cluster (kube-controller-manager, kube-scheduler and
// kwok's simulated nodes): the test only writes the Deployment; the
// ReplicaSets and Pods, their scheduling, their status and their deletion
// are the controllers' writes. The stream is checked with the ledger at
// every point where the cluster has settled: applied per object it equals
// what the server lists, and no ledger rule is broken.
//
// Both tests share one busy cluster (busyCluster) and must not run in
// parallel: the second kills its kube-apiserver.

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	"github.com/kubectl-deltas/kubectl-deltas/test/controlplane"
)

// busyNodes is the number of simulated nodes of the busy cluster.
const busyNodes = 3

// rolloutTypes is what the rollout tests watch.
const rolloutTypes = "deployments,replicasets,pods"

// busyCluster returns the package's busy cluster, starting it on first use;
// TestMain's cleanup stops it.
func busyCluster(t *testing.T) *cluster {
	t.Helper()
	testEnv.busyOnce.Do(func() {
		ctx, cancel := context.WithTimeout(bg, 3*time.Minute)
		defer cancel()
		began := time.Now()
		testEnv.busy, testEnv.busyErr = controlplane.Start(ctx, controlplane.Options{Nodes: busyNodes})
		if testEnv.busyErr == nil {
			t.Logf("busy cluster %s with %d simulated nodes ready in %s", testEnv.busy.Server(), busyNodes, time.Since(began).Round(100*time.Millisecond))
		}
	})
	if testEnv.busyErr != nil {
		t.Fatalf("starting the busy cluster: %v", testEnv.busyErr)
	}
	config, err := clientcmd.BuildConfigFromFlags("", testEnv.busy.AdminKubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	config.QPS, config.Burst = 200, 400
	return &cluster{cp: testEnv.busy, client: kubernetes.NewForConfigOrDie(config)}
}

// rollout drives one Deployment, web, in its own namespace.
type rollout struct {
	t  *testing.T
	c  *cluster
	ns string
	// minReadySeconds slows a rollout down: a new Pod counts as available
	// only after that long, and the next step waits for it. With kwok's
	// instant Pods a rollout otherwise takes a fraction of a second.
	minReadySeconds int32
}

const rolloutName = "web"

// create creates web with replicas Pods of image.
func (r *rollout) create(replicas int32, image string) {
	r.t.Helper()
	labels := map[string]string{"app": rolloutName}
	_, err := r.c.client.AppsV1().Deployments(r.ns).Create(bg, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: rolloutName},
		Spec: appsv1.DeploymentSpec{
			Replicas:        ptr.To(replicas),
			MinReadySeconds: r.minReadySeconds,
			Selector:        &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: image}}},
			},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		r.t.Fatalf("creating deployment %s: %v", rolloutName, err)
	}
}

// patch applies a strategic merge patch to web.
func (r *rollout) patch(patch string) {
	r.t.Helper()
	if _, err := r.c.client.AppsV1().Deployments(r.ns).Patch(bg, rolloutName, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		r.t.Fatalf("patching deployment %s with %s: %v", rolloutName, patch, err)
	}
}

func (r *rollout) setImage(image string) {
	r.t.Helper()
	r.patch(fmt.Sprintf(`{"spec":{"template":{"spec":{"containers":[{"name":"web","image":%q}]}}}}`, image))
}

func (r *rollout) scale(replicas int32) {
	r.t.Helper()
	r.patch(fmt.Sprintf(`{"spec":{"replicas":%d}}`, replicas))
}

// remove deletes web; the garbage collector deletes what it owns.
func (r *rollout) remove() {
	r.t.Helper()
	if err := r.c.client.AppsV1().Deployments(r.ns).Delete(bg, rolloutName, metav1.DeleteOptions{}); err != nil {
		r.t.Fatalf("deleting deployment %s: %v", rolloutName, err)
	}
}

// until polls cond until it holds, failing the test after limit with the
// last thing cond said.
func (r *rollout) until(what string, limit time.Duration, cond func(ctx context.Context) (bool, string)) {
	r.t.Helper()
	deadline := time.Now().Add(limit)
	for {
		ctx, cancel := context.WithTimeout(bg, 10*time.Second)
		ok, state := cond(ctx)
		cancel()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("waiting for %s: not within %s; last: %s\nlogs:\n%s", what, limit, state, r.c.cp.LogTail(15))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitRolledOut waits until web's controller has acted on its latest spec,
// exactly the wanted number of up-to-date Pods run on simulated nodes, and
// no other Pod is left, as `kubectl rollout status` and a little more.
func (r *rollout) waitRolledOut(limit time.Duration) {
	r.t.Helper()
	r.until("deployment web rolled out", limit, func(ctx context.Context) (bool, string) {
		d, err := r.c.client.AppsV1().Deployments(r.ns).Get(ctx, rolloutName, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		want, s := ptr.Deref(d.Spec.Replicas, 1), d.Status
		state := fmt.Sprintf("generation %d observed %d, replicas %d updated %d available %d, want %d", d.Generation, s.ObservedGeneration, s.Replicas, s.UpdatedReplicas, s.AvailableReplicas, want)
		if s.ObservedGeneration < d.Generation || s.UpdatedReplicas != want || s.AvailableReplicas != want || s.Replicas != want {
			return false, state
		}
		pods, err := r.c.client.CoreV1().Pods(r.ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		running := 0
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil && slices.Contains(r.c.cp.Nodes(), p.Spec.NodeName) {
				running++
			}
		}
		return running == int(want) && len(pods.Items) == int(want), fmt.Sprintf("%s; %d Pods, %d Running", state, len(pods.Items), running)
	})
}

// waitGone waits until web and everything it owned are gone.
func (r *rollout) waitGone(limit time.Duration) {
	r.t.Helper()
	r.until("deployment web and what it owned gone", limit, func(ctx context.Context) (bool, string) {
		state, err := r.state(ctx)
		if err != nil {
			return false, err.Error()
		}
		return len(state) == 0, fmt.Sprintf("%d objects left: %v", len(state), state)
	})
}

// state lists the Deployments, ReplicaSets and Pods of the namespace as
// namespace/name → resourceVersion, the ledger's keys. Their names cannot
// collide: ReplicaSets and Pods are named after their owners plus a suffix.
func (r *rollout) state(ctx context.Context) (map[string]string, error) {
	deps, err := r.c.client.AppsV1().Deployments(r.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	rss, err := r.c.client.AppsV1().ReplicaSets(r.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	pods, err := r.c.client.CoreV1().Pods(r.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	var metas []metav1.ObjectMeta
	for _, o := range deps.Items {
		metas = append(metas, o.ObjectMeta)
	}
	for _, o := range rss.Items {
		metas = append(metas, o.ObjectMeta)
	}
	for _, o := range pods.Items {
		metas = append(metas, o.ObjectMeta)
	}
	out := make(map[string]string, len(metas))
	for _, m := range metas {
		key := m.Namespace + "/" + m.Name
		if _, dup := out[key]; dup {
			return nil, fmt.Errorf("two objects named %s: the ledger's keys would collide", key)
		}
		out[key] = m.ResourceVersion
	}
	return out, nil
}

// converge waits until the stream's state equals the server's list of the
// namespace's Deployments, ReplicaSets and Pods, then checks the ledger's
// rules. It returns the server's state.
func (r *rollout) converge(d *deltasRun, limit time.Duration) map[string]string {
	r.t.Helper()
	deadline := time.Now().Add(limit)
	for {
		ctx, cancel := context.WithTimeout(bg, 10*time.Second)
		server, err := r.state(ctx)
		cancel()
		if err == nil {
			diff := stateDiff(d.led.snapshot(), server)
			if len(diff) == 0 {
				d.checkRules()
				return server
			}
			if time.Now().After(deadline) {
				r.t.Fatalf("the stream's state never matched the server's within %s:\n  %s\nledger rules broken:\n  %s\n%s",
					limit, strings.Join(diff, "\n  "), strings.Join(d.led.violations(), "\n  "), d.describe())
			}
		} else if time.Now().After(deadline) {
			r.t.Fatalf("listing the server: %v", err)
		}
		select {
		case <-d.done:
			r.t.Fatalf("kubectl deltas exited (%v) before the stream matched the server\n%s", d.err, d.describe())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// waitWatchingPods proves the run's watch of Pods is open: it creates probe
// Pods bound to a node that does not exist (so neither the scheduler nor
// kwok touch them) until one is printed as Added, then deletes it and waits
// for its Deleted.
func (r *rollout) waitWatchingPods(d *deltasRun, limit time.Duration) {
	r.t.Helper()
	pods := r.c.client.CoreV1().Pods(r.ns)
	deadline := time.Now().Add(limit)
	for {
		name := fmt.Sprintf("probe-%d", probeSeq.Add(1))
		key := r.ns + "/" + name
		_, err := pods.Create(bg, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.PodSpec{
				NodeName:   "e2e-nowhere",
				Containers: []corev1.Container{{Name: "probe", Image: "probe"}},
			},
		}, metav1.CreateOptions{})
		if err != nil {
			r.t.Fatalf("creating probe Pod: %v", err)
		}
		seen := func(typ string) func() bool {
			return func() bool {
				return d.led.has(func(rec *deltaRecord) bool { return rec.key() == key && rec.Type == typ })
			}
		}
		shown := false
		for end := time.Now().Add(3 * time.Second); time.Now().Before(end) && !shown; time.Sleep(50 * time.Millisecond) {
			shown = seen("Added")()
		}
		if err := pods.Delete(bg, name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil && !apierrors.IsNotFound(err) {
			r.t.Fatalf("deleting probe Pod: %v", err)
		}
		if shown || d.led.has(func(rec *deltaRecord) bool { return rec.key() == key }) {
			d.waitFor("the probe's Deleted", 30*time.Second, seen("Deleted"))
			if shown {
				return
			}
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("the stream never showed a probe Pod as Added\n%s", d.describe())
		}
	}
}

// podView is what the lifecycle checks read of a Pod record's object.
type podView struct {
	Spec struct {
		NodeName string `json:"nodeName"`
	} `json:"spec"`
	Status struct {
		Phase string `json:"phase"`
	} `json:"status"`
}

// checkLifecycles checks what the stream told about the objects the
// controllers made: web shown Added, Updated and Deleted; at least
// wantReplicaSets ReplicaSets and wantPods Pods shown from Added to
// Deleted; every Pod shown bound to a simulated node and Running (kwok's
// write) before it went.
func (r *rollout) checkLifecycles(d *deltasRun, wantReplicaSets, wantPods int) {
	r.t.Helper()
	type life struct {
		kind           string
		types          []string
		running, bound bool
	}
	lives := map[string]*life{}
	var order []string
	for _, rec := range d.led.recordsFrom(0) {
		if strings.HasPrefix(rec.Name, "probe-") {
			continue
		}
		l := lives[rec.key()]
		if l == nil {
			l = &life{kind: rec.Kind}
			lives[rec.key()] = l
			order = append(order, rec.key())
		}
		l.types = append(l.types, rec.Type)
		if rec.Kind == "Pod" && len(rec.Object) > 0 && string(rec.Object) != "null" {
			var p podView
			if err := json.Unmarshal(rec.Object, &p); err != nil {
				r.t.Errorf("record of %s: object is not a Pod: %v", rec.key(), err)
				continue
			}
			if slices.Contains(r.c.cp.Nodes(), p.Spec.NodeName) {
				l.bound = true
				l.running = l.running || p.Status.Phase == string(corev1.PodRunning)
			}
		}
	}
	count := map[string]int{}
	for _, key := range order {
		l := lives[key]
		count[l.kind]++
		seq := strings.Join(l.types, " ")
		if l.types[0] != "Added" || l.types[len(l.types)-1] != "Deleted" {
			r.t.Errorf("%s %s: want Added … Deleted, got %s", l.kind, key, seq)
		}
		switch l.kind {
		case "Deployment":
			if !slices.Contains(l.types, "Updated") {
				r.t.Errorf("deployment %s: no Updated (the controller's status writes): %s", key, seq)
			}
		case "Pod":
			if !l.bound || !l.running {
				r.t.Errorf("pod %s: shown bound to a simulated node %v, Running %v; want both: %s", key, l.bound, l.running, seq)
			}
		}
	}
	if count["Deployment"] != 1 || count["ReplicaSet"] < wantReplicaSets || count["Pod"] < wantPods {
		r.t.Errorf("the stream showed %d Deployments, %d ReplicaSets and %d Pods; want 1, at least %d and at least %d\n%s",
			count["Deployment"], count["ReplicaSet"], count["Pod"], wantReplicaSets, wantPods, d.describe())
	}
	r.t.Logf("the stream showed %d records: %d ReplicaSets and %d Pods from Added to Deleted", d.led.count(), count["ReplicaSet"], count["Pod"])
}

// TestBusyRollout: a Deployment is created, rolled to a new image, scaled
// up and down and deleted, while kubectl deltas watches deployments,
// replicasets and pods. The test writes only the Deployment; the stream
// follows the controllers' writes exactly, at every settled point.
func TestBusyRollout(t *testing.T) {
	c := busyCluster(t)
	r := &rollout{t: t, c: c, ns: c.namespace(t)}
	d := startJSON(t, c.cp.AdminKubeconfig(), rolloutTypes, "-n", r.ns)
	r.waitWatchingPods(d, 30*time.Second)

	const settle = 90 * time.Second
	steps := []struct {
		name string
		do   func()
	}{
		{"create 3 replicas of v1", func() { r.create(3, "web:v1") }},
		{"roll to v2", func() { r.setImage("web:v2") }},
		{"scale up to 5", func() { r.scale(5) }},
		{"scale down to 2", func() { r.scale(2) }},
	}
	for _, s := range steps {
		began := time.Now()
		s.do()
		r.waitRolledOut(settle)
		server := r.converge(d, 30*time.Second)
		t.Logf("%s: settled in %s, the stream matches the server's %d objects", s.name, time.Since(began).Round(100*time.Millisecond), len(server))
	}
	r.remove()
	r.waitGone(settle)
	r.converge(d, 30*time.Second)

	// 3 Pods of v1, 3 of v2, 2 more when scaled up: at least 8.
	r.checkLifecycles(d, 2, 8)
	if errs := d.stderr.String(); errs != "" {
		t.Errorf("stderr is not empty:\n%s", errs)
	}
	if code := d.stop(); code != 130 {
		t.Errorf("exit code after SIGINT = %d, want 130", code)
	}
	noFailure(t, c)
}

// TestBusyRolloutAPIServerKilled: kube-apiserver is killed in the middle
// of a rollout and restarted on the same etcd; the controllers, the
// scheduler, kwok and kubectl deltas all reconnect. The stream ends in the
// server's state, with exactly one warning and one "connection restored".
func TestBusyRolloutAPIServerKilled(t *testing.T) {
	c := busyCluster(t)
	r := &rollout{t: t, c: c, ns: c.namespace(t), minReadySeconds: 2}
	d := startJSON(t, c.cp.AdminKubeconfig(), rolloutTypes, "-n", r.ns)
	r.waitWatchingPods(d, 30*time.Second)

	const settle = 2 * time.Minute
	r.create(4, "web:v1")
	r.waitRolledOut(settle)
	r.converge(d, 30*time.Second)

	// Roll to v2 and kill the server as soon as the stream shows the new
	// ReplicaSet's first Pod: the rollout is under way.
	before := d.led.count()
	r.setImage("web:v2")
	rs := func() []string {
		var out []string
		for _, rec := range d.led.recordsFrom(0) {
			if rec.Kind == "ReplicaSet" && rec.Type == "Added" {
				out = append(out, rec.Name)
			}
		}
		return out
	}
	d.waitFor("the new ReplicaSet's first Pod", 60*time.Second, func() bool {
		names := rs()
		if len(names) < 2 {
			return false
		}
		newRS := names[len(names)-1]
		for _, rec := range d.led.recordsFrom(before) {
			if rec.Kind == "Pod" && rec.Type == "Added" && strings.HasPrefix(rec.Name, newRS+"-") {
				return true
			}
		}
		return false
	})
	// Mid-rollout: the old and the new ReplicaSet both want Pods.
	rsList, err := c.client.AppsV1().ReplicaSets(r.ns).List(bg, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var active []string
	for _, rs := range rsList.Items {
		if n := ptr.Deref(rs.Spec.Replicas, 0); n > 0 {
			active = append(active, fmt.Sprintf("%s wants %d (%d available)", rs.Name, n, rs.Status.AvailableReplicas))
		}
	}
	if len(active) < 2 {
		t.Fatalf("the rollout was over before the kill (%v): the test would not test a kill mid-rollout", active)
	}
	t.Logf("killing kube-apiserver mid-rollout: %s", strings.Join(active, ", "))
	if err := c.cp.StopAPIServer(); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	d.waitStderr("warning: ", 60*time.Second)
	t.Logf("warning after %s: %s", time.Since(killed).Round(100*time.Millisecond), d.stderrLines("warning: "))

	ctx, cancel := context.WithTimeout(bg, 2*time.Minute)
	err = c.cp.StartAPIServer(ctx)
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	restarted := time.Now()
	d.waitStderr("info: connection restored after ", 60*time.Second)
	t.Logf("down %s, restored %s after the restart", restarted.Sub(killed).Round(100*time.Millisecond), time.Since(restarted).Round(100*time.Millisecond))

	// The controllers finish the rollout on their own.
	r.waitRolledOut(settle)
	r.converge(d, 60*time.Second)
	r.scale(2)
	r.waitRolledOut(settle)
	r.converge(d, 30*time.Second)
	r.remove()
	r.waitGone(settle)
	r.converge(d, 60*time.Second)

	t.Logf("%d records, %d from relists", d.led.count(), d.led.relistCount())
	if d.led.relistCount() == 0 {
		// Without a relist every object's life is in the stream from
		// Added to Deleted: 4 Pods of v1, 4 of v2.
		r.checkLifecycles(d, 2, 8)
	}
	d.checkOutages(1)
	if code := d.stop(); code != 130 {
		t.Errorf("exit code after SIGINT = %d, want 130", code)
	}
	noStackTrace(t, d.stderr.String())
	noFailure(t, c)
}

// noFailure fails the test if a process of the cluster died on its own.
func noFailure(t *testing.T, c *cluster) {
	t.Helper()
	select {
	case err := <-c.cp.Failed():
		t.Errorf("%v\n%s", err, c.cp.LogTail(30))
	default:
	}
}
