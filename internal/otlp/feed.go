package otlp

import (
	"context"
	"io"
	"strings"
	"time"

	"github.com/kubectl-deltas/kubectl-deltas/internal/printer"
)

// Feed hands the Exporter every record the stream prints, as -o json
// would print it: the stream prints through it beside its own printer
// (the writer it is given is not used). It implements printer.Printer,
// printer.VerdictPrinter and printer.QueuePrinter, and is used from the
// goroutine that prints.
type Feed struct {
	e   *Exporter
	buf []byte
	// skip, when set, leaves out the records it is true for; ctx, when
	// set, has the feed wait for room in the queue until it is done
	// (ResendFeed).
	skip func(it *item) bool
	ctx  context.Context
}

// Feed returns the Feed that queues records on e.
func (e *Exporter) Feed() *Feed { return &Feed{e: e} }

// ResendFeed returns the Feed of a replay of the recording from from,
// which sends again what the collector did not take by p: it leaves out
// the state at from (the replay's initial lists, stamped with from), the
// records p says were taken, and the records a replay makes anew
// (Verdicts, reconciles).
func (e *Exporter) ResendFeed(ctx context.Context, p Position, from time.Time) *Feed {
	return &Feed{e: e, ctx: ctx, skip: func(it *item) bool {
		switch it.kind {
		case "Verdict", "Reconcile", "QueueSummary":
			return true
		}
		return it.initial && it.time.Equal(from) || p.taken(it.time, it.id)
	}}
}

// queue queues it, unless the feed leaves it out.
func (p *Feed) queue(it *item) error {
	if p.skip != nil {
		it.id = recordID(it) // what is left out is known by its id
		if p.skip(it) {
			return nil
		}
	}
	if p.ctx != nil {
		return p.e.queue(p.ctx, it, true)
	}
	return p.e.queue(context.Background(), it, false)
}

// line is the JSON the printer appended to p.buf, copied: the item keeps
// it while p.buf is reused.
func (p *Feed) line() []byte { return append([]byte(nil), p.buf...) }

// Print queues a delta, an Event or a handler call.
func (p *Feed) Print(_ io.Writer, r *printer.Record) error {
	p.buf = printer.AppendJSON(p.buf[:0], r)
	it := &item{
		json: p.line(), kind: r.Type, time: r.Time,
		object:   objectRef{context: r.Context, apiVersion: r.APIVersion, kind: r.Kind, namespace: r.Namespace, name: r.Name, uid: r.UID},
		resource: r.Resource, resourceVersion: r.ResourceVersion,
		severity: severityInfo, initial: r.Initial,
		sync: r.Type == "Sync" || (r.IsCall() && r.Call.Delta == "Sync"),
	}
	if r.Health != nil && r.Health.Status == "Failed" {
		it.severity = severityError
	}
	if e := r.Event; e != nil {
		it.reason = e.Reason
		if e.Kind != "" {
			it.subject = objectRef{context: r.Context, apiVersion: e.APIVersion, kind: e.Kind, namespace: e.Namespace, name: e.Name, uid: e.UID}
		}
		if strings.EqualFold(e.Type, "Warning") {
			it.severity = severityWarn
		}
	}
	if p.e.trace != nil && p.skip == nil {
		it.span = p.e.trace.note(r)
	}
	return p.queue(it)
}

// PrintVerdict queues a Verdict record: ERROR when a --fail-when held or
// what is waited on failed, WARN when the wait timed out.
func (p *Feed) PrintVerdict(_ io.Writer, v *printer.Verdict) error {
	p.buf = printer.AppendVerdictJSON(p.buf[:0], v)
	it := &item{json: p.line(), kind: "Verdict", time: v.Time, severity: severityInfo, sync: true}
	switch {
	case v.Outcome == "Failed" || v.Status == "Failed":
		it.severity = severityError
	case v.Outcome == "TimedOut":
		it.severity = severityWarn
	}
	if p.e.trace != nil && p.skip == nil {
		it.span = p.e.trace.waitSpan(v.Time)
		if v.Outcome != "Pending" {
			p.e.trace.end(v)
		}
	}
	return p.queue(it)
}

// PrintReconcile queues a Reconcile record of --queue.
func (p *Feed) PrintReconcile(_ io.Writer, r *printer.Reconcile) error {
	p.buf = printer.AppendReconcileJSON(p.buf[:0], r)
	return p.queue(&item{
		json: p.line(), kind: "Reconcile", time: r.Time, severity: severityInfo, sync: true,
		object: objectRef{context: r.Context, apiVersion: r.APIVersion, kind: r.Kind, namespace: r.Namespace, name: r.Name},
	})
}

// PrintQueueSummary queues the QueueSummary record that ends --queue.
func (p *Feed) PrintQueueSummary(_ io.Writer, s *printer.QueueSummary) error {
	p.buf = printer.AppendQueueSummaryJSON(p.buf[:0], s)
	return p.queue(&item{json: p.line(), kind: "QueueSummary", time: s.Time, severity: severityInfo, sync: true})
}
