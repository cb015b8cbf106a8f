//go:build faults

package e2e

import (
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestFaultSnapshotIncomplete: --until-synced with --timeout while one type
// cannot be listed (every list of ConfigMaps answered 503 by the proxy)
// is not a snapshot: exit 1 naming the type and its last error, after the
// whole records of the types that listed. Once the lists work, the same
// command exits 0 with both.
func TestFaultSnapshotIncomplete(t *testing.T) {
	t.Parallel()
	c := sharedCluster()
	ns := c.namespace(t)
	if _, err := c.client.CoreV1().Secrets(ns).Create(bg, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s1"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.client.CoreV1().ConfigMaps(ns).Create(bg, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c1"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p := newFaultProxy(t, c.cp.Server())
	kc := p.kubeconfig(c.cp.AdminToken())
	p.setListFault("/configmaps", &httpFault{code: http.StatusServiceUnavailable, reason: "ServiceUnavailable"})

	r := runAs(t, kc, time.Minute, "cm,secrets", "-n", ns, "--until-synced", "--timeout=5s", "-o", "name")
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	want := "error: timed out waiting for the initial list of configmaps in namespace " + ns + ": failed to list configmaps: injected by the test proxy: ServiceUnavailable; the snapshot is incomplete"
	if r.code != 1 || r.stdout != "secret/s1\n" || !strings.HasPrefix(lines[len(lines)-1], want) {
		t.Errorf("exit %d, stdout %q, stderr %q; want exit 1, the Secret, and %q", r.code, r.stdout, r.stderr, want)
	}

	p.setListFault("/configmaps", nil)
	r = runAs(t, kc, time.Minute, "cm,secrets", "-n", ns, "--until-synced", "--timeout=30s", "-o", "name")
	if r.code != 0 || !strings.Contains(r.stdout, "configmap/c1\n") || !strings.Contains(r.stdout, "secret/s1\n") || r.stderr != "" {
		t.Errorf("lists work again: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}
