package e2e

import (
	"strings"
	"testing"
	"time"
)

// --resource-version resumes a stream: the changes after that
// resourceVersion come out, deletes of objects the new run never listed
// included.
func TestResumeFromResourceVersion(t *testing.T) {
	ns := newNamespace(t)
	createCM(t, ns, "kept", nil, map[string]string{"a": "1"})
	first := run(t, time.Minute, "cm", "-n", ns, "--until-synced", "-o", "jsonpath={.resourceVersion}")
	if first.code != 0 || first.stdout == "" {
		t.Fatalf("first run: %+v", first)
	}
	rv := first.stdout
	createCM(t, ns, "new", nil, map[string]string{"b": "1"})
	updateCM(t, ns, "kept", "a", "2")
	deleteCM(t, ns, "kept")
	r := run(t, time.Minute, "cm", "-n", ns, "--resource-version="+rv, "--count=3")
	if r.code != 0 {
		t.Fatalf("resume: exit %d, stderr %q", r.code, r.stderr)
	}
	if want := "Added: new\nUpdated: kept\nDeleted: kept\n"; r.stdout != want {
		t.Errorf("resumed stream:\n%s\nwant:\n%s", r.stdout, want)
	}
}

// TestResumeFromAResourceVersionThatCannotBe: a --resource-version that is
// not a number, or is ahead of the server, is an error at the start,
// naming the server's resourceVersion; nothing is printed.
func TestResumeFromAResourceVersionThatCannotBe(t *testing.T) {
	ns := newNamespace(t)
	createCM(t, ns, "a", nil, nil)
	r := run(t, time.Minute, "cm", "-n", ns, "--resource-version=abc")
	if r.code == 0 || r.stdout != "" || !strings.HasPrefix(r.stderr, `error: invalid --resource-version "abc": a kube-apiserver's resourceVersions are numbers`) {
		t.Errorf("--resource-version=abc: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	r = run(t, time.Minute, "cm", "-n", ns, "--resource-version=999999999999", "--timeout=20s")
	now := run(t, time.Minute, "cm", "-n", ns, "--until-synced", "-o", "jsonpath={.resourceVersion}")
	if r.code == 0 || r.stdout != "" || !strings.HasPrefix(r.stderr, "error: --resource-version=999999999999 is ahead of the server, whose resourceVersion is ") ||
		!strings.Contains(r.stderr, "leave it out to list") {
		t.Errorf("--resource-version ahead of the server: exit %d, stdout %q, stderr %q (an object's resourceVersion now: %s)", r.code, r.stdout, r.stderr, now.stdout)
	}
}
