package cache

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"
)

// testTimeout bounds every wait of the reflector tests; it only matters
// when a test is failing.
const testTimeout = 30 * time.Second

// testList is a list of testObjs.
type testList struct {
	metav1.ListMeta
	items []*testObj
}

func (l *testList) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }
func (l *testList) DeepCopyObject() runtime.Object {
	c := &testList{}
	l.ListMeta.DeepCopyInto(&c.ListMeta)
	c.items = append(c.items, l.items...)
	return c
}

func (l *testList) EachListItem(fn func(runtime.Object) error) error {
	for _, o := range l.items {
		if err := fn(o); err != nil {
			return err
		}
	}
	return nil
}

func mkList(rv, cont string, objs ...*testObj) *testList {
	return &testList{ListMeta: metav1.ListMeta{ResourceVersion: rv, Continue: cont}, items: objs}
}

type listResult struct {
	list runtime.Object
	err  error
}

type watchResult struct {
	w   watch.Interface
	err error
}

// scriptedLW answers lists and watches from scripts, in order, and records
// the options of every call. When a script runs out, the call blocks until
// the context is cancelled (a watch returns a watcher that never ends), and
// exhausted is closed: the test knows the reflector has done everything
// scripted.
type scriptedLW struct {
	mu        sync.Mutex
	lists     []listResult
	watches   []watchResult
	listOpts  []metav1.ListOptions
	watchOpts []metav1.ListOptions
	exhausted chan struct{}
	once      sync.Once
}

func newScriptedLW(lists []listResult, watches []watchResult) *scriptedLW {
	return &scriptedLW{lists: lists, watches: watches, exhausted: make(chan struct{})}
}

func (lw *scriptedLW) List(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	lw.mu.Lock()
	lw.listOpts = append(lw.listOpts, opts)
	if len(lw.lists) == 0 {
		lw.mu.Unlock()
		lw.once.Do(func() { close(lw.exhausted) })
		<-ctx.Done()
		return nil, ctx.Err()
	}
	r := lw.lists[0]
	lw.lists = lw.lists[1:]
	lw.mu.Unlock()
	return r.list, r.err
}

func (lw *scriptedLW) Watch(_ context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	lw.watchOpts = append(lw.watchOpts, opts)
	if len(lw.watches) == 0 {
		lw.once.Do(func() { close(lw.exhausted) })
		return watch.NewFake(), nil
	}
	r := lw.watches[0]
	lw.watches = lw.watches[1:]
	return r.w, r.err
}

func (lw *scriptedLW) listRVs() []string {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	out := make([]string, 0, len(lw.listOpts))
	for _, o := range lw.listOpts {
		out = append(out, o.ResourceVersion)
	}
	return out
}

// optsOfLists returns the options of every list call.
func (lw *scriptedLW) optsOfLists() []metav1.ListOptions {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	return append([]metav1.ListOptions(nil), lw.listOpts...)
}

func (lw *scriptedLW) watchRVs() []string {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	out := make([]string, 0, len(lw.watchOpts))
	for _, o := range lw.watchOpts {
		out = append(out, o.ResourceVersion)
	}
	return out
}

// closedWatch returns a fake watch that delivers events and then ends, as a
// server closing a watch normally.
func closedWatch(events ...watch.Event) *watch.FakeWatcher {
	w := watch.NewFakeWithChanSize(len(events), false)
	for _, e := range events {
		w.Action(e.Type, e.Object)
	}
	w.Stop()
	return w
}

// firedTimer is a clock.Timer that has already fired.
type firedTimer struct{ c chan time.Time }

func (t firedTimer) C() <-chan time.Time    { return t.c }
func (firedTimer) Stop() bool               { return false }
func (firedTimer) Reset(time.Duration) bool { return false }

// countingBackoff fires at once and counts how often it was asked.
type countingBackoff struct {
	mu sync.Mutex
	n  int
}

func (b *countingBackoff) Backoff() clock.Timer {
	b.mu.Lock()
	b.n++
	b.mu.Unlock()
	c := make(chan time.Time, 1)
	c <- time.Time{}
	return firedTimer{c}
}

func (b *countingBackoff) count() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.n
}

// errorRecorder collects what the reflector reports.
type errorRecorder struct {
	mu   sync.Mutex
	errs []error
}

func (e *errorRecorder) record(err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.errs = append(e.errs, err)
}

func (e *errorRecorder) matching(match func(error) bool) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for _, err := range e.errs {
		if match(err) {
			n++
		}
	}
	return n
}

// runUntilExhausted runs r until lw's scripts are used up, then stops it.
func runUntilExhausted(t *testing.T, r *Reflector, lw *scriptedLW) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		r.Run(ctx)
		close(done)
	}()
	select {
	case <-lw.exhausted:
	case <-time.After(testTimeout):
		t.Error("the reflector did not use up its script")
	}
	cancel()
	select {
	case <-done:
	case <-time.After(testTimeout):
		t.Fatal("Run did not return after cancel")
	}
}

type reflectorFixture struct {
	fifo    *DeltaFIFO
	known   Store
	backoff *countingBackoff
	errs    *errorRecorder
	clock   *clocktesting.FakeClock
}

// newFixture makes a Replaced-emitting DeltaFIFO whose knownObjects is a
// Store that a consumer updates as it pops (see drain), and a reflector
// feeding it.
func newFixture(lw ListerWatcher, opts ReflectorOptions) (*Reflector, *reflectorFixture) {
	fx := &reflectorFixture{
		known:   newStore(DeletionHandlingMetaNamespaceKeyFunc),
		backoff: &countingBackoff{},
		errs:    &errorRecorder{},
		clock:   clocktesting.NewFakeClock(time.Unix(1000, 0)),
	}
	fx.fifo = NewDeltaFIFOWithOptions(DeltaFIFOOptions{KnownObjects: fx.known, EmitDeltaTypeReplaced: true})
	if opts.Backoff == nil {
		opts.Backoff = fx.backoff
	}
	if opts.Clock == nil {
		opts.Clock = fx.clock
	}
	opts.ErrorHandler = fx.errs.record
	if opts.ExpectedType == nil {
		opts.ExpectedType = &testObj{}
	}
	return NewReflector(lw, fx.fifo, opts), fx
}

// drain pops everything queued, applying it to the known store like
// processDeltas, and renders the pops.
func (fx *reflectorFixture) drain(t *testing.T) []string {
	t.Helper()
	var out []string
	for fx.fifo.Len() > 0 {
		d, err := fx.fifo.Pop(func(d Deltas, _ bool) error { return processOurs(fx.known, d) })
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, describeDeltas(d))
	}
	return out
}

func errorsAs(err error, target any) bool { return errors.As(err, target) }

// processOurs applies popped deltas to a store as client-go's
// processDeltas does: Sync/Replaced/Added/Updated add or update, Deleted
// deletes (tombstones by key).
func processOurs(store Store, deltas Deltas) error {
	for _, delta := range deltas {
		var err error
		switch delta.Type {
		case Sync, Replaced, Added, Updated:
			if _, exists, gerr := store.Get(delta.Object); gerr == nil && exists {
				err = store.Update(delta.Object)
			} else {
				err = store.Add(delta.Object)
			}
		case Deleted:
			err = store.Delete(delta.Object)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// streamingLW is a scriptedLW that is also a ListStreamer: ListEach hands
// out the items of the scripted list one by one, calling afterItem (if
// set) after each, and then returns the scripted error, if any, after the
// items — a list cut off midway when both are scripted.
type streamingLW struct {
	*scriptedLW
	afterItem func(i int)
	// eachCalls counts the calls of ListEach.
	eachCalls int
}

func (lw *streamingLW) ListEach(ctx context.Context, opts metav1.ListOptions, each func(runtime.Object) error) (runtime.Object, error) {
	lw.eachCalls++
	obj, err := lw.List(ctx, opts)
	l, ok := obj.(*testList)
	if !ok {
		return obj, err
	}
	for i, o := range l.items {
		if err := each(o); err != nil {
			return nil, err
		}
		if lw.afterItem != nil {
			lw.afterItem(i)
		}
	}
	if err != nil {
		return nil, err
	}
	return mkList(l.ResourceVersion, l.Continue), nil
}
