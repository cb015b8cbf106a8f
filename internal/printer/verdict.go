package printer

import (
	"fmt"
	"io"
	"time"

	"github.com/kubectl-deltas/kubectl-deltas/internal/rawobj"
)

// Verdict is the record that ends a stream stopped by a condition, in
// JSON and YAML (type "Verdict"): how it ended, on which condition, and
// the objects that decided it, each with what holds it up.
type Verdict struct {
	Time time.Time
	// Outcome is Met, Failed (a --fail-when held) or TimedOut (--timeout
	// ran out, or a replay ended, before the conditions were met) for the
	// record that ends the stream; Pending for one on the way, when the
	// verdict on the objects waited on changed (--health).
	Outcome string
	// Status is, on a Pending record, the worst health of the objects
	// waited on, which Objects have; "" otherwise.
	Status string
	// Condition is the condition as given: "--until=status=Current", or
	// the --fail-when that held.
	Condition string
	Objects   []VerdictObject
}

// VerdictObject is an object of a Verdict.
type VerdictObject struct {
	Context, APIVersion, Kind, Namespace, Name, UID string
	// Health is its health when judged.
	Health *Health
	// Path is the chain of owners from the waited-on object down to its
	// direct owner (empty for the waited-on object itself).
	Path []Owner
	// Container is the container whose state decided its health, with
	// its reason in Health.
	Container string
	// Event is its latest Warning Event, when one was found.
	Event *VerdictEvent
	// Logs are the last lines of the log of its failing container, when
	// it is a Pod whose container failed after it ran (--logs).
	Logs *VerdictLogs
}

// VerdictLogs are the last lines of a failing container's log: of its
// previous instance when it restarted (Previous), else of the current
// one. Unavailable says why there are none when they could not be read
// (forbidden, the node unreachable): Lines is then empty.
type VerdictLogs struct {
	Container   string   `json:"container"`
	Previous    bool     `json:"previous"`
	Lines       []string `json:"lines"`
	Unavailable string   `json:"unavailable,omitempty"`
}

// VerdictEvent is a Warning Event of a Verdict's object.
type VerdictEvent struct {
	Type, Reason, Message string
	Count                 int
	Time                  time.Time
}

// VerdictPrinter is implemented by the printers whose streams end with a
// Verdict record (JSON, YAML).
type VerdictPrinter interface {
	PrintVerdict(w io.Writer, v *Verdict) error
}

// AppendVerdictJSON appends v's JSON form: type, time, outcome,
// [status], condition, objects (each: [context], apiVersion, kind, namespace, name,
// uid, [health], [path], [container], [event], [logs]).
func AppendVerdictJSON(dst []byte, v *Verdict) []byte {
	dst = append(dst, `{"type":"Verdict","time":"`...)
	dst = v.Time.UTC().AppendFormat(dst, time.RFC3339Nano)
	dst = append(dst, `","outcome":`...)
	dst = rawobj.AppendString(dst, v.Outcome)
	if v.Status != "" {
		dst = append(dst, `,"status":`...)
		dst = rawobj.AppendString(dst, v.Status)
	}
	dst = append(dst, `,"condition":`...)
	dst = rawobj.AppendString(dst, v.Condition)
	dst = append(dst, `,"objects":[`...)
	for i := range v.Objects {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendVerdictObject(dst, &v.Objects[i])
	}
	return append(dst, "]}"...)
}

func appendVerdictObject(dst []byte, o *VerdictObject) []byte {
	dst = append(dst, '{')
	if o.Context != "" {
		dst = append(dst, `"context":`...)
		dst = rawobj.AppendString(dst, o.Context)
		dst = append(dst, ',')
	}
	for i, f := range [...]struct{ key, value string }{
		{"apiVersion", o.APIVersion}, {"kind", o.Kind}, {"namespace", o.Namespace}, {"name", o.Name}, {"uid", o.UID},
	} {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, '"')
		dst = append(dst, f.key...)
		dst = append(dst, '"', ':')
		dst = rawobj.AppendString(dst, f.value)
	}
	if o.Health != nil {
		dst = appendHealth(append(dst, `,"health":`...), o.Health)
	}
	if len(o.Path) > 0 {
		dst = appendOwners(append(dst, `,"path":`...), o.Path)
	}
	if o.Container != "" {
		dst = append(dst, `,"container":`...)
		dst = rawobj.AppendString(dst, o.Container)
	}
	if e := o.Event; e != nil {
		dst = append(dst, `,"event":{"type":`...)
		dst = rawobj.AppendString(dst, e.Type)
		dst = append(dst, `,"reason":`...)
		dst = rawobj.AppendString(dst, e.Reason)
		dst = append(dst, `,"message":`...)
		dst = rawobj.AppendString(dst, e.Message)
		dst = append(dst, `,"count":`...)
		dst = fmt.Appendf(dst, "%d", e.Count)
		if !e.Time.IsZero() {
			dst = append(dst, `,"time":"`...)
			dst = e.Time.UTC().AppendFormat(dst, time.RFC3339Nano)
			dst = append(dst, '"')
		}
		dst = append(dst, '}')
	}
	if l := o.Logs; l != nil {
		dst = appendVerdictLogs(append(dst, `,"logs":`...), l)
	}
	return append(dst, '}')
}

// appendVerdictLogs appends l's JSON form: container, previous, lines
// (or unavailable).
func appendVerdictLogs(dst []byte, l *VerdictLogs) []byte {
	dst = append(dst, `{"container":`...)
	dst = rawobj.AppendString(dst, l.Container)
	dst = fmt.Appendf(dst, `,"previous":%t`, l.Previous)
	if l.Unavailable != "" {
		dst = append(dst, `,"unavailable":`...)
		return append(rawobj.AppendString(dst, l.Unavailable), '}')
	}
	dst = append(dst, `,"lines":[`...)
	for i, line := range l.Lines {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = rawobj.AppendString(dst, line)
	}
	return append(dst, "]}"...)
}

// PrintVerdict implements VerdictPrinter: one more JSON line.
func (p *jsonPrinter) PrintVerdict(w io.Writer, v *Verdict) error {
	p.buf = append(AppendVerdictJSON(p.buf[:0], v), '\n')
	_, err := w.Write(p.buf)
	return err
}

// PrintVerdict implements VerdictPrinter: one more YAML document.
func (p *yamlPrinter) PrintVerdict(w io.Writer, v *Verdict) error {
	return p.printDocument(w, AppendVerdictJSON(nil, v), "verdict")
}
