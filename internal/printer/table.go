package printer

import "unicode/utf8"

// columnGap is the number of spaces between table columns, as kubectl's
// tabwriter padding.
const columnGap = 3

// table lays out a streaming table whose column widths are stable: a column
// starts at its minimum width and only ever grows to fit a longer cell, so
// rows already printed stay aligned with most later ones.
//
// This is what kubectl get -w does with cli-runtime's
// printers.GetNewTabWriter (liggitt/tabwriter with RememberWidths), which
// is not used here because it measures a cell in bytes: the SGR sequences
// of --color would count as width and push every colored row out of line.
// It also buffers each row's cells until Flush, where this appends the row
// to the record's buffer in one pass, and has one minimum width for every
// column where the table's columns each have their own.
type table struct {
	// widths is the current content width of each column, in runes.
	widths []int
}

func newTable(minWidths []int) *table {
	return &table{widths: append([]int(nil), minWidths...)}
}

// fit widens the columns to hold cells, without printing them: a header
// printed next is as wide as the row below it.
func (t *table) fit(cells []string) {
	for i, cell := range cells {
		n := utf8.RuneCountInString(cell)
		if i >= len(t.widths) {
			t.widths = append(t.widths, n)
		}
		t.widths[i] = max(t.widths[i], n)
	}
}

// widens reports whether printing cells would widen a column other than
// the last (which moves no column): the rows above, and their header,
// would no longer line up with it.
func (t *table) widens(cells []string) bool {
	for i, cell := range cells[:max(len(cells)-1, 0)] {
		if i >= len(t.widths) || utf8.RuneCountInString(cell) > t.widths[i] {
			return true
		}
	}
	return false
}

// appendRow appends one row and its newline. cells must be terminal-safe;
// colors, when not nil, holds an SGR sequence (or "") per cell. No row ends
// in spaces.
func (t *table) appendRow(b []byte, cells []string, colors []string) []byte {
	pending := 0 // spaces owed before the next non-empty cell
	for i, cell := range cells {
		n := utf8.RuneCountInString(cell)
		if i >= len(t.widths) {
			t.widths = append(t.widths, n)
		}
		t.widths[i] = max(t.widths[i], n)
		if n > 0 {
			for ; pending > 0; pending-- {
				b = append(b, ' ')
			}
			if colors != nil && colors[i] != "" {
				b = append(b, colors[i]...)
				b = append(b, cell...)
				b = append(b, colorReset...)
			} else {
				b = append(b, cell...)
			}
		}
		pending += t.widths[i] - n + columnGap
	}
	return append(b, '\n')
}

// heldRows are the rows of an initial list that a table printer holds
// back until the list is all out (Releaser), so that the list is laid
// out as one table — one header, columns as wide as its widest cells —
// as kubectl get lays out a list, where printing each row as it comes
// would repeat the header above every row that widens a column. At most
// maxHeldRows are held: a longer list is laid out in parts that long.
type heldRows struct {
	rows []heldRow
}

// maxHeldRows bounds the rows a table printer holds back.
const maxHeldRows = 8192

// heldRow is one row held back: its cells and their colors (nil without
// --color), and its layout.
type heldRow struct {
	// layout is the printer's key of the row's layout.
	layout string
	// kind is the row's kind's layout of -o wide; nil for the generic
	// columns and custom columns.
	kind          *rowLayout
	cells, colors []string
}

// holds reports whether r's row is held back: a row of an initial list.
func (h *heldRows) holds(r *Record) bool {
	return r.Initial && r.Event == nil
}

// full reports whether maxHeldRows are held: they are to be released
// before another is held.
func (h *heldRows) full() bool { return len(h.rows) >= maxHeldRows }

// reset lets go of the rows held.
func (h *heldRows) reset() {
	clear(h.rows)
	h.rows = h.rows[:0]
}
