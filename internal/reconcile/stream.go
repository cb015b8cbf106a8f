package reconcile

import (
	"context"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kubectl-deltas/kubectl-deltas/internal/printer"
	"github.com/kubectl-deltas/kubectl-deltas/internal/rawobj"
	"github.com/kubectl-deltas/kubectl-deltas/internal/stage"
)

// Start runs --queue's workqueue beside the stream: printing hands it
// every handler call it prints, and its reconciles are printed after the
// call that queued them. Live, its workers run on the real clock and
// print as they take a key; in a replay the queue runs on the
// recording's time, the workers' reconciles played out between the calls
// (before each call is printed, what happened until its time). The
// returned stop ends the queue — in a replay once what is queued is
// reconciled — and prints the QueueSummary; call it once the stream has
// ended, whatever ended it. replayNow is the replay's clock, nil live.
func (f *Flags) Start(ctx context.Context, printing *stage.RecordSink, replayNow func() time.Time) (stop func()) {
	if !f.Queue {
		return func() {}
	}
	opts := f.Options()
	opts.Virtual = replayNow != nil
	// taken holds, in a replay, the reconciles not printed yet.
	var takenLock sync.Mutex
	var taken []printer.Reconcile
	opts.Report = func(r Take) {
		rec := printer.Reconcile{
			Time: r.Start, Context: r.Key.Context, APIVersion: r.Key.APIVersion, Kind: r.Key.Kind,
			Namespace: r.Key.Namespace, Name: r.Key.Name, Calls: r.Calls, Waited: r.Waited, Worker: r.Worker,
		}
		if opts.Virtual {
			takenLock.Lock()
			taken = append(taken, rec)
			takenLock.Unlock()
			return
		}
		// A failed write shows as the stream's own next one.
		_ = printing.PrintAside(func(p printer.Printer, w io.Writer) error {
			return p.(printer.QueuePrinter).PrintReconcile(w, &rec)
		})
	}
	printTaken := func(emit stage.PrintFunc) error {
		takenLock.Lock()
		defer takenLock.Unlock()
		for i := range taken {
			if err := emit(func(p printer.Printer, w io.Writer) error {
				return p.(printer.QueuePrinter).PrintReconcile(w, &taken[i])
			}); err != nil {
				return err
			}
		}
		taken = taken[:0]
		return nil
	}
	q := New(opts)
	// notQueued counts the handler calls that queued no key (CallKey).
	var notQueued atomic.Int64
	hooks := &stage.CallHooks{
		After: func(rec *printer.Record, obj *rawobj.Object, from stage.CallFrom, emit stage.PrintFunc) error {
			if k, ok := f.CallKey(rec, obj, from); ok {
				q.CallAt(k, rec.Time)
			} else {
				notQueued.Add(1)
			}
			return printTaken(emit)
		},
	}
	if opts.Virtual {
		hooks.Before = func(t time.Time, emit stage.PrintFunc) error {
			q.AdvanceTo(t)
			return printTaken(emit)
		}
	}
	printing.CallsTo(hooks)
	q.Start(ctx)
	return func() {
		s := q.Stop()
		end := s.End
		if end.IsZero() && replayNow != nil {
			end = replayNow() // nothing was called
		}
		n := int(notQueued.Load())
		summary := printer.QueueSummary{
			Time: end, Calls: s.Calls + n, NotQueued: n, Reconciles: s.Reconciles, Coalesced: s.Coalesced(), Pending: s.Pending,
			LongestQueue: s.LongestQueue, WaitP50: s.WaitP50, WaitP99: s.WaitP99,
		}
		_ = printing.PrintAside(func(p printer.Printer, w io.Writer) error {
			if err := printTaken(func(emit func(printer.Printer, io.Writer) error) error { return emit(p, w) }); err != nil {
				return err
			}
			return p.(printer.QueuePrinter).PrintQueueSummary(w, &summary)
		})
	}
}
