package printer

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/kubectl-deltas/kubectl-deltas/internal/flaghelp"
)

// Flags are the output flags, as cli-runtime's PrintFlags: the format of
// -o and what human formats show. The printer package is the one place
// that knows what a format means: callers ask (TableRows,
// HealthByDefault) rather than compare format strings.
type Flags struct {
	// Output is -o/--output (see Options.Format).
	Output      string
	NoHeaders   bool
	Color       string
	Timestamps  bool
	ShowManager bool
}

// NewFlags returns the output flags with their defaults: text, colors on a
// terminal.
func NewFlags() *Flags {
	return &Flags{Output: formatText, Color: "auto"}
}

// AddFlags declares the flags on fs.
func (f *Flags) AddFlags(fs *pflag.FlagSet) {
	fs.StringVarP(&f.Output, "output", "o", f.Output, "text (default), wide, json, yaml, name, custom-columns, template")
	fs.BoolVar(&f.NoHeaders, "no-headers", f.NoHeaders, "No header line in wide and custom-columns output")
	fs.StringVar(&f.Color, "color", f.Color, "Colored output: auto, always or never")
	fs.BoolVar(&f.Timestamps, "timestamps", f.Timestamps, "Prefix each line with the time its delta was popped")
	fs.BoolVar(&f.ShowManager, "show-manager", f.ShowManager, "Text: name who made each change (by kubectl-edit)")
	flaghelp.File(fs, flaghelp.Output, "output", "no-headers", "color", "timestamps", "show-manager")
}

// Validate checks the values that need no file: a known format, with an
// argument when it takes one, and a color mode. A template file is read,
// and a template parsed, by ToPrinter.
func (f *Flags) Validate() error {
	if _, _, err := splitFormat(f.Output); err != nil {
		return err
	}
	switch f.Color {
	case "auto", "always", "never":
		return nil
	}
	return fmt.Errorf("invalid --color value %q: must be auto, always or never", f.Color)
}

// TableRows reports whether the format shows each kind's own columns,
// which the server renders as Tables (-o wide): lists and watches must ask
// for them, and records carry their rows.
func (f *Flags) TableRows() bool {
	name, _, _ := strings.Cut(f.Output, "=")
	return name == formatWide
}

// HealthByDefault reports whether the format shows the objects' health
// unless asked not to (--health=false): whole records (JSON, YAML, the
// templates) and wide's HEALTH column; text and name only on request.
func (f *Flags) HealthByDefault() bool {
	name, _, _ := strings.Cut(f.Output, "=")
	switch name {
	case "", formatText, formatName:
		return false
	}
	return true
}

// ToPrinter returns the printer of the flags, writing to out: o says what
// the flags cannot (the context column, -A, health, diffs); its Format,
// NoHeaders, Color, Timestamps and ShowManager are the flags'. Colors are
// on for --color=always, and for auto when out is a terminal and NO_COLOR
// is not set.
func (f *Flags) ToPrinter(out io.Writer, o Options) (Printer, error) {
	o.Format, o.NoHeaders, o.Timestamps, o.ShowManager = f.Output, f.NoHeaders, f.Timestamps, f.ShowManager
	o.Color = f.Color == "always" || f.Color == "auto" && colorTerminal(out)
	return New(o)
}

// colorTerminal reports whether --color=auto colors what goes to out.
func colorTerminal(out io.Writer) bool {
	if _, set := os.LookupEnv("NO_COLOR"); set {
		return false
	}
	file, ok := out.(*os.File)
	if !ok {
		return false
	}
	info, err := file.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}
