//go:build faults

package e2e

// --tree and the rollout recipe on the busy cluster: the controllers make
// the ReplicaSets, Jobs and Pods, kwok runs, completes and crashes them;
// the stream follows what the named object owns, with the owner chain on
// every record, and ends in the server's state of that tree.

import (
	"context"
	"encoding/json"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// treeObject is an object of a tree as the server has it.
type treeObject struct {
	kind, apiVersion string
	meta             metav1.ObjectMeta
}

// treeState lists the namespace's Deployments, ReplicaSets, Pods,
// ConfigMaps, CronJobs and Jobs, and returns those the root (kind, name)
// owns, transitively, and the root itself: namespace/name → object.
func treeState(ctx context.Context, c *cluster, ns, rootKind, rootName string) (map[string]treeObject, error) {
	var all []treeObject
	add := func(kind, apiVersion string, metas ...metav1.ObjectMeta) {
		for _, m := range metas {
			all = append(all, treeObject{kind: kind, apiVersion: apiVersion, meta: m})
		}
	}
	deps, err := c.client.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for _, o := range deps.Items {
		add("Deployment", "apps/v1", o.ObjectMeta)
	}
	rss, err := c.client.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for _, o := range rss.Items {
		add("ReplicaSet", "apps/v1", o.ObjectMeta)
	}
	pods, err := c.client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for _, o := range pods.Items {
		add("Pod", "v1", o.ObjectMeta)
	}
	cms, err := c.client.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for _, o := range cms.Items {
		add("ConfigMap", "v1", o.ObjectMeta)
	}
	cjs, err := c.client.BatchV1().CronJobs(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for _, o := range cjs.Items {
		add("CronJob", "batch/v1", o.ObjectMeta)
	}
	jobs, err := c.client.BatchV1().Jobs(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for _, o := range jobs.Items {
		add("Job", "batch/v1", o.ObjectMeta)
	}
	in := map[types.UID]bool{}
	for _, o := range all {
		if o.kind == rootKind && o.meta.Name == rootName {
			in[o.meta.UID] = true
		}
	}
	for grew := true; grew; {
		grew = false
		for _, o := range all {
			if in[o.meta.UID] {
				continue
			}
			for _, ref := range o.meta.OwnerReferences {
				if in[ref.UID] {
					in[o.meta.UID], grew = true, true
					break
				}
			}
		}
	}
	out := map[string]treeObject{}
	for _, o := range all {
		if in[o.meta.UID] {
			out[o.meta.Namespace+"/"+o.meta.Name] = o
		}
	}
	return out, nil
}

// convergeTree waits until the stream's state equals the root's tree on the
// server, then checks the ledger's rules. It returns the server's tree.
func convergeTree(t *testing.T, c *cluster, d *deltasRun, ns, rootKind, rootName string, limit time.Duration) map[string]treeObject {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		ctx, cancel := context.WithTimeout(bg, 10*time.Second)
		objects, err := treeState(ctx, c, ns, rootKind, rootName)
		cancel()
		if err == nil {
			server := map[string]string{}
			for key, o := range objects {
				server[key] = o.meta.ResourceVersion
			}
			diff := stateDiff(d.led.snapshot(), server)
			if len(diff) == 0 {
				d.checkRules()
				return objects
			}
			if time.Now().After(deadline) {
				t.Fatalf("the stream's state never matched the server's tree of %s %s within %s:\n  %s\n%s",
					rootKind, rootName, limit, strings.Join(diff, "\n  "), d.describe())
			}
		} else if time.Now().After(deadline) {
			t.Fatalf("listing the server: %v", err)
		}
		select {
		case <-d.done:
			t.Fatalf("kubectl deltas exited (%v) before the stream matched the server\n%s", d.err, d.describe())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// wantChain is the owners chain the server's tree gives key: from the
// root down to its direct owner (the controller reference first).
func wantChain(objects map[string]treeObject, byUID map[types.UID]string, key string) []recordOwner {
	var chain []recordOwner
	for o := objects[key]; ; {
		var owner *metav1.OwnerReference
		for i, ref := range o.meta.OwnerReferences {
			if _, ok := byUID[ref.UID]; ok && (owner == nil || ptr.Deref(ref.Controller, false)) {
				owner = &o.meta.OwnerReferences[i]
			}
		}
		if owner == nil {
			break
		}
		chain = append([]recordOwner{{APIVersion: owner.APIVersion, Kind: owner.Kind, Name: owner.Name, UID: string(owner.UID)}}, chain...)
		o = objects[byUID[owner.UID]]
	}
	return chain
}

// checkChains checks the owners chain of the last record of every object
// of the server's tree.
func checkChains(t *testing.T, d *deltasRun, objects map[string]treeObject) {
	t.Helper()
	byUID := map[types.UID]string{}
	for key, o := range objects {
		byUID[o.meta.UID] = key
	}
	last := map[string]deltaRecord{}
	for _, rec := range d.led.recordsFrom(0) {
		last[rec.key()] = rec
	}
	for key := range objects {
		rec, ok := last[key]
		if !ok {
			t.Errorf("%s is in the tree but was never printed", key)
			continue
		}
		want := wantChain(objects, byUID, key)
		if !slices.Equal(rec.Owners, want) {
			t.Errorf("%s %s: owners %+v, want %+v", rec.Kind, key, rec.Owners, want)
		}
	}
}

// TestBusyTree: `deployment/web --tree` through a rollout, a scale and the
// deletion: the Deployment, its ReplicaSets and their Pods, and a
// ConfigMap it owns, each with its owner chain; nothing else of the
// namespace; the stream ends in the server's state of the tree.
func TestBusyTree(t *testing.T) {
	c := busyCluster(t)
	r := &rollout{t: t, c: c, ns: c.namespace(t)}
	const settle = 90 * time.Second
	r.create(2, "web:v1")
	r.waitRolledOut(settle)
	web, err := c.client.AppsV1().Deployments(r.ns).Get(bg, rolloutName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// A ConfigMap web owns (any kind can be owned) and one nothing owns.
	for _, cm := range []*corev1.ConfigMap{
		{ObjectMeta: metav1.ObjectMeta{Name: "web-settings", OwnerReferences: []metav1.OwnerReference{
			{APIVersion: "apps/v1", Kind: "Deployment", Name: web.Name, UID: web.UID},
		}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "loner"}},
	} {
		if _, err := c.client.CoreV1().ConfigMaps(r.ns).Create(bg, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	// The text form, once: every object of the tree, with its path.
	objects, err := treeState(bg, c, r.ns, "Deployment", rolloutName)
	if err != nil {
		t.Fatal(err)
	}
	res := runAs(t, c.cp.AdminKubeconfig(), time.Minute, "deployment/web", "--tree", "-n", r.ns, "--until-synced")
	if res.code != 0 {
		t.Fatalf("--until-synced: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	byUID := map[types.UID]string{}
	for key, o := range objects {
		byUID[o.meta.UID] = key
	}
	var want []string
	for key, o := range objects {
		line := "Replaced: " + typeName(o.kind, o.apiVersion) + " " + o.meta.Name
		if chain := wantChain(objects, byUID, key); len(chain) > 0 {
			var path []string
			for _, l := range chain {
				path = append(path, typeName(l.Kind, l.APIVersion)+" "+l.Name)
			}
			line += " (" + strings.Join(path, " → ") + ")"
		}
		want = append(want, line)
	}
	got := strings.Split(strings.TrimSpace(res.stdout), "\n")
	sort.Strings(got)
	sort.Strings(want)
	if !slices.Equal(got, want) {
		t.Errorf("--tree --until-synced printed\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	if len(want) != 5 {
		t.Errorf("the tree has %d objects, want 5 (web, a ReplicaSet, 2 Pods, a ConfigMap): %v", len(want), want)
	}

	// The stream, through a rollout, a scale and the deletion.
	d := startJSON(t, c.cp.AdminKubeconfig(), "deployment/web", "--tree", "-n", r.ns)
	objects = convergeTree(t, c, d, r.ns, "Deployment", rolloutName, 30*time.Second)
	checkChains(t, d, objects)
	steps := []struct {
		name string
		do   func()
	}{
		{"roll to v2", func() { r.setImage("web:v2") }},
		{"scale up to 3", func() { r.scale(3) }},
	}
	for _, s := range steps {
		began := time.Now()
		s.do()
		r.waitRolledOut(settle)
		objects = convergeTree(t, c, d, r.ns, "Deployment", rolloutName, 30*time.Second)
		checkChains(t, d, objects)
		t.Logf("%s: settled in %s, the stream matches the server's tree of %d objects", s.name, time.Since(began).Round(100*time.Millisecond), len(objects))
	}
	r.remove()
	r.waitGone(settle)
	convergeTree(t, c, d, r.ns, "Deployment", rolloutName, 60*time.Second)

	// Every object's life, from its first record to Deleted; the
	// ReplicaSet and Pods of v2 joined as Added.
	lives := map[string][]string{}
	kinds := map[string]string{}
	for _, rec := range d.led.recordsFrom(0) {
		if rec.Name == "loner" {
			t.Errorf("the stream showed loner, which web does not own: %s", rec.brief())
		}
		lives[rec.key()] = append(lives[rec.key()], rec.Type)
		kinds[rec.key()] = rec.Kind
	}
	count := map[string]int{}
	for key, types := range lives {
		count[kinds[key]]++
		if first := types[0]; first != "Replaced" && first != "Added" || types[len(types)-1] != "Deleted" {
			t.Errorf("%s %s: want Replaced or Added … Deleted, got %s", kinds[key], key, strings.Join(types, " "))
		}
	}
	if count["Deployment"] != 1 || count["ReplicaSet"] < 2 || count["Pod"] < 5 || count["ConfigMap"] != 1 {
		t.Errorf("the stream showed %v; want 1 Deployment, at least 2 ReplicaSets and 5 Pods, 1 ConfigMap\n%s", count, d.describe())
	}
	if errs := d.stderr.String(); errs != "" {
		t.Errorf("stderr is not empty:\n%s", errs)
	}
	if code := d.stop(); code != 130 {
		t.Errorf("exit code after SIGINT = %d, want 130", code)
	}
	noFailure(t, c)
}

// output is every stdout line of a run that has exited: those read, then
// the rest.
func (s *stream) output() []string {
	return append(slices.Clone(s.seen), s.rest()...)
}

// typeName is how text output names a kind: "deployment.apps", "pod".
func typeName(kind, apiVersion string) string {
	name := strings.ToLower(kind)
	if group, _, ok := strings.Cut(apiVersion, "/"); ok {
		name += "." + group
	}
	return name
}

// TestBusyTreeCronJob: CronJob → Job → Pods, the Job made as `kubectl
// create job --from=cronjob/…` makes it, owned by the CronJob; kwok
// completes its Pods. A second run waits with --until for the Job, which
// does not exist when it starts.
func TestBusyTreeCronJob(t *testing.T) {
	c := busyCluster(t)
	ns := c.namespace(t)
	template := batchv1.JobSpec{
		Completions: ptr.To[int32](2),
		Parallelism: ptr.To[int32](2),
		Template: corev1.PodTemplateSpec{
			Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "backup", Image: "backup:v1"}},
			},
		},
	}
	cron, err := c.client.BatchV1().CronJobs(ns).Create(bg, &batchv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Name: "nightly"},
		Spec: batchv1.CronJobSpec{
			Schedule:    "0 3 * * *",
			Suspend:     ptr.To(true),
			JobTemplate: batchv1.JobTemplateSpec{Spec: template},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d := startJSON(t, c.cp.AdminKubeconfig(), "cronjob/nightly", "--tree", "-n", ns)
	d.waitRecord("the CronJob", 30*time.Second, func(rec *deltaRecord) bool { return rec.Name == "nightly" })
	wait := startAs(t, c.cp.AdminKubeconfig(), "job/nightly-manual", "--tree", "-n", ns, "--until=condition=Complete", "--timeout=3m", "-o", "name")

	if _, err := c.client.BatchV1().Jobs(ns).Create(bg, &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "nightly-manual", OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "batch/v1", Kind: "CronJob", Name: cron.Name, UID: cron.UID,
			Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
		}}},
		Spec: template,
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	if code := wait.waitExit(3 * time.Minute); code != 0 {
		t.Fatalf("--until=condition=Complete on the Job: exit %d; stderr: %s", code, wait.stderr.String())
	}
	lines := wait.output()
	pods := 0
	for _, l := range lines {
		if strings.HasPrefix(l, "pod/nightly-manual-") {
			pods++
		}
	}
	if !slices.Contains(lines, "job.batch/nightly-manual") || pods < 2 {
		t.Errorf("the waiting run printed %q: want the Job and its 2 Pods", lines)
	}
	if !strings.Contains(wait.stderr.String(), "job.batch/nightly-manual condition met") {
		t.Errorf("stderr of the waiting run: %q", wait.stderr.String())
	}

	objects := convergeTree(t, c, d, ns, "CronJob", "nightly", 60*time.Second)
	checkChains(t, d, objects)
	deep := 0
	for _, rec := range d.led.recordsFrom(0) {
		if rec.Kind == "Pod" && len(rec.Owners) == 2 && rec.Owners[0].Kind == "CronJob" && rec.Owners[1].Kind == "Job" {
			deep++
		}
	}
	if deep == 0 {
		t.Errorf("no Pod record with the chain CronJob → Job\n%s", d.describe())
	}

	// The CronJob deleted: the garbage collector takes the Job and its
	// Pods, and the stream shows it.
	if err := c.client.BatchV1().CronJobs(ns).Delete(bg, "nightly", metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)}); err != nil {
		t.Fatal(err)
	}
	convergeTree(t, c, d, ns, "CronJob", "nightly", 90*time.Second)
	d.waitFor("the Job's Pods gone from the stream", 90*time.Second, func() bool { return len(d.led.snapshot()) == 0 })
	if errs := d.stderr.String(); errs != "" {
		t.Errorf("stderr is not empty:\n%s", errs)
	}
	noFailure(t, c)
}

// podRecord is what the recipe's test reads of a Pod's JSON record.
type podRecord struct {
	Kind   string          `json:"kind"`
	Name   string          `json:"name"`
	Owners []recordOwner   `json:"owners"`
	Object json.RawMessage `json:"object"`
	pod    corev1.Pod
}

// crashLoop is the recipe's --fail-when: a Pod with a container in
// CrashLoopBackOff.
const crashLoop = `cel=object.kind == "Pod" && object.status.containerStatuses.exists(c, has(c.state.waiting) && c.state.waiting.reason == "CrashLoopBackOff")`

// TestBusyRolloutRecipe is the README's recipe: follow a Deployment and
// what it owns until it is available, failing as soon as a Pod crash-loops
// (kwok's project stage makes Pods labelled deltas.test/crashloop=true do
// so, as a bad image would).
func TestBusyRolloutRecipe(t *testing.T) {
	c := busyCluster(t)
	r := &rollout{t: t, c: c, ns: c.namespace(t)}

	// A new Deployment: started before it exists, done when Available.
	good := startAs(t, c.cp.AdminKubeconfig(), "deployment/web", "-n", r.ns, "--tree",
		"--until=condition=Available", "--fail-when="+crashLoop, "--timeout=3m", "-o", "name")
	good.quiet(time.Second)
	r.create(2, "web:v1")
	if code := good.waitExit(3 * time.Minute); code != 0 {
		t.Fatalf("rollout of a good image: exit %d; stderr: %s", code, good.stderr.String())
	}
	lines := good.output()
	if !slices.Contains(lines, "deployment.apps/web") || !slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, "replicaset.apps/web-") }) ||
		!slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, "pod/web-") }) {
		t.Errorf("the good rollout printed %q: want the Deployment, its ReplicaSet and Pods", lines)
	}
	if !strings.Contains(good.stderr.String(), "deployment.apps/web condition met") {
		t.Errorf("stderr: %q", good.stderr.String())
	}
	r.waitRolledOut(90 * time.Second)

	// A bad image: its Pods crash-loop, the rollout stalls, --fail-when
	// ends the wait with exit 2, the crash-looping Pod printed.
	r.patch(`{"spec":{"template":{"metadata":{"labels":{"deltas.test/crashloop":"true"}},"spec":{"containers":[{"name":"web","image":"web:broken"}]}}}}`)
	rolledOut := `cel=object.status.observedGeneration == object.metadata.generation && object.status.conditions.exists(c, c.type == "Progressing" && c.reason == "NewReplicaSetAvailable")`
	bad := startAs(t, c.cp.AdminKubeconfig(), "deployment/web", "-n", r.ns, "--tree",
		"--until="+rolledOut, "--fail-when="+crashLoop, "--timeout=3m", "-o", "json")
	code := bad.waitExit(3 * time.Minute)
	if code != 2 {
		t.Fatalf("rollout of a crashing image: exit %d, want 2; stderr: %s", code, bad.stderr.String())
	}
	lines = bad.output()
	// The Pod named on stderr was printed, crash-looping, with its chain.
	_, after, ok := strings.Cut(bad.stderr.String(), "error: pod/")
	name, _, _ := strings.Cut(after, " matched --fail-when=")
	if !ok || name == "" || strings.Contains(name, "\n") {
		t.Fatalf("stderr does not name the Pod that matched --fail-when: %q", bad.stderr.String())
	}
	var last *podRecord
	for _, l := range lines {
		var rec podRecord
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		if rec.Kind == "Pod" && rec.Name == name {
			if err := json.Unmarshal(rec.Object, &rec.pod); err != nil {
				t.Fatalf("the object of %s is not a Pod: %v", name, err)
			}
			last = &rec
		}
	}
	if last == nil {
		t.Fatalf("the Pod %s that matched --fail-when was not printed:\n%s", name, strings.Join(lines, "\n"))
	}
	statuses := last.pod.Status.ContainerStatuses
	crashing := len(statuses) > 0 && statuses[0].State.Waiting != nil && statuses[0].State.Waiting.Reason == "CrashLoopBackOff"
	if !crashing || len(last.Owners) != 2 || last.Owners[0].Name != "web" || last.Owners[1].Kind != "ReplicaSet" {
		t.Errorf("the last record of %s is not a crash-looping Pod of web's ReplicaSet: %+v", name, last)
	}
	noFailure(t, c)
}
