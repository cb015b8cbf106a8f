package e2e

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestRightsRevokedWhileWatching: the open watch keeps delivering (the
// server authorizes at its start); the next re-watch is Forbidden, which
// ends the stream with exit 1 and an error naming the verb, after every
// delta received until then — not a retry loop.
func TestRightsRevokedWhileWatching(t *testing.T) {
	ns := newNamespace(t)
	grantAlice(t, testEnv.client, ns, "cm-watcher", "get", "list", "watch")
	createCM(t, ns, "before", nil, nil)

	// Watches last 5 to 10 s, so a re-watch comes soon after the revocation.
	s := startAs(t, testEnv.cp.UserKubeconfig(), "cm", "-n", ns, "--min-watch-timeout=5s")
	s.expect("Replaced: before")
	createUntilShown(t, s, 30*time.Second, func(i int) string {
		name := "during-" + string(rune('a'+i))
		createCM(t, ns, name, nil, nil)
		return "Added: " + name
	})
	must(t, testEnv.client.RbacV1().RoleBindings(ns).Delete(bg, "alice-cm-watcher", metav1.DeleteOptions{}))
	// Changes the open watch may still deliver.
	createCM(t, ns, "after", nil, nil)

	code := s.waitExit(60 * time.Second)
	if code != 1 {
		t.Fatalf("exit %d, want 1; stderr: %s", code, s.stderr.String())
	}
	stderr := s.stderr.String()
	if !strings.Contains(stderr, "error: ") || !strings.Contains(stderr, "forbidden") || !strings.Contains(stderr, "kubectl auth can-i") {
		t.Errorf("stderr %q, want the Forbidden error with its hint", stderr)
	}
	if n := strings.Count(stderr, "error: "); n != 1 {
		t.Errorf("%d errors on stderr, want 1: %q", n, stderr)
	}
	for _, line := range s.rest() {
		if !strings.HasPrefix(line, "Added: ") {
			t.Errorf("unexpected line after the revocation: %q", line)
		}
	}
}
