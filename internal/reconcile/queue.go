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

// Reconcile is one key taken off the queue by a worker.
type Reconcile struct {
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
	// Calls counts the handler calls enqueued, Reconciles the keys
	// taken; Pending the keys still queued when the run ended.
	Calls, Reconciles, Pending int
	// LongestQueue is the most keys queued at once.
	LongestQueue int
	// WaitP50 and WaitP99 are the median and 99th percentile of how long
	// a key waited for its reconcile; 0 without reconciles.
	WaitP50, WaitP99 time.Duration
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
	// Clock is the queue's and the workers' time; nil is the real clock.
	Clock clock.WithTicker
	// Report is told of each reconcile as it starts, on the worker's
	// goroutine; it must be safe for concurrent use.
	Report func(Reconcile)
}

// pending is what is known of a key's calls since it was last taken.
type pending struct {
	calls int
	first time.Time
}

// Queue feeds handler calls to client-go's workqueue and drains it.
type Queue struct {
	opts  Options
	clock clock.WithTicker
	queue workqueue.TypedRateLimitingInterface[Key]

	// lock guards everything below.
	lock sync.Mutex
	// waiting are the calls of each key not yet taken by a worker.
	waiting map[Key]*pending
	summary Summary
	waits   []time.Duration

	// stopping is closed by Stop: workers take no more keys.
	stopping chan struct{}
	workers  sync.WaitGroup
}

// New returns a Queue; Start runs its workers.
func New(o Options) *Queue {
	c := o.Clock
	if c == nil {
		c = clock.RealClock{}
	}
	q := &Queue{
		opts:  o,
		clock: c,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[Key](),
			workqueue.TypedRateLimitingQueueConfig[Key]{Name: "kubectl-deltas", Clock: c}),
		waiting:  map[Key]*pending{},
		stopping: make(chan struct{}),
	}
	return q
}

// Call enqueues the key of one handler call, as a controller's handler
// does (Add: a key already queued is not queued twice; one being
// reconciled is queued again once its reconcile is done).
func (q *Queue) Call(k Key) {
	q.lock.Lock()
	p := q.waiting[k]
	if p == nil {
		p = &pending{first: q.clock.Now()}
		q.waiting[k] = p
	}
	p.calls++
	q.summary.Calls++
	q.lock.Unlock()
	q.queue.Add(k)
	if n := q.queue.Len(); n > 0 {
		q.lock.Lock()
		q.summary.LongestQueue = max(q.summary.LongestQueue, n)
		q.lock.Unlock()
	}
}

// Start runs the workers until Stop.
func (q *Queue) Start(ctx context.Context) {
	for i := range max(q.opts.Workers, 1) {
		q.workers.Go(func() { q.work(ctx, i+1) })
	}
}

// work is one worker: it takes a key, reports it, takes ReconcileTime,
// and is done with it, until the queue shuts down.
func (q *Queue) work(ctx context.Context, worker int) {
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
			t := q.clock.NewTimer(q.opts.ReconcileTime)
			select {
			case <-t.C():
			case <-ctx.Done():
				t.Stop()
			case <-q.stopping:
				t.Stop()
			}
		}
		q.queue.Forget(k)
		q.queue.Done(k)
	}
}

// take accounts for a worker taking k.
func (q *Queue) take(k Key, worker int) Reconcile {
	now := q.clock.Now()
	q.lock.Lock()
	defer q.lock.Unlock()
	r := Reconcile{Key: k, Start: now, Worker: worker}
	if p := q.waiting[k]; p != nil {
		r.Calls, r.Waited = p.calls, now.Sub(p.first)
		delete(q.waiting, k)
	}
	q.summary.Reconciles++
	q.waits = append(q.waits, r.Waited)
	return r
}

// Stop ends the run: workers finish the reconcile they are in and take
// no more; what is still queued is pending. It returns the summary.
func (q *Queue) Stop() Summary {
	close(q.stopping)
	q.queue.ShutDown()
	q.workers.Wait()
	q.lock.Lock()
	defer q.lock.Unlock()
	s := q.summary
	s.Pending = len(q.waiting)
	if n := len(q.waits); n > 0 {
		w := slices.Clone(q.waits)
		slices.Sort(w)
		s.WaitP50 = w[(n-1)/2]
		s.WaitP99 = w[min(n-1, (n*99+99)/100-1)]
	}
	return s
}
