package reconcile

import (
	"context"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-deltas/kubectl-deltas/internal/printer"
	"github.com/kubectl-deltas/kubectl-deltas/internal/rawobj"
	"github.com/kubectl-deltas/kubectl-deltas/internal/stage"
)

// reports collects a Queue's reconciles and lets the test wait for them.
type reports struct {
	mu   sync.Mutex
	cond *sync.Cond
	got  []Take
}

func newReports() *reports {
	r := &reports{}
	r.cond = sync.NewCond(&r.mu)
	return r
}

func (r *reports) report(rec Take) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, rec)
	r.cond.Broadcast()
}

// wait blocks until n reconciles are reported.
func (r *reports) wait(n int) []Take {
	r.mu.Lock()
	defer r.mu.Unlock()
	for len(r.got) < n {
		r.cond.Wait()
	}
	return append([]Take(nil), r.got...)
}

func TestVirtualQueueFoldsCallsOfAKeyInReconcile(t *testing.T) {
	r := newReports()
	q := New(Options{Workers: 2, ReconcileTime: time.Second, Virtual: true, Report: r.report})
	q.Start(context.Background())
	web := Key{APIVersion: "v1", Kind: "ConfigMap", Namespace: "ns", Name: "web"}
	db := Key{APIVersion: "v1", Kind: "ConfigMap", Namespace: "ns", Name: "db"}
	t0 := time.Unix(1000, 0)

	q.CallAt(web, t0)
	// While web is reconciled, 5 more calls of web and one of db: db is
	// taken by the other worker at once, web waits for its reconcile to
	// end, then folds the 5 calls into one.
	for range 5 {
		q.CallAt(web, t0.Add(100*time.Millisecond))
	}
	q.CallAt(db, t0.Add(100*time.Millisecond))
	q.AdvanceTo(t0.Add(time.Second))
	s := q.Stop()
	got := r.wait(3)
	want := []Take{
		{Key: web, Start: t0, Calls: 1, Worker: got[0].Worker},
		{Key: db, Start: t0.Add(100 * time.Millisecond), Calls: 1, Worker: got[1].Worker},
		{Key: web, Start: t0.Add(time.Second), Waited: 900 * time.Millisecond, Calls: 5, Worker: got[2].Worker},
	}
	if len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] || got[0].Worker == got[1].Worker {
		t.Fatalf("reconciles\n got  %+v\n want %+v", got, want)
	}
	if s.Calls != 7 || s.Reconciles != 3 || s.Coalesced() != 4 || s.Pending != 0 || s.WaitP99 != 900*time.Millisecond || !s.End.Equal(t0.Add(2*time.Second)) {
		t.Fatalf("summary %+v", s)
	}
}

func TestVirtualQueueWorkersTakeTurns(t *testing.T) {
	// One worker, three keys at once: each waits for the reconciles
	// before it, on the calls' time.
	r := newReports()
	q := New(Options{Workers: 1, ReconcileTime: 50 * time.Millisecond, Virtual: true, Report: r.report})
	q.Start(context.Background())
	t0 := time.Unix(2000, 0)
	for _, name := range []string{"a", "b", "c"} {
		q.CallAt(Key{Name: name}, t0)
	}
	s := q.Stop()
	got := r.wait(3)
	for i, name := range []string{"a", "b", "c"} {
		if got[i].Key.Name != name || got[i].Waited != time.Duration(i)*50*time.Millisecond {
			t.Fatalf("reconcile %d: %+v", i, got[i])
		}
	}
	if s.LongestQueue != 2 || s.WaitP50 != 50*time.Millisecond {
		t.Fatalf("summary %+v", s)
	}
}

func TestQueueStopLeavesQueuedKeysPending(t *testing.T) {
	r := newReports()
	q := New(Options{Workers: 1, ReconcileTime: time.Hour, Report: r.report})
	q.Start(context.Background())
	q.CallAt(Key{Name: "a"}, time.Time{})
	r.wait(1)
	q.CallAt(Key{Name: "b"}, time.Time{})
	q.CallAt(Key{Name: "c"}, time.Time{})
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

// TestCallKey: the key each call queues, as one controller built on the
// run's informers: roots are its For (the object, or its owner with
// --queue-key=owner), --tree's members its Owns (their owner in the tree
// when of the root's type), Events nothing.
func TestCallKey(t *testing.T) {
	pod, err := rawobj.Parse([]byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web-1-x","namespace":"ns","uid":"p","resourceVersion":"1",`+
		`"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web-1","uid":"r","controller":true}]}}`), rawobj.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	deploy := printer.Owner{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: "d"}
	rs := printer.Owner{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-1", UID: "r"}
	cases := []struct {
		name     string
		queueKey string
		rec      printer.Record
		obj      *rawobj.Object
		from     stage.CallFrom
		want     Key
		wantOK   bool
	}{
		{name: "a root queues itself", queueKey: KeyObject, rec: printer.Record{APIVersion: "v1", Kind: "Pod", Namespace: "ns", Name: "web-1-x"}, obj: pod, from: stage.FromRoot,
			want: Key{APIVersion: "v1", Kind: "Pod", Namespace: "ns", Name: "web-1-x"}, wantOK: true},
		{name: "a root queues its owner", queueKey: KeyOwner, rec: printer.Record{APIVersion: "v1", Kind: "Pod", Namespace: "ns", Name: "web-1-x"}, obj: pod, from: stage.FromRoot,
			want: Key{APIVersion: "apps/v1", Kind: "ReplicaSet", Namespace: "ns", Name: "web-1"}, wantOK: true},
		{name: "a root's deletion without a final state, by owner", queueKey: KeyOwner, rec: printer.Record{APIVersion: "v1", Kind: "Pod", Namespace: "ns", Name: "web-1-x"}, from: stage.FromRoot},
		{name: "an Event", queueKey: KeyObject, rec: printer.Record{APIVersion: "events.k8s.io/v1", Kind: "Event", Namespace: "ns", Name: "web-1-x.1"}, from: stage.FromEvents},
		{name: "a member owned by the root", queueKey: KeyObject, rec: printer.Record{APIVersion: "apps/v1", Kind: "ReplicaSet", Namespace: "ns", Name: "web-1", Owners: []printer.Owner{deploy}}, from: stage.FromMember,
			want: Key{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "ns", Name: "web"}, wantOK: true},
		{name: "a member owned by the root, the owner key alike", queueKey: KeyOwner, rec: printer.Record{APIVersion: "apps/v1", Kind: "ReplicaSet", Namespace: "ns", Name: "web-1", Owners: []printer.Owner{deploy}}, from: stage.FromMember,
			want: Key{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "ns", Name: "web"}, wantOK: true},
		{name: "a member owned by another type", queueKey: KeyObject, rec: printer.Record{APIVersion: "v1", Kind: "Pod", Namespace: "ns", Name: "web-1-x", Owners: []printer.Owner{deploy, rs}}, obj: pod, from: stage.FromMember},
		{name: "a member owned by the root's type, another version", queueKey: KeyObject,
			rec:  printer.Record{APIVersion: "apps/v1", Kind: "ReplicaSet", Namespace: "ns", Name: "inner", Owners: []printer.Owner{rs, {APIVersion: "apps/v1beta2", Kind: "ReplicaSet", Name: "outer"}}},
			from: stage.FromMember, want: Key{APIVersion: "apps/v1beta2", Kind: "ReplicaSet", Namespace: "ns", Name: "outer"}, wantOK: true},
		{name: "a member without owners", queueKey: KeyObject, rec: printer.Record{APIVersion: "v1", Kind: "Pod", Namespace: "ns", Name: "x"}, from: stage.FromMember},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := NewFlags()
			f.QueueKey = tc.queueKey
			got, ok := f.CallKey(&tc.rec, tc.obj, tc.from)
			if ok != tc.wantOK || got != tc.want {
				t.Errorf("got %+v, %v; want %+v, %v", got, ok, tc.want, tc.wantOK)
			}
		})
	}
}
