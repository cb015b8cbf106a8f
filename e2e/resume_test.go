package e2e

import (
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
