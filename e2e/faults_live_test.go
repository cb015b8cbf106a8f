//go:build faults

package e2e

import (
	"context"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestFaultLiveThroughAnOutage: --live in a 70-column pseudo-terminal
// shows the state of its own data while it lasts — the named object
// waited for, until it comes; the watch failing while kube-apiserver is
// down (since when, retrying), until its recovery, which is said once —
// and every frame's first line keeps the time, the command line cut
// instead. What the run wrote to stderr meanwhile comes out, whole, below
// the last frame.
func TestFaultLiveThroughAnOutage(t *testing.T) {
	c := startCluster(t)
	ns := c.namespace(t)
	live := startLive(t, c.cp.AdminKubeconfig(), 70, 20, "cm/ready", "-n", ns, "--live", "--diff", "--show-manager", "--health")
	has := func(want string) func([]string) bool {
		return func(lines []string) bool { return strings.Contains(strings.Join(lines, "\n"), want) }
	}
	live.waitFrame("saying it waits for cm/ready", 30*time.Second, has(`"ready" not found`))

	_, err := c.client.CoreV1().ConfigMaps(ns).Create(bg, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "ready"}}, metav1.CreateOptions{})
	must(t, err)
	live.waitFrame("with configmap/ready and no wait", 30*time.Second, func(lines []string) bool {
		return rowOf(lines, "configmap/ready") != "" && !has("not found")(lines)
	})

	must(t, c.cp.StopAPIServer())
	live.waitFrame("saying the watch fails", 60*time.Second, func(lines []string) bool {
		return has("! since ")(lines) && rowOf(lines, "configmap/ready") != ""
	})
	ctx, cancel := context.WithTimeout(bg, 2*time.Minute)
	err = c.cp.StartAPIServer(ctx)
	cancel()
	must(t, err)
	live.waitFrame("saying the connection is restored", 60*time.Second, func(lines []string) bool {
		return has("✓ connection restored after ")(lines) && !has("! since ")(lines)
	})

	_ = syscall.Kill(-live.cmd.Process.Pid, syscall.SIGINT)
	if code := live.waitExit(30 * time.Second); code != 130 {
		t.Errorf("exit %d after Ctrl-C, want 130; stderr: %s", code, live.stderr.String())
	}
	checkStream(t, live.out.String())
	clock := regexp.MustCompile(`elapsed \S+$`)
	for i, f := range frames(live.out.String()) {
		title := screenLines(f)[0]
		if !clock.MatchString(title) || utf8.RuneCountInString(title) != 70 {
			t.Errorf("frame %d's first line %q: want 70 columns ending with the elapsed time", i, title)
		}
	}
	stderr := live.stderr.String()
	for _, want := range []string{`"ready" not found in namespace`, "\nwarning: ", "\ninfo: connection restored after "} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr after the view lacks %q:\n%s", want, stderr)
		}
	}
}
