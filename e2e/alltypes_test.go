package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
)

// Watching many types at once: categories (all, and one a CRD declares),
// --all-types with its exclusions, and partial access.

// typedRecord is the part of a JSON record these tests read.
type typedRecord struct {
	Type       string `json:"type"`
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace"`
	Name       string `json:"name"`
}

// createUntilShown calls create(0), create(1), … until the line it
// returns shows on s: the watch may open after the first creates, which
// are then listed, not printed. It fails after limit.
func createUntilShown(t *testing.T, s *stream, limit time.Duration, create func(i int) (line string)) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for i := 0; ; i++ {
		want := create(i)
		if s.waitFor(func(line string) bool { return line == want }, 3*time.Second) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%q never showed; stderr: %s", want, s.stderr.String())
		}
	}
}

// records decodes -o json output.
func records(t *testing.T, stdout string) []typedRecord {
	t.Helper()
	var out []typedRecord
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		if line == "" {
			continue
		}
		var r typedRecord
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("not a JSON record: %q: %v", line, err)
		}
		out = append(out, r)
	}
	return out
}

// kindsIn counts records per "Kind namespace/name", failing on a
// duplicate: every object is listed once.
func kindsIn(t *testing.T, recs []typedRecord) map[string]bool {
	t.Helper()
	seen := map[string]bool{}
	for _, r := range recs {
		key := fmt.Sprintf("%s %s %s/%s", r.APIVersion, r.Kind, r.Namespace, r.Name)
		if seen[key] {
			t.Errorf("%s printed twice", key)
		}
		seen[key] = true
	}
	return seen
}

func createDeployment(t *testing.T, ns, name string) {
	t.Helper()
	labels := map[string]string{"app": name}
	replicas := int32(1)
	_, err := testEnv.client.AppsV1().Deployments(ns).Create(bg, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
			},
		},
	}, metav1.CreateOptions{})
	must(t, err)
}

func createService(t *testing.T, ns, name string) {
	t.Helper()
	_, err := testEnv.client.CoreV1().Services(ns).Create(bg, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}},
	}, metav1.CreateOptions{})
	must(t, err)
}

func TestCategoryAll(t *testing.T) {
	ns := newNamespace(t)
	createDeployment(t, ns, "web")
	createService(t, ns, "svc")
	createCM(t, ns, "settings", nil, nil)
	r := run(t, time.Minute, "all", "-n", ns, "--until-synced")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	got := strings.Split(strings.TrimSpace(r.stdout), "\n")
	want := map[string]bool{"Replaced: deployment.apps web": true, "Replaced: service svc": true}
	for _, line := range got {
		if strings.Contains(line, "configmap") {
			t.Errorf("all printed a ConfigMap: %q", line)
		}
		delete(want, line)
	}
	if len(want) > 0 {
		t.Errorf("missing %v in:\n%s", want, r.stdout)
	}

	// A category mixes with types; the types are printed as usual.
	r = run(t, time.Minute, "all,configmaps", "-n", ns, "--until-synced", "-o", "name")
	if r.code != 0 || !strings.Contains(r.stdout, "configmap/settings\n") || !strings.Contains(r.stdout, "deployment.apps/web\n") {
		t.Errorf("all,configmaps: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

// ensureGizmoCRD creates gizmos.e2e.example.com, in the category e2etoys,
// once for the package.
func ensureGizmoCRD(t *testing.T) dynamic.NamespaceableResourceInterface {
	t.Helper()
	gvr := schema.GroupVersionResource{Group: "e2e.example.com", Version: "v1", Resource: "gizmos"}
	gizmoOnce.Do(func() {
		gizmoErr = createCRD(gvr, "Gizmo", "Namespaced", []string{"e2etoys"})
	})
	if gizmoErr != nil {
		t.Fatalf("gizmo CRD: %v", gizmoErr)
	}
	return testEnv.dynamic.Resource(gvr)
}

var (
	gizmoOnce sync.Once
	gizmoErr  error
)

// createCRD creates a CRD for gvr and waits until it is served.
func createCRD(gvr schema.GroupVersionResource, kind, scope string, categories []string, shortNames ...string) error {
	crdGVR := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	cats := make([]any, 0, len(categories))
	for _, c := range categories {
		cats = append(cats, c)
	}
	shorts := make([]any, 0, len(shortNames))
	for _, n := range shortNames {
		shorts = append(shorts, n)
	}
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]any{"name": gvr.Resource + "." + gvr.Group},
		"spec": map[string]any{
			"group": gvr.Group,
			"scope": scope,
			"names": map[string]any{"plural": gvr.Resource, "singular": strings.ToLower(kind), "kind": kind, "categories": cats, "shortNames": shorts},
			"versions": []any{map[string]any{
				"name": gvr.Version, "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{
					"type": "object", "x-kubernetes-preserve-unknown-fields": true,
				}},
			}},
		},
	}}
	if _, err := testEnv.dynamic.Resource(crdGVR).Create(bg, crd, metav1.CreateOptions{}); err != nil {
		return err
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := testEnv.dynamic.Resource(gvr).List(bg, metav1.ListOptions{})
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return err
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func gizmo(name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "e2e.example.com/v1", "kind": "Gizmo",
		"metadata": map[string]any{"name": name}, "spec": map[string]any{"size": int64(1)},
	}}
}

func TestCategoryFromCRD(t *testing.T) {
	ns := newNamespace(t)
	gizmos := ensureGizmoCRD(t).Namespace(ns)
	if _, err := gizmos.Create(bg, gizmo("g1"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	createCM(t, ns, "settings", nil, nil)
	r := run(t, time.Minute, "e2etoys,cm", "-n", ns, "--until-synced", "-o", "name")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if got := strings.Fields(r.stdout); strings.Join(got, " ") != "gizmo.e2e.example.com/g1 configmap/settings" &&
		strings.Join(got, " ") != "configmap/settings gizmo.e2e.example.com/g1" {
		t.Errorf("stdout %q", r.stdout)
	}
	// New objects of the category's types are watched.
	s := start(t, "e2etoys", "-n", ns, "--watch-only")
	createUntilShown(t, s, 30*time.Second, func(i int) string {
		name := fmt.Sprintf("g-new-%d", i)
		if _, err := gizmos.Create(bg, gizmo(name), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		return "Added: gizmo.e2e.example.com " + name
	})
}

func TestAllTypes(t *testing.T) {
	ns := newNamespace(t)
	createDeployment(t, ns, "web")
	createCM(t, ns, "settings", nil, nil)
	widgets := ensureWidgetCRD(t).Namespace(ns)
	if _, err := widgets.Create(bg, widget("w1", 1), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// An Event in the namespace: excluded by default.
	_, err := testEnv.client.CoreV1().Events(ns).Create(bg, &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "ev"},
		InvolvedObject: corev1.ObjectReference{Kind: "ConfigMap", Namespace: ns, Name: "settings"},
		Reason:         "Test", Message: "an event",
	}, metav1.CreateOptions{})
	must(t, err)

	t.Run("all namespaces", func(t *testing.T) {
		r := run(t, 2*time.Minute, "--all-types", "-A", "--until-synced", "-o", "json")
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		seen := kindsIn(t, records(t, r.stdout))
		for _, want := range []string{
			"apps/v1 Deployment " + ns + "/web",
			"v1 ConfigMap " + ns + "/settings",
			"e2e.example.com/v1 Widget " + ns + "/w1",
			"v1 Namespace /" + ns,
		} {
			if !seen[want] {
				t.Errorf("--all-types -A did not list %s", want)
			}
		}
		for key := range seen {
			if strings.Contains(key, " Event ") || strings.Contains(key, " Lease ") {
				t.Errorf("excluded type listed: %s", key)
			}
		}
	})
	t.Run("one namespace", func(t *testing.T) {
		r := run(t, time.Minute, "--all-types", "-n", ns, "--until-synced", "-o", "json")
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		for _, rec := range records(t, r.stdout) {
			if rec.Namespace != ns {
				t.Errorf("--all-types -n %s printed %s %s/%s", ns, rec.Kind, rec.Namespace, rec.Name)
			}
		}
	})
	t.Run("exclude nothing", func(t *testing.T) {
		r := run(t, time.Minute, "--all-types", "-n", ns, "--exclude=", "--until-synced", "-o", "json")
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		seen := kindsIn(t, records(t, r.stdout))
		// The Event is served by two groups and listed once.
		if !seen["v1 Event "+ns+"/ev"] {
			t.Errorf("--exclude= did not list the Event: %v", seen)
		}
	})
	t.Run("exclude a type", func(t *testing.T) {
		r := run(t, time.Minute, "--all-types", "-n", ns, "--exclude=cm,deploy", "--until-synced", "-o", "name")
		if r.code != 0 || strings.Contains(r.stdout, "configmap/") || strings.Contains(r.stdout, "deployment.apps/") || !strings.Contains(r.stdout, "widget.e2e.example.com/w1") {
			t.Errorf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
		}
	})
	t.Run("new objects stream", func(t *testing.T) {
		s := start(t, "--all-types", "-n", ns, "--watch-only")
		createUntilShown(t, s, 30*time.Second, func(i int) string {
			name := fmt.Sprintf("late-%d", i)
			createCM(t, ns, name, nil, nil)
			return "Added: configmap " + name
		})
	})
}

func TestAllTypesPartialAccess(t *testing.T) {
	ns := newNamespace(t)
	createCM(t, ns, "visible", nil, nil)
	createDeployment(t, ns, "hidden")
	// alice may list and watch ConfigMaps in ns, nothing else.
	grantAlice(t, testEnv.client, ns, "cm-reader", "get", "list", "watch")
	user := testEnv.cp.UserKubeconfig()

	r := runAs(t, user, time.Minute, "--all-types", "-n", ns, "--until-synced", "-o", "name")
	if r.code != 0 || strings.TrimSpace(r.stdout) != "configmap/visible" {
		t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	notes := strings.Split(strings.TrimSpace(r.stderr), "\n")
	if len(notes) != 1 || !strings.HasPrefix(notes[0], "info: skipping ") || !strings.Contains(notes[0], "deployments.apps") || strings.Contains(notes[0], "configmaps,") {
		t.Errorf("stderr %q, want one note naming the skipped types", r.stderr)
	}

	// The same for a category.
	r = runAs(t, user, time.Minute, "all,cm", "-n", ns, "--until-synced", "-o", "name")
	if r.code != 0 || strings.TrimSpace(r.stdout) != "configmap/visible" || !strings.Contains(r.stderr, "info: skipping ") {
		t.Errorf("all,cm: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}

	// Nothing watchable at all: an error.
	other := newNamespace(t)
	r = runAs(t, user, time.Minute, "all", "-n", other, "--until-synced")
	if r.code != 1 || r.stdout != "" || !strings.HasPrefix(r.stderr, "error: you may not list and watch any of the ") {
		t.Errorf("nothing allowed: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}

	// A type named explicitly keeps its rule: Forbidden is an error.
	r = runAs(t, user, time.Minute, "deployments", "-n", ns, "--until-synced")
	if r.code != 1 || !strings.Contains(r.stderr, `cannot list resource "deployments"`) {
		t.Errorf("named type: exit %d, stderr %q", r.code, r.stderr)
	}
}

func TestAllTypesBadInput(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"with a type", []string{"--all-types", "configmaps"}, `error: --all-types watches every type: drop the arguments "configmaps" or --all-types`},
		{"with a name", []string{"--all-types", "cm/x"}, `error: --all-types watches every type: drop the arguments "cm/x" or --all-types`},
		{"unknown exclusion", []string{"--all-types", "--exclude=nosuchtype"}, `error: invalid --exclude: the server doesn't have a resource type "nosuchtype"`},
		{"exclude without a category", []string{"cm", "--exclude=secrets"}, "error: --exclude only applies to --all-types, to categories such as all and to --tree"},
		{"category by name", []string{"all/web"}, `error: "all" is a category of types, which cannot be watched by name`},
		{"unknown category", []string{"nosuchcategory"}, `error: the server doesn't have a resource type "nosuchcategory"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, time.Minute, tc.args...)
			if r.code != 1 || r.stdout != "" || !strings.HasPrefix(r.stderr, tc.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 1 and %q", r.code, r.stdout, r.stderr, tc.want)
			}
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestAllTypesFollowsCRDs: a type created while the stream runs joins it,
// its objects as Added; a type deleted leaves it after its objects'
// deletions, without a warning.
func TestAllTypesFollowsCRDs(t *testing.T) {
	for _, mode := range []struct{ name, arg string }{{"all-types", "--all-types"}, {"category", "e2efollow"}} {
		t.Run(mode.name, func(t *testing.T) {
			ns := newNamespace(t)
			// CRDs outlive a test: a group of the run's own.
			group := fmt.Sprintf("follow%s%d.e2e.example.com", strings.ReplaceAll(mode.name, "-", ""), nsSeq.Add(1))
			// ready creates an object the stream watches from the start;
			// line is how it shows.
			ready := func(name string) (line string) {
				createCM(t, ns, name, nil, nil)
				return "Added: configmap " + name
			}
			if mode.arg != "--all-types" {
				// A category must exist when the stream starts: a first CRD
				// declares it.
				seeds := schema.GroupVersionResource{Group: group, Version: "v1", Resource: "seeds"}
				if err := createCRD(seeds, "Seed", "Namespaced", []string{"e2efollow"}); err != nil {
					t.Fatal(err)
				}
				ready = func(name string) string {
					seed := &unstructured.Unstructured{Object: map[string]any{
						"apiVersion": group + "/v1", "kind": "Seed", "metadata": map[string]any{"name": name},
					}}
					if _, err := testEnv.dynamic.Resource(seeds).Namespace(ns).Create(bg, seed, metav1.CreateOptions{}); err != nil {
						t.Fatal(err)
					}
					return "Added: seed." + group + " " + name
				}
			}
			s := start(t, mode.arg, "-n", ns, "--watch-only")
			// The stream is up once a new object shows.
			createUntilShown(t, s, 30*time.Second, func(i int) string { return ready(fmt.Sprintf("ready-%d", i)) })
			gvr := schema.GroupVersionResource{Group: group, Version: "v1", Resource: "things"}
			if err := createCRD(gvr, "Thing", "Namespaced", []string{"e2efollow"}); err != nil {
				t.Fatal(err)
			}
			things := testEnv.dynamic.Resource(gvr).Namespace(ns)
			thing := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": group + "/v1", "kind": "Thing", "metadata": map[string]any{"name": "t1"},
			}}
			if _, err := things.Create(bg, thing, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			created := time.Now()
			if !s.waitFor(func(line string) bool { return line == "Added: thing."+group+" t1" }, 10*time.Second) {
				t.Fatalf("the new type's object did not show within 10s; stderr: %s", s.stderr.String())
			}
			t.Logf("new type's object shown %s after its create", time.Since(created).Round(100*time.Millisecond))
			if !strings.Contains(s.stderr.String(), "info: watching new type things."+group) {
				t.Errorf("stderr: %q", s.stderr.String())
			}

			crdGVR := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
			if err := testEnv.dynamic.Resource(crdGVR).Delete(bg, "things."+group, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			if !s.waitFor(func(line string) bool { return strings.HasPrefix(line, "Deleted: thing."+group+" t1") }, 30*time.Second) {
				t.Fatalf("the deleted type's object was not deleted; stderr: %s", s.stderr.String())
			}
			deadline := time.Now().Add(30 * time.Second)
			for !strings.Contains(s.stderr.String(), "things."+group+" is no longer served") {
				if time.Now().After(deadline) {
					t.Fatalf("the deleted type was not retired; stderr: %s", s.stderr.String())
				}
				time.Sleep(200 * time.Millisecond)
			}
			s.quiet(3 * time.Second)
			if strings.Contains(s.stderr.String(), "warning:") {
				t.Errorf("a warning on stderr: %s", s.stderr.String())
			}
		})
	}
}

// grantAlice gives the user alice (the control plane's user kubeconfig)
// verbs on ConfigMaps in ns, through a Role and a RoleBinding named
// role and alice-role.
func grantAlice(t *testing.T, client kubernetes.Interface, ns, role string, verbs ...string) {
	t.Helper()
	_, err := client.RbacV1().Roles(ns).Create(bg, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: role},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: verbs}},
	}, metav1.CreateOptions{})
	must(t, err)
	_, err = client.RbacV1().RoleBindings(ns).Create(bg, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "alice-" + role},
		Subjects:   []rbacv1.Subject{{Kind: "User", Name: "alice", APIGroup: "rbac.authorization.k8s.io"}},
		RoleRef:    rbacv1.RoleRef{Kind: "Role", Name: role, APIGroup: "rbac.authorization.k8s.io"},
	}, metav1.CreateOptions{})
	must(t, err)
}
