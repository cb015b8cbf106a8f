package timeline

import (
	"fmt"
	"strconv"

	"github.com/kubectl-deltas/kubectl-deltas/internal/printer"
	"github.com/kubectl-deltas/kubectl-deltas/internal/rawobj"
)

// flushSize is about how much of a document encodeDocument holds before
// handing it to be written.
const flushSize = 64 << 10

// encodeDocument appends doc to b as JSON, as encoding/json would write
// it with the struct tags of its types (omitempty included), in one pass
// without reflection: a page of 50,000 deltas is written every few seconds
// while the stream runs. The heads of lanes encoded for the first time are
// kept in heads (nil: not kept). flush,
// when not
// nil, is handed what b holds whenever that passes flushSize between two
// lanes, and returns the buffer to go on with: a page's document (12 MB
// for 50,000 deltas) is written as it is encoded, never held whole.
func encodeDocument(b []byte, doc *document, heads *chunkLog, flush func([]byte) ([]byte, error)) ([]byte, error) {
	b = append(b, `{"v":`...)
	b = strconv.AppendInt(b, int64(doc.Version), 10)
	b = appendKey(b, "title")
	b = appendText(b, doc.Title)
	b = appendKey(b, "command")
	b = appendText(b, doc.Command)
	b = appendKey(b, "generated")
	b = appendText(b, doc.Generated)
	b = appendKey(b, "live")
	b = strconv.AppendBool(b, doc.Live)
	b = appendKey(b, "start")
	b = strconv.AppendInt(b, doc.Start, 10)
	b = appendKey(b, "end")
	b = strconv.AppendInt(b, doc.End, 10)
	b = appendTexts(appendKey(b, "contexts"), doc.Contexts)
	b = appendKey(b, "lanes")
	b = append(b, '[')
	for i, l := range doc.Lanes {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendLane(b, l, doc.log, heads)
		if flush != nil && len(b) >= flushSize {
			var err error
			if b, err = flush(b); err != nil {
				return b, err
			}
		}
	}
	b = append(b, ']')
	if len(doc.Gaps) > 0 {
		b = appendKey(b, "gaps")
		b = append(b, '[')
		for i, g := range doc.Gaps {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '[')
			b = strconv.AppendInt(b, g[0], 10)
			b = append(b, ',')
			b = strconv.AppendInt(b, g[1], 10)
			b = append(b, ']')
		}
		b = append(b, ']')
	}
	return append(b, '}'), nil
}

// appendLane appends l; its identity is encoded once (lane.head, in
// heads), its marks as they came (lane.marks, in log): a page rewritten
// while the stream goes on encodes again only what may have changed.
func appendLane(b []byte, l *lane, log, heads *chunkLog) []byte {
	if heads == nil || l.head.end == 0 {
		start := len(b) // encoded at the end of b, then kept
		b = append(b, `{"ctx":`...)
		b = appendText(b, l.Context())
		b = appendKey(b, "av")
		b = appendText(b, l.APIVersion())
		b = appendKey(b, "kind")
		b = appendText(b, l.Kind())
		b = appendKey(b, "ns")
		b = appendText(b, l.Namespace())
		b = appendKey(b, "name")
		b = appendText(b, l.Name())
		b = appendKey(b, "uid")
		b = appendText(b, l.UID())
		if heads != nil {
			l.head = heads.add(func(h []byte) []byte { return append(h, b[start:]...) })
		}
	} else {
		b = append(b, heads.bytes(l.head)...)
	}
	b = appendKey(b, "parent")
	b = strconv.AppendInt(b, int64(l.Parent), 10)
	b = appendKey(b, "marks")
	b = append(b, '[')
	for _, s := range l.marks {
		b = append(b, log.bytes(s)...)
	}
	b = append(b, ']')
	b = appendKey(b, "events")
	b = append(b, '[')
	for i, e := range l.Events {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"t":`...)
		b = strconv.AppendInt(b, e.Time, 10)
		b = appendKey(b, "type")
		b = appendText(b, e.Type)
		b = appendKey(b, "reason")
		b = appendText(b, e.Reason)
		b = appendKey(b, "msg")
		b = appendText(b, e.Message)
		b = appendKey(b, "n")
		b = strconv.AppendInt(b, int64(e.Count), 10)
		b = append(b, '}')
	}
	b = append(b, ']')
	if l.logs != nil {
		b = appendLogs(appendKey(b, "logs"), l.logs)
	}
	if len(l.Health) > 0 {
		b = appendKey(b, "health")
		b = append(b, '[')
		for i, h := range l.Health {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '[')
			for j, v := range h {
				if j > 0 {
					b = append(b, ',')
				}
				switch v := v.(type) {
				case int64:
					b = strconv.AppendInt(b, v, 10)
				case string:
					b = appendText(b, v)
				default:
					b = appendText(b, fmt.Sprint(v))
				}
			}
			b = append(b, ']')
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

// appendMark appends m; attrs keeps the encoding of the members most
// marks repeat from the previous one (manager, operation, health).
func appendMark(b []byte, m *mark, attrs *markAttrs) []byte {
	b = append(b, `{"t":`...)
	b = strconv.AppendInt(b, m.Time, 10)
	b = appendKey(b, "d")
	b = appendText(b, m.Type)
	if m.Initial {
		b = append(b, `,"i":true`...)
	}
	b = attrs.append(b, m)
	if len(m.Changes) > 0 {
		b = appendKey(b, "c")
		b = append(b, '[')
		for i, c := range m.Changes {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '[')
			b = appendText(b, c[0])
			b = append(b, ',')
			b = appendText(b, c[1])
			b = append(b, ']')
		}
		b = append(b, ']')
	}
	if len(m.Raw) > 0 {
		b = appendKey(b, "x")
		b = appendRawText(b, m.Raw)
	}
	if len(m.Base) > 0 {
		b = appendKey(b, "pb")
		b = appendRawText(b, m.Base)
	}
	if len(m.BaseAt) == 2 {
		b = appendKey(b, "pr")
		b = append(b, '[')
		b = strconv.AppendInt(b, int64(m.BaseAt[0]), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(m.BaseAt[1]), 10)
		b = append(b, ']')
	}
	if len(m.Patch) > 0 {
		b = appendKey(b, "p")
		b = append(b, m.Patch...)
	}
	if m.Unknown {
		b = append(b, `,"u":true`...)
	}
	return append(b, '}')
}

// markAttrs is the encoding of a mark's by, op, h, hr and hm members,
// kept for the next mark with the same ones.
type markAttrs struct {
	src [5]string
	enc []byte
	set bool
}

// append appends m's by, op, h, hr and hm members (those not empty).
func (c *markAttrs) append(b []byte, m *mark) []byte {
	src := [5]string{m.Manager, m.Operation, m.Health, m.Reason, m.Message}
	if !c.set || src != c.src {
		keys := [5]string{"by", "op", "h", "hr", "hm"}
		c.enc = c.enc[:0]
		for i, v := range src {
			if v != "" {
				c.enc = appendKey(c.enc, keys[i])
				c.enc = appendText(c.enc, v)
			}
		}
		c.src, c.set = src, true
	}
	return append(b, c.enc...)
}

// appendKey appends ,"key":.
func appendKey(b []byte, key string) []byte {
	b = append(b, ',', '"')
	b = append(b, key...)
	return append(b, '"', ':')
}

// appendRawText appends raw, JSON text, as a JSON string the page's
// script reads it back from: as appendText, without making a string of it.
func appendRawText(b []byte, raw []byte) []byte { return rawobj.AppendScriptStringBytes(b, raw) }

// appendText appends s as a JSON string that cannot end the script
// element the document sits in (rawobj.AppendScriptString).
func appendText(b []byte, s string) []byte { return rawobj.AppendScriptString(b, s) }

// appendTexts appends texts as a JSON array of strings (appendText).
func appendTexts(b []byte, texts []string) []byte {
	b = append(b, '[')
	for i, s := range texts {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendText(b, s)
	}
	return append(b, ']')
}

// appendLogs appends the logs of a lane as the page reads them:
// container, previous, lines, and unavailable when they could not be
// read.
func appendLogs(b []byte, logs *printer.VerdictLogs) []byte {
	b = append(b, `{"container":`...)
	b = appendText(b, logs.Container)
	b = appendKey(b, "previous")
	b = strconv.AppendBool(b, logs.Previous)
	b = appendTexts(appendKey(b, "lines"), logs.Lines)
	if logs.Unavailable != "" {
		b = appendKey(b, "unavailable")
		b = appendText(b, logs.Unavailable)
	}
	return append(b, '}')
}
