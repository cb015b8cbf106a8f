package printer

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"
)

// Options select and configure a printer. The zero value prints text.
type Options struct {
	// Format is the value of -o/--output: "" or "text", "wide", "json",
	// "yaml", "name", "jsonpath=…", "jsonpath-as-json=…", "jsonpath-file=FILE",
	// "go-template=…", "go-template-file=FILE", "custom-columns=…",
	// "custom-columns-file=FILE".
	Format string

	// AllNamespaces makes the text subject namespace/name for namespaced
	// objects (-A).
	AllNamespaces bool
	// MultiType prefixes the text subject with the lower-case kind and its
	// group for non-core kinds: "configmap demo", "deployment.apps tmp/web".
	MultiType bool
	// Timestamps prefixes text lines with the time the delta was popped
	// (2006-01-02T15:04:05.000Z07:00); in wide it makes TIME that full time.
	Timestamps bool
	// NoHeaders drops the header row of wide and custom-columns.
	NoHeaders bool
	// Color adds ANSI colors to text and wide. The caller resolves
	// --color=auto|always|never (TTY, NO_COLOR) before setting it.
	Color bool
	// ShowManager appends " by <manager>" to text lines whose record names a
	// field manager. Lines of records with Changes show it regardless.
	ShowManager bool
	// Health appends each record's health (" InProgress: Ready: 1/3") to
	// its text line (--health), and adds wide's HEALTH column.
	Health bool
	// Diff adds the CHANGES column to wide (set it with --diff), so the column
	// set is fixed from the header on.
	Diff bool
	// ContextWidth, when positive, is the width of the leading context
	// column of text, name and wide (several clusters): the longest
	// context name. 0 for one cluster: no column.
	ContextWidth int

	// Now returns the current time, for AGE in wide; nil means time.Now.
	Now func() time.Time
	// Location is the time zone of human-readable times (text timestamps,
	// wide TIME); nil means time.Local. JSON and YAML always use UTC.
	Location *time.Location
}

// Printer writes records in one output format. A Printer may keep state
// between records (the wide header, column widths, YAML separators) and is
// not safe for concurrent use. Print writes each record with a single Write
// call, so w may be flushed after every record.
type Printer interface {
	Print(w io.Writer, r *Record) error
}

// Releaser is implemented by printers that may hold records back: the
// table printers (wide, custom-columns) hold the rows of an initial list
// until it is all out, so that it is laid out as one table, as kubectl get
// lays out a list. The caller calls Release whenever no record is waiting
// and before it ends or writes anything else: Release writes what was
// held, in order, with a single Write call.
type Releaser interface {
	Release(w io.Writer) error
}

// MultiTyper is implemented by printers whose lines name each object's
// kind only when several resources are watched (Options.MultiType). The
// caller, which learns the resources after building the printer, says so
// before the first record.
type MultiTyper interface {
	SetMultiType(multi bool)
}

// The values of -o/--output; a template format takes its argument after "=".
const (
	formatText              = "text"
	formatWide              = "wide"
	formatJSON              = "json"
	formatYAML              = "yaml"
	formatName              = "name"
	formatJSONPath          = "jsonpath"
	formatJSONPathAsJSON    = "jsonpath-as-json"
	formatJSONPathFile      = "jsonpath-file"
	formatGoTemplate        = "go-template"
	formatGoTemplateFile    = "go-template-file"
	formatCustomColumns     = "custom-columns"
	formatCustomColumnsFile = "custom-columns-file"
)

// AllowedFormats returns the accepted -o/--output values, sorted, without
// their "=…" arguments: for help text and shell completion.
func AllowedFormats() []string {
	return []string{
		formatCustomColumns,
		formatCustomColumnsFile,
		formatGoTemplate,
		formatGoTemplateFile,
		formatJSON,
		formatJSONPath,
		formatJSONPathAsJSON,
		formatJSONPathFile,
		formatName,
		formatText,
		formatWide,
		formatYAML,
	}
}

// NoCompatiblePrinterError is returned by New for an unknown output format.
// Its message is kubectl's.
type NoCompatiblePrinterError struct {
	OutputFormat   string
	AllowedFormats []string
}

func (e *NoCompatiblePrinterError) Error() string {
	allowed := append([]string(nil), e.AllowedFormats...)
	sort.Strings(allowed)
	return fmt.Sprintf("unable to match a printer suitable for the output format %q, allowed formats are: %s",
		e.OutputFormat, strings.Join(allowed, ","))
}

// New returns the printer for o.Format. An unknown format is a
// *NoCompatiblePrinterError; a template, JSONPath or custom-columns argument
// that is missing, unreadable or does not parse is an error naming --output,
// so bad flags fail before anything is watched.
func New(o Options) (Printer, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Location == nil {
		o.Location = time.Local
	}
	name, arg, err := splitFormat(o.Format)
	if err != nil {
		return nil, err
	}

	switch name {
	case formatJSONPathFile, formatGoTemplateFile, formatCustomColumnsFile:
		data, err := os.ReadFile(arg)
		if err != nil {
			return nil, fmt.Errorf("cannot read the --output=%s file: %w", name, err)
		}
		arg = string(data)
	}

	switch name {
	case "", formatText:
		return newTextPrinter(o), nil
	case formatWide:
		return newWidePrinter(o), nil
	case formatJSON:
		return &jsonPrinter{}, nil
	case formatYAML:
		return &yamlPrinter{}, nil
	case formatName:
		return &namePrinter{contextWidth: o.ContextWidth}, nil
	case formatJSONPath, formatJSONPathFile:
		return newJSONPathPrinter(name, arg, false)
	case formatJSONPathAsJSON:
		return newJSONPathPrinter(name, arg, true)
	case formatGoTemplate, formatGoTemplateFile:
		return newGoTemplatePrinter(name, arg)
	case formatCustomColumns:
		return newCustomColumnsPrinter(o, arg)
	default: // formatCustomColumnsFile
		return newCustomColumnsPrinterFromTemplate(o, arg)
	}
}

// splitFormat splits an -o value into the format and its argument: an
// unknown format, an argument to one that takes none or none to one that
// needs it is an error.
func splitFormat(format string) (name, arg string, err error) {
	name, arg, hasArg := strings.Cut(format, "=")
	switch name {
	case "", formatText, formatWide, formatJSON, formatYAML, formatName:
		if hasArg {
			return "", "", noCompatiblePrinter(format)
		}
	case formatJSONPath, formatJSONPathAsJSON, formatJSONPathFile,
		formatGoTemplate, formatGoTemplateFile,
		formatCustomColumns, formatCustomColumnsFile:
		if arg == "" {
			return "", "", fmt.Errorf("--output=%s needs an argument, e.g. --output=%s", name, formatExample(name))
		}
	default:
		return "", "", noCompatiblePrinter(format)
	}
	return name, arg, nil
}

func noCompatiblePrinter(format string) error {
	return &NoCompatiblePrinterError{OutputFormat: format, AllowedFormats: AllowedFormats()}
}

// formatExample is a working --output value of a template format, for the
// error that says its argument is missing.
func formatExample(name string) string {
	switch name {
	case formatJSONPath, formatJSONPathAsJSON:
		return name + `='{.type} {.object.metadata.name}{"\n"}'`
	case formatGoTemplate:
		return name + `='{{.type}} {{.object.metadata.name}}{{"\n"}}'`
	case formatCustomColumns:
		return name + `=TYPE:.type,NAME:.object.metadata.name`
	default:
		return name + `=FILE`
	}
}
