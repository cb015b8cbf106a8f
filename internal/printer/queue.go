package printer

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v2"

	"github.com/kubectl-deltas/kubectl-deltas/internal/rawobj"
	"github.com/kubectl-deltas/kubectl-deltas/internal/textsafe"
)

// Reconcile is the record of one key a worker of --queue took off the
// workqueue (type "Reconcile").
type Reconcile struct {
	// Time is when the worker took the key.
	Time time.Time
	// Context, APIVersion, Kind, Namespace and Name are the key's object.
	Context, APIVersion, Kind, Namespace, Name string
	// Calls is how many handler calls the reconcile folds.
	Calls int
	// Waited is how long the key waited, from its first call.
	Waited time.Duration
	// Worker numbers the worker, from 1.
	Worker int
}

// QueueSummary is the record that ends a stream with --queue (type
// "QueueSummary").
type QueueSummary struct {
	Time time.Time
	// Calls counts every handler call; NotQueued those of them that
	// queued no key (the Events of --events, a --tree member whose owner
	// is not of its root's type, an object without a controller under
	// --queue-key=owner). Reconciles, Coalesced (queued
	// calls without a reconcile of their own) and Pending (keys still
	// queued at the end).
	Calls, NotQueued, Reconciles, Coalesced, Pending int
	// LongestQueue is the most keys queued at once.
	LongestQueue int
	// WaitP50, WaitP99: how long keys waited for their reconcile.
	WaitP50, WaitP99 time.Duration
}

// QueuePrinter is implemented by the printers that print --queue's
// records (text, JSON, YAML).
type QueuePrinter interface {
	PrintReconcile(w io.Writer, r *Reconcile) error
	PrintQueueSummary(w io.Writer, s *QueueSummary) error
}

// AppendReconcileJSON appends r's JSON form: type, time, [context],
// apiVersion, kind, namespace, name, calls, waitedSeconds, worker.
func AppendReconcileJSON(dst []byte, r *Reconcile) []byte {
	dst = append(dst, `{"type":"Reconcile","time":"`...)
	dst = r.Time.UTC().AppendFormat(dst, time.RFC3339Nano)
	dst = append(dst, '"')
	if r.Context != "" {
		dst = append(dst, `,"context":`...)
		dst = rawobj.AppendString(dst, r.Context)
	}
	dst = append(dst, `,"apiVersion":`...)
	dst = rawobj.AppendString(dst, r.APIVersion)
	dst = append(dst, `,"kind":`...)
	dst = rawobj.AppendString(dst, r.Kind)
	dst = append(dst, `,"namespace":`...)
	dst = rawobj.AppendString(dst, r.Namespace)
	dst = append(dst, `,"name":`...)
	dst = rawobj.AppendString(dst, r.Name)
	dst = append(dst, `,"calls":`...)
	dst = strconv.AppendInt(dst, int64(r.Calls), 10)
	dst = append(dst, `,"waitedSeconds":`...)
	dst = strconv.AppendFloat(dst, r.Waited.Seconds(), 'f', -1, 64)
	dst = append(dst, `,"worker":`...)
	dst = strconv.AppendInt(dst, int64(r.Worker), 10)
	return append(dst, '}')
}

// AppendQueueSummaryJSON appends s's JSON form: type, time, calls,
// notQueued, reconciles, coalesced, pending, longestQueue,
// waitP50Seconds, waitP99Seconds.
func AppendQueueSummaryJSON(dst []byte, s *QueueSummary) []byte {
	dst = append(dst, `{"type":"QueueSummary","time":"`...)
	dst = s.Time.UTC().AppendFormat(dst, time.RFC3339Nano)
	dst = append(dst, '"')
	for _, f := range []struct {
		key string
		n   int
	}{{"calls", s.Calls}, {"notQueued", s.NotQueued}, {"reconciles", s.Reconciles}, {"coalesced", s.Coalesced}, {"pending", s.Pending}, {"longestQueue", s.LongestQueue}} {
		dst = append(dst, `,"`...)
		dst = append(dst, f.key...)
		dst = append(dst, `":`...)
		dst = strconv.AppendInt(dst, int64(f.n), 10)
	}
	dst = append(dst, `,"waitP50Seconds":`...)
	dst = strconv.AppendFloat(dst, s.WaitP50.Seconds(), 'f', -1, 64)
	dst = append(dst, `,"waitP99Seconds":`...)
	dst = strconv.AppendFloat(dst, s.WaitP99.Seconds(), 'f', -1, 64)
	return append(dst, '}')
}

// PrintReconcile implements QueuePrinter: one more JSON line.
func (p *jsonPrinter) PrintReconcile(w io.Writer, r *Reconcile) error {
	p.buf = append(AppendReconcileJSON(p.buf[:0], r), '\n')
	_, err := w.Write(p.buf)
	return err
}

// PrintQueueSummary implements QueuePrinter: one more JSON line.
func (p *jsonPrinter) PrintQueueSummary(w io.Writer, s *QueueSummary) error {
	p.buf = append(AppendQueueSummaryJSON(p.buf[:0], s), '\n')
	_, err := w.Write(p.buf)
	return err
}

// PrintReconcile implements QueuePrinter: one more YAML document.
func (p *yamlPrinter) PrintReconcile(w io.Writer, r *Reconcile) error {
	return p.printDocument(w, AppendReconcileJSON(nil, r), "reconcile")
}

// PrintQueueSummary implements QueuePrinter: one more YAML document.
func (p *yamlPrinter) PrintQueueSummary(w io.Writer, s *QueueSummary) error {
	return p.printDocument(w, AppendQueueSummaryJSON(nil, s), "queue summary")
}

// printDocument prints js, a JSON object, as the next YAML document.
func (p *yamlPrinter) printDocument(w io.Writer, js []byte, what string) error {
	var doc yaml.MapSlice
	if err := yaml.Unmarshal(js, &doc); err != nil {
		return fmt.Errorf("cannot convert the %s to YAML: %w", what, err)
	}
	out, err := yaml.Marshal(doc)
	if err != nil {
		return fmt.Errorf("cannot convert the %s to YAML: %w", what, err)
	}
	if p.printed {
		out = append([]byte("---\n"), out...)
	}
	p.printed = true
	_, err = w.Write(out)
	return err
}

// PrintReconcile implements QueuePrinter: "Reconcile: configmap demo/web
// (3 calls, waited 12ms, worker 1)".
func (p *textPrinter) PrintReconcile(w io.Writer, r *Reconcile) error {
	b := p.buf[:0]
	if r.Context != "" {
		b = textsafe.Append(b, r.Context)
		b = append(b, ' ')
	}
	if p.o.Timestamps {
		b = r.Time.In(p.o.Location).AppendFormat(b, timestampLayout)
		b = append(b, ' ')
	}
	b = append(b, "Reconcile: "...)
	b = textsafe.Append(b, strings.ToLower(r.Kind))
	b = append(b, ' ')
	if r.Namespace != "" {
		b = textsafe.Append(b, r.Namespace)
		b = append(b, '/')
	}
	b = textsafe.Append(b, r.Name)
	b = append(b, " ("...)
	b = strconv.AppendInt(b, int64(r.Calls), 10)
	if r.Calls == 1 {
		b = append(b, " call, waited "...)
	} else {
		b = append(b, " calls, waited "...)
	}
	b = append(b, roundDuration(r.Waited).String()...)
	b = append(b, ", worker "...)
	b = strconv.AppendInt(b, int64(r.Worker), 10)
	b = append(b, ")\n"...)
	p.buf = b
	_, err := w.Write(b)
	return err
}

// PrintQueueSummary implements QueuePrinter: "QueueSummary: 105 handler
// calls[ (6 queued nothing)], 12 reconciles (93 coalesced), longest queue
// 1, wait p50 12ms, p99 50ms[, 2 pending]".
func (p *textPrinter) PrintQueueSummary(w io.Writer, s *QueueSummary) error {
	notQueued := ""
	if s.NotQueued > 0 {
		notQueued = fmt.Sprintf(" (%d queued nothing)", s.NotQueued)
	}
	line := fmt.Sprintf("QueueSummary: %d handler calls%s, %d reconciles (%d coalesced), longest queue %d, wait p50 %s, p99 %s",
		s.Calls, notQueued, s.Reconciles, s.Coalesced, s.LongestQueue, roundDuration(s.WaitP50), roundDuration(s.WaitP99))
	if s.Pending > 0 {
		line += fmt.Sprintf(", %d pending", s.Pending)
	}
	_, err := io.WriteString(w, line+"\n")
	return err
}

// roundDuration rounds d for a human: to the microsecond under a
// millisecond, to 0.1 ms under a second, else to the millisecond.
func roundDuration(d time.Duration) time.Duration {
	switch {
	case d < time.Millisecond:
		return d.Round(time.Microsecond)
	case d < time.Second:
		return d.Round(100 * time.Microsecond)
	}
	return d.Round(time.Millisecond)
}
