// Package layout holds the test that keeps CONTRIBUTING's import map
// true: each package imports only the project's packages its entry
// allows. Test-only.
package layout

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/kubectl-deltas/kubectl-deltas/"

// entry is what CONTRIBUTING says of one package's imports.
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

// importMap reads CONTRIBUTING's Layout: for each package, the sentence
// that begins "Imports" (to its period), "Leaf." or "Imports none of the
// project's." (nothing), or "Test-only." (not checked).
func importMap(t *testing.T, root string) map[string]entry {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "CONTRIBUTING.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	start := strings.Index(text, "\n## Layout")
	if start < 0 {
		t.Fatal("CONTRIBUTING.md has no Layout section")
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
			t.Errorf("CONTRIBUTING's entry of %s says neither what it imports nor that it is a leaf", pkg)
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
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./cmd/...", "./internal/...")
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
		en, ok := allowed[pkg]
		if !ok {
			if !isTestOnly(root, pkg) {
				t.Errorf("%s has no entry in CONTRIBUTING's Layout: add one saying what it imports", pkg)
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
				t.Errorf("%s imports %s, which its entry in CONTRIBUTING's Layout does not allow (allowed: %v): fix the import or the map, with a reason in the commit", pkg, dep, en.allowed)
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
const cmdMaxLines = 1400

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
		t.Errorf("internal/cmd is %d lines, more than %d: move what acts on a flag into the package of its group (CONTRIBUTING, Layout)", lines, cmdMaxLines)
	}
}
