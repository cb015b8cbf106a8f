package printer

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/kubectl-deltas/kubectl-deltas/internal/textsafe"

	"k8s.io/apimachinery/pkg/util/duration"
)

// wideTimeLayout is the TIME column of wide without --timestamps.
const wideTimeLayout = "15:04:05"

// widePrinter writes the streaming table of -o wide:
//
//	[CONTEXT]  TIME  DELTA  KIND  NAMESPACE  NAME  RESOURCEVERSION  AGE  [HEALTH]  [CHANGES]
//
// A record that carries its kind's server-side Table row (Record.Row) is
// printed in its kind's own layout instead (see rows.go); a header comes
// each time the layout changes.
type widePrinter struct {
	o          Options
	timeLayout string
	table      *table
	cells      []string
	colors     []string
	buf        []byte
	// layout is the key of the layout of the last row printed: "" before
	// the first, genericLayout, or a kind's (rowLayoutKey).
	layout string
	// rows holds each kind's layout, by key.
	rows map[string]*rowLayout
	// lines counts the lines printed.
	lines int
	// held are the rows of an initial list not yet printed (Release).
	held heldRows
}

// genericLayout is the layout key of the generic columns.
const genericLayout = "generic"

func newWidePrinter(o Options) *widePrinter {
	p := &widePrinter{o: o, timeLayout: wideTimeLayout, rows: map[string]*rowLayout{}}
	if o.Timestamps {
		p.timeLayout = timestampLayout
	}
	// Minimum widths fit the usual values, so that the first rows rarely
	// widen a column.
	mins := []int{len(p.timeLayout), typeWidth(), len("Deployment.apps"), len("kube-system"), 20, len("RESOURCEVERSION"), len("<unknown>")}
	if o.Health {
		mins = append(mins, len("InProgress"))
	}
	if o.Diff {
		mins = append(mins, len("CHANGES"))
	}
	if o.ContextWidth > 0 {
		mins = append([]int{max(o.ContextWidth, len("CONTEXT"))}, mins...)
	}
	n := len(mins)
	p.table = newTable(mins)
	p.cells = make([]string, n)
	if o.Color {
		p.colors = make([]string, n)
	}
	return p
}

// SetMultiType implements MultiTyper: rows of server-side Tables name
// their kind in the name column, as kubectl get does for several types.
func (p *widePrinter) SetMultiType(multi bool) { p.o.MultiType = multi }

func (p *widePrinter) Print(w io.Writer, r *Record) error {
	if r.Event != nil {
		if err := p.Release(w); err != nil {
			return err
		}
		return p.printEvent(w, r)
	}
	if r.Row != nil && len(r.Row.Columns) > 0 {
		key := rowLayoutKey(r)
		l := p.layoutOf(key, r)
		cells, colors := p.kindCells(l, r)
		return p.print(w, r, heldRow{layout: key, kind: l, cells: cells, colors: colors})
	}
	p.genericCells(r)
	row := heldRow{layout: genericLayout, cells: p.cells, colors: p.colors}
	if p.held.holds(r) {
		row.cells, row.colors = slices.Clone(row.cells), slices.Clone(row.colors)
	}
	return p.print(w, r, row)
}

// print prints row, r's, or holds it back with the rest of its initial
// list (heldRows).
func (p *widePrinter) print(w io.Writer, r *Record, row heldRow) error {
	hold := p.held.holds(r)
	if !hold || p.held.full() {
		if err := p.Release(w); err != nil {
			return err
		}
	}
	if hold {
		p.held.rows = append(p.held.rows, row)
		return nil
	}
	p.buf = p.appendRow(p.buf[:0], row)
	_, err := w.Write(p.buf)
	return err
}

// Release implements Releaser: the rows held back are laid out together
// and printed, in one write.
func (p *widePrinter) Release(w io.Writer) error {
	if len(p.held.rows) == 0 {
		return nil
	}
	for _, row := range p.held.rows {
		p.tableOf(row).fit(row.cells)
	}
	b := p.buf[:0]
	for _, row := range p.held.rows {
		b = p.appendRow(b, row)
	}
	p.held.reset()
	p.buf = b
	_, err := w.Write(b)
	return err
}

// tableOf is the table of row's layout.
func (p *widePrinter) tableOf(row heldRow) *table {
	if row.kind != nil {
		return row.kind.table
	}
	return p.table
}

// appendRow appends row, under its layout's header when that is due.
func (p *widePrinter) appendRow(b []byte, row heldRow) []byte {
	if row.kind != nil {
		return p.appendKindRow(b, row)
	}
	if !p.o.NoHeaders && (p.layout != genericLayout || p.table.widens(row.cells)) {
		// The header is as wide as the first row under it, and comes
		// again above a row that widens a column.
		p.table.fit(row.cells)
		b = p.table.appendRow(b, p.genericHeader(), nil)
		p.lines++
	}
	p.layout = genericLayout
	p.lines++
	return p.table.appendRow(b, row.cells, row.colors)
}

// genericCells sets p.cells (and p.colors) to r's row in the generic
// columns.
func (p *widePrinter) genericCells(r *Record) {
	c := p.cells
	colors := p.colors
	if p.o.ContextWidth > 0 {
		c[0] = textsafe.String(r.Context)
		c = c[1:]
		if colors != nil {
			colors = colors[1:]
		}
	}
	c[0] = r.Time.In(p.o.Location).Format(p.timeLayout)
	c[1] = textsafe.String(r.Type)
	c[2] = kindColumn(r)
	c[3] = textsafe.String(r.Namespace)
	c[4] = textsafe.String(r.Name)
	c[5] = textsafe.String(r.ResourceVersion)
	c[6] = age(r.Object, p.o.Now())
	next := 7
	if p.o.Health {
		cell, color := healthCell(r)
		c[next] = cell
		if colors != nil {
			colors[next] = color
		}
		next++
	}
	if p.o.Diff {
		c[next] = changesCell(r)
	}
	if colors != nil {
		colors[1] = typeColor(r.Type)
	}
}

// printEvent writes an Event record (--events) as a line about its
// subject, not as a row of the Event table under another kind's header:
// its time and "Event" in the TIME and DELTA columns of the rows around
// it, then what happened, as text says it:
//
//	10:42:07   Event      pod/web-5d4f9-x2x7q Warning FailedScheduling: 0/4 nodes are available: … (3 times)
//	10:42:07   Event      pod demo/web-5d4f9-x2x7q Warning FailedScheduling: … (across namespaces)
func (p *widePrinter) printEvent(w io.Writer, r *Record) error {
	t := p.table
	if l := p.rows[p.layout]; l != nil {
		t = l.table
	}
	b := p.buf[:0]
	col := 0
	pad := func(cell, color string) {
		n := utf8.RuneCountInString(cell)
		if color != "" && p.o.Color {
			b = append(b, color...)
			b = append(b, cell...)
			b = append(b, colorReset...)
		} else {
			b = append(b, cell...)
		}
		width := n
		if col < len(t.widths) {
			width = max(width, t.widths[col])
		}
		for range width - n + columnGap {
			b = append(b, ' ')
		}
		col++
	}
	if p.o.ContextWidth > 0 {
		pad(textsafe.String(r.Context), "")
	}
	pad(r.Time.In(p.o.Location).Format(p.timeLayout), "")
	pad("Event", colorFaint)
	e := r.Event
	b = appendTypeName(b, &Record{APIVersion: e.APIVersion, Kind: e.Kind})
	// kubectl's type/name; across namespaces, as text lines say it, the
	// type and namespace/name ("deployment.apps shop/web", not
	// "deployment.apps/shop/web").
	if p.o.AllNamespaces && e.Namespace != "" {
		b = append(b, ' ')
	} else {
		b = append(b, '/')
	}
	b = appendSubject(b, &Record{Namespace: e.Namespace, Name: e.Name}, p.o.AllNamespaces)
	b = append(b, ' ')
	color := ""
	if e.Type == "Warning" && p.o.Color {
		color = colorRed
		b = append(b, color...)
	}
	b = textsafe.Append(b, e.Type)
	b = append(b, ' ')
	b = textsafe.Append(b, e.Reason)
	b = append(b, ':')
	if color != "" {
		b = append(b, colorReset...)
	}
	b = append(b, ' ')
	b = textsafe.Append(b, e.Message)
	if e.Count > 1 {
		b = fmt.Appendf(b, " (%d times)", e.Count)
	}
	b = append(b, '\n')
	p.buf = b
	p.lines++
	_, err := w.Write(b)
	return err
}

// genericHeader is the header of the generic columns.
func (p *widePrinter) genericHeader() []string {
	header := []string{"TIME", "DELTA", "KIND", "NAMESPACE", "NAME", "RESOURCEVERSION", "AGE"}
	if p.o.Health {
		header = append(header, "HEALTH")
	}
	if p.o.Diff {
		header = append(header, "CHANGES")
	}
	if p.o.ContextWidth > 0 {
		header = append([]string{"CONTEXT"}, header...)
	}
	return header[:len(p.cells)]
}

// kindColumn is the KIND of wide: the kind, with its group for non-core
// kinds ("Deployment.apps"), which tells events from events.k8s.io events.
func kindColumn(r *Record) string {
	kind := r.Kind
	if kind == "" {
		kind = r.Resource
	}
	if g := r.Group(); g != "" {
		kind += "." + g
	}
	return textsafe.String(kind)
}

// age is kubectl's AGE of the object: the time since
// metadata.creationTimestamp, or "<unknown>" without one (a tombstone with
// no last state).
func age(object json.RawMessage, now time.Time) string {
	var o struct {
		Metadata struct {
			CreationTimestamp string `json:"creationTimestamp"`
		} `json:"metadata"`
	}
	if len(object) == 0 || json.Unmarshal(object, &o) != nil || o.Metadata.CreationTimestamp == "" {
		return "<unknown>"
	}
	created, err := time.Parse(time.RFC3339, o.Metadata.CreationTimestamp)
	if err != nil {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(created))
}
