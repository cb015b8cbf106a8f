package e2e

import (
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestRightsRevokedWhileWatching: the open watch keeps delivering (the
// server authorizes at its start); the next re-watch is Forbidden, which
// ends the stream with exit 1 and an error naming the verb, after every
// delta received until then — not a retry loop.
func TestRightsRevokedWhileWatching(t *testing.T) {
	ns := newNamespace(t)
	_, err := testEnv.client.RbacV1().Roles(ns).Create(bg, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "cm-watcher"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch"}}},
	}, metav1.CreateOptions{})
	must(t, err)
	_, err = testEnv.client.RbacV1().RoleBindings(ns).Create(bg, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "alice-cm-watcher"},
		Subjects:   []rbacv1.Subject{{Kind: "User", Name: "alice", APIGroup: "rbac.authorization.k8s.io"}},
		RoleRef:    rbacv1.RoleRef{Kind: "Role", Name: "cm-watcher", APIGroup: "rbac.authorization.k8s.io"},
	}, metav1.CreateOptions{})
	must(t, err)
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
