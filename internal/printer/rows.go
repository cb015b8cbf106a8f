package printer

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/kubectl-deltas/kubectl-deltas/internal/textsafe"
)

// The kind layouts of -o wide: a record with its server-side Table row is
// printed with its kind's columns, as kubectl get -o wide shows them,
// between the delta's own:
//
//	[CONTEXT]  TIME  DELTA  [NAMESPACE]  <the kind's columns, -o wide's included>  [HEALTH]  [CHANGES]
//
// NAMESPACE with -A, as kubectl get -A. A header line comes when the
// layout changes (a row of another kind, or of the generic columns) and
// that layout's header is not among the last headerEvery lines, so that
// every row has its kind's header close above it without a header between
// every two rows of a rollout (the name column says the kind when several
// are watched); --no-headers drops them. Each layout keeps its column
// widths, which only grow, and a header is as wide as the row below it:
// a row that widens a column gets its header again, above it.

// headerEvery is how many lines may separate a row from its kind's last
// header before the header is repeated.
const headerEvery = 20

// rowLayout is one kind's layout.
type rowLayout struct {
	table   *table
	columns []Column
	header  []string
	// name is the index of the name column among the kind's, -1 if none.
	name int
	// headerAt is the widePrinter's line count when its header was last
	// printed; -1 before.
	headerAt int
}

// rowLayoutKey is the layout of r's kind, in its cluster.
func rowLayoutKey(r *Record) string {
	return r.Context + "|" + r.APIVersion + "|" + r.Kind
}

// layoutOf returns r's kind's layout, made from its columns when first
// seen or when the server's columns changed.
func (p *widePrinter) layoutOf(key string, r *Record) *rowLayout {
	l := p.rows[key]
	if l != nil && sameColumns(l.columns, r.Row.Columns) {
		return l
	}
	l = &rowLayout{columns: r.Row.Columns, name: -1, headerAt: -1}
	var mins []int
	add := func(name string, minWidth int) {
		l.header = append(l.header, name)
		mins = append(mins, max(minWidth, len(name)))
	}
	if p.o.ContextWidth > 0 {
		add("CONTEXT", p.o.ContextWidth)
	}
	add("TIME", len(p.timeLayout))
	add("DELTA", typeWidth())
	if p.o.AllNamespaces {
		add("NAMESPACE", len("kube-system"))
	}
	for i, c := range r.Row.Columns {
		if c.Format == "name" && l.name < 0 {
			l.name = i
		}
		add(strings.ToUpper(textsafe.String(c.Name)), 0)
	}
	if p.o.Health {
		add("HEALTH", len("InProgress"))
	}
	if p.o.Diff {
		add("CHANGES", 0)
	}
	l.table = newTable(mins)
	p.rows[key] = l
	return l
}

func sameColumns(a, b []Column) bool {
	if len(a) != len(b) {
		return false
	}
	if len(a) > 0 && &a[0] == &b[0] {
		return true // the rows of one list share their columns
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// kindCells are r's cells in its kind's layout l, and their colors (nil
// without --color).
func (p *widePrinter) kindCells(l *rowLayout, r *Record) (cells, colors []string) {
	cells = make([]string, 0, len(l.header))
	if p.o.Color {
		colors = make([]string, 0, len(l.header))
	}
	push := func(cell, color string) {
		cells = append(cells, cell)
		if colors != nil {
			colors = append(colors, color)
		}
	}
	if p.o.ContextWidth > 0 {
		push(textsafe.String(r.Context), "")
	}
	push(r.Time.In(p.o.Location).Format(p.timeLayout), "")
	push(textsafe.String(r.Type), typeColor(r.Type))
	if p.o.AllNamespaces {
		push(textsafe.String(r.Namespace), "")
	}
	values := rowCells(r.Row.Cells, len(l.columns))
	for i, v := range values {
		if i == l.name && p.o.MultiType {
			v = strings.ToLower(kindColumn(r)) + "/" + v
		}
		push(v, "")
	}
	if p.o.Health {
		push(healthCell(r))
	}
	if p.o.Diff {
		push(changesCell(r), "")
	}
	return cells, colors
}

// appendKindRow appends row, in its kind's layout, under the layout's
// header when that is due.
func (p *widePrinter) appendKindRow(b []byte, row heldRow) []byte {
	l := row.kind
	if !p.o.NoHeaders && (p.layout != row.layout && (l.headerAt < 0 || p.lines-l.headerAt > headerEvery) || l.table.widens(row.cells)) {
		l.table.fit(row.cells)
		b = l.table.appendRow(b, l.header, nil)
		l.headerAt = p.lines
		p.lines++
	}
	p.layout = row.layout
	p.lines++
	return l.table.appendRow(b, row.cells, row.colors)
}

// healthCell is the HEALTH cell of wide, and its color: the verdict's
// status, or <none>.
func healthCell(r *Record) (cell, color string) {
	if r.Health == nil {
		return "<none>", ""
	}
	return textsafe.String(r.Health.Status), healthColor(r.Health.Status)
}

// changesCell is the CHANGES cell of wide: how many operations the diff
// has, or <none> without one.
func changesCell(r *Record) string {
	if r.Changes == nil {
		return "<none>"
	}
	return strconv.Itoa(len(r.Changes))
}

// rowCells renders a row's cells as kubectl does: strings as they are,
// numbers and booleans as written, null as "<none>", anything else as its
// JSON; terminal-safe. There are always n cells: missing ones are empty.
// Cells are scalars in every Table kube-apiserver renders: a scanner reads
// those; encoding/json reads the rest (a cell that is an object or an
// array, a malformed row).
func rowCells(raw json.RawMessage, n int) []string {
	out := make([]string, n)
	if !scanCells(raw, out) {
		clear(out)
		decodeCells(raw, out)
	}
	return out
}

// decodeCells fills out from raw with encoding/json: what scanCells leaves
// to it. A row that is no JSON array leaves out empty.
func decodeCells(raw json.RawMessage, out []string) {
	var cells []json.RawMessage
	if json.Unmarshal(raw, &cells) != nil {
		return
	}
	for i := 0; i < len(out) && i < len(cells); i++ {
		out[i] = cellText(bytes.TrimSpace(cells[i]))
	}
}

// cellText is one cell's text, from its JSON.
func cellText(c []byte) string {
	switch {
	case len(c) == 0:
		return ""
	case c[0] == '"':
		var s string
		if json.Unmarshal(c, &s) == nil {
			return textsafe.String(s)
		}
		return ""
	case string(c) == "null":
		return "<none>"
	}
	return textsafe.String(string(c))
}

// scanCells fills out from raw, a JSON array of scalars, and says whether
// it could: false for anything else (an object or array cell, an escape
// it leaves to encoding/json, malformed JSON), with out partly written.
func scanCells(raw []byte, out []string) bool {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '[' {
		return false
	}
	i = skipSpace(raw, i+1)
	if i < len(raw) && raw[i] == ']' {
		return skipSpace(raw, i+1) == len(raw)
	}
	for cell := 0; ; cell++ {
		if i >= len(raw) {
			return false
		}
		start := i
		switch c := raw[i]; {
		case c == '"':
			i++
			for i < len(raw) && raw[i] != '"' {
				if raw[i] == '\\' || raw[i] < 0x20 {
					return false
				}
				i++
			}
			if i >= len(raw) {
				return false
			}
			i++
			text := raw[start+1 : i-1]
			if !utf8.Valid(text) {
				return false // encoding/json replaces invalid UTF-8
			}
			if cell < len(out) {
				out[cell] = textsafe.String(string(text))
			}
		case c == '-' || (c >= '0' && c <= '9') || c == 't' || c == 'f' || c == 'n':
			for i < len(raw) && isScalarByte(raw[i]) {
				i++
			}
			token := raw[start:i]
			if !validScalar(token) {
				return false
			}
			if cell < len(out) {
				out[cell] = cellText(token)
			}
		default:
			return false
		}
		i = skipSpace(raw, i)
		if i >= len(raw) {
			return false
		}
		switch raw[i] {
		case ',':
			i = skipSpace(raw, i+1)
		case ']':
			return skipSpace(raw, i+1) == len(raw)
		default:
			return false
		}
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// isScalarByte is a byte of a JSON number or literal.
func isScalarByte(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || c == '-' || c == '+' || c == '.' || c == 'E'
}

// validScalar says whether token is a JSON literal or number.
func validScalar(token []byte) bool {
	switch string(token) {
	case "true", "false", "null":
		return true
	}
	return json.Valid(token) && token[0] != 't' && token[0] != 'f' && token[0] != 'n'
}
