package layout

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"unicode"
)

// readmeMaxLines is how long the README may be: a few screens, the detail
// in docs/ pages.
const readmeMaxLines = 300

// docsPages are the pages of docs/ that must exist: the README's table
// links to them, and the flags' help text names them.
var docsPages = []string{
	"output.md", "watching.md", "diffs-and-trees.md", "waiting.md",
	"events.md", "clusters.md", "recording.md", "timeline.md", "handler.md",
	"tuning.md", "guarantees.md", "performance.md", "faq.md",
}

var (
	// fence opens or closes a fenced code block.
	fence = regexp.MustCompile("^\\s*(```|~~~)")
	// heading is an ATX heading outside code.
	heading = regexp.MustCompile(`^(#{1,6})\s+(.*?)\s*#*\s*$`)
	// codeSpan is an inline code span, whose brackets are not links.
	codeSpan = regexp.MustCompile("`[^`]*`")
	// link is an inline link or image: [text](target) or ![alt](target
	// "title"); the text may span lines.
	link = regexp.MustCompile(`!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)
	// mdLink is a link's text and target, for the anchor of a heading
	// that holds one.
	mdLink = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
	// scheme marks a link that leaves the repository.
	scheme = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
)

// TestDocs keeps the README short and the links between it and docs/ true:
// every relative link of README.md and docs/*.md points at a file that
// exists and, with a #fragment into a Markdown file, at one of its
// headings.
func TestDocs(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	readme := filepath.Join(root, "README.md")
	data, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), "\n"); n > readmeMaxLines {
		t.Errorf("README.md has %d lines, more than %d: move the detail to a page of docs/", n, readmeMaxLines)
	}
	for _, p := range docsPages {
		if _, err := os.Stat(filepath.Join(root, "docs", p)); err != nil {
			t.Errorf("docs/%s is missing: the README and the flags' help link to it", p)
		}
	}
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(pages)
	files := append([]string{readme}, pages...)
	anchors := map[string]map[string]bool{}
	for _, f := range files {
		rel, _ := filepath.Rel(root, f)
		for _, l := range links(t, f) {
			if err := checkLink(f, l, anchors); err != nil {
				t.Errorf("%s: link %s: %v", rel, l, err)
			}
		}
	}
	for _, p := range pages {
		rel, _ := filepath.Rel(root, p)
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.SplitN(string(data), "\n", 4)
		if !strings.HasPrefix(lines[0], "# ") {
			t.Errorf("%s does not start with a # Title", rel)
		}
		if len(lines) < 3 || !strings.Contains(lines[2], "](../README.md)") {
			t.Errorf("%s has no link back to the README under its title", rel)
		}
	}
}

// links returns the targets of the inline links and images of a
// Markdown file, outside code.
func links(t *testing.T, file string) []string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var prose strings.Builder
	inCode := false
	for _, line := range strings.Split(string(data), "\n") {
		if fence.MatchString(line) {
			inCode = !inCode
			prose.WriteString("\n")
			continue
		}
		if !inCode {
			prose.WriteString(line)
		}
		prose.WriteString("\n")
	}
	// A code span's brackets are not a link, but a link's text may be a
	// code span: keep the spans' places, empty.
	text := codeSpan.ReplaceAllString(prose.String(), "``")
	var out []string
	for _, m := range link.FindAllStringSubmatch(text, -1) {
		out = append(out, m[1])
	}
	return out
}

// checkLink checks one link of file: a relative target must exist, and a
// fragment into a Markdown file must be one of its headings' anchors.
func checkLink(file, target string, anchors map[string]map[string]bool) error {
	if scheme.MatchString(target) {
		return nil
	}
	path, fragment, _ := strings.Cut(target, "#")
	dest := file
	if path != "" {
		dest = filepath.Join(filepath.Dir(file), filepath.FromSlash(path))
		if _, err := os.Stat(dest); err != nil {
			return fmt.Errorf("no file %s", path)
		}
	}
	if fragment == "" || !strings.HasSuffix(dest, ".md") {
		return nil
	}
	known, ok := anchors[dest]
	if !ok {
		var err error
		if known, err = headingAnchors(dest); err != nil {
			return err
		}
		anchors[dest] = known
	}
	if !known[fragment] {
		return fmt.Errorf("no heading of %s has the anchor #%s", filepath.Base(dest), fragment)
	}
	return nil
}

// headingAnchors returns the anchors GitHub gives the headings of a
// Markdown file.
func headingAnchors(file string) (map[string]bool, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	seen := map[string]int{}
	inCode := false
	for _, line := range strings.Split(string(data), "\n") {
		if fence.MatchString(line) {
			inCode = !inCode
			continue
		}
		m := heading.FindStringSubmatch(line)
		if inCode || m == nil {
			continue
		}
		a := anchor(m[2])
		if n := seen[a]; n > 0 {
			out[fmt.Sprintf("%s-%d", a, n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out, nil
}

// anchor is GitHub's anchor of a heading: its text (a link's text, not
// its target), lower case, with spaces as '-' and every other character
// but letters, digits, '-' and '_' left out.
func anchor(text string) string {
	text = mdLink.ReplaceAllString(text, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

func TestAnchor(t *testing.T) {
	for _, tt := range []struct{ name, heading, want string }{
		{name: "code and colon", heading: "What changed: `--diff`", want: "what-changed---diff"},
		{name: "commas", heading: "Waiting for a condition: `--until`, `--until-any`, `--fail-when`", want: "waiting-for-a-condition---until---until-any---fail-when"},
		{name: "parentheses", heading: "The JSON record (schema v1)", want: "the-json-record-schema-v1"},
		{name: "equals sign", heading: "Several clusters: `--context=a,b`", want: "several-clusters---contextab"},
		{name: "link", heading: "See [the FAQ](docs/faq.md)", want: "see-the-faq"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := anchor(tt.heading); got != tt.want {
				t.Errorf("anchor(%q) = %q, want %q", tt.heading, got, tt.want)
			}
		})
	}
}
