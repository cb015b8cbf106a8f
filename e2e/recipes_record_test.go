package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-deltas/kubectl-deltas/internal/history/recording"
)

// recordingPage is the page whose recipes for leaving a recorder running
// these tests try.
const recordingPage = "../docs/recording.md"

// fencedAfter is the first ```lang block of the page after the heading.
func fencedAfter(t *testing.T, heading, lang string) string {
	t.Helper()
	data, err := os.ReadFile(recordingPage)
	if err != nil {
		t.Fatal(err)
	}
	page := string(data)
	at := strings.Index(page, "\n"+heading+"\n")
	if at < 0 {
		t.Fatalf("%s has no heading %q", recordingPage, heading)
	}
	open := "```" + lang + "\n"
	begin := strings.Index(page[at:], open)
	if begin < 0 {
		t.Fatalf("%s has no %s block after %q", recordingPage, lang, heading)
	}
	body, _, found := strings.Cut(page[at+begin+len(open):], "```")
	if !found {
		t.Fatalf("%s: the %s block after %q does not end", recordingPage, lang, heading)
	}
	return body
}

// TestRecipeSystemdUnit: the page's systemd unit is one systemd accepts
// (systemd-analyze verify, the binary put where the unit says), and its
// command, run as the unit runs it (%h its home), records into its
// directory until SIGTERM ends it cleanly: the index says the segment's
// whole length.
func TestRecipeSystemdUnit(t *testing.T) {
	unit := fencedAfter(t, "### Leave it running: a systemd unit", "ini")
	m := regexp.MustCompile(`(?m)^ExecStart=(\S+) (.*)$`).FindStringSubmatch(unit)
	if m == nil {
		t.Fatalf("the unit has no ExecStart:\n%s", unit)
	}
	plugin := filepath.Join(testEnv.pathDir, "kubectl-deltas")
	file := filepath.Join(t.TempDir(), "deltas-shop.service")
	if err := os.WriteFile(file, []byte(strings.Replace(unit, m[1], plugin, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	verify := exec.Command("systemd-analyze", "verify", file)
	if out, err := verify.CombinedOutput(); err != nil || len(out) > 0 {
		t.Fatalf("systemd-analyze verify of the page's unit: %v\n%s", err, out)
	}

	ns := newNamespace(t)
	home := t.TempDir()
	args := strings.Fields(strings.ReplaceAll(m[2], "%h", home))
	for i, a := range args {
		if a == "shop" && i > 0 && args[i-1] == "-n" {
			args[i] = ns
		}
	}
	dir := filepath.Join(home, "deltas", "shop") + "/"
	s := start(t, args...)
	segmentsAtLeast(t, dir, 1, time.Minute)
	createCM(t, ns, "a", nil, map[string]string{"k": "1"})
	updateCM(t, ns, "a", "k", "2")
	time.Sleep(2 * time.Second)
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-s.done
	if len(s.seen) > 0 {
		t.Errorf("-q printed %v", s.seen)
	}
	ix, err := recording.LoadIndex(dir, os.Stderr, true)
	if err != nil || ix.Rebuilt {
		t.Fatalf("the unit's recording after SIGTERM: %v (its index rebuilt: %v), stderr %q", err, ix != nil && ix.Rebuilt, s.stderr.String())
	}
	summary := run(t, time.Minute, "recording", dir, "-o", "json")
	var c recording.Contents
	if err := json.Unmarshal([]byte(summary.stdout), &c); err != nil || c.Records < 2 || c.Recording {
		t.Errorf("kubectl deltas recording %s: %+v (%v), stderr %q", dir, c, err, summary.stderr)
	}
}

// TestRecipeRecorderInTheCluster: the page's manifest applies with
// --dry-run=server as written (in a namespace of its own), the
// ServiceAccount may list and watch every type the recorder records and
// nothing more (kubectl auth can-i --as), and the container's command,
// run with that ServiceAccount's token, records them all — the Events
// too — without a word of what it may not do.
func TestRecipeRecorderInTheCluster(t *testing.T) {
	manifest := fencedAfter(t, "### Leave it running: in the cluster", "yaml")
	ns := newNamespace(t)
	manifest = strings.ReplaceAll(manifest, "namespace: shop", "namespace: "+ns)
	file := filepath.Join(t.TempDir(), "recorder.yaml")
	if err := os.WriteFile(file, []byte(manifest), 0o600); err != nil {
		t.Fatal(err)
	}
	kubectl := func(args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, testEnv.kubectl, args...)
		cmd.Env = append(os.Environ(), "KUBECONFIG="+testEnv.cp.AdminKubeconfig())
		out, err := cmd.CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	if out, err := kubectl("apply", "--dry-run=server", "-f", file); err != nil || strings.Count(out, "(server dry run)") != 5 {
		t.Fatalf("kubectl apply --dry-run=server of the page's manifest: %v\n%s", err, out)
	}
	if out, err := kubectl("apply", "-f", file); err != nil {
		t.Fatalf("kubectl apply: %v\n%s", err, out)
	}

	var deploy appsv1.Deployment
	for _, doc := range strings.Split(manifest, "\n---\n") {
		if strings.Contains(doc, "kind: Deployment") {
			if err := yaml.Unmarshal([]byte(doc), &deploy); err != nil {
				t.Fatal(err)
			}
		}
	}
	args := deploy.Spec.Template.Spec.Containers[0].Args
	if len(args) == 0 {
		t.Fatalf("no container args in the manifest:\n%s", manifest)
	}
	sa := "system:serviceaccount:" + ns + ":" + deploy.Spec.Template.Spec.ServiceAccountName
	for _, c := range []struct{ verb, resource, want string }{
		{"list", "deployments.apps", "yes"}, {"watch", "deployments.apps", "yes"},
		{"list", "replicasets.apps", "yes"}, {"watch", "replicasets.apps", "yes"},
		{"list", "pods", "yes"}, {"watch", "pods", "yes"},
		{"list", "configmaps", "yes"}, {"watch", "configmaps", "yes"},
		{"list", "events.events.k8s.io", "yes"}, {"watch", "events.events.k8s.io", "yes"},
		{"list", "secrets", "no"}, {"update", "configmaps", "no"}, {"list", "pods -n default", "no"},
	} {
		out, _ := kubectl(append([]string{"auth", "can-i", "--as=" + sa, c.verb}, append(strings.Fields(c.resource), "-n", ns)...)...)
		if strings.Contains(c.resource, "-n default") {
			out, _ = kubectl("auth", "can-i", "--as="+sa, c.verb, "pods", "-n", "default")
		}
		if out != c.want {
			t.Errorf("kubectl auth can-i --as=%s %s %s: %q, want %q", sa, c.verb, c.resource, out, c.want)
		}
	}

	// The container's command, as the ServiceAccount.
	token, err := kubectl("create", "token", deploy.Spec.Template.Spec.ServiceAccountName, "-n", ns)
	if err != nil {
		t.Fatalf("kubectl create token: %v\n%s", err, token)
	}
	kubeconfig := filepath.Join(t.TempDir(), "sa.kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: %q, insecure-skip-tls-verify: true}}]
users: [{name: sa, user: {token: %q}}]
contexts: [{name: sa, context: {cluster: c, user: sa}}]
current-context: sa
`, testEnv.config.Host, token)), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "recording") + "/"
	for i, a := range args {
		switch {
		case strings.HasPrefix(a, "--record="):
			args[i] = "--record=" + dir
		case a == "shop" && i > 0 && args[i-1] == "-n":
			args[i] = ns
		}
	}
	s := startAs(t, kubeconfig, args...)
	segmentsAtLeast(t, dir, 1, time.Minute)
	createCM(t, ns, "watched", nil, nil)
	time.Sleep(3 * time.Second)
	s.stop()
	if strings.Contains(s.stderr.String(), "may not") || strings.Contains(s.stderr.String(), "error") {
		t.Errorf("the recorder as its ServiceAccount said: %s", s.stderr.String())
	}
	summary := run(t, time.Minute, "recording", dir, "-o", "json")
	var c recording.Contents
	if err := json.Unmarshal([]byte(summary.stdout), &c); err != nil {
		t.Fatalf("kubectl deltas recording: %v, stdout %q, stderr %q", err, summary.stdout, summary.stderr)
	}
	var resources []string
	for _, col := range c.Collections {
		resources = append(resources, col.Resource)
	}
	for _, want := range []string{"deployments", "replicasets", "pods", "configmaps", "events"} {
		if !strings.Contains(strings.Join(resources, ","), want) {
			t.Errorf("the recording's collections %v leave out %s", resources, want)
		}
	}
	if c.Records < 1 {
		t.Errorf("the recording holds %d records, want the ConfigMap made", c.Records)
	}
}
