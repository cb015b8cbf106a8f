package printer

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/template"

	"github.com/kubectl-deltas/kubectl-deltas/internal/textsafe"

	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/client-go/util/jsonpath"
)

// The template formats (jsonpath, go-template, custom-columns) evaluate
// against the record as a generic JSON value: the decoded output of
// AppendJSON, so their field names are the JSON record's (.type,
// .object.metadata.name, .changes[0].path). Numbers decode as int64 when
// integral and float64 otherwise, with the decoder of kubectl's
// unstructured objects.

// recordValue returns the record as a generic JSON value, reusing buf for
// its encoding.
func recordValue(buf []byte, r *Record) (map[string]any, []byte, error) {
	buf = AppendJSON(buf[:0], r)
	var v map[string]any
	if err := utiljson.Unmarshal(buf, &v); err != nil {
		return nil, buf, fmt.Errorf("cannot decode the %s record of %s: %w", r.Type, r.Name, err)
	}
	return v, buf, nil
}

// newJSONPath parses a JSONPath template as kubectl's jsonpath printer does:
// missing keys print nothing.
func newJSONPath(tmpl string, asJSON bool) (*jsonpath.JSONPath, error) {
	j := jsonpath.New("out").AllowMissingKeys(true)
	j.EnableJSONOutput(asJSON)
	if err := j.Parse(tmpl); err != nil {
		return nil, err
	}
	return j, nil
}

// jsonPathPrinter writes exactly what its template says for each record:
// -o jsonpath='{.type} {.object.metadata.name}{"\n"}'. As in kubectl, the
// template is used as given (text outside {} is printed literally).
type jsonPathPrinter struct {
	format   string
	template string
	asJSON   bool
	json     []byte
	out      bytes.Buffer
}

func newJSONPathPrinter(format, tmpl string, asJSON bool) (*jsonPathPrinter, error) {
	if _, err := newJSONPath(tmpl, asJSON); err != nil {
		return nil, fmt.Errorf("invalid --output=%s template %q: %w", format, tmpl, err)
	}
	return &jsonPathPrinter{format: format, template: tmpl, asJSON: asJSON}, nil
}

func (p *jsonPathPrinter) Print(w io.Writer, r *Record) error {
	v, buf, err := recordValue(p.json, r)
	p.json = buf
	if err != nil {
		return err
	}
	// A parsed JSONPath cannot be executed twice: a {range} leaves it
	// pointing past its own end. Parse afresh; New proved it parses.
	j, err := newJSONPath(p.template, p.asJSON)
	if err != nil {
		return fmt.Errorf("invalid --output=%s template %q: %w", p.format, p.template, err)
	}
	p.out.Reset()
	if err := j.Execute(&p.out, v); err != nil {
		return fmt.Errorf("cannot execute the --output=%s template %q on the %s record of %s: %w",
			p.format, p.template, r.Type, r.Name, err)
	}
	_, err = w.Write(p.out.Bytes())
	return err
}

// goTemplatePrinter writes what its Go template says for each record, with
// kubectl's extra functions exists and base64decode. Missing keys print
// "<no value>", as kubectl's --allow-missing-template-keys default does.
//
// cli-runtime's printers.GoTemplatePrinter is not used: it prints
// runtime.Objects (a record is none) by marshalling and unmarshalling each
// one again, and on a template error it writes debugging text to its
// writer, which here is stdout and carries data only. Its two functions are
// unexported, so exists and base64decode below are copies of them.
type goTemplatePrinter struct {
	format   string
	template *template.Template
	json     []byte
	out      bytes.Buffer
}

func newGoTemplatePrinter(format, tmpl string) (*goTemplatePrinter, error) {
	t, err := template.New("output").
		Funcs(template.FuncMap{"exists": exists, "base64decode": base64decode}).
		Option("missingkey=default").
		Parse(tmpl)
	if err != nil {
		return nil, fmt.Errorf("invalid --output=%s template %q: %w", format, tmpl, err)
	}
	return &goTemplatePrinter{format: format, template: t}, nil
}

func (p *goTemplatePrinter) Print(w io.Writer, r *Record) error {
	v, buf, err := recordValue(p.json, r)
	p.json = buf
	if err != nil {
		return err
	}
	p.out.Reset()
	if err := p.template.Execute(&p.out, v); err != nil {
		return fmt.Errorf("cannot execute the --output=%s template on the %s record of %s: %w",
			p.format, r.Type, r.Name, err)
	}
	_, err = w.Write(p.out.Bytes())
	return err
}

// exists is kubectl's template function: whether item has a non-null value
// under the given keys and indices, as in
// {{if exists .object "metadata" "labels" "app"}}.
func exists(item any, indices ...any) bool {
	v := item
	for _, ix := range indices {
		switch c := v.(type) {
		case map[string]any:
			k, ok := ix.(string)
			if !ok {
				return false
			}
			if v, ok = c[k]; !ok {
				return false
			}
		case []any:
			i, ok := ix.(int)
			if !ok || i < 0 || i >= len(c) {
				return false
			}
			v = c[i]
		default:
			return false
		}
	}
	return v != nil
}

// base64decode is kubectl's template function: {{.data.key | base64decode}}.
func base64decode(s string) (string, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return "", fmt.Errorf("base64 decode failed: %w", err)
	}
	return string(b), nil
}

// customColumn is one HEADER:path column of -o custom-columns.
type customColumn struct {
	header string
	// path is the column's JSONPath in its braced form, "{.type}".
	path string
}

// customColumnsPrinter writes a table with one column per spec and a header
// row, with stable widths like wide. A cell shows every value the path
// selects, comma-separated, or <none>.
//
// A header comes before the first row, as wide as it, and again before
// every row that widens a column, so that header and rows stay aligned
// (kubectl get -w lets later rows drift right of the header instead).
type customColumnsPrinter struct {
	columns    []customColumn
	noHeaders  bool
	headerDone bool
	table      *table
	header     []string
	cells      []string
	json       []byte
	buf        []byte
	// held are the rows of an initial list not yet printed (Release).
	held heldRows
}

// newCustomColumnsPrinter parses kubectl's custom-columns spec:
// "NAME:.object.metadata.name,TYPE:.type", where each path may also be
// written "object.metadata.name", "{object.metadata.name}" or
// "{.object.metadata.name}".
func newCustomColumnsPrinter(o Options, spec string) (*customColumnsPrinter, error) {
	parts := strings.Split(spec, ",")
	columns := make([]customColumn, 0, len(parts))
	for _, part := range parts {
		header, path, ok := strings.Cut(part, ":")
		if !ok {
			return nil, fmt.Errorf("invalid --output=custom-columns column %q, expected <header>:<json-path-expr> as in TYPE:.type", part)
		}
		c, err := newCustomColumn(header, path)
		if err != nil {
			return nil, err
		}
		columns = append(columns, c)
	}
	return newCustomColumnsPrinterFromColumns(o, columns), nil
}

// newCustomColumnsPrinterFromTemplate parses kubectl's custom-columns-file
// form: a line of whitespace-separated headers, then a line of as many
// paths.
func newCustomColumnsPrinterFromTemplate(o Options, tmpl string) (*customColumnsPrinter, error) {
	sc := bufio.NewScanner(strings.NewReader(tmpl))
	var lines [][]string
	for len(lines) < 2 && sc.Scan() {
		lines = append(lines, strings.Fields(sc.Text()))
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("cannot read the --output=custom-columns-file template: %w", err)
	}
	if len(lines) < 2 {
		return nil, fmt.Errorf("invalid --output=custom-columns-file template: expected a line of headers, then a line of as many paths")
	}
	headers, paths := lines[0], lines[1]
	if len(headers) != len(paths) {
		return nil, fmt.Errorf("invalid --output=custom-columns-file template: %d headers but %d paths", len(headers), len(paths))
	}
	columns := make([]customColumn, 0, len(headers))
	for i := range headers {
		c, err := newCustomColumn(headers[i], paths[i])
		if err != nil {
			return nil, err
		}
		columns = append(columns, c)
	}
	return newCustomColumnsPrinterFromColumns(o, columns), nil
}

func newCustomColumn(header, path string) (customColumn, error) {
	braced, ok := relaxedJSONPath(path)
	if !ok {
		return customColumn{}, fmt.Errorf("invalid --output=custom-columns path %q of column %s, expected a path like .object.metadata.name, object.metadata.name or {.object.metadata.name}", path, header)
	}
	if _, err := newJSONPath(braced, false); err != nil {
		return customColumn{}, fmt.Errorf("invalid --output=custom-columns path %q of column %s: %w", path, header, err)
	}
	return customColumn{header: header, path: braced}, nil
}

func newCustomColumnsPrinterFromColumns(o Options, columns []customColumn) *customColumnsPrinter {
	mins := make([]int, len(columns))
	for i, c := range columns {
		// Sized by the header even without one, so that --no-headers
		// output aligns the same way; wide enough for a delta type.
		mins[i] = max(len([]rune(c.header)), typeWidth())
	}
	header := make([]string, len(columns))
	for i, c := range columns {
		header[i] = textsafe.String(c.header)
	}
	return &customColumnsPrinter{
		columns:   columns,
		noHeaders: o.NoHeaders,
		table:     newTable(mins),
		header:    header,
		cells:     make([]string, len(columns)),
	}
}

// relaxedJSONPath is kubectl's RelaxedJSONPathExpression: it accepts
// "a.b", ".a.b", "{a.b}" and "{.a.b}" and returns "{.a.b}".
func relaxedJSONPath(path string) (string, bool) {
	s := path
	if len(s) >= 2 && s[0] == '{' && s[len(s)-1] == '}' {
		s = s[1 : len(s)-1]
	}
	s = strings.TrimPrefix(s, ".")
	if s == "" || strings.ContainsAny(s, "{}") {
		return "", false
	}
	return "{." + s + "}", true
}

func (p *customColumnsPrinter) Print(w io.Writer, r *Record) error {
	v, buf, err := recordValue(p.json, r)
	p.json = buf
	if err != nil {
		return err
	}
	var values []string
	for i, c := range p.columns {
		// Parsed afresh for each record: a JSONPath is spent after a range.
		j, err := newJSONPath(c.path, false)
		if err != nil {
			return fmt.Errorf("invalid --output=custom-columns path %q of column %s: %w", c.path, c.header, err)
		}
		results, err := j.FindResults(v)
		if err != nil {
			return fmt.Errorf("cannot evaluate --output=custom-columns column %s on the %s record of %s: %w",
				c.header, r.Type, r.Name, err)
		}
		values = values[:0]
		for _, rs := range results {
			for _, rv := range rs {
				if !rv.IsValid() || !rv.CanInterface() {
					continue
				}
				x := rv.Interface()
				if x == nil { // JSON null: no value, as a missing key
					continue
				}
				values = append(values, textsafe.String(fmt.Sprint(x)))
			}
		}
		if len(values) == 0 {
			p.cells[i] = "<none>"
		} else {
			p.cells[i] = strings.Join(values, ",")
		}
	}
	hold := p.held.holds(r)
	if !hold || p.held.full() {
		if err := p.Release(w); err != nil {
			return err
		}
	}
	if hold {
		p.held.rows = append(p.held.rows, heldRow{cells: slices.Clone(p.cells)})
		return nil
	}
	p.buf = p.appendRow(p.buf[:0], p.cells)
	_, err = w.Write(p.buf)
	return err
}

// Release implements Releaser: the rows held back are laid out together
// and printed, in one write.
func (p *customColumnsPrinter) Release(w io.Writer) error {
	if len(p.held.rows) == 0 {
		return nil
	}
	for _, row := range p.held.rows {
		p.table.fit(row.cells)
	}
	b := p.buf[:0]
	for _, row := range p.held.rows {
		b = p.appendRow(b, row.cells)
	}
	p.held.reset()
	p.buf = b
	_, err := w.Write(b)
	return err
}

// appendRow appends a row of cells, under the header when it is due.
func (p *customColumnsPrinter) appendRow(b []byte, cells []string) []byte {
	if !p.noHeaders && (!p.headerDone || p.table.widens(cells)) {
		p.table.fit(cells)
		b = p.table.appendRow(b, p.header, nil)
	}
	p.headerDone = true
	return p.table.appendRow(b, cells, nil)
}
