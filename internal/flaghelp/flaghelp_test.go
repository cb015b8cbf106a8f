package flaghelp

import (
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

// TestLines: a heading's flags in filing order (not pflag's sorted one),
// the value's name from the usage's backquotes, a default only where it
// is not the zero value nor already said, a pair on one line.
func TestLines(t *testing.T) {
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	fs.Bool("zeta", false, "Zeta first")
	fs.StringP("output", "o", "text", "text (default) or json")
	fs.Int("chunk", 500, "Pages of `N` objects")
	fs.String("from", "", "From `TIME`")
	fs.String("to", "", "To `TIME`")
	fs.Duration("wait", time.Second, "How long")
	fs.String("other", "", "Filed elsewhere")
	File(fs, Output, "zeta", "output", "chunk", "from", "to", "wait")
	File(fs, Tuning, "other", "nosuch")
	Pair(fs, "from", "to", "From or to TIME")

	got := strings.Join(Lines(fs, Output), "\n")
	want := strings.Join([]string{
		"      --zeta              Zeta first",
		"  -o, --output string     text (default) or json",
		"      --chunk N           Pages of N objects (default 500)",
		"      --from, --to TIME   From or to TIME",
		"      --wait duration     How long (default 1s)",
	}, "\n")
	if got != want {
		t.Errorf("Lines:\n%s\nwant:\n%s", got, want)
	}
	if h := HeadingOf(fs.Lookup("other")); h != Tuning {
		t.Errorf("--other filed under %q, want %q", h, Tuning)
	}
	if h := HeadingOf(fs.Lookup("zeta")); h != Output {
		t.Errorf("--zeta filed under %q, want %q", h, Output)
	}
}

// TestWriteSkipsEmptyHeadings: a heading without flags is not written;
// each written one names its docs page.
func TestWriteSkipsEmptyHeadings(t *testing.T) {
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	fs.Bool("diff", false, "Diffs")
	File(fs, Filter, "diff")
	var b strings.Builder
	if err := Write(&b, fs, Headings()...); err != nil {
		t.Fatal(err)
	}
	want := "Filters and diffs (docs/diffs-and-trees.md):\n      --diff   Diffs\n"
	if b.String() != want {
		t.Errorf("Write: %q, want %q", b.String(), want)
	}
}
