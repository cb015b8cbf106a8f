//go:build faults

package e2e

// Many clusters in one stream (issue 15): two control planes, two contexts
// of one kubeconfig.

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kubectl-deltas/kubectl-deltas/test/otelcol"
)

// twoClusters writes a kubeconfig whose contexts east and west are the
// admin contexts of two dedicated control planes, and creates namespace ns
// in both.
func twoClusters(t *testing.T, ns string) (kubeconfig string, east, west *cluster) {
	t.Helper()
	east, west = startCluster(t), startCluster(t)
	merged := clientcmdapi.NewConfig()
	for name, c := range map[string]*cluster{"east": east, "west": west} {
		cfg, err := clientcmd.LoadFromFile(c.cp.AdminKubeconfig())
		if err != nil {
			t.Fatal(err)
		}
		ctx := cfg.Contexts[cfg.CurrentContext]
		merged.Clusters[name] = cfg.Clusters[ctx.Cluster]
		merged.AuthInfos[name] = cfg.AuthInfos[ctx.AuthInfo]
		merged.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name, Namespace: ns}
		_, err = c.client.CoreV1().Namespaces().Create(bg, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		must(t, err)
	}
	merged.CurrentContext = "east"
	kubeconfig = filepath.Join(t.TempDir(), "kubeconfig")
	must(t, clientcmd.WriteToFile(*merged, kubeconfig))
	return kubeconfig, east, west
}

func createIn(t *testing.T, c *cluster, ns, name string, data map[string]string) {
	t.Helper()
	_, err := c.client.CoreV1().ConfigMaps(ns).Create(bg, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: data}, metav1.CreateOptions{})
	must(t, err)
}

// TestFaultManyClusters: one stream over two clusters, each record naming
// its context; one cluster's kube-apiserver killed and restarted while the
// other goes on; a cluster down at start (an error, or skipped with
// --skip-unavailable); --until across clusters; bad input.
func TestFaultManyClusters(t *testing.T) {
	const ns = "fleet"
	kubeconfig, east, west := twoClusters(t, ns)
	createIn(t, east, ns, "east-0", nil)
	createIn(t, west, ns, "west-0", nil)

	t.Run("text and name lead with the context", func(t *testing.T) {
		r := runAs(t, kubeconfig, time.Minute, "cm", "--context=east,west", "--until-synced")
		got := strings.Split(strings.TrimSpace(r.stdout), "\n")
		slices.Sort(got)
		want := []string{"east Replaced: east-0", "west Replaced: west-0"}
		if r.code != 0 || !slices.Equal(got, want) {
			t.Errorf("exit %d, stdout %q, want %q; stderr: %s", r.code, got, want, r.stderr)
		}
		r = runAs(t, kubeconfig, time.Minute, "cm", "--all-contexts", "--until-synced", "-o", "name")
		got = strings.Split(strings.TrimSpace(r.stdout), "\n")
		slices.Sort(got)
		want = []string{"east configmap/east-0", "west configmap/west-0"}
		if r.code != 0 || !slices.Equal(got, want) {
			t.Errorf("--all-contexts -o name: exit %d, stdout %q, want %q; stderr: %s", r.code, got, want, r.stderr)
		}
	})

	t.Run("one stream, a cluster restarted", func(t *testing.T) {
		d := startJSON(t, kubeconfig, "cm", "--context", "east", "--context", "west")
		state := func() map[string]string {
			out := map[string]string{}
			for _, c := range []*cluster{east, west} {
				s, err := c.state(bg, ns)
				must(t, err)
				maps.Copy(out, s)
			}
			return out
		}
		converge := func() {
			t.Helper()
			deadline := time.Now().Add(60 * time.Second)
			for {
				diff := stateDiff(d.led.snapshot(), state())
				if len(diff) == 0 {
					d.checkRules()
					return
				}
				if time.Now().After(deadline) {
					t.Fatalf("the stream never matched both clusters:\n  %s\n%s", strings.Join(diff, "\n  "), d.describe())
				}
				time.Sleep(200 * time.Millisecond)
			}
		}
		converge()
		createIn(t, east, ns, "east-1", nil)
		createIn(t, west, ns, "west-1", nil)
		converge()

		must(t, west.cp.StopAPIServer())
		d.waitStderr(`warning: context "west": `, 60*time.Second)
		for i := 2; i < 5; i++ {
			createIn(t, east, ns, fmt.Sprintf("east-%d", i), nil)
		}
		d.waitRecord("east-4 while west is down", 30*time.Second, func(r *deltaRecord) bool { return r.Name == "east-4" })
		ctx, cancel := context.WithTimeout(bg, 2*time.Minute)
		must(t, west.cp.StartAPIServer(ctx))
		cancel()
		createIn(t, west, ns, "west-2", nil)
		d.waitStderr(`info: context "west": connection restored after `, 60*time.Second)
		converge()

		for _, rec := range d.led.recordsFrom(0) {
			if want, _, _ := strings.Cut(rec.Name, "-"); rec.Context != want {
				t.Errorf("%s came with context %q, want %q", rec.brief(), rec.Context, want)
			}
		}
		if lines := d.stderrLines("warning: "); len(lines) != 1 || !strings.Contains(lines[0], `context "west"`) {
			t.Errorf("want one warning, naming west: %q", lines)
		}
		if code := d.stop(); code != 130 {
			t.Errorf("exit code after SIGINT = %d, want 130", code)
		}
	})

	t.Run("until across clusters", func(t *testing.T) {
		s := startAs(t, kubeconfig, "cm/flag", "--context=east,west", "--until=jsonpath={.data.ready}=yes", "-o", "name")
		createIn(t, east, ns, "flag", map[string]string{"ready": "yes"})
		createIn(t, west, ns, "flag", map[string]string{"ready": "no"})
		got := []string{s.next(30 * time.Second), s.next(30 * time.Second)}
		slices.Sort(got)
		if want := []string{"east configmap/flag", "west configmap/flag"}; !slices.Equal(got, want) {
			t.Fatalf("got %q, want %q", got, want)
		}
		select {
		case <-s.done:
			t.Fatalf("exited while west's flag is not ready; stderr: %s", s.stderr.String())
		case <-time.After(2 * time.Second):
		}
		_, err := west.client.CoreV1().ConfigMaps(ns).Update(bg, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "flag"}, Data: map[string]string{"ready": "yes"}}, metav1.UpdateOptions{})
		must(t, err)
		if code := s.waitExit(30 * time.Second); code != 0 {
			t.Fatalf("exit %d; stderr: %s", code, s.stderr.String())
		}
		for _, c := range []string{"east", "west"} {
			if want := fmt.Sprintf("context %q: configmap/flag condition met", c); !strings.Contains(s.stderr.String(), want) {
				t.Errorf("stderr %q lacks %q", s.stderr.String(), want)
			}
		}
	})

	t.Run("a cluster down at start", func(t *testing.T) {
		must(t, west.cp.StopAPIServer())
		defer func() {
			ctx, cancel := context.WithTimeout(bg, 2*time.Minute)
			defer cancel()
			must(t, west.cp.StartAPIServer(ctx))
		}()
		r := runAs(t, kubeconfig, time.Minute, "cm", "--context=east,west", "--until-synced")
		if r.code != 1 || r.stdout != "" || !strings.HasPrefix(r.stderr, `error: context "west": `) || !strings.Contains(r.stderr, "--skip-unavailable") {
			t.Errorf("west down: exit %d, stdout %q, stderr %q; want exit 1 naming west", r.code, r.stdout, r.stderr)
		}
		r = runAs(t, kubeconfig, time.Minute, "cm", "--context=east,west", "--until-synced", "--skip-unavailable", "-o", "name")
		if r.code != 0 || !strings.Contains(r.stdout, "east configmap/east-0") || strings.Contains(r.stdout, "west ") ||
			!strings.HasPrefix(r.stderr, `warning: skipping context "west": `) {
			t.Errorf("--skip-unavailable: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
		}
	})

	// --otlp over several clusters: each record under its own cluster,
	// live and in a backfill of the recording, with the same ids.
	t.Run("otlp names each record's cluster", func(t *testing.T) {
		rec := filepath.Join(t.TempDir(), "r.jsonl.zst")
		byID := func(logs []otelcol.ReceivedLog) map[string]string {
			out := map[string]string{}
			for _, l := range logs {
				id, _ := l.Attributes["deltas.record.id"].(string)
				cluster, _ := l.Resource["k8s.cluster.name"].(string)
				if _, twice := out[id]; twice || id == "" {
					t.Errorf("record id %q twice or empty: %+v", id, l)
				}
				out[id] = cluster
			}
			return out
		}
		live := startCollector(t)
		r := runAs(t, kubeconfig, time.Minute, "cm", "--context=east,west", "--until-synced", "-o", "json", "--otlp="+live.URL(), "--record="+rec)
		lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
		if r.code != 0 || r.stderr != "" {
			t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
		}
		exported := byID(live.waitLogs(t, len(lines), 30*time.Second))
		clusters := map[string]int{}
		for _, cluster := range exported {
			clusters[cluster]++
		}
		printed := map[string]int{}
		for _, line := range lines {
			var record struct{ Context string }
			must(t, json.Unmarshal([]byte(line), &record))
			printed[record.Context]++
		}
		if len(exported) != len(lines) || !maps.Equal(clusters, printed) || len(printed) != 2 {
			t.Errorf("exported %d records by cluster %v; printed %d by context %v", len(exported), clusters, len(lines), printed)
		}
		backfill := startCollector(t)
		r = runAs(t, kubeconfig, time.Minute, "--replay="+rec, "-q", "--otlp="+backfill.URL())
		if r.code != 0 || r.stderr != "" {
			t.Fatalf("backfill: exit %d, stderr %q", r.code, r.stderr)
		}
		if again := byID(backfill.waitLogs(t, len(lines), 30*time.Second)); !maps.Equal(again, exported) {
			t.Errorf("the backfill exported %v, want what the live run did, %v", again, exported)
		}
	})

	// A recording names the API server it recorded: a run on another
	// cluster — another context, or the same context name pointing at
	// another server — would go on from positions of another etcd, say
	// the recorded objects deleted and miss what the other holds. It is
	// refused before it writes anything.
	t.Run("a recording goes on with its own cluster only", func(t *testing.T) {
		cfg, err := clientcmd.LoadFromFile(kubeconfig)
		must(t, err)
		cfg.Contexts["east"] = &clientcmdapi.Context{Cluster: "west", AuthInfo: "west", Namespace: ns}
		moved := filepath.Join(t.TempDir(), "kubeconfig")
		must(t, clientcmd.WriteToFile(*cfg, moved))
		for _, path := range []string{filepath.Join(t.TempDir(), "r.jsonl.zst"), filepath.Join(t.TempDir(), "dir") + "/"} {
			first := runAs(t, kubeconfig, time.Minute, "cm", "--until-synced", "-o", "name", "--record="+path)
			if first.code != 0 || !strings.Contains(first.stdout, "configmap/east-0") {
				t.Fatalf("%s: exit %d, stdout %q, stderr %q", path, first.code, first.stdout, first.stderr)
			}
			for _, tc := range []struct {
				kubeconfig string
				args       []string
			}{{kubeconfig, []string{"--context=west"}}, {moved, nil}} {
				r := runAs(t, tc.kubeconfig, time.Minute, append([]string{"cm", "--until-synced", "--record=" + path}, tc.args...)...)
				if r.code != 1 || r.stdout != "" || !strings.HasPrefix(r.stderr, "error: --record: ") || !strings.Contains(r.stderr, east.cp.Server()) ||
					!strings.Contains(r.stderr, west.cp.Server()) || !strings.Contains(r.stderr, "record it to a new file") {
					t.Errorf("%s, %s %v: exit %d, stdout %q, stderr %q; want exit 1 naming both servers and the fix", path, tc.kubeconfig, tc.args, r.code, r.stdout, r.stderr)
				}
			}
			replayed := run(t, time.Minute, "--replay="+path, "-o", "name")
			if replayed.code != 0 || replayed.stdout != first.stdout {
				t.Errorf("%s after the refused runs replays %q (exit %d, %s), want what the first run printed, %q", path, replayed.stdout, replayed.code, replayed.stderr, first.stdout)
			}
			again := runAs(t, kubeconfig, time.Minute, "cm", "--until-synced", "--context=east", "--record="+path)
			if again.code != 0 || again.stdout != "" {
				t.Errorf("%s with its own cluster, --context=east: exit %d, stdout %q, stderr %q; want it to go on, nothing changed", path, again.code, again.stdout, again.stderr)
			}
		}
	})

	t.Run("bad input", func(t *testing.T) {
		for _, tc := range []struct {
			args []string
			want string
		}{
			{[]string{"cm", "--context=east,nope"}, `error: context "nope" not found in the kubeconfig`},
			{[]string{"cm", "--context=east", "--all-contexts"}, "error: --context and --all-contexts cannot be used together"},
			{[]string{"cm", "--context=east,west", "--cluster=east"}, "error: --cluster cannot be used with several contexts"},
		} {
			r := runAs(t, kubeconfig, time.Minute, tc.args...)
			if r.code != 1 || r.stdout != "" || !strings.HasPrefix(r.stderr, tc.want) {
				t.Errorf("%v: exit %d, stdout %q, stderr %q; want %q", tc.args, r.code, r.stdout, r.stderr, tc.want)
			}
		}
	})
}
