// Package flaghelp files the command's flags under the headings --help
// shows them in, and renders them: each flag group's AddFlags files its
// own flags (File) as it declares them; the command renders the headings
// in Headings' order (Write). A flag filed under Global is kubectl's
// connection, auth or impersonation flag: it works on the command as
// always, and `kubectl deltas options` lists it instead of --help.
//
// The filing is kept in each flag's annotations, so it travels with the
// flag set and needs no state of its own.
package flaghelp

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
)

// Heading names a group of flags in --help.
type Heading string

// The headings, in the order --help shows them.
const (
	Watch   Heading = "What to watch"
	Filter  Heading = "Filters and diffs"
	Output  Heading = "Output"
	Wait    Heading = "Following and waiting"
	History Heading = "Recording, replay and the page"
	Tuning  Heading = "List/watch tuning"
	// Global: kubectl's kubeconfig, auth and impersonation flags, listed by
	// `kubectl deltas options` as `kubectl options` lists kubectl's.
	Global Heading = "Global"
)

// Headings returns the headings --help shows, in order (Global is not one).
func Headings() []Heading { return []Heading{Watch, Filter, Output, Wait, History, Tuning} }

// Page is the docs page that says more of the heading's flags.
func (h Heading) Page() string {
	switch h {
	case Watch:
		return "docs/watching.md"
	case Filter:
		return "docs/diffs-and-trees.md"
	case Output:
		return "docs/output.md"
	case Wait:
		return "docs/waiting.md"
	case History:
		return "docs/recording.md"
	case Tuning:
		return "docs/tuning.md"
	}
	return ""
}

// Annotation keys. headingKey holds [heading, filing sequence]; pairKey,
// on the first flag of a pair, holds [the second's name, the line's
// usage].
const (
	headingKey = "kubectl-deltas.heading"
	pairKey    = "kubectl-deltas.pair"
)

// File files the named flags of fs under h, in the order given: --help
// lists a heading's flags in the order they were filed. A name fs does
// not hold is skipped (the command's test finds a flag left unfiled).
func File(fs *pflag.FlagSet, h Heading, names ...string) {
	seq := 0
	fs.VisitAll(func(f *pflag.Flag) {
		if _, ok := f.Annotations[headingKey]; ok {
			seq++
		}
	})
	for _, name := range names {
		f := fs.Lookup(name)
		if f == nil {
			continue
		}
		if f.Annotations == nil {
			f.Annotations = map[string][]string{}
		}
		f.Annotations[headingKey] = []string{string(h), strconv.Itoa(seq)}
		seq++
	}
}

// Pair shows the flags first and second on one line of --help, with usage
// for both: two flags that read as one ("--from, --to TIME"). Each keeps
// its own usage for completion. Both must be filed under one heading.
func Pair(fs *pflag.FlagSet, first, second, usage string) {
	f := fs.Lookup(first)
	if f == nil || fs.Lookup(second) == nil {
		return
	}
	if f.Annotations == nil {
		f.Annotations = map[string][]string{}
	}
	f.Annotations[pairKey] = []string{second, usage}
}

// HeadingOf returns the heading f is filed under, "" if none.
func HeadingOf(f *pflag.Flag) Heading {
	if v := f.Annotations[headingKey]; len(v) == 2 {
		return Heading(v[0])
	}
	return ""
}

// Flags returns the visible flags of fs filed under h, in filing order.
func Flags(fs *pflag.FlagSet, h Heading) []*pflag.Flag {
	var out []*pflag.Flag
	fs.VisitAll(func(f *pflag.Flag) {
		if !f.Hidden && HeadingOf(f) == h {
			out = append(out, f)
		}
	})
	slices.SortStableFunc(out, func(a, b *pflag.Flag) int { return sequence(a) - sequence(b) })
	return out
}

func sequence(f *pflag.Flag) int {
	n, _ := strconv.Atoi(f.Annotations[headingKey][1])
	return n
}

// Lines renders the flags of fs filed under h as --help shows them: the
// names and the value's name in a column aligned across the heading, then
// the usage and a non-zero default. A pair is one line.
func Lines(fs *pflag.FlagSet, h Heading) []string {
	type row struct{ names, usage string }
	var rows []row
	paired := map[string]bool{}
	for _, f := range Flags(fs, h) {
		if paired[f.Name] {
			continue
		}
		names, usage := nameColumn(f), usageColumn(f)
		if p := f.Annotations[pairKey]; len(p) == 2 {
			if second := fs.Lookup(p[0]); second != nil {
				paired[second.Name] = true
				names = strings.TrimRight(nameOnly(f), " ") + ", " + strings.TrimSpace(nameColumn(second))
				usage = p[1]
			}
		}
		rows = append(rows, row{names, usage})
	}
	width := 0
	for _, r := range rows {
		width = max(width, len(r.names))
	}
	out := make([]string, 0, len(rows))
	for _, r := range rows {
		out = append(out, strings.TrimRight(fmt.Sprintf("%-*s   %s", width, r.names, r.usage), " "))
	}
	return out
}

// nameOnly is "  -o, --output" or "      --diff".
func nameOnly(f *pflag.Flag) string {
	if f.Shorthand != "" {
		return "  -" + f.Shorthand + ", --" + f.Name
	}
	return "      --" + f.Name
}

// nameColumn is the names and the value's name: the usage's `backquoted`
// word, else the value's type as pflag names it (none for a bool), in
// brackets when the value may be left out.
func nameColumn(f *pflag.Flag) string {
	varname, _ := pflag.UnquoteUsage(f)
	switch {
	case varname == "" || f.Value.Type() == "bool":
		return nameOnly(f)
	case f.NoOptDefVal != "":
		return nameOnly(f) + "[=" + varname + "]" // the value is optional
	}
	return nameOnly(f) + " " + varname
}

// usageColumn is the usage, backquotes removed, and the default where it
// is not the type's zero value.
func usageColumn(f *pflag.Flag) string {
	_, usage := pflag.UnquoteUsage(f)
	if strings.Contains(usage, "(default") {
		return usage // it says the default itself
	}
	switch f.DefValue {
	case "", "0", "0s", "false", "[]":
		return usage
	}
	if f.Value.Type() == "string" {
		return fmt.Sprintf("%s (default %q)", usage, f.DefValue)
	}
	return fmt.Sprintf("%s (default %s)", usage, f.DefValue)
}

// Write writes each heading of headings that has a flag, its page when it
// has one, and its flags' lines.
func Write(w io.Writer, fs *pflag.FlagSet, headings ...Heading) error {
	var b strings.Builder
	for _, h := range headings {
		lines := Lines(fs, h)
		if len(lines) == 0 {
			continue
		}
		if page := h.Page(); page != "" {
			fmt.Fprintf(&b, "%s (%s):\n", h, page)
		} else {
			fmt.Fprintf(&b, "%s:\n", h)
		}
		for _, l := range lines {
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
