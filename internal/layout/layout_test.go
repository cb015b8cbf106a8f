// Package layout holds the tests that keep the house in order: the import
// map of docs/architecture.md true (each package imports only the
// project's packages its entry allows), internal/cmd small, package docs
// short, CONTRIBUTING short and true to the Makefile and CI. Test-only.
package layout

import (
	"bufio"
	"bytes"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/kubectl-deltas/kubectl-deltas/"

// entry is what docs/architecture.md says of one package's imports.
type entry struct {
	// any: "Imports any package below." (internal/cmd).
	any bool
	// allowed are the project's packages it may import, as paths below
	// the module ("internal/cache").
	allowed []string
}

var (
	// bullet opens a package's entry: "- **`internal/cache`**:".
	bullet = regexp.MustCompile("^- \\*\\*`([a-z0-9/_-]+)`\\*\\*")
	// nested names another package inside an entry: "**`internal/cache/cachetest`** holds".
	nested = regexp.MustCompile("\\*\\*`(internal/[a-z0-9/_-]+)`\\*\\*")
	// quoted is a backquoted name.
	quoted = regexp.MustCompile("`([a-z0-9/_-]+)`")
)

// importMap reads docs/architecture.md's Layout: for each package, the sentence
// that begins "Imports" (to its period), "Leaf." or "Imports none of the
// project's." (nothing), or "Test-only." (not checked).
func importMap(t *testing.T, root string) map[string]entry {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	start := strings.Index(text, "\n## Layout")
	if start < 0 {
		t.Fatal("docs/architecture.md has no Layout section")
	}
	text = text[start+1:]
	if end := strings.Index(text[3:], "\n## "); end >= 0 {
		text = text[:end+3]
	}
	// Join each bullet's lines into one.
	var entries []string
	for _, line := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(line, "- **"):
			entries = append(entries, line)
		case strings.HasPrefix(line, "  ") && len(entries) > 0:
			entries[len(entries)-1] += " " + strings.TrimSpace(line)
		}
	}
	out := map[string]entry{}
	for _, e := range entries {
		m := bullet.FindStringSubmatch(e)
		if m == nil {
			continue
		}
		pkg := m[1]
		var en entry
		switch i := strings.Index(e, "Imports "); {
		case strings.Contains(e, "Imports any package below"):
			en.any = true
		case strings.Contains(e, "Leaf.") || strings.Contains(e, "Imports none of the project's"):
		case i >= 0:
			sentence := e[i:]
			if j := strings.Index(sentence, ". "); j >= 0 {
				sentence = sentence[:j]
			}
			for _, q := range quoted.FindAllStringSubmatch(sentence, -1) {
				name := q[1]
				if !strings.Contains(name, "/") {
					name = "internal/" + name
				}
				en.allowed = append(en.allowed, name)
			}
		case strings.Contains(e, "Test-only"):
			continue
		case !strings.HasPrefix(pkg, "internal/") && !strings.HasPrefix(pkg, "cmd/"):
			continue // e2e, hack/…: not the plugin's packages
		default:
			t.Errorf("docs/architecture.md's entry of %s says neither what it imports nor that it is a leaf", pkg)
			continue
		}
		out[pkg] = en
		for _, n := range nested.FindAllStringSubmatch(e, -1) {
			if n[1] != pkg {
				if _, ok := out[n[1]]; !ok {
					out[n[1]] = entry{any: true} // described inside another's entry
				}
			}
		}
	}
	return out
}

func TestImportMap(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	allowed := importMap(t, root)
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./cmd/...", "./internal/...", "./test/...")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		pkg := strings.TrimPrefix(fields[0], module)
		if pkg == "internal/layout" {
			continue
		}
		for _, imp := range fields[1:] {
			if strings.HasPrefix(imp, module+"test/") && !strings.HasPrefix(pkg, "test/") {
				t.Errorf("%s imports %s: the test harness is never part of the plugin", pkg, imp)
			}
		}
		en, ok := allowed[pkg]
		if !ok {
			if !isTestOnly(root, pkg) {
				t.Errorf("%s has no entry in docs/architecture.md's Layout: add one saying what it imports", pkg)
			}
			continue
		}
		if en.any {
			continue
		}
		for _, imp := range fields[1:] {
			dep, ok := strings.CutPrefix(imp, module)
			if !ok {
				continue
			}
			if !slices.Contains(en.allowed, dep) {
				t.Errorf("%s imports %s, which its entry in docs/architecture.md's Layout does not allow (allowed: %v): fix the import or the map, with a reason in the commit", pkg, dep, en.allowed)
			}
		}
	}
}

// isTestOnly reports whether pkg has only test files.
func isTestOnly(root, pkg string) bool {
	files, _ := filepath.Glob(filepath.Join(root, pkg, "*.go"))
	for _, f := range files {
		if !strings.HasSuffix(f, "_test.go") {
			return false
		}
	}
	return true
}

// cmdMaxLines is how large internal/cmd may grow (its non-test Go
// lines): the command's flags, wiring, concurrency and exit codes. What
// acts on a flag belongs to the package of its group.
const cmdMaxLines = 1200

// TestCmdStaysSmall holds internal/cmd to cmdMaxLines.
func TestCmdStaysSmall(t *testing.T) {
	files, err := filepath.Glob("../cmd/*.go")
	if err != nil {
		t.Fatal(err)
	}
	lines := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines += bytes.Count(data, []byte("\n"))
	}
	if lines == 0 {
		t.Fatal("no Go file in internal/cmd")
	}
	if lines > cmdMaxLines {
		t.Errorf("internal/cmd is %d lines, more than %d: move what acts on a flag into the package of its group (docs/architecture.md, Layout)", lines, cmdMaxLines)
	}
}

// packageDocMaxLines bounds a package's doc comment, as client-go writes
// them: what the package is for and its invariants; longer explanations go
// to docs/architecture.md.
const packageDocMaxLines = 20

// TestPackageDocsAreShort holds every package doc of the product to
// packageDocMaxLines.
func TestPackageDocsAreShort(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dirs := append(packageDirs(t, filepath.Join(root, "internal")), filepath.Join(root, "cmd", "kubectl-deltas"))
	docs := 0
	for _, dir := range dirs {
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			parsed, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.PackageClauseOnly|parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			if parsed.Doc == nil {
				continue
			}
			docs++
			if n := len(parsed.Doc.List); n > packageDocMaxLines {
				rel, _ := filepath.Rel(root, f)
				t.Errorf("%s: the package doc is %d lines, more than %d: say what the package is for and its invariants; move the rest to docs/architecture.md", rel, n, packageDocMaxLines)
			}
		}
	}
	if docs < 20 {
		t.Fatalf("found %d package docs: is the tree where the test looks?", docs)
	}
}

// contributingMaxLines bounds CONTRIBUTING.md: the development loop, not
// the architecture.
const contributingMaxLines = 300

// TestContributingIsTrue holds CONTRIBUTING.md to contributingMaxLines,
// every `make TARGET` it names to a target of the Makefile, and what it
// says CI runs to the make targets .ci/run runs, in order.
func TestContributingIsTrue(t *testing.T) {
	read := func(name string) string {
		t.Helper()
		data, err := os.ReadFile(filepath.Join("../..", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	contributing, makefile, ci := read("CONTRIBUTING.md"), read("Makefile"), read(".ci/run")
	if n := strings.Count(contributing, "\n"); n > contributingMaxLines {
		t.Errorf("CONTRIBUTING.md is %d lines, more than %d: the architecture goes to docs/architecture.md", n, contributingMaxLines)
	}
	targets := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^([a-z][a-z0-9-]*):`).FindAllStringSubmatch(makefile, -1) {
		targets[m[1]] = true
	}
	// In code: `make X`, or a line of a sh block that starts with it.
	named := regexp.MustCompile("(?m)(?:`|^)make ([a-z][a-z0-9-]*)").FindAllStringSubmatch(strings.ReplaceAll(contributing, "`make\n", "`make "), -1)
	if len(named) < 5 {
		t.Fatalf("CONTRIBUTING.md names %d make targets: is it the file the test looks for?", len(named))
	}
	for _, m := range named {
		if !targets[m[1]] {
			t.Errorf("CONTRIBUTING.md names make %s, which the Makefile does not have", m[1])
		}
	}
	var runs []string
	for _, m := range regexp.MustCompile(`(?m)^make ([a-z][a-z0-9-]*)`).FindAllStringSubmatch(ci, -1) {
		runs = append(runs, m[1])
	}
	var said []string
	for _, m := range regexp.MustCompile("`make ([a-z][a-z0-9-]*)`").FindAllStringSubmatch(ciSentence(t, contributing), -1) {
		said = append(said, m[1])
	}
	if len(runs) == 0 || !slices.Equal(runs, said) {
		t.Errorf("CONTRIBUTING.md says CI runs %v; .ci/run runs %v", said, runs)
	}
}

// ciSentence is CONTRIBUTING's sentence that says what CI runs.
func ciSentence(t *testing.T, contributing string) string {
	t.Helper()
	i := strings.Index(contributing, "CI (`.ci/run`")
	if i < 0 {
		t.Fatal("CONTRIBUTING.md does not say what CI (`.ci/run`) runs")
	}
	end := strings.Index(contributing[i:], ".\n")
	if end < 0 {
		end = len(contributing) - i
	}
	return strings.ReplaceAll(contributing[i:i+end], "\n", " ")
}
