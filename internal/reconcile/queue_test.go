package reconcile

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
)

// reports collects a Queue's reconciles and lets the test wait for them.
type reports struct {
	mu   sync.Mutex
	cond *sync.Cond
	got  []Reconcile
}

func newReports() *reports {
	r := &reports{}
	r.cond = sync.NewCond(&r.mu)
	return r
}

func (r *reports) report(rec Reconcile) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, rec)
	r.cond.Broadcast()
}

// wait blocks until n reconciles are reported.
func (r *reports) wait(n int) []Reconcile {
	r.mu.Lock()
	defer r.mu.Unlock()
	for len(r.got) < n {
		r.cond.Wait()
	}
	return append([]Reconcile(nil), r.got...)
}

// waitTimer blocks until a worker waits on the fake clock: its reconcile
// has begun, so a Step counts from then.
func waitTimer(c *clocktesting.FakeClock) {
	for !c.HasWaiters() {
		runtime.Gosched()
	}
}

func TestQueueFoldsCallsOfAKeyInReconcile(t *testing.T) {
	c := clocktesting.NewFakeClock(time.Unix(1000, 0))
	r := newReports()
	q := New(Options{Workers: 2, ReconcileTime: time.Second, Clock: c, Report: r.report})
	q.Start(context.Background())
	web := Key{APIVersion: "v1", Kind: "ConfigMap", Namespace: "ns", Name: "web"}
	db := Key{APIVersion: "v1", Kind: "ConfigMap", Namespace: "ns", Name: "db"}

	q.Call(web)
	first := r.wait(1)[0]
	if first.Key != web || first.Calls != 1 || first.Waited != 0 {
		t.Fatalf("first reconcile %+v", first)
	}
	waitTimer(c)
	// While web is reconciled, 5 more calls of web and one of db: db is
	// taken by the other worker at once, web waits for its reconcile to
	// end, then folds the 5 calls into one.
	c.Step(100 * time.Millisecond)
	for range 5 {
		q.Call(web)
	}
	q.Call(db)
	got := r.wait(2)
	if got[1].Key != db || got[1].Calls != 1 {
		t.Fatalf("second reconcile %+v", got[1])
	}
	c.Step(900 * time.Millisecond) // web's first reconcile ends
	got = r.wait(3)
	if got[2].Key != web || got[2].Calls != 5 || got[2].Waited != 900*time.Millisecond {
		t.Fatalf("third reconcile %+v, want web folding 5 calls after 900ms", got[2])
	}
	s := q.Stop()
	if s.Calls != 7 || s.Reconciles != 3 || s.Coalesced() != 4 || s.Pending != 0 || s.WaitP99 != 900*time.Millisecond {
		t.Fatalf("summary %+v", s)
	}
}

func TestQueueStopLeavesQueuedKeysPending(t *testing.T) {
	c := clocktesting.NewFakeClock(time.Unix(1000, 0))
	r := newReports()
	q := New(Options{Workers: 1, ReconcileTime: time.Minute, Clock: c, Report: r.report})
	q.Start(context.Background())
	q.Call(Key{Name: "a"})
	r.wait(1)
	q.Call(Key{Name: "b"})
	q.Call(Key{Name: "c"})
	s := q.Stop() // the reconcile of a is cut short; b and c never start
	if s.Reconciles != 1 || s.Pending != 2 || s.Calls != 3 || s.LongestQueue != 2 {
		t.Fatalf("summary %+v", s)
	}
}

func TestFlags(t *testing.T) {
	yes := true
	f := NewFlags()
	f.QueueKey = KeyOwner
	refs := []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-1", Controller: &yes}}
	if k, ok := f.KeyFor("", "v1", "Pod", "ns", "web-1-x", refs); !ok || k != (Key{APIVersion: "apps/v1", Kind: "ReplicaSet", Namespace: "ns", Name: "web-1"}) {
		t.Fatalf("owner key %+v %v", k, ok)
	}
	if _, ok := f.KeyFor("", "v1", "Pod", "ns", "lonely", nil); ok {
		t.Fatal("an object without a controller queued a key")
	}
	for _, bad := range []*Flags{{Workers: 0, QueueKey: KeyObject}, {Workers: 1, QueueKey: "x"}, {Workers: 1, QueueKey: KeyObject, ReconcileTime: -1}, {Workers: 1, QueueKey: KeyObject, Queue: true}} {
		if err := bad.Validate(false); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}
