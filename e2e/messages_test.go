package e2e

// What the plugin says when there is little to show: a named object that
// is not there, a type that does not exist, a timeout across clusters; and
// tables whose header stays above its columns.

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// TestMissingNamedObject: a named object that does not exist is one info
// line, not silence: not found, for a snapshot; waited for, for a stream,
// which shows it once it is created.
func TestMissingNamedObject(t *testing.T) {
	ns := newNamespace(t)
	for _, args := range [][]string{
		{"deployment/web", "-n", ns, "--tree", "--until-synced"},
		{"deployment/web", "-n", ns, "--until-synced"},
	} {
		r := run(t, time.Minute, args...)
		want := `info: deployments.apps "web" not found in namespace "` + ns + `"` + "\n"
		if r.code != 0 || r.stdout != "" || r.stderr != want {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want 0, nothing, %q", strings.Join(args, " "), r.code, r.stdout, r.stderr, want)
		}
	}

	s := start(t, "cm/later", "-n", ns)
	waitStderrOf(t, s, `info: configmaps "later" not found in namespace "`+ns+`": waiting for it to be created`, 30*time.Second)
	createCM(t, ns, "later", nil, nil)
	s.expect("Added: later")

	// Waiting for it to go: met at once, and said so.
	r := run(t, time.Minute, "cm/gone", "-n", ns, "--until=delete")
	if r.code != 0 || !strings.Contains(r.stderr, `info: configmaps "gone" not found in namespace "`+ns+`"`) || !strings.Contains(r.stderr, "configmap/gone condition met") {
		t.Errorf("--until=delete of a missing object: exit %d, stderr %q", r.code, r.stderr)
	}
	// -q: the outcome only.
	r = run(t, time.Minute, "cm/never", "-n", ns, "--until=create", "--timeout=2s", "-q")
	if r.code != 1 || strings.Contains(r.stderr, "info:") || !strings.HasPrefix(r.stderr, "error: timed out waiting for the condition on configmaps/never") {
		t.Errorf("-q: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestUnknownTypeSaysWhereToLook: an unknown type names kubectl
// api-resources.
func TestUnknownTypeSaysWhereToLook(t *testing.T) {
	r := run(t, time.Minute, "nosuchtype")
	want := `error: the server doesn't have a resource type "nosuchtype": kubectl api-resources lists the types it has` + "\n"
	if r.code != 1 || r.stdout != "" || r.stderr != want {
		t.Errorf("exit %d, stdout %q, stderr %q; want 1, nothing, %q", r.code, r.stdout, r.stderr, want)
	}
}

// TestTimeoutNamesOnlyWhatHeld: with two contexts, a timeout names the
// context where the condition did not hold, not the one where it did.
func TestTimeoutNamesOnlyWhatHeld(t *testing.T) {
	staging, prod := newNamespace(t), newNamespace(t)
	createCM(t, prod, "only-prod", nil, nil)
	cfg, err := clientcmd.LoadFromFile(testEnv.cp.AdminKubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	cur := cfg.Contexts[cfg.CurrentContext]
	for name, ns := range map[string]string{"staging": staging, "prod": prod} {
		cfg.Contexts[name] = &clientcmdapi.Context{Cluster: cur.Cluster, AuthInfo: cur.AuthInfo, Namespace: ns}
	}
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, kubeconfig); err != nil {
		t.Fatal(err)
	}
	r := runAs(t, kubeconfig, time.Minute, "cm/only-prod", "--context=staging,prod", "--until=create", "--timeout=3s")
	wantErr := `error: timed out waiting for the condition on configmaps/only-prod in context "staging"` + "\n" +
		`  context "staging": configmap/only-prod: NotFound: Resource does not exist` + "\n"
	if r.code != 1 || !strings.HasSuffix(r.stderr, wantErr) || strings.Contains(r.stderr, `in context "prod"`) {
		t.Errorf("exit %d, stderr:\n%s\nwant it to end with:\n%s", r.code, r.stderr, wantErr)
	}
}

// TestTablesStayAligned: custom-columns' header is as wide as its rows,
// and a row that widens a column gets its header again, in
// custom-columns and in wide; an initial list is one table, under one
// header.
func TestTablesStayAligned(t *testing.T) {
	ns := newNamespace(t)
	createCM(t, ns, "a", nil, nil)
	s := start(t, "cm", "-n", ns, "-o", "custom-columns=TYPE:.type,NAME:.name,NS:.namespace")
	// The header fits the first row (this control plane has no
	// controllers: no kube-root-ca.crt); a row that widens NAME gets it
	// again.
	s.expect(
		"TYPE       NAME       NS",
		"Replaced   a          "+ns,
	)
	createCM(t, ns, "a-name-longer-than-any-before", nil, nil)
	s.expect(
		"TYPE       NAME                            NS",
		"Added      a-name-longer-than-any-before   "+ns,
	)
	createCM(t, ns, "b", nil, nil)
	s.expect("Added      b                               " + ns)

	// wide: the initial list (a, the long name, b) under one header,
	// then two new rows.
	w := start(t, "cm", "-n", ns, "-o", "wide")
	lines := make([]string, 4)
	for i := range lines {
		lines[i] = w.next(30 * time.Second)
	}
	if !strings.HasPrefix(lines[0], "TIME ") || !strings.Contains(lines[2], "a-name-longer-than-any-before") {
		t.Fatalf("the initial list: %q, want its header then its rows", lines)
	}
	for _, row := range lines[1:] {
		checkColumnsUnder(t, lines[0], row, "NAME", "DATA", "AGE")
	}
	createCM(t, ns, "c", nil, nil)
	checkColumnsUnder(t, lines[0], w.next(30*time.Second), "NAME", "DATA", "AGE")
	createCM(t, ns, "c-"+strings.Repeat("x", 40), nil, nil)
	header, row := w.next(30*time.Second), w.next(30*time.Second)
	if !strings.HasPrefix(header, "TIME ") {
		t.Fatalf("a row that widens NAME came without its header: %q then %q", header, row)
	}
	checkColumnsUnder(t, header, row, "NAME", "DATA", "AGE")
}

// checkColumnsUnder requires the cells of row to start where the header's
// columns do.
func checkColumnsUnder(t *testing.T, header, row string, columns ...string) {
	t.Helper()
	for _, c := range columns {
		at := strings.Index(header, " "+c+" ") + 1
		if at <= 0 || at >= len(row) || row[at-1] != ' ' || row[at] == ' ' {
			t.Errorf("column %s of\n%s\nis not above a cell of\n%s", c, header, row)
		}
	}
}

// TestBrokenConversionIsSaid: a CRD version whose conversion webhook
// points at a missing Service cannot be read. kubectl get fails with 500;
// the watch cache may answer a list at resourceVersion 0 with nothing and
// 200. A snapshot of it is never a silent empty success: it times out
// naming the conversion webhook, exit 1; the version that needs no
// conversion lists its object.
func TestBrokenConversionIsSaid(t *testing.T) {
	ns := newNamespace(t)
	crdGVR := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	version := func(name string, storage bool) map[string]any {
		return map[string]any{
			"name": name, "served": true, "storage": storage,
			"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
		}
	}
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]any{"name": "gadgets.convert.example.com"},
		"spec": map[string]any{
			"group": "convert.example.com",
			"scope": "Namespaced",
			"names": map[string]any{"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
			"conversion": map[string]any{
				"strategy": "Webhook",
				"webhook": map[string]any{
					"conversionReviewVersions": []any{"v1"},
					"clientConfig": map[string]any{"service": map[string]any{
						"namespace": "default", "name": "no-such-service", "path": "/convert", "port": int64(443),
					}},
				},
			},
			"versions": []any{version("v1", true), version("v2", false)},
		},
	}}
	if _, err := testEnv.dynamic.Resource(crdGVR).Create(bg, crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = testEnv.dynamic.Resource(crdGVR).Delete(bg, "gadgets.convert.example.com", metav1.DeleteOptions{})
	})
	v1 := schema.GroupVersionResource{Group: "convert.example.com", Version: "v1", Resource: "gadgets"}
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := testEnv.dynamic.Resource(v1).Namespace(ns).Create(bg, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "convert.example.com/v1", "kind": "Gadget", "metadata": map[string]any{"name": "g1"},
		}}, metav1.CreateOptions{})
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("creating a gadget: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}

	r := run(t, time.Minute, "gadgets.v2.convert.example.com", "-n", ns, "--until-synced", "--timeout=6s")
	if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, "error: timed out waiting for the initial list of gadgets.convert.example.com") ||
		!strings.Contains(r.stderr, `conversion webhook for convert.example.com/v1, Kind=Gadget failed`) {
		t.Errorf("the version that needs the webhook: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	r = run(t, time.Minute, "gadgets.v1.convert.example.com", "-n", ns, "--until-synced", "--timeout=6s")
	if r.code != 0 || r.stdout != "Replaced: g1\n" || r.stderr != "" {
		t.Errorf("the stored version: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
}
