package cmd

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kubectl-deltas/kubectl-deltas/internal/history/recording"
)

// demo is a cluster with namespace demo: two ConfigMaps, and a Deployment
// web with its ReplicaSet and Pod.
func demo() *fakeCluster {
	return &fakeCluster{
		namespaces: []string{"demo"},
		objects: map[string][]string{
			"/api/v1/namespaces/demo/configmaps": {
				object("v1", "ConfigMap", "a"), object("v1", "ConfigMap", "b"),
			},
			"/apis/apps/v1/namespaces/demo/deployments":     {object("apps/v1", "Deployment", "web")},
			"/apis/apps/v1/namespaces/demo/replicasets":     {object("apps/v1", "ReplicaSet", "web-1", "Deployment/web")},
			"/api/v1/namespaces/demo/pods":                  {object("v1", "Pod", "web-1-x", "ReplicaSet/web-1")},
			"/apis/events.k8s.io/v1/namespaces/demo/events": {},
			"/api/v1/namespaces":                            {},
		},
	}
}

// TestRun runs the command against a fake cluster: which targets are
// chosen and how the sinks are wired show in what is printed; the exit
// codes and stderr in the outcome.
func TestRun(t *testing.T) {
	cases := []struct {
		name   string
		args   []string
		code   int
		stdout string
		// stderr is a prefix of stderr ("" for nothing at all).
		stderr string
	}{
		{name: "snapshot", args: []string{"cm", "--until-synced"}, stdout: "Replaced: a\nReplaced: b\n"},
		{name: "short name and name", args: []string{"cm/b", "--until-synced", "-o", "name"}, stdout: "configmap/b\n"},
		{name: "two types", args: []string{"cm,deploy", "--until-synced"},
			stdout: "Replaced: configmap a\nReplaced: configmap b\nReplaced: deployment.apps web\n"},
		{name: "a category", args: []string{"all", "--until-synced"},
			stdout: "Replaced: deployment.apps web\nReplaced: pod web-1-x\nReplaced: replicaset.apps web-1\n"},
		{name: "unknown namespace, a snapshot", args: []string{"cm", "-n", "nowhere", "--until-synced"}, code: 1,
			stderr: `error: namespace "nowhere" not found`},
		{name: "count", args: []string{"cm", "--count=1"}, stdout: "Replaced: a\n"},
		{name: "watch-only snapshot is nothing", args: []string{"cm", "--count=0", "--types=Deleted", "--until-synced"}},
		{name: "where", args: []string{"cm", "--until-synced", "--where=name == 'b'"}, stdout: "Replaced: b\n"},
		{name: "tree", args: []string{"deploy/web", "--tree", "--until-synced"},
			stdout: "Replaced: deployment.apps web\nReplaced: pod web-1-x (deployment.apps web → replicaset.apps web-1)\nReplaced: replicaset.apps web-1 (deployment.apps web)\n"},
		{name: "missing named object", args: []string{"cm/nope", "--until-synced"},
			stderr: `info: configmaps "nope" not found in namespace "demo"` + "\n"},
		{name: "missing named object, waited for", args: []string{"cm/nope", "--until=create", "--timeout=1s"}, code: 1,
			stderr: `info: configmaps "nope" not found in namespace "demo": waiting for it to be created` + "\nerror: timed out waiting for the condition on configmaps/nope"},
		{name: "until met", args: []string{"cm/a", "--until=create", "-q"}, stderr: "configmap/a condition met\n"},
		{name: "fail-when", args: []string{"cm/a", "--fail-when=create"}, code: 2, stdout: "Replaced: a\n",
			stderr: "error: configmap/a matched --fail-when=create"},
		{name: "unknown type", args: []string{"nosuchtype"}, code: 1,
			stderr: `error: the server doesn't have a resource type "nosuchtype": kubectl api-resources lists the types it has` + "\n"},
		{name: "unknown namespace", args: []string{"cm", "-n", "nowhere"}, code: 1,
			stderr: `error: namespace "nowhere" not found: check -n/--namespace or the context's namespace` + "\n"},
		{name: "wide without tables", args: []string{"cm/a", "--until-synced", "-o", "wide", "--no-headers"},
			stdout: "", stderr: "info: the server does not render configmaps as a table: generic columns for it\n"},
		{name: "events", args: []string{"cm/a", "--events", "--until-synced"}, stdout: "Replaced: a\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := demo()
			r := runCommand(t, f, tc.args...)
			stdout := r.stdout
			if tc.name == "wide without tables" {
				// Times and ages vary: the row's delta and name.
				fields := strings.Fields(stdout)
				if len(fields) < 5 || fields[1] != "Replaced" || fields[2] != "ConfigMap" || fields[4] != "a" {
					t.Errorf("wide row %q", stdout)
				}
				stdout = ""
			}
			// Several informers interleave: their lines in any order.
			if r.code != tc.code || sortedLines(stdout) != sortedLines(tc.stdout) || !strings.HasPrefix(r.stderr, tc.stderr) || tc.stderr == "" && r.stderr != "" {
				t.Errorf("exit %d, stdout:\n%s\nstderr:\n%s\nwant exit %d, stdout:\n%s\nstderr starting with:\n%s\nrequests:\n%s",
					r.code, r.stdout, r.stderr, tc.code, tc.stdout, tc.stderr, f.requested())
			}
		})
	}
}

// TestRunJSON: a JSON record per line, with health by default and the
// owners under --tree.
func TestRunJSON(t *testing.T) {
	r := runCommand(t, demo(), "rs/web-1", "--tree", "--until-synced", "-o", "json")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var kinds []string
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var rec struct {
			Type, Kind string
			Initial    bool
			Health     *struct{ Status string }
			Owners     []struct{ Name string }
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		if rec.Type != "Replaced" || !rec.Initial || rec.Health == nil {
			t.Errorf("record %s", line)
		}
		if rec.Kind == "Pod" && (len(rec.Owners) != 1 || rec.Owners[0].Name != "web-1") {
			t.Errorf("the Pod's owners: %s", line)
		}
		kinds = append(kinds, rec.Kind)
	}
	if strings.Join(kinds, ",") != "ReplicaSet,Pod" {
		t.Errorf("kinds %v, want the ReplicaSet, then its Pod", kinds)
	}
}

// TestRunAccess: a type the user may not list is an error; a member of a
// category that they may not is skipped with a note.
func TestRunAccess(t *testing.T) {
	f := demo()
	f.denied = []string{"configmaps", "pods"}
	r := runCommand(t, f, "cm", "--until-synced")
	if r.code != 1 || !strings.Contains(r.stderr, "configmaps") || r.stdout != "" {
		t.Errorf("a named type denied: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	r = runCommand(t, f, "all", "--until-synced")
	if r.code != 0 || !strings.HasPrefix(r.stderr, "info: skipping 1 types you may not list and watch: pods") ||
		sortedLines(r.stdout) != sortedLines("Replaced: deployment.apps web\nReplaced: replicaset.apps web-1\n") {
		t.Errorf("a category member denied: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

// sortedLines is s with its lines sorted.
func sortedLines(s string) string {
	lines := strings.Split(s, "\n")
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// TestRunRecordingSeams: a recording another recorder holds is refused
// before any request, nothing printed, the file untouched; a replay with
// --fail-when alone ends with the recording, exit 0 (nothing failed),
// where an --until unmet at its end stays an error.
func TestRunRecordingSeams(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cm.jsonl")
	if r := runCommand(t, demo(), "cm", "--until-synced", "--record="+path); r.code != 0 {
		t.Fatalf("recording: exit %d, stderr %q", r.code, r.stderr)
	}
	recorded, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}

	lock, err := recording.LockRecording(path)
	if err != nil {
		t.Fatal(err)
	}
	f := demo()
	r := runCommand(t, f, "cm", "--record="+path)
	_ = lock.Unlock()
	if r.code != 1 || r.stdout != "" || !strings.HasPrefix(r.stderr, "error: --record: "+path+" is being recorded by another kubectl deltas") || f.requested() != "" {
		t.Errorf("a recording being recorded: exit %d, stdout %q, stderr %q, requests:\n%s\nwant exit 1, an error, no request", r.code, r.stdout, r.stderr, f.requested())
	}
	if now, _ := os.ReadFile(path); !bytes.Equal(now, recorded) {
		t.Errorf("the refused recorder touched the recording:\n%s\nwas:\n%s", now, recorded)
	}

	cases := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{name: "fail-when alone", args: []string{"--fail-when=delete"}},
		{name: "fail-when alone, json", args: []string{"--fail-when=status=Failed", "-o", "json"}},
		{name: "until unmet", args: []string{"--until=delete"}, code: 1, stderr: "error: the recording ended before the condition was met on configmaps"},
		{name: "until unmet beside fail-when", args: []string{"--until=delete", "--fail-when=delete"}, code: 1, stderr: "error: the recording ended before the condition was met on configmaps"},
		{name: "fail-when that holds", args: []string{"--fail-when=create"}, code: 2, stderr: "error: configmap/"}, // a or b, whichever the replay hands out first
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := demo()
			r := runCommand(t, f, append([]string{"--replay=" + path}, tc.args...)...)
			if r.code != tc.code || !strings.HasPrefix(r.stderr, tc.stderr) || tc.code == 2 && !strings.Contains(r.stderr, " matched --fail-when=create") ||
				tc.stderr == "" && r.stderr != "" || f.requested() != "" {
				t.Errorf("exit %d, stderr %q; want exit %d, stderr starting %q, and no request (sent:\n%s)", r.code, r.stderr, tc.code, tc.stderr, f.requested())
			}
		})
	}
}
