package layout

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// packageDirs are dir and every directory below it that holds Go files.
func packageDirs(t *testing.T, dir string) []string {
	t.Helper()
	var dirs []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if files, _ := filepath.Glob(filepath.Join(path, "*.go")); len(files) > 0 {
			dirs = append(dirs, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return dirs
}

// productFiles are the Go files of the package in dir, parsed, less its
// tests.
func productFiles(t *testing.T, dir string) []*ast.File {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var parsed []*ast.File
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		p, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		parsed = append(parsed, p)
	}
	return parsed
}

// sharedNamesMax is how many exported type names may be defined in more
// than one package, beside each flag group's Flags and Options.
const sharedNamesMax = 6

// TestOneMeaningPerName: an exported type name of the product's packages
// and the harness is defined in one package, but for Flags, Options and
// at most sharedNamesMax names that CONTRIBUTING.md's "One meaning per
// word" paragraph names, each where the types are the same idea.
func TestOneMeaningPerName(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	definedIn := map[string][]string{}
	var dirs []string
	for _, top := range []string{"internal", "test", "cmd"} {
		dirs = append(dirs, packageDirs(t, filepath.Join(root, top))...)
	}
	for _, dir := range dirs {
		rel, _ := filepath.Rel(root, dir)
		names := map[string]bool{}
		for _, parsed := range productFiles(t, dir) {
			for _, decl := range parsed.Decls {
				gen, ok := decl.(*ast.GenDecl)
				if !ok || gen.Tok != token.TYPE {
					continue
				}
				for _, spec := range gen.Specs {
					if name := spec.(*ast.TypeSpec).Name.Name; ast.IsExported(name) {
						names[name] = true
					}
				}
			}
		}
		for name := range names {
			definedIn[name] = append(definedIn[name], rel)
		}
	}
	if len(definedIn) < 100 {
		t.Fatalf("found %d exported type names: is the tree where the test looks?", len(definedIn))
	}
	data, err := os.ReadFile(filepath.Join(root, "CONTRIBUTING.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	i := strings.Index(text, "One meaning per word")
	if i < 0 {
		t.Fatal(`CONTRIBUTING.md has no "One meaning per word" paragraph naming the type names shared across packages`)
	}
	paragraph := text[i:]
	if end := strings.Index(paragraph, "\n\n"); end >= 0 {
		paragraph = paragraph[:end]
	}
	var shared []string
	for name, pkgs := range definedIn {
		if len(pkgs) < 2 || name == "Flags" || name == "Options" {
			continue
		}
		shared = append(shared, name)
		if !strings.Contains(paragraph, "`"+name+"`") {
			slices.Sort(pkgs)
			t.Errorf("%s is a type of %s: rename all but one, or, when they are the same idea, name it in CONTRIBUTING.md's \"One meaning per word\"", name, strings.Join(pkgs, ", "))
		}
	}
	if len(shared) > sharedNamesMax {
		slices.Sort(shared)
		t.Errorf("%d exported type names are defined in several packages (%v), more than %d", len(shared), shared, sharedNamesMax)
	}
}

// optionsMaxFields bounds DeltasOptions: the flag groups and what
// Complete derives from them. What a run builds is the run value.
const optionsMaxFields = 20

// TestOptionsAreOptions holds internal/cmd's DeltasOptions to
// optionsMaxFields fields.
func TestOptionsAreOptions(t *testing.T) {
	fields := -1
	for _, parsed := range productFiles(t, "../cmd") {
		ast.Inspect(parsed, func(n ast.Node) bool {
			spec, ok := n.(*ast.TypeSpec)
			if !ok || spec.Name.Name != "DeltasOptions" {
				return true
			}
			fields = 0
			for _, field := range spec.Type.(*ast.StructType).Fields.List {
				fields += max(len(field.Names), 1) // an embedded field is one
			}
			return false
		})
	}
	switch {
	case fields < 0:
		t.Fatal("internal/cmd defines no DeltasOptions")
	case fields > optionsMaxFields:
		t.Errorf("DeltasOptions has %d fields, more than %d: it holds the flag groups and what Complete derives; what Run builds belongs to the run value", fields, optionsMaxFields)
	}
}

// TestLintRunsDeadcode: make lint fails on a function the binary cannot
// reach (a test-only helper belongs in a _test.go file), with deadcode at
// a pinned version.
func TestLintRunsDeadcode(t *testing.T) {
	data, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	makefile := string(data)
	if !regexp.MustCompile(`(?m)^DEADCODE_VERSION := v\d+\.\d+\.\d+$`).MatchString(makefile) ||
		!strings.Contains(makefile, "golang.org/x/tools/cmd/deadcode@$(DEADCODE_VERSION)") {
		t.Error("the Makefile does not install deadcode at a pinned DEADCODE_VERSION")
	}
	lint := regexp.MustCompile(`(?m)^lint:.*\n((?:\t.*\n)+)`).FindStringSubmatch(makefile)
	if lint == nil {
		t.Fatal("the Makefile has no lint target")
	}
	if !strings.Contains(lint[0], "$(DEADCODE)") || !strings.Contains(lint[1], "$(DEADCODE) ./cmd/kubectl-deltas") || !strings.Contains(lint[1], "exit 1") {
		t.Errorf("make lint does not fail on what deadcode ./cmd/kubectl-deltas reports:\n%s", lint[0])
	}
}
