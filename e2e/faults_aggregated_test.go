//go:build faults

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// TestFaultAggregatedAPI: a real aggregated API (fake.example.com/v1
// widgets, a TLS server of the test registered by an APIService) that
// fails, goes away and comes back, under kubectl deltas --all-types (issue
// 25), and that does not render Tables (issue 23).
func TestFaultAggregatedAPI(t *testing.T) {
	api := newAggregatedAPI(t)
	c := startCluster(t, api.apiserverFlags()...)
	ctx, cancel := context.WithTimeout(bg, 5*time.Minute)
	defer cancel()
	api.put("default", "w1", 1)
	if err := api.register(ctx, c.client); err != nil {
		t.Fatal(err)
	}
	waitAvailable(t, c.client, "True", time.Minute)
	kubeconfig := c.cp.AdminKubeconfig()

	t.Run("no Tables: generic columns with one note", func(t *testing.T) {
		res := runAs(t, kubeconfig, time.Minute, "widgets.fake.example.com", "-n", "default", "-o", "wide", "--until-synced")
		note := "info: the server does not render widgets.fake.example.com as a table: generic columns for it"
		lines := strings.Split(strings.TrimSpace(res.stdout), "\n")
		if res.code != 0 || strings.Count(res.stderr, note) != 1 || len(lines) != 2 ||
			!strings.HasPrefix(lines[0], "TIME") || !strings.Contains(lines[0], "RESOURCEVERSION") ||
			!strings.Contains(lines[1], "Replaced") || !strings.Contains(lines[1], " w1 ") {
			t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
		}
	})

	for i, f := range []struct{ name, list, watch, warning string }{
		{"list answers 500", "500", "", "widgets are broken today"},
		{"list answers junk", "junk", "", "widgets.fake.example.com"},
		{"list hangs", "hang", "", ""},
		{"watch answers junk", "", "junk", "widgets.fake.example.com"},
	} {
		t.Run(f.name, func(t *testing.T) {
			api.setListFault(f.list)
			api.setWatchFault(f.watch)
			defer api.setListFault("")
			defer api.setWatchFault("")
			listsBefore := api.served("list")
			s := startAs(t, kubeconfig, "--all-types", "-n", "default")
			if f.warning != "" {
				waitStderrOf(t, s, f.warning, 30*time.Second)
			}
			if f.list == "hang" {
				deadline := time.Now().Add(30 * time.Second)
				for api.served("list") <= listsBefore && time.Now().Before(deadline) {
					time.Sleep(100 * time.Millisecond)
				}
				if api.served("list") <= listsBefore {
					t.Fatal("no list of widgets reached the server")
				}
			}
			// The other types keep streaming.
			name := fmt.Sprintf("probe-%d", i)
			createConfigMap(t, c.client, name)
			if !s.waitFor(func(l string) bool { return strings.HasSuffix(l, ": configmap "+name) }, 30*time.Second) {
				t.Fatalf("the ConfigMap %s did not stream while widgets fail; lines:\n%s\nstderr:\n%s", name, strings.Join(s.seen, "\n"), s.stderr.String())
			}
			// Once the fault is gone, a new widget streams too.
			api.setListFault("")
			api.setWatchFault("")
			widget := fmt.Sprintf("w-%d", i)
			api.put("default", widget, 2)
			if !s.waitFor(func(l string) bool { return strings.HasSuffix(l, "widget.fake.example.com "+widget) }, time.Minute) {
				t.Fatalf("widget %s did not stream after the fault; lines:\n%s\nstderr:\n%s", widget, strings.Join(s.seen, "\n"), s.stderr.String())
			}
			if n := strings.Count(s.stderr.String(), "warning:"); f.warning != "" && n != 1 {
				t.Errorf("%d warnings for one failing API, want 1:\n%s", n, s.stderr.String())
			}
			noStackTrace(t, s.stderr.String())
		})
	}

	t.Run("an incomplete snapshot is not a success", func(t *testing.T) {
		api.setListFault("500")
		defer api.setListFault("")
		res := runAs(t, kubeconfig, time.Minute, "--all-types", "-n", "default", "--until-synced", "--timeout=8s", "-o", "name")
		if res.code != 1 || !strings.Contains(res.stderr, "error: timed out waiting for the initial list of widgets.fake.example.com") ||
			!strings.Contains(res.stderr, "widgets are broken today") {
			t.Fatalf("exit %d\nstderr:\n%s", res.code, res.stderr)
		}
	})

	t.Run("down mid-stream and back", func(t *testing.T) {
		deletedW0 := map[string]bool{
			"Deleted: widget.fake.example.com w-0":                       true,
			"Deleted: widget.fake.example.com w-0 (final state unknown)": true,
		}
		s := startAs(t, kubeconfig, "--all-types", "-n", "default")
		s.expectSome("Replaced: widget.fake.example.com w1", 30*time.Second)
		api.down()
		waitStderrOf(t, s, "widgets.fake.example.com is down (", time.Minute)
		waitAvailable(t, c.client, "False", time.Minute)
		// Discovery now lists fake.example.com/v1 as stale, without its
		// types; a change of the APIService makes kubectl deltas read it.
		waitStale(t, c.client, time.Minute)
		if err := touchAPIService(ctx, c.client); err != nil {
			t.Fatal(err)
		}
		// Time for the follower to read discovery: the lines that come
		// are checked below.
		s.waitFor(func(string) bool { return false }, 5*time.Second)
		api.put("default", "w2", 2)
		api.remove("default", "w-0")
		api.up()
		waitAvailable(t, c.client, "True", time.Minute)
		s.expectSome("widget.fake.example.com w2", time.Minute)
		// The deletion comes as the resumed watch's DELETED or, when the
		// watch must relist (client-go relists after a very short watch or
		// a watch the aggregator refuses), as the relist's tombstone: both
		// are true, and only w-0 may be deleted.
		if !s.waitFor(func(l string) bool { return deletedW0[l] }, 30*time.Second) {
			t.Fatalf("no deletion of w-0 within 30s; lines:\n%s\nstderr:\n%s", strings.Join(s.seen, "\n"), s.stderr.String())
		}
		waitStderrOf(t, s, "info: APIService v1.fake.example.com is back after", 30*time.Second)
		s.stop()
		stream := strings.Join(s.seen, "\n")
		t.Logf("the stream:\n%s\nstderr:\n%s", stream, s.stderr.String())
		for _, l := range s.seen {
			if (strings.HasPrefix(l, "Deleted: widget") && !deletedW0[l]) || l == "Added: widget.fake.example.com w1" {
				t.Errorf("an outage read as a change: %q", l)
			}
		}
		errOut := s.stderr.String()
		if strings.Count(errOut, "is down (") != 1 || strings.Contains(errOut, "no longer served") || strings.Contains(errOut, "connection restored") ||
			!strings.Contains(errOut, "warning: widgets.fake.example.com is down (APIService v1.fake.example.com") {
			t.Errorf("stderr:\n%s", errOut)
		}
	})

	t.Run("down at start, then back", func(t *testing.T) {
		api.down()
		waitAvailable(t, c.client, "False", time.Minute)
		waitStale(t, c.client, time.Minute)

		// A named type whose API is down is an error, not "no such type".
		for _, arg := range []string{"widgets.fake.example.com", "widgets.v1.fake.example.com"} {
			res := runAs(t, kubeconfig, time.Minute, arg, "-n", "default")
			if res.code != 1 || res.stdout != "" || !strings.HasPrefix(res.stderr, "error: widgets.fake.example.com is served by APIService v1.fake.example.com, which is unavailable (FailedDiscoveryCheck: ") {
				t.Errorf("%s: exit %d\nstdout:\n%s\nstderr:\n%s", arg, res.code, res.stdout, res.stderr)
			}
		}
		res := runAs(t, kubeconfig, time.Minute, "widgets", "-n", "default")
		if res.code != 1 || res.stdout != "" || !strings.Contains(res.stderr, "APIService v1.fake.example.com, which is unavailable (FailedDiscoveryCheck: ") {
			t.Errorf("widgets: exit %d\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
		}

		// A snapshot of every type while one is down is incomplete: what
		// could be listed, then exit 1 naming the group version.
		res = runAs(t, kubeconfig, time.Minute, "--all-types", "-n", "default", "--until-synced", "-o", "name")
		if res.code != 1 || !strings.Contains(res.stdout, "service/kubernetes") ||
			!strings.Contains(res.stderr, "error: the snapshot is incomplete: the types of the API groups that are down were not listed: fake.example.com/v1 (APIService v1.fake.example.com: FailedDiscoveryCheck: ") {
			t.Errorf("--all-types --until-synced while down: exit %d\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
		}

		s := startAs(t, kubeconfig, "--all-types", "-n", "default")
		waitStderrOf(t, s, "warning: not watching the API groups that are down: fake.example.com/v1 (APIService v1.fake.example.com: FailedDiscoveryCheck: ", 30*time.Second)
		if !strings.Contains(s.stderr.String(), "their types join the stream when they are back") {
			t.Errorf("stderr:\n%s", s.stderr.String())
		}
		api.up()
		waitAvailable(t, c.client, "True", time.Minute)
		waitStderrOf(t, s, "info: watching new type widgets.fake.example.com", time.Minute)
		s.expectSome("widget.fake.example.com w1", 30*time.Second)

		// Gone is gone: the APIService deleted, its objects are
		// tombstoned and the type leaves the stream.
		if err := c.client.Discovery().RESTClient().Delete().AbsPath("/apis/apiregistration.k8s.io/v1/apiservices/" + aggAPIService).Do(ctx).Error(); err != nil {
			t.Fatal(err)
		}
		s.expectSome("Deleted: widget.fake.example.com w1 (final state unknown)", time.Minute)
		waitStderrOf(t, s, "info: widgets.fake.example.com is no longer served: stopped watching it", 30*time.Second)
	})
}

// expectSome reads lines until one ends with want, failing after limit.
func (s *stream) expectSome(want string, limit time.Duration) {
	s.t.Helper()
	if !s.waitFor(func(l string) bool { return strings.HasSuffix(l, want) }, limit) {
		s.t.Fatalf("no line %q within %s; lines:\n%s\nstderr:\n%s", want, limit, strings.Join(s.seen, "\n"), s.stderr.String())
	}
}

// waitStale waits until aggregated discovery lists fake.example.com/v1 as
// stale.
func waitStale(t *testing.T, client kubernetes.Interface, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	want := fmt.Sprintf(`"name":%q},"versions":[{"version":%q,"freshness":"Stale"}`, aggGroup, aggVersion)
	for {
		ctx, cancel := context.WithTimeout(bg, 5*time.Second)
		raw, err := client.Discovery().RESTClient().Get().AbsPath("/apis").
			SetHeader("Accept", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList").DoRaw(ctx)
		cancel()
		if err == nil && strings.Contains(string(raw), want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("discovery did not list %s/%s as stale within %s: %v", aggGroup, aggVersion, limit, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// createConfigMap creates ConfigMap name in namespace default.
func createConfigMap(t *testing.T, client kubernetes.Interface, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(bg, 10*time.Second)
	defer cancel()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := client.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}
