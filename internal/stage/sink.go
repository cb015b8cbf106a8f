package stage

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"sync"
	"syscall"
	"time"

	"github.com/kubectl-deltas/kubectl-deltas/internal/informer"
	"github.com/kubectl-deltas/kubectl-deltas/internal/printer"
	"github.com/kubectl-deltas/kubectl-deltas/internal/rawobj"
)

// outputBuffer is the size of the output's buffer; the Engine flushes it
// whenever no popped batch is waiting.
const outputBuffer = 64 << 10

// RecordSink prints the records of an informer.Engine's batches. It implements
// informer.Sink and, like it, is used from the Engine's goroutine only.
type RecordSink struct {
	// printLock serializes printing: the engine's goroutine prints in
	// Handle, Flush and PrintVerdict, and PrintAside prints what other
	// goroutines report (--queue's reconciles). It guards printer and out.
	printLock sync.Mutex

	stage   *Stage
	printer printer.Printer
	out     *bufio.Writer
	now     func() time.Time
	// limit is how many records to print before the run ends (0: no
	// limit); printed counts them.
	limit   int
	printed int
	// record is reused for every delta.
	record printer.Record
	// recorder, if set, records every delta handed to the RecordSink.
	recorder Recorder
	// discards: the output is io.Discard (-q), so that with a recorder
	// and no limit there is nothing to print.
	discards bool
	// observer, if set, is handed every record the stream shows,
	// completed by observed (--timeline: with health and changes whatever
	// the run prints); observedRecord is the record of a delta the
	// stream does not show (observeHidden), reused for each.
	observer       Observer
	observed       *Stage
	observedRecord printer.Record
	// calls, if set, are told of every record printed (CallsTo).
	calls *CallHooks
	// printHere prints through printer and out: what the hooks print
	// with, the print lock held.
	printHere PrintFunc
	// also, if set, prints every record the stream prints (or would
	// print, with -q) a second time, to nowhere: --otlp's exporter. An
	// error it returns ends the stream.
	also Also
}

// Also is a second printer of the stream (ExportTo): it is handed every
// record, Verdict, Reconcile and QueueSummary the stream prints, whatever
// the output's format, and writes nowhere.
type Also interface {
	printer.Printer
	printer.VerdictPrinter
	printer.QueuePrinter
}

// ExportTo has every record printed (or that would be printed, with -q)
// also printed by a.
func (s *RecordSink) ExportTo(a Also) { s.also = a }

// PrintFunc prints with emit on the stream's printer and output.
type PrintFunc func(emit func(p printer.Printer, w io.Writer) error) error

// CallHooks are told of every record the Sink prints (with --handler,
// each is a handler call): Before with its time, before it is printed;
// After with the record, the delta's object (nil for a deletion without
// a final state) and which informer it came from, after. Either may be
// nil. They run on the Sink's goroutine with the print lock held, and
// print only with the PrintFunc they are given.
type CallHooks struct {
	Before func(t time.Time, emit PrintFunc) error
	After  func(rec *printer.Record, obj *rawobj.Object, from CallFrom, emit PrintFunc) error
}

// CallFrom is which informer a printed record came from, as a controller
// built on them would tell its watches apart: a root's (what was named
// or selected: controller-runtime's For), a --tree member's (Owns), or
// an Event that --events adds beside them (no watch of the controller's).
type CallFrom int

// The informers a call comes from.
const (
	// FromRoot: a root's, what was named or selected.
	FromRoot CallFrom = iota
	// FromMember: a --tree member's (a scout's or an owned type's).
	FromMember
	// FromEvents: the Events of --events.
	FromEvents
)

// callFrom is the CallFrom of a record of an informer with role.
func callFrom(role informer.Role) CallFrom {
	switch role {
	case informer.RoleRoot:
		return FromRoot
	case informer.RoleEvents:
		return FromEvents
	}
	return FromMember
}

// CallsTo has h told of every record the Sink prints.
func (s *RecordSink) CallsTo(h *CallHooks) {
	s.calls = h
	s.printHere = func(emit func(p printer.Printer, w io.Writer) error) error {
		return writeError(emit(s.asidePrinter(), s.out))
	}
}

// asidePrinter is what prints records other than deltas (a Reconcile, a
// QueueSummary): the stream's printer, and also's beside it when set
// (the stream's own is left out with -q). Nil when nothing prints.
func (s *RecordSink) asidePrinter() printer.Printer {
	switch {
	case s.also == nil && s.discards:
		return nil
	case s.also == nil:
		return s.printer
	case s.discards:
		return teePrinter{also: s.also}
	}
	return teePrinter{main: s.printer, also: s.also}
}

// teePrinter prints with main (when set) and then with also: main's
// writer only goes to main. It is a QueuePrinter as also is; main prints
// a Reconcile or QueueSummary when it is one.
type teePrinter struct {
	main printer.Printer
	also Also
}

func (t teePrinter) Print(w io.Writer, r *printer.Record) error {
	if t.main != nil {
		if err := t.main.Print(w, r); err != nil {
			return err
		}
	}
	return t.also.Print(io.Discard, r)
}

func (t teePrinter) PrintReconcile(w io.Writer, r *printer.Reconcile) error {
	if q, ok := t.main.(printer.QueuePrinter); ok {
		if err := q.PrintReconcile(w, r); err != nil {
			return err
		}
	}
	return t.also.PrintReconcile(io.Discard, r)
}

func (t teePrinter) PrintQueueSummary(w io.Writer, s *printer.QueueSummary) error {
	if q, ok := t.main.(printer.QueuePrinter); ok {
		if err := q.PrintQueueSummary(w, s); err != nil {
			return err
		}
	}
	return t.also.PrintQueueSummary(io.Discard, s)
}

// PrintAside prints with emit, after the records printed so far, and
// flushes; it may be called from any goroutine (--queue's workers).
// Nothing is printed when the output is discarded (-q).
func (s *RecordSink) PrintAside(emit func(p printer.Printer, w io.Writer) error) error {
	p := s.asidePrinter()
	if p == nil {
		return nil
	}
	s.printLock.Lock()
	defer s.printLock.Unlock()
	if err := s.releaseLocked(); err != nil {
		return err
	}
	if err := emit(p, s.out); err != nil {
		return writeError(err)
	}
	return writeError(s.out.Flush())
}

// Observer is handed the records a stream shows (ObserveWith): rec
// completed by the observer's stage, obj the delta's object (nil for a
// deletion without a final state), changes, when not nil, what computes
// the changes rec lacks (Stage.Complete); and, through ObserveHidden, the
// records of the deltas the run's filters keep from the stream, filled by
// their health alone (what they change of the health of an object shown
// is still true). It is called from the Sink's goroutine; rec is reused
// after the call.
type Observer interface {
	Observe(rec *printer.Record, obj *rawobj.Object, changes Changes)
	ObserveHidden(rec *printer.Record, obj *rawobj.Object)
}

// ObserveWith hands o every record the Sink prints (or would print, with
// -q): the deltas the run's filters keep, completed by stage (Complete).
func (s *RecordSink) ObserveWith(stage *Stage, o Observer) { s.observed, s.observer = stage, o }

// Recorder records every delta a Sink is handed (--record:
// recording.Recorder).
type Recorder interface {
	Record(t informer.Target, items []informer.Item, now time.Time) error
}

// RecordTo has every delta handed to the Sink recorded by r, stamped with
// the time its printed record has.
func (s *RecordSink) RecordTo(r Recorder) { s.recorder = r }

// NewRecordSink returns a Sink printing to w with p. limit, if positive, ends the
// run after that many records. now stamps the records; nil means
// time.Now.
func NewRecordSink(stage *Stage, p printer.Printer, w io.Writer, limit int, now func() time.Time) *RecordSink {
	if now == nil {
		now = time.Now
	}
	return &RecordSink{stage: stage, printer: p, out: bufio.NewWriterSize(w, outputBuffer), now: now, limit: limit, discards: w == io.Discard}
}

// Handle implements informer.Sink: it prints the deltas of b that pass the
// filters, and is done once the limit is reached.
func (s *RecordSink) Handle(b informer.Batch) (done bool, err error) {
	now := s.now()
	t := b.Informer.Target()
	if s.recorder != nil {
		if err := s.recorder.Record(t, b.Items, now); err != nil {
			return false, err
		}
		if s.discards && s.limit == 0 && s.observer == nil && s.also == nil {
			return false, nil // recording only: nothing printed, nothing counted
		}
	}
	s.printLock.Lock()
	defer s.printLock.Unlock()
	for i := range b.Items {
		keep, err := s.stage.Fill(&s.record, t, &b.Items[i], now)
		if err != nil {
			return false, err
		}
		if !keep {
			if s.observer != nil {
				s.observeHidden(t, &b.Items[i], now)
			}
			continue
		}
		if s.calls != nil && s.calls.Before != nil {
			if err := s.calls.Before(s.record.Time, s.printHere); err != nil {
				return false, err
			}
		}
		if err := s.printer.Print(s.out, &s.record); err != nil {
			return false, writeError(err)
		}
		if s.also != nil {
			if err := s.also.Print(io.Discard, &s.record); err != nil {
				return false, err
			}
		}
		if s.calls != nil && s.calls.After != nil {
			if err := s.calls.After(&s.record, b.Items[i].Object, callFrom(t.Role), s.printHere); err != nil {
				return false, err
			}
		}
		if s.observer != nil {
			s.observe(t, &b.Items[i])
		}
		s.printed++
		if s.limit > 0 && s.printed >= s.limit {
			return true, nil
		}
	}
	return false, nil
}

// observe hands the observer the record of it, a delta the stream has
// just printed: the printed record itself, completed by the observer's
// stage with what it lacks (health, changes), so that nothing is computed
// twice, and not copied (the next Fill makes it anew; what the observer
// adds is never printed).
func (s *RecordSink) observe(t informer.Target, it *informer.Item) {
	rec := &s.record
	if rec.IsCall() {
		// The page draws deltas, whatever the stream prints (--handler).
		rec.Type, rec.Call = string(it.Type), printer.HandlerCall{}
	}
	s.observer.Observe(rec, it.Object, s.observed.Complete(rec, t, it))
}

// observeHidden hands the observer the record of it, a delta the run's
// filters keep from the stream: its health only (the observer's stage's
// HealthOf), nothing else of it is drawn.
func (s *RecordSink) observeHidden(t informer.Target, it *informer.Item, now time.Time) {
	h := s.observed.HealthOf(t, it, now)
	if h == nil {
		return
	}
	s.observedRecord = printer.Record{Type: string(it.Type), Time: now, Context: t.Context, UID: it.Object.UID, Health: h}
	s.observer.ObserveHidden(&s.observedRecord, it.Object)
}

// PrintVerdict prints v after the records printed so far, and flushes:
// a Verdict record on the way (a Pending one). Printers without Verdict
// records, and a stream printing nothing, print nothing.
func (s *RecordSink) PrintVerdict(v *printer.Verdict) error {
	p, ok := s.printer.(printer.VerdictPrinter)
	ok = ok && !s.discards
	if !ok && s.also == nil {
		return nil
	}
	s.printLock.Lock()
	defer s.printLock.Unlock()
	if s.also != nil {
		if err := s.also.PrintVerdict(io.Discard, v); err != nil {
			return err
		}
	}
	if !ok {
		return nil
	}
	if err := s.releaseLocked(); err != nil {
		return err
	}
	if err := p.PrintVerdict(s.out, v); err != nil {
		return writeError(err)
	}
	return writeError(s.out.Flush())
}

// Flush implements informer.Sink: what the printer held back is printed
// (printer.Releaser) and the output flushed.
func (s *RecordSink) Flush() error {
	s.printLock.Lock()
	defer s.printLock.Unlock()
	if err := s.releaseLocked(); err != nil {
		return err
	}
	return writeError(s.out.Flush())
}

// releaseLocked prints what the printer held back, if it holds anything
// back. Caller holds printLock.
func (s *RecordSink) releaseLocked() error {
	if r, ok := s.printer.(printer.Releaser); ok {
		return writeError(r.Release(s.out))
	}
	return nil
}

// Printed is how many records were printed.
func (s *RecordSink) Printed() int { return s.printed }

// writeError names a failed write; a reader that went away (EPIPE) is
// informer.ErrOutputClosed, a normal end.
func writeError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, syscall.EPIPE):
		return fmt.Errorf("%w: %w", informer.ErrOutputClosed, err)
	}
	return fmt.Errorf("writing output: %w", err)
}

// Tee is an Observer that hands each record to each of its Observers in
// turn (--timeline's page and --live's view).
type Tee []Observer

// Observe hands rec to each Observer.
func (t Tee) Observe(rec *printer.Record, obj *rawobj.Object, changes Changes) {
	for _, o := range t {
		o.Observe(rec, obj, changes)
	}
}

// ObserveHidden hands rec to each Observer.
func (t Tee) ObserveHidden(rec *printer.Record, obj *rawobj.Object) {
	for _, o := range t {
		o.ObserveHidden(rec, obj)
	}
}
