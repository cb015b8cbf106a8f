// Package reconcile plays a controller's side of its informer's handler
// calls (--queue): each call's key goes into client-go's own workqueue (a
// typed rate-limiting queue with the default controller rate limiter, as
// a controller builds it), drained by workers whose "reconcile" takes a
// set time. It reports each reconcile — the key, how many calls it folds,
// how long the key waited — and, at the end, a summary. It knows nothing
// of printers or the informer machinery.
package reconcile

import (
	"context"
	"slices"
	"sync"
	"time"

	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
)

// Key is what the queue holds: the object a reconcile is for.
type Key struct {
	// APIVersion and Kind are the object's ("v1" "ConfigMap", "apps/v1"
	// "ReplicaSet").
	APIVersion, Kind string
	// Context is the kubeconfig context of the object's cluster, when a
	// run watches several; "".
	Context         string
	Namespace, Name string
}

// Take is one key taken off the queue by a worker.
type Take struct {
	Key Key
	// Start is when the worker took the key; Waited how long before that
	// the first of its calls came.
	Start  time.Time
	Waited time.Duration
	// Calls is how many handler calls the reconcile folds: those of its
	// key since the key was last taken.
	Calls int
	// Worker numbers the worker, from 1.
	Worker int
}

// Summary is what the queue did over the run.
type Summary struct {
	// Calls counts the handler calls enqueued (not those that queued
	// nothing), Reconciles the keys taken; Pending the keys still queued
	// when the run ended.
	Calls, Reconciles, Pending int
	// LongestQueue is the most keys queued at once.
	LongestQueue int
	// WaitP50 and WaitP99 are the median and 99th percentile of how long
	// a key waited for its reconcile; 0 without reconciles.
	WaitP50, WaitP99 time.Duration
	// End is the queue's time as it stopped.
	End time.Time
}

// Coalesced is how many calls did not have a reconcile of their own: they
// were folded into another's (or are still pending).
func (s Summary) Coalesced() int { return s.Calls - s.Reconciles }

// Options configure a Queue.
type Options struct {
	// Workers is how many keys are reconciled at once (at least 1).
	Workers int
	// ReconcileTime is how long each reconcile takes.
	ReconcileTime time.Duration
	// Virtual runs the queue on the time of the calls (CallAt), not the
	// clock's: a replay's. Each call first lets the workers do what they
	// would have done until its time, reconcile by reconcile; Stop lets
	// them finish what is queued. The workers are then no goroutines but
	// slots that the caller's goroutine plays. Without it the workers run
	// on the real clock, free.
	Virtual bool
	// Report is told of each reconcile as it starts: on the worker's
	// goroutine in real time (it must be safe for concurrent use), on the
	// caller's of CallAt, AdvanceTo or Stop in virtual time.
	Report func(Take)
}

// pending is what is known of a key's calls since it was last taken.
type pending struct {
	calls int
	first time.Time
}

// Controller feeds handler calls to client-go's workqueue and drains it.
type Controller struct {
	opts  Options
	queue workqueue.TypedRateLimitingInterface[Key]

	// lock guards everything below.
	lock sync.Mutex
	// waiting are the calls of each key not yet taken by a worker.
	waiting map[Key]*pending
	summary Summary
	waits   []time.Duration

	// In virtual time: now is the queue's time, and slots are the
	// workers, each reconciling a key until a time or free. Only the
	// goroutine that calls CallAt, AdvanceTo and Stop touches them.
	now   time.Time
	slots []slot

	// stopping is closed by Stop: workers take no more keys.
	stopping chan struct{}
	workers  sync.WaitGroup
}

// slot is a worker of virtual time.
type slot struct {
	busy  bool
	key   Key
	until time.Time
}

// New returns a Queue; Start runs its workers.
func New(o Options) *Controller {
	o.Workers = max(o.Workers, 1)
	return &Controller{
		opts: o,
		// The rate limiter is a controller's; a handler's Add does not
		// go through it (only requeues after an error would).
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[Key](),
			workqueue.TypedRateLimitingQueueConfig[Key]{Name: "kubectl-deltas", Clock: clock.RealClock{}}),
		waiting:  map[Key]*pending{},
		slots:    make([]slot, o.Workers),
		stopping: make(chan struct{}),
	}
}

// nowLocked is the queue's time. Caller holds lock.
func (q *Controller) nowLocked() time.Time {
	if q.opts.Virtual {
		return q.now
	}
	return time.Now()
}

// CallAt enqueues the key of one handler call, as a controller's handler
// does (Add: a key already queued is not queued twice; one being
// reconciled is queued again once its reconcile is done). In virtual
// time, at is the call's time: the workers first do what they would have
// done until then, and a free one takes the key at once; in real time at
// is not read.
func (q *Controller) CallAt(k Key, at time.Time) {
	if q.opts.Virtual {
		q.AdvanceTo(at)
	}
	q.lock.Lock()
	p := q.waiting[k]
	if p == nil {
		p = &pending{first: q.nowLocked()}
		q.waiting[k] = p
	}
	p.calls++
	q.summary.Calls++
	q.lock.Unlock()
	q.queue.Add(k)
	n := q.queue.Len()
	q.lock.Lock()
	q.summary.LongestQueue = max(q.summary.LongestQueue, n)
	q.lock.Unlock()
	if q.opts.Virtual {
		q.fill()
	}
}

// AdvanceTo moves virtual time to at (never back), ending on the way each
// reconcile due, in order, each freed worker taking the next key. It
// does nothing in real time.
func (q *Controller) AdvanceTo(at time.Time) {
	if !q.opts.Virtual {
		return
	}
	if q.now.IsZero() {
		q.now = at
	}
	for q.endNext(at, true) {
	}
	if at.After(q.now) {
		q.now = at
	}
}

// endNext ends the reconcile of virtual time that ends first (the lowest
// worker on a tie), unless bounded and it ends after at; the worker is
// done with its key (which the workqueue queues again if it was called
// meanwhile) and free workers take queued keys. It reports whether it
// ended one.
func (q *Controller) endNext(at time.Time, bounded bool) bool {
	first := -1
	for i, s := range q.slots {
		if s.busy && (first < 0 || s.until.Before(q.slots[first].until)) {
			first = i
		}
	}
	if first < 0 || (bounded && q.slots[first].until.After(at)) {
		return false
	}
	s := &q.slots[first]
	q.now, s.busy = s.until, false
	q.queue.Forget(s.key)
	q.queue.Done(s.key)
	q.fill()
	return true
}

// fill has each free worker of virtual time take a queued key, in worker
// order: the workqueue's Get does not block, the queue holding keys and
// this goroutine being its only consumer.
func (q *Controller) fill() {
	for i := range q.slots {
		for !q.slots[i].busy && q.queue.Len() > 0 {
			k, shutdown := q.queue.Get()
			if shutdown {
				return
			}
			r := q.take(k, i+1)
			if q.opts.Report != nil {
				q.opts.Report(r)
			}
			if q.opts.ReconcileTime > 0 {
				q.slots[i] = slot{busy: true, key: k, until: q.now.Add(q.opts.ReconcileTime)}
				continue
			}
			q.queue.Forget(k)
			q.queue.Done(k)
		}
	}
}

// Start runs the workers of real time until Stop; in virtual time the
// workers are played by the calls themselves.
func (q *Controller) Start(ctx context.Context) {
	if q.opts.Virtual {
		return
	}
	for i := range q.opts.Workers {
		q.workers.Go(func() { q.work(ctx, i+1) })
	}
}

// work is one worker of real time: it takes a key, reports it, takes
// ReconcileTime (cut short by ctx or Stop), and is done with it, until
// the queue shuts down.
func (q *Controller) work(ctx context.Context, worker int) {
	for {
		k, shutdown := q.queue.Get()
		if shutdown {
			return
		}
		select {
		case <-q.stopping:
			// The run ended: what is still queued stays pending.
			q.queue.Done(k)
			return
		default:
		}
		r := q.take(k, worker)
		if q.opts.Report != nil {
			q.opts.Report(r)
		}
		if q.opts.ReconcileTime > 0 {
			t := time.NewTimer(q.opts.ReconcileTime)
			select {
			case <-t.C:
			case <-ctx.Done():
			case <-q.stopping:
			}
			t.Stop()
		}
		q.queue.Forget(k)
		q.queue.Done(k)
	}
}

// take accounts for a worker taking k.
func (q *Controller) take(k Key, worker int) Take {
	q.lock.Lock()
	defer q.lock.Unlock()
	now := q.nowLocked()
	r := Take{Key: k, Start: now, Worker: worker}
	if p := q.waiting[k]; p != nil {
		r.Calls, r.Waited = p.calls, now.Sub(p.first)
		delete(q.waiting, k)
	}
	q.summary.Reconciles++
	q.waits = append(q.waits, r.Waited)
	return r
}

// Stop ends the run and returns the summary. In real time, workers finish
// the reconcile they are in and take no more: what is still queued is
// pending. In virtual time they first do, on its time, what is queued.
func (q *Controller) Stop() Summary {
	if q.opts.Virtual {
		for q.endNext(time.Time{}, false) {
		}
	}
	close(q.stopping)
	q.queue.ShutDown()
	q.workers.Wait()
	q.lock.Lock()
	defer q.lock.Unlock()
	s := q.summary
	s.Pending = len(q.waiting)
	s.End = q.nowLocked()
	if n := len(q.waits); n > 0 {
		w := slices.Clone(q.waits)
		slices.Sort(w)
		s.WaitP50 = w[(n-1)/2]
		s.WaitP99 = w[min(n-1, (n*99+99)/100-1)]
	}
	return s
}
