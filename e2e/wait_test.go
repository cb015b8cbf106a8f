package e2e

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// waitExit waits for the plugin to exit by itself and returns its code.
func (s *stream) waitExit(limit time.Duration) int {
	s.t.Helper()
	select {
	case <-s.done:
	case <-time.After(limit):
		s.t.Fatalf("kubectl deltas did not exit within %s; stderr: %s", limit, s.stderr.String())
	}
	if exit, ok := s.err.(*exec.ExitError); ok {
		return exit.ExitCode()
	}
	if s.err != nil {
		s.t.Fatalf("kubectl deltas: %v", s.err)
	}
	return 0
}

// rest returns the stdout lines not read yet, once the plugin has exited.
func (s *stream) rest() []string {
	var out []string
	for line := range s.lines {
		out = append(out, line)
	}
	return out
}

func TestUntil(t *testing.T) {
	ns := newNamespace(t)

	t.Run("delete of a named object", func(t *testing.T) {
		createCM(t, ns, "doomed", nil, nil)
		s := start(t, "cm/doomed", "-n", ns, "--until=delete")
		s.expect("Replaced: doomed")
		must(t, testEnv.client.CoreV1().ConfigMaps(ns).Delete(bg, "doomed", metav1.DeleteOptions{}))
		if code := s.waitExit(30 * time.Second); code != 0 {
			t.Fatalf("exit %d; stderr: %s", code, s.stderr.String())
		}
		if got := s.rest(); strings.Join(got, "\n") != "Deleted: doomed" {
			t.Errorf("stdout after the list: %q", got)
		}
		if !strings.Contains(s.stderr.String(), "configmap/doomed condition met") {
			t.Errorf("stderr: %q", s.stderr.String())
		}
	})

	t.Run("an object created later", func(t *testing.T) {
		s := start(t, "cm/later", "-n", ns, "--until=jsonpath={.data.k}=v2", "-o", "name")
		s.quiet(time.Second)
		createCM(t, ns, "later", nil, map[string]string{"k": "v1"})
		s.expect("configmap/later")
		updateCM(t, ns, "later", "k", "v2")
		if code := s.waitExit(30 * time.Second); code != 0 {
			t.Fatalf("exit %d; stderr: %s", code, s.stderr.String())
		}
		if got := s.rest(); strings.Join(got, "\n") != "configmap/later" {
			t.Errorf("stdout: %q", got)
		}
	})

	t.Run("condition already met", func(t *testing.T) {
		createDeployment(t, ns, "ready")
		d, err := testEnv.client.AppsV1().Deployments(ns).Get(bg, "ready", metav1.GetOptions{})
		must(t, err)
		d.Status.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Status: "True", Reason: "Test"}}
		_, err = testEnv.client.AppsV1().Deployments(ns).UpdateStatus(bg, d, metav1.UpdateOptions{})
		must(t, err)
		r := run(t, time.Minute, "deployment/ready", "-n", ns, "--until=condition=Available", "-o", "name")
		if r.code != 0 || r.stdout != "deployment.apps/ready\n" || !strings.Contains(r.stderr, "deployment.apps/ready condition met") {
			t.Errorf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
		}
	})

	t.Run("fail-when", func(t *testing.T) {
		createCM(t, ns, "job", nil, map[string]string{"state": "running"})
		s := start(t, "cm/job", "-n", ns, "--until=jsonpath={.data.state}=done", "--fail-when=jsonpath={.data.state}=broken")
		s.expect("Replaced: job")
		updateCM(t, ns, "job", "state", "broken")
		if code := s.waitExit(30 * time.Second); code != 2 {
			t.Fatalf("exit %d, want 2; stderr: %s", code, s.stderr.String())
		}
		if got := s.rest(); strings.Join(got, "\n") != "Updated: job" {
			t.Errorf("stdout: %q, want the delta that failed", got)
		}
		if !strings.HasPrefix(s.stderr.String(), "error: configmap/job matched --fail-when=jsonpath={.data.state}=broken") {
			t.Errorf("stderr: %q", s.stderr.String())
		}
	})

	t.Run("quiet", func(t *testing.T) {
		createCM(t, ns, "hushed", nil, nil)
		r := run(t, time.Minute, "cm/hushed", "-n", ns, "--until=create", "-q")
		if r.code != 0 || r.stdout != "" || r.stderr != "configmap/hushed condition met\n" {
			t.Errorf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
		}
	})

	t.Run("timeout", func(t *testing.T) {
		createCM(t, ns, "forever", nil, nil)
		r := run(t, time.Minute, "cm/forever", "-n", ns, "--until=delete", "--timeout=2s")
		if r.code != 1 || r.stdout != "Replaced: forever\n" || r.stderr != "error: timed out waiting for the condition on configmaps/forever\n  configmap/forever: Current: Resource is always ready\n" {
			t.Errorf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
		}
		// Without a condition a timeout is a normal end.
		if r := run(t, time.Minute, "cm/forever", "-n", ns, "--timeout=1s"); r.code != 0 {
			t.Errorf("plain --timeout: exit %d", r.code)
		}
	})

	t.Run("cel condition", func(t *testing.T) {
		createCM(t, ns, "counter", nil, map[string]string{"n": "1"})
		s := start(t, "cm/counter", "-n", ns, `--until=cel='int(object.data.n) >= 3 && kind == "ConfigMap"'`, "-o", "name")
		s.expect("configmap/counter")
		updateCM(t, ns, "counter", "n", "2")
		s.expect("configmap/counter")
		updateCM(t, ns, "counter", "n", "3")
		if code := s.waitExit(30 * time.Second); code != 0 {
			t.Fatalf("exit %d; stderr: %s", code, s.stderr.String())
		}
	})

	t.Run("bad input", func(t *testing.T) {
		for _, tc := range []struct {
			args []string
			want string
		}{
			{[]string{"cm", "--until=ready"}, `error: invalid --until "ready": must be delete, create, condition=NAME[=VALUE], jsonpath='{PATH}'[=VALUE], cel='EXPR' or status=STATUS`},
			{[]string{"cm", "--until=cel='object.('"}, "error: --until:1:8: Syntax error"},
			{[]string{"cm", "--where=name"}, "error: --where:1:1: the expression yields string, not bool"},
			{[]string{"cm", "--fail-when=jsonpath={.a[}"}, `error: invalid --fail-when "jsonpath={.a[}"`},
			{[]string{"cm", "--until=delete", "--until-synced"}, "error: --until-synced cannot be used with --until"},
			{[]string{"cm", "-q"}, "error: --quiet only applies when waiting for a condition"},
			{[]string{"deployments", "--tree"}, "error: --tree follows what given objects own: name them (deployments/NAME) or select them with -l/--selector"},
			{[]string{"--all-types", "--tree", "-l", "app=web"}, "error: --tree cannot be used with --all-types"},
			{[]string{"pods", "--fail-after=-1s", "--fail-when=status=Failed"}, "error: invalid --fail-after -1s: must be 0 (Failed at first sight) or more"},
			{[]string{"pods", "--fail-after=10s"}, "error: --fail-after says when a transient failure counts as Failed, for status= conditions"},
			{[]string{"pods", "--fail-after=soon"}, `error: invalid argument "soon" for "--fail-after" flag`},
			{[]string{"pods", "--stable-for=5s"}, "error: --stable-for says how long --until must hold: add --until=COND"},
			{[]string{"pods", "--until=delete", "--stable-for=-5s"}, "error: invalid --stable-for -5s"},
			{[]string{"pods", "--until=delete", "--stable-for=later"}, `error: invalid argument "later" for "--stable-for" flag`},
		} {
			r := run(t, time.Minute, tc.args...)
			if r.code != 1 || r.stdout != "" || !strings.HasPrefix(r.stderr, tc.want) {
				t.Errorf("%v: exit %d, stdout %q, stderr %q; want %q", tc.args, r.code, r.stdout, r.stderr, tc.want)
			}
		}
	})
}

func TestWhere(t *testing.T) {
	ns := newNamespace(t)
	createCM(t, ns, "web-a", map[string]string{"tier": "web"}, nil)
	createCM(t, ns, "db-a", map[string]string{"tier": "db"}, nil)
	s := start(t, "cm", "-n", ns, `--where=has(object.metadata.labels) && object.metadata.labels.tier == "web"`)
	s.expect("Replaced: web-a")
	createCM(t, ns, "db-b", map[string]string{"tier": "db"}, nil)
	createCM(t, ns, "web-b", map[string]string{"tier": "web"}, nil)
	s.expect("Added: web-b")
	// Updates seen through oldObject: only changes of data.k.
	s2 := start(t, "cm", "-n", ns, "--watch-only",
		`--where=deltaType == "Updated" && has(object.data) && has(object.data.k) && (!has(oldObject.data) || !has(oldObject.data.k) || object.data.k != oldObject.data.k)`)
	createUntilShown(t, s2, 30*time.Second, func(i int) string {
		updateCM(t, ns, "web-a", "k", fmt.Sprint(i))
		return "Updated: web-a"
	})
	updateCM(t, ns, "db-a", "other", "1")
	updateCM(t, ns, "db-a", "k", "1")
	s2.expect("Updated: db-a")
	updateCM(t, ns, "db-a", "other", "2")
	updateCM(t, ns, "web-a", "k", "changed")
	s2.expect("Updated: web-a")
}

// ownedBy is an ownerReference to a ConfigMap.
func ownedBy(cm *corev1.ConfigMap) []metav1.OwnerReference {
	return []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: cm.Name, UID: cm.UID}}
}

// TestTreeRoots: --tree with several named roots and with a selector, on
// the plain apiserver (no controllers: the test writes the owner
// references): owned objects of any kind, two levels deep, join; an object
// released by its owner leaves with that change.
func TestTreeRoots(t *testing.T) {
	ns := newNamespace(t)
	cms := testEnv.client.CoreV1().ConfigMaps(ns)
	a := createCM(t, ns, "a", map[string]string{"app": "x"}, nil)
	b := createCM(t, ns, "b", map[string]string{"app": "x"}, nil)
	createCM(t, ns, "other", map[string]string{"app": "y"}, nil)
	c, err := cms.Create(bg, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", OwnerReferences: ownedBy(a)}}, metav1.CreateOptions{})
	must(t, err)
	_, err = testEnv.client.CoreV1().Secrets(ns).Create(bg, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s", OwnerReferences: ownedBy(c)}}, metav1.CreateOptions{})
	must(t, err)

	t.Run("selected roots", func(t *testing.T) {
		r := run(t, time.Minute, "cm", "-l", "app=x", "--tree", "-n", ns, "--until-synced")
		got := strings.Split(strings.TrimSpace(r.stdout), "\n")
		slices.Sort(got)
		want := []string{
			"Replaced: configmap a",
			"Replaced: configmap b",
			"Replaced: configmap c (configmap a)",
			"Replaced: secret s (configmap a → configmap c)",
		}
		if r.code != 0 || !slices.Equal(got, want) {
			t.Errorf("exit %d, stdout\n  %s\nwant\n  %s\nstderr: %s", r.code, strings.Join(got, "\n  "), strings.Join(want, "\n  "), r.stderr)
		}
	})

	t.Run("named roots, joining and leaving", func(t *testing.T) {
		s := start(t, "cm/a", "cm/b", "--tree", "-n", ns, "-o", "json")
		for range 4 {
			s.next(30 * time.Second)
		}
		_, err := cms.Create(bg, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "e", OwnerReferences: ownedBy(b)}}, metav1.CreateOptions{})
		must(t, err)
		line := s.next(30 * time.Second)
		var rec struct {
			Type   string `json:"type"`
			Name   string `json:"name"`
			Owners []struct {
				Name string `json:"name"`
				UID  string `json:"uid"`
			} `json:"owners"`
		}
		must(t, json.Unmarshal([]byte(line), &rec))
		if rec.Type != "Added" || rec.Name != "e" || len(rec.Owners) != 1 || rec.Owners[0].Name != "b" || rec.Owners[0].UID != string(b.UID) {
			t.Fatalf("after creating e owned by b: %s", line)
		}
		// c released by a: its last record, then nothing of c or s.
		_, err = cms.Patch(bg, "c", types.JSONPatchType, []byte(`[{"op":"remove","path":"/metadata/ownerReferences"}]`), metav1.PatchOptions{})
		must(t, err)
		must(t, json.Unmarshal([]byte(s.next(30*time.Second)), &rec))
		if rec.Type != "Updated" || rec.Name != "c" || len(rec.Owners) != 1 || rec.Owners[0].Name != "a" {
			t.Fatalf("after c was released: %+v", rec)
		}
		updateCM(t, ns, "c", "k", "v")
		updateCM(t, ns, "other", "k", "v")
		updateCM(t, ns, "e", "k", "v")
		must(t, json.Unmarshal([]byte(s.next(30*time.Second)), &rec))
		if rec.Type != "Updated" || rec.Name != "e" {
			t.Fatalf("after updates of c, other and e, the next record is %+v; want e's update only", rec)
		}
	})
}

// TestVerdictRecord: with -o json a stream stopped by a condition ends
// with one Verdict record — Met, TimedOut, Failed — naming the objects;
// text output keeps stdout as it was.
func TestVerdictRecord(t *testing.T) {
	ns := newNamespace(t)
	createCM(t, ns, "here", nil, nil)
	last := func(out string) map[string]any {
		t.Helper()
		lines := strings.Split(strings.TrimSpace(out), "\n")
		var v map[string]any
		if err := json.Unmarshal([]byte(lines[len(lines)-1]), &v); err != nil {
			t.Fatalf("last line %q: %v", lines[len(lines)-1], err)
		}
		return v
	}
	r := run(t, time.Minute, "cm/here", "-n", ns, "--until=create", "-o", "json")
	v := last(r.stdout)
	objects, _ := v["objects"].([]any)
	if r.code != 0 || v["type"] != "Verdict" || v["outcome"] != "Met" || v["condition"] != "--until=create" || len(objects) != 1 ||
		objects[0].(map[string]any)["name"] != "here" || objects[0].(map[string]any)["kind"] != "ConfigMap" {
		t.Errorf("met: exit %d, verdict %v", r.code, v)
	}
	r = run(t, time.Minute, "cm/absent", "-n", ns, "--until=create", "--timeout=2s", "-o", "json")
	v = last(r.stdout)
	objects, _ = v["objects"].([]any)
	if r.code != 1 || v["outcome"] != "TimedOut" || len(objects) != 1 || objects[0].(map[string]any)["name"] != "absent" {
		t.Errorf("timed out: exit %d, stdout %q", r.code, r.stdout)
	}
	r = run(t, time.Minute, "cm/here", "-n", ns, "--fail-when=create", "-o", "json")
	if v = last(r.stdout); r.code != 2 || v["outcome"] != "Failed" || v["condition"] != "--fail-when=create" {
		t.Errorf("failed: exit %d, stdout %q", r.code, r.stdout)
	}
	r = run(t, time.Minute, "cm/here", "-n", ns, "--until=create")
	if r.code != 0 || r.stdout != "Replaced: here\n" {
		t.Errorf("text: exit %d, stdout %q", r.code, r.stdout)
	}
	r = run(t, time.Minute, "cm/here", "-n", ns, "--until=create", "-o", "json", "-q")
	if r.code != 0 || r.stdout != "" {
		t.Errorf("-q: exit %d, stdout %q", r.code, r.stdout)
	}
}
