package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

var bg = context.Background()

func createCM(t *testing.T, ns, name string, labels map[string]string, data map[string]string) *corev1.ConfigMap {
	t.Helper()
	cm, err := testEnv.client.CoreV1().ConfigMaps(ns).Create(bg, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Data:       data,
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create configmap %s/%s: %v", ns, name, err)
	}
	return cm
}

func updateCM(t *testing.T, ns, name, key, value string) *corev1.ConfigMap {
	t.Helper()
	cms := testEnv.client.CoreV1().ConfigMaps(ns)
	cm, err := cms.Get(bg, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
	cm.Data[key] = value
	cm, err = cms.Update(bg, cm, metav1.UpdateOptions{FieldManager: "e2e-writer"})
	if err != nil {
		t.Fatalf("update configmap %s/%s: %v", ns, name, err)
	}
	return cm
}

func deleteCM(t *testing.T, ns, name string) {
	t.Helper()
	if err := testEnv.client.CoreV1().ConfigMaps(ns).Delete(bg, name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete configmap %s/%s: %v", ns, name, err)
	}
}

// The bar: a create/update/delete is exactly Added, Updated,
// Deleted after the Replaced lines of pre-existing objects.
func TestTextCreateUpdateDelete(t *testing.T) {
	ns := newNamespace(t)
	createCM(t, ns, "pre", nil, map[string]string{"a": "1"})
	s := start(t, "configmaps", "-n", ns)
	s.expect("Replaced: pre")
	createCM(t, ns, "demo", nil, map[string]string{"k": "v"})
	s.expect("Added: demo")
	updateCM(t, ns, "demo", "k", "v2")
	s.expect("Updated: demo")
	deleteCM(t, ns, "demo")
	s.expect("Deleted: demo")
	s.quiet(time.Second)
	if code := s.stop(); code != 130 {
		t.Errorf("exit code after SIGINT = %d, want 130", code)
	}
	if s.stderr.String() != "" {
		t.Errorf("unexpected stderr: %q", s.stderr.String())
	}
}

// writeSequence makes the create/update/delete sequence of "demo" once the
// stream has shown the initial list.
func writeSequence(t *testing.T, ns string) {
	t.Helper()
	createCM(t, ns, "demo", map[string]string{"app": "demo"}, map[string]string{"k": "v"})
	updateCM(t, ns, "demo", "k", "v2")
	deleteCM(t, ns, "demo")
}

func TestJSONLinesParseWithJQ(t *testing.T) {
	if _, err := exec.LookPath("jq"); err != nil {
		t.Fatal("jq is required by the e2e tests (apt-get install jq); .ci/run installs it")
	}
	ns := newNamespace(t)
	createCM(t, ns, "pre", nil, nil)
	s := start(t, "cm", "-n", ns, "-o", "json")
	first := s.next(30 * time.Second)
	writeSequence(t, ns)
	lines := []string{first, s.next(30 * time.Second), s.next(30 * time.Second), s.next(30 * time.Second)}
	wantTypes := []string{"Replaced", "Added", "Updated", "Deleted"}
	wantNames := []string{"pre", "demo", "demo", "demo"}
	for i, line := range lines {
		var rec struct {
			Type            string          `json:"type"`
			Time            time.Time       `json:"time"`
			Initial         bool            `json:"initial"`
			APIVersion      string          `json:"apiVersion"`
			Kind            string          `json:"kind"`
			Resource        string          `json:"resource"`
			Namespace       string          `json:"namespace"`
			Name            string          `json:"name"`
			UID             string          `json:"uid"`
			ResourceVersion string          `json:"resourceVersion"`
			Object          json.RawMessage `json:"object"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("line %d is not JSON: %v\n%s", i, err, line)
		}
		if rec.Type != wantTypes[i] || rec.Name != wantNames[i] || rec.Namespace != ns || rec.Kind != "ConfigMap" ||
			rec.APIVersion != "v1" || rec.Resource != "configmaps" || rec.UID == "" || rec.ResourceVersion == "" || rec.Time.IsZero() {
			t.Errorf("line %d: %+v", i, rec)
		}
		if rec.Initial != (i == 0) {
			t.Errorf("line %d: initial=%v", i, rec.Initial)
		}
		if strings.Contains(string(rec.Object), "managedFields") {
			t.Errorf("line %d: managedFields not stripped", i)
		}
		cmd := exec.Command("jq", "-e", "-c", `{type, name: .object.metadata.name}`)
		cmd.Stdin = strings.NewReader(line + "\n")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("jq rejected line %d: %v\n%s", i, err, out)
		}
		if want := `{"type":"` + wantTypes[i] + `","name":"` + wantNames[i] + `"}`; strings.TrimSpace(string(out)) != want {
			t.Errorf("jq output %s, want %s", out, want)
		}
	}
}

func TestOutputFormats(t *testing.T) {
	cases := []struct {
		name string
		args []string
		// want is checked against the four records' output (initial list of
		// "pre", then demo added, updated, deleted).
		check func(t *testing.T, s *stream)
	}{
		{"name", []string{"-o", "name"}, func(t *testing.T, s *stream) {
			s.expect("configmap/pre", "configmap/demo", "configmap/demo", "configmap/demo")
		}},
		{"jsonpath", []string{"-o", `jsonpath={.type} {.object.metadata.name}{"\n"}`}, func(t *testing.T, s *stream) {
			s.expect("Replaced pre", "Added demo", "Updated demo", "Deleted demo")
		}},
		{"go-template", []string{"-o", `go-template={{.type}}/{{.name}}{{"\n"}}`}, func(t *testing.T, s *stream) {
			s.expect("Replaced/pre", "Added/demo", "Updated/demo", "Deleted/demo")
		}},
		{"custom-columns", []string{"-o", "custom-columns=TYPE:.type,NAME:.object.metadata.name"}, func(t *testing.T, s *stream) {
			fields := func() []string { return strings.Fields(s.next(30 * time.Second)) }
			for _, want := range [][]string{{"TYPE", "NAME"}, {"Replaced", "pre"}, {"Added", "demo"}, {"Updated", "demo"}, {"Deleted", "demo"}} {
				if got := fields(); strings.Join(got, " ") != strings.Join(want, " ") {
					t.Fatalf("row %v, want %v", got, want)
				}
			}
		}},
		{"wide", []string{"-o", "wide"}, func(t *testing.T, s *stream) {
			header := strings.Fields(s.next(30 * time.Second))
			// The server's Table of ConfigMaps (kubectl get's columns),
			// between the delta's.
			if strings.Join(header, " ") != "TIME DELTA NAME DATA AGE HEALTH" {
				t.Fatalf("header %v", header)
			}
			for _, want := range []string{"Replaced pre 0 Current", "Added demo 1 Current", "Updated demo 1 Current", "Deleted demo 1 NotFound"} {
				f := strings.Fields(s.next(30 * time.Second))
				if len(f) != 6 || f[1]+" "+f[2]+" "+f[3]+" "+f[5] != want {
					t.Fatalf("row %v, want %s", f, want)
				}
			}
		}},
		{"yaml", []string{"-o", "yaml"}, func(t *testing.T, s *stream) {
			var types []string
			for len(types) < 4 {
				line := s.next(30 * time.Second)
				if strings.HasPrefix(line, "type: ") {
					types = append(types, strings.TrimPrefix(line, "type: "))
				}
			}
			if strings.Join(types, ",") != "Replaced,Added,Updated,Deleted" {
				t.Fatalf("yaml types %v", types)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ns := newNamespace(t)
			createCM(t, ns, "pre", nil, nil)
			s := start(t, append([]string{"configmaps", "-n", ns}, tc.args...)...)
			// The initial record must be out before the writes, so that they
			// are watched, not listed: wait for the first line.
			first := s.next(30 * time.Second)
			s.seen = s.seen[:0]
			pending := &stream{t: t, lines: make(chan string, 1000), stderr: s.stderr}
			pending.lines <- first
			writeSequence(t, ns)
			go func() {
				for line := range s.lines {
					pending.lines <- line
				}
				close(pending.lines)
			}()
			tc.check(t, pending)
		})
	}
}

func TestSeveralTypesInOneStream(t *testing.T) {
	ns := newNamespace(t)
	createCM(t, ns, "pre", nil, nil)
	s := start(t, "configmaps,secrets", "-n", ns)
	s.expect("Replaced: configmap pre")
	// The secrets watch may open a little later than the ConfigMaps one:
	// create secrets until one is watched.
	deadline := time.Now().Add(60 * time.Second)
	for i := 0; ; i++ {
		name := fmt.Sprintf("s%d", i)
		if _, err := testEnv.client.CoreV1().Secrets(ns).Create(bg, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name}, StringData: map[string]string{"p": "x"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if s.waitFor(func(line string) bool { return line == "Added: secret "+name }, 3*time.Second) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no secret was watched")
		}
	}
	createCM(t, ns, "demo", nil, nil)
	s.expect("Added: configmap demo")
}

var probeSeq atomic.Int64

// waitWatching proves the stream's watch is open: it creates probe
// ConfigMaps (with labels) until one shows up, then deletes it and waits
// for its Deleted line. A probe created before the initial list is listed,
// not watched, so it may never print under --watch-only: hence new probes.
func waitWatching(t *testing.T, s *stream, ns string, labels map[string]string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		name := fmt.Sprintf("probe-%d", probeSeq.Add(1))
		createCM(t, ns, name, labels, nil)
		if s.waitFor(func(line string) bool { return strings.HasSuffix(line, "/"+name) || strings.HasSuffix(line, " "+name) }, 3*time.Second) {
			deleteCM(t, ns, name)
			s.waitFor(func(line string) bool {
				return strings.HasPrefix(line, "Deleted:") && strings.HasSuffix(line, name)
			}, 30*time.Second)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the stream never showed a probe; lines:\n%s\nstderr:\n%s", strings.Join(s.seen, "\n"), s.stderr.String())
		}
	}
}

func TestAllNamespaces(t *testing.T) {
	ns1, ns2 := newNamespace(t), newNamespace(t)
	s := start(t, "configmaps", "-A", "--watch-only", "-l", "e2e-all=yes")
	waitWatching(t, s, ns1, map[string]string{"e2e-all": "yes"})
	createCM(t, ns1, "demo", map[string]string{"e2e-all": "yes"}, nil)
	s.expect("Added: " + ns1 + "/demo")
	createCM(t, ns2, "demo", map[string]string{"e2e-all": "yes"}, nil)
	s.expect("Added: " + ns2 + "/demo")
}

func TestSelectors(t *testing.T) {
	ns := newNamespace(t)
	createCM(t, ns, "match", map[string]string{"tier": "web"}, nil)
	createCM(t, ns, "other", map[string]string{"tier": "db"}, nil)
	t.Run("label", func(t *testing.T) {
		r := run(t, time.Minute, "cm", "-n", ns, "-l", "tier=web", "--until-synced")
		if r.code != 0 || r.stdout != "Replaced: match\n" {
			t.Errorf("got %d %q %q", r.code, r.stdout, r.stderr)
		}
	})
	t.Run("field", func(t *testing.T) {
		r := run(t, time.Minute, "cm", "-n", ns, "--field-selector", "metadata.name=other", "--until-synced")
		if r.code != 0 || r.stdout != "Replaced: other\n" {
			t.Errorf("got %d %q %q", r.code, r.stdout, r.stderr)
		}
	})
	t.Run("watch honours the selector", func(t *testing.T) {
		s := start(t, "cm", "-n", ns, "-l", "tier=web")
		s.expect("Replaced: match")
		createCM(t, ns, "db2", map[string]string{"tier": "db"}, nil)
		createCM(t, ns, "web2", map[string]string{"tier": "web"}, nil)
		s.expect("Added: web2")
	})
}

func TestTypeSlashName(t *testing.T) {
	ns := newNamespace(t)
	createCM(t, ns, "one", nil, nil)
	createCM(t, ns, "two", nil, nil)
	s := start(t, "configmap/two", "-n", ns)
	s.expect("Replaced: two")
	updateCM(t, ns, "one", "x", "1")
	updateCM(t, ns, "two", "x", "1")
	s.expect("Updated: two")
}

// ensureWidgetCRD creates the Widget CRD (widgets.e2e.example.com, short
// name wdg) once for the package and waits until it is served.
func ensureWidgetCRD(t *testing.T) dynamic.NamespaceableResourceInterface {
	t.Helper()
	widgetsGVR := schema.GroupVersionResource{Group: "e2e.example.com", Version: "v1", Resource: "widgets"}
	crdOnce.Do(func() {
		crdErr = createCRD(widgetsGVR, "Widget", "Namespaced", nil, "wdg")
	})
	if crdErr != nil {
		t.Fatalf("widget CRD: %v", crdErr)
	}
	return testEnv.dynamic.Resource(widgetsGVR)
}

var (
	crdOnce sync.Once
	crdErr  error
)

// widget returns a Widget with spec.replicas.
func widget(name string, replicas int64) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "e2e.example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": name}, "spec": map[string]any{"replicas": replicas},
	}}
}

func TestCRD(t *testing.T) {
	ns := newNamespace(t)
	widgets := ensureWidgetCRD(t).Namespace(ns)
	for _, arg := range []string{"widgets.e2e.example.com", "wdg", "widget"} {
		t.Run(arg, func(t *testing.T) {
			s := start(t, arg, "-n", ns, "--watch-only", "-o", "name")
			createUntilShown(t, s, 60*time.Second, func(i int) string {
				name := fmt.Sprintf("w-%s-%d", strings.ReplaceAll(arg, ".", "-"), i)
				if _, err := widgets.Create(bg, widget(name, 1), metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
				return "widget.e2e.example.com/" + name
			})
		})
	}
}

func TestExitConditions(t *testing.T) {
	ns := newNamespace(t)
	for _, n := range []string{"a", "b", "c"} {
		createCM(t, ns, n, nil, nil)
	}
	t.Run("count", func(t *testing.T) {
		r := run(t, time.Minute, "cm", "-n", ns, "--count=2")
		if r.code != 0 || strings.Count(r.stdout, "\n") != 2 {
			t.Errorf("--count=2: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
		}
	})
	t.Run("until-synced", func(t *testing.T) {
		r := run(t, time.Minute, "cm", "-n", ns, "--until-synced")
		if r.code != 0 || r.stdout != "Replaced: a\nReplaced: b\nReplaced: c\n" {
			t.Errorf("--until-synced: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
		}
	})
	t.Run("until-synced empty", func(t *testing.T) {
		empty := newNamespace(t)
		r := run(t, time.Minute, "cm", "-n", empty, "--until-synced")
		if r.code != 0 || r.stdout != "" {
			t.Errorf("--until-synced on nothing: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
		}
	})
	t.Run("timeout", func(t *testing.T) {
		began := time.Now()
		r := run(t, time.Minute, "cm", "-n", ns, "--timeout=2s", "-o", "name")
		if r.code != 0 || r.stdout != "configmap/a\nconfigmap/b\nconfigmap/c\n" {
			t.Errorf("--timeout: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
		}
		if el := time.Since(began); el < 2*time.Second {
			t.Errorf("--timeout=2s exited after %s", el)
		}
	})
	t.Run("types", func(t *testing.T) {
		s := start(t, "cm", "-n", ns, "--types=Deleted,Added")
		waitWatching(t, s, ns, nil)
		createCM(t, ns, "d", nil, nil)
		s.expect("Added: d")
		updateCM(t, ns, "d", "x", "y")
		deleteCM(t, ns, "d")
		s.expect("Deleted: d")
	})
	t.Run("watch-only", func(t *testing.T) {
		s := start(t, "cm", "-n", ns, "--watch-only")
		waitWatching(t, s, ns, nil)
		updateCM(t, ns, "a", "x", "y")
		s.expect("Updated: a")
	})
}

func TestBadInput(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"unknown type", []string{"foos"}, `error: the server doesn't have a resource type "foos"`},
		{"bad selector", []string{"cm", "-l", "a=(b"}, `error: invalid --selector "a=(b"`},
		{"bad output", []string{"cm", "-o", "foo"}, `error: unable to match a printer suitable for the output format "foo"`},
		{"no type", nil, `error: you must specify the type of resource to watch`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, time.Minute, tc.args...)
			if r.code != 1 || r.stdout != "" || !strings.HasPrefix(r.stderr, tc.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 1, no stdout, stderr starting %q", r.code, r.stdout, r.stderr, tc.want)
			}
		})
	}
}
