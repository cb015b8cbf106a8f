package e2e

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// widgetWithStatus is a Widget whose status carries conditions.
func widgetWithStatus(name string, conditions ...map[string]any) *unstructured.Unstructured {
	w := widget(name, 1)
	list := make([]any, 0, len(conditions))
	for _, c := range conditions {
		list = append(list, c)
	}
	w.Object["status"] = map[string]any{"conditions": list}
	return w
}

// TestHealth: every JSON record carries the object's health as kstatus
// judges it, text shows it with --health (control characters escaped),
// and status= conditions wait on it.
func TestHealth(t *testing.T) {
	ns := newNamespace(t)
	widgets := ensureWidgetCRD(t).Namespace(ns)
	hostile := "waiting \x1b[31mfor\x07 the db"
	if _, err := widgets.Create(bg, widgetWithStatus("w1", map[string]any{"type": "Ready", "status": "False", "reason": "Waiting", "message": hostile}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	createCM(t, ns, "settings", nil, nil)
	// A custom resource without status: nothing in it says.
	if _, err := widgets.Create(bg, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "e2e.example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": "bare"},
	}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	t.Run("json", func(t *testing.T) {
		r := run(t, time.Minute, "widgets,cm", "-n", ns, "-o", "json", "--until-synced")
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		got := map[string]map[string]string{}
		for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
			var rec struct {
				Kind, Name string
				Health     map[string]string
			}
			if err := json.Unmarshal([]byte(line), &rec); err != nil {
				t.Fatal(err)
			}
			got[rec.Kind+"/"+rec.Name] = rec.Health
		}
		want := map[string]map[string]string{
			"Widget/w1":          {"status": "InProgress", "source": "conditions", "reason": "Waiting", "message": hostile},
			"Widget/bare":        {"status": "Current", "source": "none", "message": "Resource is current"},
			"ConfigMap/settings": {"status": "Current", "source": "kind", "message": "Resource is always ready"},
		}
		if len(got) != len(want) {
			t.Errorf("health %v, want %v", got, want)
		}
		for k, w := range want {
			if !equalHealth(got[k], w) {
				t.Errorf("%s: health %v, want %v", k, got[k], w)
			}
		}
	})

	t.Run("text", func(t *testing.T) {
		r := run(t, time.Minute, "widgets/w1", "widgets/bare", "-n", ns, "--health", "--until-synced")
		lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
		slices.Sort(lines) // two informers: in any order
		if want := "Replaced: bare Current (no status): Resource is current\n" + `Replaced: w1 InProgress: waiting \x1b[31mfor\x07 the db`; r.code != 0 || strings.Join(lines, "\n") != want {
			t.Errorf("exit %d, stdout %q, want %q; stderr %s", r.code, r.stdout, want, r.stderr)
		}
	})

	t.Run("deleted is NotFound, metadata-only has none", func(t *testing.T) {
		s := start(t, "cm/settings", "-n", ns, "-o", "json")
		s.next(30 * time.Second) // the initial list: watching from its resourceVersion
		deleteCM(t, ns, "settings")
		var rec struct {
			Type   string
			Health map[string]string
		}
		for rec.Type != "Deleted" {
			if err := json.Unmarshal([]byte(s.next(30*time.Second)), &rec); err != nil {
				t.Fatal(err)
			}
		}
		if !equalHealth(rec.Health, map[string]string{"status": "NotFound", "message": "Resource does not exist"}) {
			t.Errorf("a deletion's health: %v", rec.Health)
		}
		r := run(t, time.Minute, "widgets", "-n", ns, "-o", "json", "--metadata-only", "--until-synced")
		if r.code != 0 || strings.Contains(r.stdout, `"health"`) || !strings.Contains(r.stdout, `"name":"w1"`) {
			t.Errorf("--metadata-only: exit %d, stdout %s", r.code, r.stdout)
		}
	})

	t.Run("until and fail-when", func(t *testing.T) {
		s := start(t, "widget/w1", "-n", ns, "--until=status=Current", "--health")
		s.expect(`Replaced: w1 InProgress: waiting \x1b[31mfor\x07 the db`)
		w, err := widgets.Get(bg, "w1", metav1.GetOptions{})
		must(t, err)
		w.Object["status"] = map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "True", "reason": "Ready", "message": "up"}}}
		_, err = widgets.Update(bg, w, metav1.UpdateOptions{})
		must(t, err)
		s.expect("Updated: w1 Current: Resource is Ready")
		if code := s.waitExit(30 * time.Second); code != 0 || s.stderr.String() != "widget.e2e.example.com/w1 condition met\n" {
			t.Fatalf("exit %d; stderr: %q", code, s.stderr.String())
		}

		if _, err := widgets.Create(bg, widgetWithStatus("w2", map[string]any{"type": "Stalled", "status": "True", "reason": "NoCapacity", "message": "no capacity left"}), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		r := run(t, time.Minute, "widgets", "-n", ns, "--fail-when=status=Failed", "-o", "name")
		want := "error: widget.e2e.example.com/w2 matched --fail-when=status=Failed: Failed (NoCapacity): no capacity left\n"
		if r.code != 2 || r.stderr != want || !strings.Contains(r.stdout, "widget.e2e.example.com/w2") {
			t.Errorf("exit %d, stdout %q, stderr %q; want %q", r.code, r.stdout, r.stderr, want)
		}
	})

	t.Run("bad input", func(t *testing.T) {
		for _, tc := range []struct {
			args []string
			want string
		}{
			{[]string{"cm", "--until=status=Ready"}, `error: invalid --until "status=Ready": one of Current, InProgress, Failed, Terminating, Unknown, NotFound` + "\n"},
			{[]string{"cm", "--health", "--metadata-only"}, "error: --metadata-only objects carry no status to judge their health: drop --metadata-only, or --health and status= conditions\n"},
			{[]string{"cm", "--fail-when=status=Failed", "--metadata-only"}, "error: --metadata-only objects carry no status to judge their health: drop --metadata-only, or --health and status= conditions\n"},
		} {
			r := run(t, time.Minute, append(tc.args, "--server=https://127.0.0.1:1")...)
			if r.code != 1 || r.stdout != "" || r.stderr != tc.want {
				t.Errorf("%v: exit %d, stdout %q, stderr %q; want %q", tc.args, r.code, r.stdout, r.stderr, tc.want)
			}
		}
	})
}

// equalHealth compares a record's health with the wanted fields.
func equalHealth(got, want map[string]string) bool {
	if len(got) != len(want) {
		return false
	}
	for k, v := range want {
		if got[k] != v {
			return false
		}
	}
	return true
}
