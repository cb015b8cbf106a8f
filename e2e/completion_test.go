package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kubectl-deltas/kubectl-deltas/test/controlplane"
)

// completionEnv is the environment of a completion: the plugin on PATH, the
// admin kubeconfig, and a fresh HOME (so the discovery cache is the test's).
func completionEnv(t *testing.T, extraPath ...string) []string {
	t.Helper()
	path := append(append([]string{}, extraPath...), testEnv.pathDir, os.Getenv("PATH"))
	return append(os.Environ(),
		"PATH="+strings.Join(path, string(os.PathListSeparator)),
		"KUBECONFIG="+testEnv.cp.AdminKubeconfig(),
		"HOME="+t.TempDir(),
		"NO_COLOR=1",
	)
}

// execOut runs name args… in env, bounded by a minute, and returns stdout.
func execOut(t *testing.T, env []string, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\nstdout:\n%s\nstderr:\n%s", name, strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// complete runs the plugin's own completion entry point, as the shell
// scripts do: kubectl-deltas __complete args…. It returns the candidates
// and the directive line (":4" is NoFileComp).
func complete(t *testing.T, args ...string) (candidates []string, directive string) {
	t.Helper()
	out := execOut(t, completionEnv(t), filepath.Join(testEnv.pathDir, "kubectl-deltas"), append([]string{"__complete"}, args...)...)
	return parseCompletion(t, out)
}

func parseCompletion(t *testing.T, out string) ([]string, string) {
	t.Helper()
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, ":") {
		t.Fatalf("completion output does not end with a directive:\n%s", out)
	}
	var cands []string
	for _, l := range lines[:len(lines)-1] {
		if l != "" {
			cands = append(cands, l)
		}
	}
	return cands, last
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// The bash script of "kubectl deltas completion bash", sourced in a
// non-interactive bash, completes "kubectl-deltas con<TAB>" to configmaps
// from the server's discovery.
func TestCompletionBashScript(t *testing.T) {
	r := run(t, time.Minute, "completion", "bash")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("completion bash: exit %d, stderr %q", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, "__start_kubectl-deltas") || !strings.Contains(r.stdout, "complete -o default -F __start_kubectl-deltas kubectl-deltas") {
		t.Fatalf("the bash script does not complete kubectl-deltas:\n%.2000s", r.stdout)
	}
	script := filepath.Join(t.TempDir(), "kubectl-deltas.bash")
	if err := os.WriteFile(script, []byte(r.stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	bashComplete := func(line string) []string {
		t.Helper()
		// cobra's bash script needs _get_comp_words_by_ref from the
		// bash-completion package, which interactive shells load; without
		// it, a minimal stand-in (words split on blanks).
		driver := `[ -r /usr/share/bash-completion/bash_completion ] && source /usr/share/bash-completion/bash_completion
if ! declare -F _get_comp_words_by_ref >/dev/null; then
	_get_comp_words_by_ref() {
		cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} cword=$COMP_CWORD
		words=("${COMP_WORDS[@]}")
	}
fi
source "$1" 2>/dev/null
COMP_LINE="$2"
COMP_POINT=${#COMP_LINE}
read -r -a COMP_WORDS <<< "$COMP_LINE"
[[ "$COMP_LINE" == *" " ]] && COMP_WORDS+=("")
COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
__start_kubectl-deltas 2>/dev/null
printf '%s\n' "${COMPREPLY[@]}"`
		out := execOut(t, completionEnv(t), "bash", "-c", driver, "bash", script, line)
		var got []string
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			if l = strings.TrimSpace(l); l != "" {
				got = append(got, l)
			}
		}
		return got
	}

	if got := bashComplete("kubectl-deltas con"); !contains(got, "configmaps") || !contains(got, "controllerrevisions.apps") {
		t.Errorf("kubectl-deltas con<TAB> = %q, want configmaps and controllerrevisions.apps", got)
	}
	if got := bashComplete("kubectl-deltas conf"); len(got) != 1 || got[0] != "configmaps" {
		t.Errorf("kubectl-deltas conf<TAB> = %q, want [configmaps]", got)
	}
	ns := newNamespace(t)
	createCM(t, ns, "alpha", nil, nil)
	createCM(t, ns, "beta", nil, nil)
	if got := bashComplete("kubectl-deltas configmaps -n " + ns + " al"); len(got) != 1 || got[0] != "alpha" {
		t.Errorf("kubectl-deltas configmaps -n %s al<TAB> = %q, want [alpha]", ns, got)
	}
}

func TestCompletionScriptsOfEveryShell(t *testing.T) {
	for shell, want := range map[string]string{
		"bash":       "complete -o default -F __start_kubectl-deltas kubectl-deltas",
		"zsh":        "#compdef kubectl-deltas",
		"fish":       "complete -c kubectl-deltas",
		"powershell": "Register-ArgumentCompleter -CommandName 'kubectl-deltas'",
	} {
		r := run(t, time.Minute, "completion", shell)
		if r.code != 0 || r.stderr != "" || !strings.Contains(r.stdout, want) {
			t.Errorf("completion %s: exit %d, stderr %q, want a script containing %q", shell, r.code, r.stderr, want)
		}
	}
	if _, err := exec.LookPath("bash"); err == nil {
		r := run(t, time.Minute, "completion", "bash")
		cmd := exec.Command("bash", "-n")
		cmd.Stdin = strings.NewReader(r.stdout)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("bash -n rejects the bash script: %v\n%s", err, out)
		}
	}
}

func TestCompletionTypes(t *testing.T) {
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"con"}, []string{"configmaps", "controllerrevisions.apps"}},
		{[]string{"conf"}, []string{"configmaps"}},
		{[]string{"cm,sec"}, []string{"cm,secrets"}},
		{[]string{"deploy"}, []string{"deployments.apps"}},
	}
	for _, tc := range tests {
		got, directive := complete(t, tc.args...)
		if strings.Join(got, " ") != strings.Join(tc.want, " ") || directive != ":4" {
			t.Errorf("__complete %q = %q %s, want %q :4", tc.args, got, directive, tc.want)
		}
	}
}

func TestCompletionNames(t *testing.T) {
	ns := newNamespace(t)
	createCM(t, ns, "alpha", nil, nil)
	createCM(t, ns, "alpine", nil, nil)
	createCM(t, ns, "beta", nil, nil)
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"all names", []string{"cm", "-n", ns, ""}, []string{"alpha", "alpine", "beta"}},
		{"prefix", []string{"configmaps", "-n", ns, "alp"}, []string{"alpha", "alpine"}},
		{"given names skipped", []string{"-n", ns, "cm", "alpha", "al"}, []string{"alpine"}},
		{"type/name", []string{"-n", ns, "cm/b"}, []string{"cm/beta"}},
		{"more type/name", []string{"-n", ns, "cm/alpha", "configmap/alpi"}, []string{"configmap/alpine"}},
		{"several types", []string{"-n", ns, "cm,secrets", ""}, nil},
		{"all namespaces", []string{"-A", "cm", "al"}, nil},
		{"cluster-scoped", []string{"namespaces", ns[:len(ns)-1]}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, directive := complete(t, tc.args...)
			if tc.name == "cluster-scoped" {
				// Every e2e namespace with this prefix; this test's is one.
				if !contains(got, ns) {
					t.Errorf("__complete %q = %q, want %s among them", tc.args, got, ns)
				}
				return
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") || directive != ":4" {
				t.Errorf("__complete %q = %q %s, want %q :4", tc.args, got, directive, tc.want)
			}
		})
	}
}

func TestCompletionFlags(t *testing.T) {
	ns := newNamespace(t)
	got, _ := complete(t, "cm", "-n", ns[:len(ns)-1])
	if !contains(got, ns) {
		t.Errorf("-n %s<TAB> = %q, want %s among them", ns[:len(ns)-1], got, ns)
	}
	for _, n := range got {
		if !strings.HasPrefix(n, ns[:len(ns)-1]) {
			t.Errorf("-n completion %q does not start with the typed prefix", n)
		}
	}

	config, err := clientcmd.LoadFromFile(testEnv.cp.AdminKubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	keys := func(m map[string]bool) []string {
		out := make([]string, 0, len(m))
		for k := range m {
			out = append(out, k)
		}
		sort.Strings(out)
		return out
	}
	contexts, clusters, users := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for k := range config.Contexts {
		contexts[k] = true
	}
	for k := range config.Clusters {
		clusters[k] = true
	}
	for k := range config.AuthInfos {
		users[k] = true
	}
	for flag, want := range map[string][]string{"--context": keys(contexts), "--cluster": keys(clusters), "--user": keys(users)} {
		got, directive := complete(t, "cm", flag, "")
		if strings.Join(got, " ") != strings.Join(want, " ") || directive != ":4" {
			t.Errorf("%s <TAB> = %q %s, want %q :4", flag, got, directive, want)
		}
	}

	// Several contexts: after a comma, the ones not given yet.
	multi := clientcmdapi.NewConfig()
	for _, name := range []string{"east", "west", "north"} {
		multi.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	}
	multiPath := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*multi, multiPath); err != nil {
		t.Fatal(err)
	}
	for arg, want := range map[string][]string{"east,": {"east,north", "east,west"}, "east,w": {"east,west"}, "no": {"north"}} {
		got, directive := complete(t, "cm", "--kubeconfig", multiPath, "--context", arg)
		if strings.Join(got, " ") != strings.Join(want, " ") || directive != ":4" {
			t.Errorf("--context %s<TAB> = %q %s, want %q :4", arg, got, directive, want)
		}
	}

	got, _ = complete(t, "cm", "-o", "")
	for _, want := range []string{"json", "yaml", "wide", "name"} {
		if !contains(got, want) {
			t.Errorf("-o <TAB> = %q, want %s among them", got, want)
		}
	}
	got, _ = complete(t, "cm", "--types", "")
	if strings.Join(got, " ") != "Added Updated Deleted Replaced Sync" {
		t.Errorf("--types <TAB> = %q", got)
	}
	got, _ = complete(t, "version", "-o", "")
	if strings.Join(got, " ") != "json yaml" {
		t.Errorf("version -o <TAB> = %q, want [json yaml]", got)
	}
}

// An unreachable server gives no candidates quickly, never a hang.
func TestCompletionUnreachableServer(t *testing.T) {
	start := time.Now()
	got, _ := complete(t, "--server", "https://127.0.0.1:1", "con")
	if len(got) != 0 {
		t.Errorf("completions from an unreachable server: %q", got)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("completion took %s against an unreachable server", d)
	}
}

// kubectl (1.26 and later) completes "kubectl deltas …" by running
// kubectl_complete-deltas from PATH: the script shipped in the archives.
func TestCompletionThroughKubectl(t *testing.T) {
	root, err := controlplane.FindRepoRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	withHelper := t.TempDir()
	script, err := os.ReadFile(filepath.Join(root, "hack", "completion", "kubectl_complete-deltas"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(withHelper, "kubectl_complete-deltas"), script, 0o755); err != nil {
		t.Fatal(err)
	}
	ns := newNamespace(t)
	createCM(t, ns, "alpha", nil, nil)

	kubectl := filepath.Join(testEnv.pathDir, "kubectl")
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"__complete", "deltas", "con"}, []string{"configmaps", "controllerrevisions.apps"}},
		{[]string{"__complete", "deltas", "cm", "-n", ns, "al"}, []string{"alpha"}},
		{[]string{"__complete", "deltas", "cm", "-n", ns[:len(ns)-1]}, []string{ns}},
	}
	for _, tc := range tests {
		out := execOut(t, completionEnv(t, withHelper), kubectl, tc.args...)
		got, _ := parseCompletion(t, out)
		for _, w := range tc.want {
			if !contains(got, w) {
				t.Errorf("kubectl %q = %q, want %s among them", tc.args, got, w)
			}
		}
	}

	// Without the helper on PATH, kubectl has nothing to offer: the
	// helper is what makes it work.
	out := execOut(t, completionEnv(t), kubectl, "__complete", "deltas", "con")
	if got, _ := parseCompletion(t, out); contains(got, "configmaps") {
		t.Errorf("kubectl completed plugin arguments without kubectl_complete-deltas: %q", got)
	}
}
