package cmd

import (
	"context"
	"io"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-deltas/kubectl-deltas/internal/printer"
	"github.com/kubectl-deltas/kubectl-deltas/internal/rawobj"
	"github.com/kubectl-deltas/kubectl-deltas/internal/reconcile"
	"github.com/kubectl-deltas/kubectl-deltas/internal/record"
)

// startQueue runs --queue's workqueue beside the stream: printing hands it
// every handler call it prints, its reconciles are printed after the
// calls that queued them. The returned stop ends the workers and prints
// the QueueSummary; call it once the stream has ended, whatever ended it.
func (o *DeltasOptions) startQueue(ctx context.Context, printing *record.Sink) (stop func()) {
	if !o.Queue.Queue {
		return func() {}
	}
	opts := o.Queue.Options()
	opts.Report = func(r reconcile.Reconcile) {
		rec := printer.Reconcile{
			Time: r.Start, Context: r.Key.Context, APIVersion: r.Key.APIVersion, Kind: r.Key.Kind,
			Namespace: r.Key.Namespace, Name: r.Key.Name, Calls: r.Calls, Waited: r.Waited, Worker: r.Worker,
		}
		// A failed write shows as the stream's own next one.
		_ = printing.PrintAside(func(p printer.Printer, w io.Writer) error {
			return p.(printer.QueuePrinter).PrintReconcile(w, &rec)
		})
	}
	q := reconcile.New(opts)
	printing.CallsTo(func(rec *printer.Record, obj *rawobj.Object) {
		var refs []metav1.OwnerReference
		if obj != nil && o.Queue.QueueKey == reconcile.KeyOwner {
			refs, _ = obj.OwnerReferences()
		}
		if k, ok := o.Queue.KeyFor(rec.Context, rec.APIVersion, rec.Kind, rec.Namespace, rec.Name, refs); ok {
			q.Call(k)
		}
	})
	q.Start(ctx)
	return func() {
		s := q.Stop()
		summary := printer.QueueSummary{
			Time: time.Now(), Calls: s.Calls, Reconciles: s.Reconciles, Coalesced: s.Coalesced(), Pending: s.Pending,
			LongestQueue: s.LongestQueue, WaitP50: s.WaitP50, WaitP99: s.WaitP99,
		}
		_ = printing.PrintAside(func(p printer.Printer, w io.Writer) error {
			return p.(printer.QueuePrinter).PrintQueueSummary(w, &summary)
		})
	}
}
