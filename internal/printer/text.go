package printer

import (
	"io"
	"strconv"

	"github.com/kubectl-deltas/kubectl-deltas/internal/textsafe"

	"github.com/kubectl-deltas/kubectl-deltas/internal/delta"
	"github.com/kubectl-deltas/kubectl-deltas/internal/diff"
)

// timestampLayout is the time prefix of --timestamps: local time with
// milliseconds and the zone offset, as kubectl logs --timestamps but shorter.
const timestampLayout = "2006-01-02T15:04:05.000Z07:00"

// maxValueLen is the length, in runes, beyond which a value in a diff line
// is cut with "…".
const maxValueLen = 60

// ANSI SGR sequences of the human formats.
const (
	colorReset  = "\x1b[0m"
	colorRed    = "\x1b[31m"
	colorGreen  = "\x1b[32m"
	colorYellow = "\x1b[33m"
	colorCyan   = "\x1b[36m"
	colorFaint  = "\x1b[2m"
)

// typeColor is the color of a delta type word, or of a handler call as
// of the delta it mostly comes from.
func typeColor(t string) string {
	switch t {
	case OnAdd:
		return colorGreen
	case OnUpdate:
		return colorYellow
	case OnDelete:
		return colorRed
	}
	switch delta.Type(t) {
	case delta.Added:
		return colorGreen
	case delta.Updated:
		return colorYellow
	case delta.Deleted:
		return colorRed
	case delta.Replaced:
		return colorCyan
	case delta.Sync:
		return colorFaint
	}
	return ""
}

// opColor is the color of a diff line.
// healthColor is the color of a health status: green when Current, yellow
// in progress, red when failed, faint otherwise.
func healthColor(status string) string {
	switch status {
	case "Current":
		return colorGreen
	case "InProgress":
		return colorYellow
	case "Failed":
		return colorRed
	}
	return colorFaint
}

func opColor(op diff.Op) string {
	switch op {
	case diff.OpAdd:
		return colorGreen
	case diff.OpRemove:
		return colorRed
	case diff.OpReplace:
		return colorYellow
	}
	return ""
}

// textPrinter writes "<Type>: <subject>" lines, and the diff below them.
type textPrinter struct {
	o   Options
	buf []byte
}

func newTextPrinter(o Options) *textPrinter {
	return &textPrinter{o: o}
}

// SetMultiType implements MultiTyper.
func (p *textPrinter) SetMultiType(multi bool) { p.o.MultiType = multi }

func (p *textPrinter) Print(w io.Writer, r *Record) error {
	p.buf = p.appendRecord(p.buf[:0], r)
	_, err := w.Write(p.buf)
	return err
}

// appendRecord appends the record's lines, each ending in a newline:
//
//	[context ][time ]Type: [kind ]subject[ (owner → owner)][ (final state unknown)][ (coalesced N updates)][ by manager][ Status: message]
//	  ~ path: old → new
func (p *textPrinter) appendRecord(b []byte, r *Record) []byte {
	b = appendContext(b, r, p.o.ContextWidth)
	if p.o.Timestamps {
		b = p.startColor(b, colorFaint)
		b = r.Time.In(p.o.Location).AppendFormat(b, timestampLayout)
		b = p.endColor(b, colorFaint)
		b = append(b, ' ')
	}
	if r.Event != nil {
		return p.appendEvent(b, r)
	}
	c := typeColor(r.Type)
	b = p.startColor(b, c)
	b = textsafe.Append(b, r.Type)
	b = append(b, ':')
	b = p.endColor(b, c)
	b = append(b, ' ')
	if p.o.MultiType {
		b = appendTypeName(b, r)
		b = append(b, ' ')
	}
	b = appendSubject(b, r, p.o.AllNamespaces)
	if len(r.Owners) > 0 {
		b = append(b, " ("...)
		b = appendOwnerPath(b, r.Owners)
		b = append(b, ')')
	}
	switch {
	case r.IsCall():
		b = appendCallText(b, r)
	case r.FinalStateUnknown:
		b = append(b, " (final state unknown)"...)
	}
	if r.Coalesced > 0 {
		b = append(b, " (coalesced "...)
		b = strconv.AppendInt(b, int64(r.Coalesced), 10)
		if r.Coalesced == 1 {
			b = append(b, " update)"...)
		} else {
			b = append(b, " updates)"...)
		}
	}
	if r.Manager != "" && (p.o.ShowManager || r.Changes != nil) {
		b = append(b, " by "...)
		b = textsafe.Append(b, r.Manager)
	}
	if p.o.Health && r.Health != nil {
		c := healthColor(r.Health.Status)
		b = append(b, ' ')
		b = p.startColor(b, c)
		b = textsafe.Append(b, r.Health.Status)
		if r.Health.Source == "none" {
			b = append(b, " (no status)"...)
		}
		b = append(b, ':')
		b = p.endColor(b, c)
		b = append(b, ' ')
		b = textsafe.Append(b, r.Health.Message)
	}
	b = append(b, '\n')
	for i := range r.Changes {
		op := &r.Changes[i]
		c := opColor(op.Op)
		b = append(b, "  "...)
		b = p.startColor(b, c)
		b = textsafe.Append(b, op.Text(maxValueLen))
		b = p.endColor(b, c)
		b = append(b, '\n')
	}
	return b
}

// appendCallText appends what a handler call's line says after its
// subject: " 1234→1240" and why an update changed nothing for OnUpdate,
// " (initial list)" for OnAdd with isInInitialList, the tombstone for
// OnDelete.
func appendCallText(b []byte, r *Record) []byte {
	switch r.Type {
	case OnUpdate:
		b = append(b, ' ')
		b = textsafe.Append(b, r.Call.OldResourceVersion)
		b = append(b, "→"...)
		b = textsafe.Append(b, r.ResourceVersion)
		if r.Call.OldResourceVersion == r.ResourceVersion {
			switch delta.Type(r.Call.Delta) {
			case delta.Sync:
				b = append(b, " (resync)"...)
			case delta.Replaced:
				b = append(b, " (relist, unchanged)"...)
			}
		}
	case OnAdd:
		if r.Call.IsInInitialList {
			b = append(b, " (initial list)"...)
		}
	case OnDelete:
		if !r.FinalStateUnknown {
			break
		}
		b = append(b, " (DeletedFinalStateUnknown"...)
		if r.ResourceVersion != "" {
			b = append(b, ", last seen "...)
			b = textsafe.Append(b, r.ResourceVersion)
		}
		b = append(b, ')')
	}
	return b
}

// appendEvent appends the line of an Event record (--events), whatever
// its delta: the Event's subject and what it says happened, the count
// telling a repetition from the first time:
//
//	Event: pod web-5d4f9-x2x7q Warning FailedScheduling: 0/4 nodes are available: … (3 times)
func (p *textPrinter) appendEvent(b []byte, r *Record) []byte {
	e := r.Event
	b = p.startColor(b, colorFaint)
	b = append(b, "Event:"...)
	b = p.endColor(b, colorFaint)
	b = append(b, ' ')
	b = appendTypeName(b, &Record{APIVersion: e.APIVersion, Kind: e.Kind})
	b = append(b, ' ')
	b = appendSubject(b, &Record{Namespace: e.Namespace, Name: e.Name}, p.o.AllNamespaces)
	b = append(b, ' ')
	c := ""
	if e.Type == "Warning" {
		c = colorRed
	}
	b = p.startColor(b, c)
	b = textsafe.Append(b, e.Type)
	b = append(b, ' ')
	b = textsafe.Append(b, e.Reason)
	b = append(b, ':')
	b = p.endColor(b, c)
	b = append(b, ' ')
	b = textsafe.Append(b, e.Message)
	if e.Count > 1 {
		b = append(b, " ("...)
		b = strconv.AppendInt(b, int64(e.Count), 10)
		b = append(b, " times)"...)
	}
	return append(b, '\n')
}

func (p *textPrinter) startColor(b []byte, c string) []byte {
	if p.o.Color && c != "" {
		b = append(b, c...)
	}
	return b
}

func (p *textPrinter) endColor(b []byte, c string) []byte {
	if p.o.Color && c != "" {
		b = append(b, colorReset...)
	}
	return b
}

// typeWidth is the width of the longest delta type, the minimum width of a
// TYPE column.
func typeWidth() int {
	w := 0
	for _, t := range delta.Types() {
		w = max(w, len(t))
	}
	return w
}
