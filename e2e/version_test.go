package e2e

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

// versionJSON is the -o json form of kubectl deltas version.
type versionJSON struct {
	ClientVersion struct {
		Version   string `json:"version"`
		Commit    string `json:"commit"`
		BuildDate string `json:"buildDate"`
		GoVersion string `json:"goVersion"`
		Platform  string `json:"platform"`
	} `json:"clientVersion"`
	ServerVersion *struct {
		GitVersion string `json:"gitVersion"`
		Platform   string `json:"platform"`
	} `json:"serverVersion"`
}

// serverGitVersion is what the local control plane says it is.
func serverGitVersion(t *testing.T) string {
	t.Helper()
	info, err := testEnv.client.Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	return info.GitVersion
}

func TestVersionClientAndServer(t *testing.T) {
	r := run(t, time.Minute, "version")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	for _, prefix := range []string{"Client Version: ", "Git Commit: ", "Build Date: ", "Go Version: go", "Platform: ", "Server Version: " + serverGitVersion(t)} {
		if !hasLinePrefix(r.stdout, prefix) {
			t.Errorf("no line starting with %q in:\n%s", prefix, r.stdout)
		}
	}
}

func TestVersionClientOnly(t *testing.T) {
	// --client needs no server: an unreachable one must not matter.
	r := run(t, time.Minute, "version", "--client", "--server", "https://127.0.0.1:1")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	if !hasLinePrefix(r.stdout, "Client Version: ") || strings.Contains(r.stdout, "Server Version") {
		t.Errorf("want the client version only, got:\n%s", r.stdout)
	}
}

func TestVersionJSON(t *testing.T) {
	r := run(t, time.Minute, "version", "-o", "json")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	var v versionJSON
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
		t.Fatalf("-o json is not JSON: %v\n%s", err, r.stdout)
	}
	c := v.ClientVersion
	if c.Version == "" || c.Commit == "" || c.BuildDate == "" || !strings.HasPrefix(c.GoVersion, "go") || !strings.Contains(c.Platform, "/") {
		t.Errorf("clientVersion = %+v, want every field set", c)
	}
	if v.ServerVersion == nil || v.ServerVersion.GitVersion != serverGitVersion(t) {
		t.Errorf("serverVersion = %+v, want gitVersion %s", v.ServerVersion, serverGitVersion(t))
	}

	r = run(t, time.Minute, "version", "--client", "-o", "json")
	v = versionJSON{}
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil || r.code != 0 {
		t.Fatalf("--client -o json: exit %d, %v\n%s", r.code, err, r.stdout)
	}
	if v.ServerVersion != nil {
		t.Errorf("--client printed a server version: %s", r.stdout)
	}
}

func TestVersionYAML(t *testing.T) {
	r := run(t, time.Minute, "version", "-o", "yaml")
	if r.code != 0 {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	var v versionJSON
	if err := yaml.Unmarshal([]byte(r.stdout), &v); err != nil {
		t.Fatalf("-o yaml is not YAML: %v\n%s", err, r.stdout)
	}
	if v.ClientVersion.Version == "" || v.ServerVersion == nil {
		t.Errorf("-o yaml lacks a version:\n%s", r.stdout)
	}
}

// Like kubectl version: the client version is printed, then the failure
// to reach the server is an error naming the server.
func TestVersionUnreachableServer(t *testing.T) {
	r := run(t, time.Minute, "version", "--server", "https://127.0.0.1:1")
	if r.code != 1 {
		t.Errorf("exit %d, want 1", r.code)
	}
	if !hasLinePrefix(r.stdout, "Client Version: ") {
		t.Errorf("the client version was not printed:\n%s", r.stdout)
	}
	if !strings.HasPrefix(r.stderr, "error: unable to get the version of the server https://127.0.0.1:1") || !strings.Contains(r.stderr, "--client") {
		t.Errorf("stderr %q, want an error naming the server and --client", r.stderr)
	}
}

func TestVersionFlag(t *testing.T) {
	r := run(t, time.Minute, "version", "--client", "-o", "json")
	var v versionJSON
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
		t.Fatal(err)
	}
	r = run(t, time.Minute, "--version")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("--version: exit %d, stderr %q", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, v.ClientVersion.Version) {
		t.Errorf("--version printed %q, want the version %q", r.stdout, v.ClientVersion.Version)
	}
}

func TestVersionBadFlags(t *testing.T) {
	for _, args := range [][]string{{"version", "-o", "wide"}, {"version", "extra"}} {
		r := run(t, time.Minute, args...)
		if r.code != 1 || r.stdout != "" || !strings.HasPrefix(r.stderr, "error: ") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 1 and an error", args, r.code, r.stdout, r.stderr)
		}
	}
}

func hasLinePrefix(out, prefix string) bool {
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, prefix) {
			return true
		}
	}
	return false
}
