//go:build faults

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"
)

// logsVerdict is the Verdict record's Pod with its logs.
type logsVerdict struct {
	Type, Outcome string
	Objects       []struct {
		Kind, Name, UID string
		Logs            *struct {
			Container   string
			Previous    bool
			Lines       []string
			Unavailable string
		}
	}
}

// serveLogs has kwok answer the logs of the containers named web in ns:
// prev for their previous instance, current for the running one, each
// written as a CRI log file.
func serveLogs(t *testing.T, c *cluster, ns string, prev, current []string) {
	t.Helper()
	dir := t.TempDir()
	write := func(name string, lines []string) string {
		var b strings.Builder
		at := time.Date(2026, 11, 29, 13, 0, 0, 0, time.UTC)
		for i, l := range lines {
			fmt.Fprintf(&b, "%s stderr F %s\n", at.Add(time.Duration(i)*time.Second).Format(time.RFC3339Nano), l)
		}
		path := filepath.Join(dir, name)
		must(t, os.WriteFile(path, []byte(b.String()), 0o644))
		return path
	}
	config, err := clientcmd.BuildConfigFromFlags("", c.cp.AdminKubeconfig())
	must(t, err)
	client, err := dynamic.NewForConfig(config)
	must(t, err)
	logs := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kwok.x-k8s.io/v1alpha1", "kind": "ClusterLogs", "metadata": map[string]any{"name": ns},
		"spec": map[string]any{
			"selector": map[string]any{"matchNamespaces": []any{ns}},
			"logs": []any{map[string]any{
				"containers": []any{"web"}, "logsFile": write("current.log", current), "previousLogsFile": write("previous.log", prev),
			}},
		},
	}}
	gvr := schema.GroupVersionResource{Group: "kwok.x-k8s.io", Version: "v1alpha1", Resource: "clusterlogs"}
	_, err = client.Resource(gvr).Create(bg, logs, metav1.CreateOptions{})
	must(t, err)
	t.Cleanup(func() { _ = client.Resource(gvr).Delete(bg, ns, metav1.DeleteOptions{}) })
}

// TestBusyBlockerLogs: a rollout that fails on a crash-looping container
// ends with the last lines of that container's previous log, as kwok's
// kubelet server serves them: in the Verdict record and, escaped, under
// the error on stderr, and in its recording, whose replay says them as
// the live run did. --logs=0 asks nothing; a user who may not read
// pods/log gets the verdict, one line saying why, and the reason in the
// record.
func TestBusyBlockerLogs(t *testing.T) {
	c := busyCluster(t)
	r := &rollout{t: t, c: c, ns: c.namespace(t)}
	prev := make([]string, 0, 12)
	for i := range 10 {
		prev = append(prev, fmt.Sprintf("line %d", i+1))
	}
	prev = append(prev, "\x1b[31mpanic: DATABASE_URL is not set\x1b[0m", "\x1b]0;owned\x07exit status 2")
	serveLogs(t, c, r.ns, prev, []string{"restarting"})
	r.create(1, "web:v1")
	r.waitRolledOut(90 * time.Second)
	r.patch(`{"spec":{"template":{"metadata":{"labels":{"deltas.test/crashloop":"true"}},"spec":{"containers":[{"name":"web","image":"web:broken"}]}}}}`)

	wait := []string{"--until=status=Current", "--fail-when=status=Failed", "--timeout=2m", "-o", "json"}
	run := func(kubeconfig string, args ...string) (result, logsVerdict) {
		t.Helper()
		res := runAs(t, kubeconfig, 3*time.Minute, append(args, wait...)...)
		lines := strings.Split(strings.TrimSpace(res.stdout), "\n")
		var v logsVerdict
		if err := json.Unmarshal([]byte(lines[len(lines)-1]), &v); err != nil || v.Type != "Verdict" || res.code != 2 {
			t.Fatalf("%v: exit %d, last line %s (%v); stderr %q", args, res.code, lines[len(lines)-1], err, res.stderr)
		}
		return res, v
	}
	var uid string // of the Pod whose logs the last verdict read
	logsOf := func(v logsVerdict) (name string, logs *struct {
		Container   string
		Previous    bool
		Lines       []string
		Unavailable string
	}) {
		for _, o := range v.Objects {
			if o.Kind == "Pod" && o.Logs != nil {
				uid = o.UID
				return o.Name, o.Logs
			}
		}
		return "", nil
	}

	dir := t.TempDir()
	recorded, page := filepath.Join(dir, "web.jsonl.zst"), filepath.Join(dir, "web.html")
	res, v := run(c.cp.AdminKubeconfig(), "deploy/web", "-n", r.ns, "--tree", "--record="+recorded, "--timeline="+page)
	name, logs := logsOf(v)
	if logs == nil || logs.Container != "web" || !logs.Previous || strings.Join(logs.Lines, "\n") != strings.Join(prev[2:], "\n") {
		t.Fatalf("the Verdict's logs %+v of %s, want the last 10 lines of web's previous instance", logs, name)
	}
	wantStderr := "  last 10 lines of the log of container web (its previous instance):\n    line 3\n"
	if !strings.Contains(res.stderr, wantStderr) || !strings.Contains(res.stderr, `    \x1b[31mpanic: DATABASE_URL is not set\x1b[0m`) ||
		!strings.Contains(res.stderr, `    \x1b]0;owned\x07exit status 2`) || strings.ContainsAny(res.stderr, "\x1b\x07") {
		t.Errorf("stderr does not end with the escaped log lines under the error:\n%s", res.stderr)
	}

	// The page shows them on the blocker's lane, on a click, as text.
	b := openBrowser(t)
	b.open(page)
	b.click(fmt.Sprintf(`[data-delta][data-uid=%q]`, uid))
	shown := eval[string](b, `(function(){var s=document.querySelector('[data-details] [data-logs="web"]');return s?s.textContent:''})()`)
	if !strings.Contains(shown, "Log of container web (its previous instance)") || !strings.Contains(shown, "panic: DATABASE_URL is not set") ||
		eval[int](b, `document.querySelectorAll('[data-details] [data-logs] *:not(h3):not(pre)').length`) != 0 {
		t.Errorf("a click on the crash-looping Pod's lane shows %q, want its log's last lines as text", shown)
	}
	b.noConsoleErrors()

	// --live's last frame has them under the blocking Pod, escaped: the
	// only blocker, its last five lines.
	live := startLive(t, c.cp.AdminKubeconfig(), 160, 40, "deploy/web", "-n", r.ns, "--live", "--tree",
		"--until=status=Current", "--fail-when=status=Failed", "--timeout=2m")
	if code := live.waitExit(3 * time.Minute); code != 2 {
		t.Fatalf("--live: exit %d, want 2; stderr: %s", code, live.stderr.String())
	}
	checkStream(t, live.out.String())
	final := strings.Join(lastFrame(live.out.String()), "\n")
	if !strings.Contains(final, "│ line 8") || !strings.Contains(final, `│ \x1b[31mpanic: DATABASE_URL is not set\x1b[0m`) || strings.Contains(final, "│ line 7") {
		t.Errorf("--live's last frame lacks the blocker's last five log lines:\n%s", final)
	}

	// The recording holds them: its replay, with no cluster to ask, says
	// them too (as many as --logs asks, of those recorded).
	res, v = run(c.cp.AdminKubeconfig(), "--replay="+recorded)
	if _, replayed := logsOf(v); replayed == nil || strings.Join(replayed.Lines, "\n") != strings.Join(logs.Lines, "\n") || !strings.Contains(res.stderr, wantStderr) {
		t.Errorf("the replay's logs %+v, stderr %q; want the recorded run's", replayed, res.stderr)
	}
	_, v = run(c.cp.AdminKubeconfig(), "--replay="+recorded, "--logs=2")
	if _, replayed := logsOf(v); replayed == nil || strings.Join(replayed.Lines, "\n") != strings.Join(prev[10:], "\n") {
		t.Errorf("the replay with --logs=2 has logs %+v, want the last 2 lines", replayed)
	}

	res, v = run(c.cp.AdminKubeconfig(), "deploy/web", "-n", r.ns, "--tree", "--logs=0")
	if _, logs := logsOf(v); logs != nil || strings.Contains(res.stderr, "log of container") {
		t.Errorf("--logs=0 read logs: %+v; stderr %q", logs, res.stderr)
	}

	// alice may watch the Pods and read their Events, not their logs.
	_, err := c.client.RbacV1().Roles(r.ns).Create(bg, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "pods"},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"pods", "events"}, Verbs: []string{"get", "list", "watch"}},
		},
	}, metav1.CreateOptions{})
	must(t, err)
	_, err = c.client.RbacV1().RoleBindings(r.ns).Create(bg, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "alice-pods"},
		Subjects:   []rbacv1.Subject{{Kind: "User", Name: "alice", APIGroup: "rbac.authorization.k8s.io"}},
		RoleRef:    rbacv1.RoleRef{Kind: "Role", Name: "pods", APIGroup: "rbac.authorization.k8s.io"},
	}, metav1.CreateOptions{})
	must(t, err)
	res, v = run(c.cp.UserKubeconfig(), "pods", "-n", r.ns, "-l", "deltas.test/crashloop=true")
	name, logs = logsOf(v)
	if logs == nil || len(logs.Lines) != 0 || !strings.Contains(logs.Unavailable, `cannot get resource "pods/log"`) {
		t.Errorf("alice's Verdict logs %+v, want unavailable, forbidden", logs)
	}
	if want := fmt.Sprintf("info: no logs for pod/%s: pods %q is forbidden: User \"alice\" cannot get resource \"pods/log\"", name, name); !strings.Contains(res.stderr, want) ||
		!strings.Contains(res.stderr, "matched --fail-when=status=Failed") {
		t.Errorf("alice's stderr %q lacks %q or the verdict", res.stderr, want)
	}
}
