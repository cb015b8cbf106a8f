package cmd

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-deltas/kubectl-deltas/internal/flaghelp"
)

// helpOf runs the command with args and returns its stdout, failing the
// test on a non-zero exit or anything on stderr.
func helpOf(t *testing.T, args ...string) string {
	t.Helper()
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	if code := Execute(streams, args); code != 0 || errOut.Len() != 0 {
		t.Fatalf("%v: exit %d, stderr %q", args, code, errOut.String())
	}
	return out.String()
}

// TestHelpFitsOnAScreen: --help is at most 70 lines of at most 100
// characters, its headings in flaghelp.Headings' order, and it ends by
// pointing at the options command.
func TestHelpFitsOnAScreen(t *testing.T) {
	help := helpOf(t, "--help")
	lines := strings.Split(strings.TrimSuffix(help, "\n"), "\n")
	if len(lines) > 70 {
		t.Errorf("--help is %d lines, want at most 70:\n%s", len(lines), help)
	}
	for _, l := range lines {
		if len(l) > 100 {
			t.Errorf("a line of %d characters, want at most 100: %q", len(l), l)
		}
	}
	at := -1
	for _, h := range flaghelp.Headings() {
		i := strings.Index(help, "\n"+string(h)+" (")
		if i < 0 {
			t.Errorf("no heading %q", h)
			continue
		}
		if i < at {
			t.Errorf("heading %q out of order", h)
		}
		at = i
	}
	if last := lines[len(lines)-1]; !strings.Contains(last, `"kubectl deltas options"`) {
		t.Errorf("the last line %q does not point at kubectl deltas options", last)
	}
	if help != helpOf(t, "-h") || help != helpOf(t, "help") {
		t.Error("-h and help print another text than --help")
	}
}

// TestEveryFlagIsFiled: every visible flag of the command is filed under a
// heading of --help or under Global, shows in --help if and only if it is
// not Global, and its usage is one line of at most 100 characters.
func TestEveryFlagIsFiled(t *testing.T) {
	cmd := newCmdDeltas(NewDeltasOptions(genericiooptions.NewTestIOStreamsDiscard()))
	help := helpOf(t, "--help")
	headings := map[flaghelp.Heading]bool{flaghelp.Global: true}
	for _, h := range flaghelp.Headings() {
		headings[h] = true
	}
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Hidden || f.Name == "help" || f.Name == "version" {
			return
		}
		h := flaghelp.HeadingOf(f)
		if !headings[h] {
			t.Errorf("--%s is filed under %q, not a heading of --help nor Global", f.Name, h)
		}
		shown := regexp.MustCompile(`--` + regexp.QuoteMeta(f.Name) + `\b[^-]`).MatchString(help)
		if shown != (h != flaghelp.Global) {
			t.Errorf("--%s (%q) shown in --help: %v", f.Name, h, shown)
		}
		if h != flaghelp.Global && (len(f.Usage) > 100 || strings.Contains(f.Usage, "\n")) {
			t.Errorf("--%s: usage of %d characters or several lines, want one line of at most 100: %q", f.Name, len(f.Usage), f.Usage)
		}
	})
}

// TestOptionsListsKubectlFlags: the options command lists kubectl's
// connection, auth and impersonation flags; --context (which merges
// clusters here) and -n stay in --help; the flags still work on the
// command itself.
func TestOptionsListsKubectlFlags(t *testing.T) {
	options := helpOf(t, "options")
	for _, want := range []string{"--kubeconfig ", "--token ", "--as ", "--as-group ", "--server ", "--request-timeout "} {
		if !strings.Contains(options, want) {
			t.Errorf("options lacks %s:\n%s", want, options)
		}
	}
	for _, not := range []string{"--context", "--namespace", "--tree"} {
		if regexp.MustCompile(`(?m)^ +(-., )?` + not + ` `).MatchString(options) {
			t.Errorf("options lists %s, which --help shows", not)
		}
	}
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	code := Execute(streams, []string{"cm", "--kubeconfig=/nonexistent/kubeconfig", "--token=x", "--as=someone", "--until-synced", "--watch-only"})
	if code != 1 || out.Len() != 0 || !strings.Contains(errOut.String(), "--until-synced cannot be used with --watch-only") {
		t.Errorf("kubectl's flags on the command: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// TestHelpPagesExist: every docs page --help names is in the repository.
func TestHelpPagesExist(t *testing.T) {
	help := helpOf(t, "--help")
	pages := regexp.MustCompile(`docs/[a-z-]+\.md`).FindAllString(help, -1)
	if len(pages) < len(flaghelp.Headings()) {
		t.Fatalf("--help names %d docs pages, want one per heading at least", len(pages))
	}
	for _, page := range pages {
		if _, err := os.Stat(filepath.Join("..", "..", page)); err != nil {
			t.Errorf("--help names %s: %v", page, err)
		}
	}
}
