package cmd

import (
	"slices"
	"strings"
	"testing"
)

// TestCompletion: cobra's __complete, as the shell calls it: types from
// discovery, names from the server, contexts from the kubeconfig, formats.
func TestCompletion(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want []string
	}{
		{"types", []string{"__complete", "con"}, []string{"configmaps"}},
		{"the next type of a list", []string{"__complete", "cm,dep"}, []string{"cm,deployments.apps"}},
		{"names", []string{"__complete", "cm", ""}, []string{"a", "b"}},
		{"names not given yet", []string{"__complete", "cm", "a", ""}, []string{"b"}},
		{"TYPE/NAME", []string{"__complete", "cm/"}, []string{"cm/a", "cm/b"}},
		{"no names across namespaces", []string{"__complete", "cm", "-A", ""}, nil},
		{"contexts", []string{"__complete", "cm", "--context", ""}, []string{"fake"}},
		{"formats", []string{"__complete", "cm", "-o", "ya"}, []string{"yaml"}},
		{"delta types", []string{"__complete", "cm", "--types", "Del"}, []string{"Deleted"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := runCommand(t, demo(), tc.args...)
			var got []string
			for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
				if line != "" && !strings.HasPrefix(line, ":") {
					got = append(got, line)
				}
			}
			for _, w := range tc.want {
				if !slices.Contains(got, w) {
					t.Errorf("completions %q lack %q", got, w)
				}
			}
			if tc.want == nil && len(got) != 0 {
				t.Errorf("completions %q, want none", got)
			}
			if tc.name == "names not given yet" && slices.Contains(got, "a") {
				t.Errorf("completions %q offer a name given already", got)
			}
		})
	}
}

// TestVersion: the client's version, and the server's from the cluster.
func TestVersion(t *testing.T) {
	r := runCommand(t, demo(), "version")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "Client Version: ") || !strings.HasSuffix(r.stdout, "Server Version: v1.36.3\n") {
		t.Errorf("version: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	r = runCommand(t, demo(), "version", "--client", "-o", "json")
	if r.code != 0 || !strings.Contains(r.stdout, `"clientVersion"`) || strings.Contains(r.stdout, "serverVersion") {
		t.Errorf("version --client -o json: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	r = runCommand(t, demo(), "version", "-o", "xml")
	if r.code != 1 || !strings.HasPrefix(r.stderr, `error: invalid --output "xml" for version`) {
		t.Errorf("version -o xml: exit %d, stderr %q", r.code, r.stderr)
	}
}
