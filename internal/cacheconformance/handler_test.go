package cacheconformance

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	clientgocache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"

	"github.com/kubectl-deltas/kubectl-deltas/internal/cache"
	"github.com/kubectl-deltas/kubectl-deltas/internal/informer"
	"github.com/kubectl-deltas/kubectl-deltas/internal/printer"
	"github.com/kubectl-deltas/kubectl-deltas/internal/rawobj"
	"github.com/kubectl-deltas/kubectl-deltas/internal/stage"
)

// The handler-call differential test runs kubectl deltas' informer
// (internal/informer, its records made by the record Stage of --handler)
// and a client-go reference against one scripted cluster, and requires the
// same handler calls in the same order: type, key, resourceVersion, the
// old one for OnUpdate, isInInitialList for OnAdd, the tombstone for
// OnDelete. The reference of --fifo=real is client-go v0.36's own
// SharedIndexInformer (whose queue is the atomic RealFIFO: InOrderInformers
// is locked on, AtomicFIFO on by default); that of --fifo=delta client-go's
// DeltaFIFO under its own Reflector and controller (deltaFIFOController).
//
// What client-go leaves to map order is compared as a set: the tombstones
// of one relist (client-go walks its store's keys) and the objects of one
// resync (its store's List). Both are runs of calls of one kind that
// nothing else interleaves.

// cluster is the scripted server: its objects, a resourceVersion counter,
// and for each side the watch it has open.
type cluster struct {
	mu sync.Mutex
	// objs are name → resourceVersion.
	objs map[string]int
	rv   int
}

func newCluster() *cluster { return &cluster{objs: map[string]int{}} }

// state returns the objects sorted by name, and the resourceVersion.
func (c *cluster) state() (names []string, rvs []int, rv int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for n := range c.objs {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		rvs = append(rvs, c.objs[n])
	}
	return names, rvs, c.rv
}

// fakeLW is one side's ListerWatcher of the cluster: lists its state and
// hands every watch it opens to the test. It implements both this
// project's cache.ListerWatcher and client-go's.
type fakeLW struct {
	c       *cluster
	rawobjs bool
	watches chan *watch.FakeWatcher
	lists   chan struct{}
}

func newFakeLW(c *cluster, rawobjs bool) *fakeLW {
	return &fakeLW{c: c, rawobjs: rawobjs, watches: make(chan *watch.FakeWatcher, 16), lists: make(chan struct{}, 16)}
}

func (f *fakeLW) object(name string, rv int) runtime.Object {
	if f.rawobjs {
		js := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q,"namespace":"ns","resourceVersion":"%d","uid":"uid-%s"}}`, name, rv, name)
		o, err := rawobj.Parse([]byte(js), rawobj.ParseOptions{})
		if err != nil {
			panic(err) // the test's own JSON
		}
		return o
	}
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", ResourceVersion: strconv.Itoa(rv), UID: types.UID("uid-" + name)}}
}

func (f *fakeLW) list() (runtime.Object, error) {
	names, rvs, rv := f.c.state()
	f.lists <- struct{}{}
	if f.rawobjs {
		l := &rawobj.List{ResourceVersion: strconv.Itoa(rv)}
		for i, n := range names {
			l.Items = append(l.Items, f.object(n, rvs[i]).(*rawobj.Object))
		}
		return l, nil
	}
	l := &corev1.ConfigMapList{ListMeta: metav1.ListMeta{ResourceVersion: strconv.Itoa(rv)}}
	for i, n := range names {
		l.Items = append(l.Items, *f.object(n, rvs[i]).(*corev1.ConfigMap))
	}
	return l, nil
}

func (f *fakeLW) watch() (watch.Interface, error) {
	w := watch.NewFake()
	f.watches <- w
	return w, nil
}

// List and Watch are this project's cache.ListerWatcher.
func (f *fakeLW) List(context.Context, metav1.ListOptions) (runtime.Object, error) { return f.list() }
func (f *fakeLW) Watch(context.Context, metav1.ListOptions) (watch.Interface, error) {
	return f.watch()
}

// theirLW is client-go's ListerWatcher of a fakeLW.
type theirLW struct{ f *fakeLW }

func (t theirLW) List(metav1.ListOptions) (runtime.Object, error)   { return t.f.list() }
func (t theirLW) Watch(metav1.ListOptions) (watch.Interface, error) { return t.f.watch() }

// IsWatchListSemanticsUnSupported: the fake lists, as a server without
// streaming lists would be served.
func (theirLW) IsWatchListSemanticsUnSupported() bool { return true }

// calls is a side's log of handler calls, as lines; wait blocks until it
// holds n.
type calls struct {
	mu    sync.Mutex
	cond  *sync.Cond
	lines []string
}

func newCalls() *calls {
	c := &calls{}
	c.cond = sync.NewCond(&c.mu)
	return c
}

func (c *calls) add(line string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lines = append(c.lines, line)
	c.cond.Broadcast()
}

// wait blocks until the log holds n calls, or fails the test after a
// timeout.
func (c *calls) wait(t *testing.T, side string, n int) {
	t.Helper()
	timer := time.AfterFunc(30*time.Second, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.cond.Broadcast()
	})
	defer timer.Stop()
	deadline := time.Now().Add(30 * time.Second)
	c.mu.Lock()
	defer c.mu.Unlock()
	for len(c.lines) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d handler calls within 30s, want %d:\n%s", side, len(c.lines), n, strings.Join(c.lines, "\n"))
		}
		c.cond.Wait()
	}
}

func (c *calls) snapshot() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.lines)
}

// callLine renders one handler call the way both sides are compared.
func callLine(typ, key, rv, oldRV string, initial, tombstone bool) string {
	switch typ {
	case printer.OnAdd:
		return fmt.Sprintf("OnAdd %s@%s initial=%t", key, rv, initial)
	case printer.OnUpdate:
		return fmt.Sprintf("OnUpdate %s %s→%s", key, oldRV, rv)
	}
	return fmt.Sprintf("OnDelete %s@%s tombstone=%t", key, rv, tombstone)
}

// theirHandler records client-go's handler calls.
func theirHandler(log *calls) clientgocache.ResourceEventHandler {
	meta := func(obj any) (string, string) {
		m, err := meta.Accessor(obj)
		if err != nil {
			return "?", "?"
		}
		return m.GetNamespace() + "/" + m.GetName(), m.GetResourceVersion()
	}
	return clientgocache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, isInInitialList bool) {
			key, rv := meta(obj)
			log.add(callLine(printer.OnAdd, key, rv, "", isInInitialList, false))
		},
		UpdateFunc: func(old, obj any) {
			key, rv := meta(obj)
			_, oldRV := meta(old)
			log.add(callLine(printer.OnUpdate, key, rv, oldRV, false, false))
		},
		DeleteFunc: func(obj any) {
			if d, ok := obj.(clientgocache.DeletedFinalStateUnknown); ok {
				rv := ""
				if d.Obj != nil {
					_, rv = meta(d.Obj)
				}
				log.add(callLine(printer.OnDelete, d.Key, rv, "", false, true))
				return
			}
			key, rv := meta(obj)
			log.add(callLine(printer.OnDelete, key, rv, "", false, false))
		},
	}
}

// ourSink turns our informer's batches into handler calls through the
// record Stage of --handler, as the printed records say them.
type ourSink struct {
	stage *stage.Stage
	log   *calls
}

func (s *ourSink) Handle(b informer.Batch) (bool, error) {
	for i := range b.Items {
		var rec printer.Record
		keep, err := s.stage.Fill(&rec, b.Informer.Target(), &b.Items[i], time.Now())
		if err != nil {
			return false, err
		}
		if !keep {
			return false, fmt.Errorf("the --handler stage dropped a %s of %s", b.Items[i].Delta.Type, b.Items[i].Key)
		}
		oldRV := rec.Call.OldResourceVersion
		s.log.add(callLine(rec.Type, rec.Namespace+"/"+rec.Name, rec.ResourceVersion, oldRV, rec.Call.IsInInitialList, rec.FinalStateUnknown))
	}
	return false, nil
}

func (s *ourSink) Flush() error { return nil }

// noBackoff retries at once: the test waits for each relist itself.
type noBackoff struct{ c clock.Clock }

func (b noBackoff) Backoff() clock.Timer { return b.c.NewTimer(0) }

// sides runs both informers against one cluster.
type sides struct {
	t          *testing.T
	c          *cluster
	ours, thei *fakeLW
	ourCalls   *calls
	theirCalls *calls
	// ourWatch, theirWatch are the watches each side has open.
	ourWatch, theirWatch *watch.FakeWatcher
	// want is how many calls each side has made by now.
	want int
	// stepwise: each event is handled by both sides before the next is
	// sent. A DeltaFIFO hands out together the deltas of a key that
	// came while it was queued, so the order of calls across keys
	// depends on when each side pops; one event at a time, it does not.
	stepwise bool
}

// deltaFIFOController is the reference of --fifo=delta: client-go's own
// Reflector and controller over client-go's DeltaFIFO (as its informers
// queued up to v0.32), each popped Deltas turned into handler calls by
// the rules of client-go's processDeltas (which it does not export).
func deltaFIFOController(lw clientgocache.ListerWatcher, resync time.Duration, h clientgocache.ResourceEventHandler) clientgocache.Controller {
	store := clientgocache.NewStore(clientgocache.DeletionHandlingMetaNamespaceKeyFunc)
	fifo := clientgocache.NewDeltaFIFOWithOptions(clientgocache.DeltaFIFOOptions{KnownObjects: store, EmitDeltaTypeReplaced: true})
	return clientgocache.New(&clientgocache.Config{
		Queue:            fifo,
		ListerWatcher:    lw,
		ObjectType:       &corev1.ConfigMap{},
		FullResyncPeriod: resync,
		Process: func(obj any, isInInitialList bool) error {
			for _, d := range obj.(clientgocache.Deltas) {
				switch d.Type {
				case clientgocache.Sync, clientgocache.Replaced, clientgocache.Added, clientgocache.Updated:
					if old, exists, err := store.Get(d.Object); err == nil && exists {
						if err := store.Update(d.Object); err != nil {
							return err
						}
						h.OnUpdate(old, d.Object)
					} else {
						if err := store.Add(d.Object); err != nil {
							return err
						}
						h.OnAdd(d.Object, isInInitialList)
					}
				case clientgocache.Deleted:
					if err := store.Delete(d.Object); err != nil {
						return err
					}
					h.OnDelete(d.Object)
				}
			}
			return nil
		},
	})
}

func startSides(t *testing.T, fifo informer.FIFO, initial []string, resync time.Duration) *sides {
	t.Helper()
	s := &sides{t: t, c: newCluster(), ourCalls: newCalls(), theirCalls: newCalls(), stepwise: fifo == informer.FIFODelta}
	for _, n := range initial {
		s.c.rv++
		s.c.objs[n] = s.c.rv
	}
	s.ours, s.thei = newFakeLW(s.c, true), newFakeLW(s.c, false)

	st, err := stage.NewStage(stage.Options{Handler: true})
	if err != nil {
		t.Fatal(err)
	}
	target := informer.Target{
		Resource:  schema.GroupVersionResource{Version: "v1", Resource: "configmaps"},
		Kind:      schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"},
		Namespace: "ns",
	}
	engine := informer.New(informer.Config{
		NewListerWatcher: func(informer.Target) cache.ListerWatcher { return s.ours },
		FIFO:             fifo,
		ResyncPeriod:     resync,
		NewBackoff:       func() cache.BackoffManager { return noBackoff{clock.RealClock{}} },
	}, io.Discard)
	if _, err := engine.Add(target); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- engine.Run(ctx, &ourSink{stage: st, log: s.ourCalls}, informer.RunOptions{}) }()

	// The informer's resync period is its resync check period: a handler's
	// own longer one is never checked without it.
	var theirs interface{ Run(<-chan struct{}) }
	if fifo == informer.FIFOReal {
		informer := clientgocache.NewSharedIndexInformer(theirLW{s.thei}, &corev1.ConfigMap{}, resync, clientgocache.Indexers{})
		if _, err := informer.AddEventHandlerWithResyncPeriod(theirHandler(s.theirCalls), resync); err != nil {
			t.Fatal(err)
		}
		theirs = informer
	} else {
		theirs = deltaFIFOController(theirLW{s.thei}, resync, theirHandler(s.theirCalls))
	}
	stop := make(chan struct{})
	theirDone := make(chan struct{})
	go func() {
		defer close(theirDone)
		theirs.Run(stop)
	}()
	t.Cleanup(func() {
		cancel()
		close(stop)
		if err := <-done; err != nil && !errors.Is(err, informer.ErrInterrupted) {
			t.Errorf("our informer ended with %v", err)
		}
		<-theirDone
	})
	s.ourWatch, s.theirWatch = s.nextWatches()
	s.want = len(initial)
	s.settle()
	return s
}

// nextWatches waits for each side to open its next watch.
func (s *sides) nextWatches() (ours, theirs *watch.FakeWatcher) {
	s.t.Helper()
	for _, w := range []struct {
		lw  *fakeLW
		out **watch.FakeWatcher
	}{{s.ours, &ours}, {s.thei, &theirs}} {
		select {
		case *w.out = <-w.lw.watches:
		case <-time.After(30 * time.Second):
			s.t.Fatal("a side opened no watch within 30s")
		}
	}
	return ours, theirs
}

// settle waits until both sides have made s.want calls.
func (s *sides) settle() {
	s.t.Helper()
	s.ourCalls.wait(s.t, "kubectl deltas", s.want)
	s.theirCalls.wait(s.t, "client-go", s.want)
}

// event applies one change to the cluster and sends it to both watches.
func (s *sides) event(typ watch.EventType, name string) {
	s.c.mu.Lock()
	s.c.rv++
	rv := s.c.rv
	switch typ {
	case watch.Deleted:
		delete(s.c.objs, name)
	default:
		s.c.objs[name] = rv
	}
	s.c.mu.Unlock()
	s.ourWatch.Action(typ, s.ours.object(name, rv))
	s.theirWatch.Action(typ, s.thei.object(name, rv))
	s.want++
	if s.stepwise {
		s.settle()
	}
}

// silently changes the cluster without an event: what happens while the
// watches are down, which only a relist finds.
func (s *sides) silently(name string, del bool) {
	s.c.mu.Lock()
	defer s.c.mu.Unlock()
	s.c.rv++
	if del {
		delete(s.c.objs, name)
		return
	}
	s.c.objs[name] = s.c.rv
}

// gone ends both watches with 410 Gone: both relist the cluster as it is,
// and watch again. known are the names each side knows before; every
// listed object is a call, and every known one not listed a tombstone.
func (s *sides) gone(known []string) {
	s.t.Helper()
	status := apierrors.NewResourceExpired("too old resource version").ErrStatus
	status.Code = http.StatusGone
	s.ourWatch.Error(&status)
	s.theirWatch.Error(&status)
	s.ourWatch, s.theirWatch = s.nextWatches()
	names, _, _ := s.c.state()
	s.want += len(names)
	for _, k := range known {
		if !slices.Contains(names, k) {
			s.want++
		}
	}
	if s.stepwise {
		s.settle()
	}
}

// compare requires the same first s.want calls of both sides.
func (s *sides) compare() {
	s.t.Helper()
	s.settle()
	ours, theirs := normalize(s.ourCalls.snapshot()[:s.want]), normalize(s.theirCalls.snapshot()[:s.want])
	if !slices.Equal(ours, theirs) {
		s.t.Fatalf("handler calls differ\nkubectl deltas:\n  %s\nclient-go:\n  %s", strings.Join(ours, "\n  "), strings.Join(theirs, "\n  "))
	}
}

// normalize sorts each run of tombstone OnDeletes and each run of resync
// OnUpdates (old and new resourceVersion equal): client-go makes them in
// its store's map order.
func normalize(lines []string) []string {
	out := slices.Clone(lines)
	group := func(l string) string {
		switch {
		case strings.HasPrefix(l, "OnDelete ") && strings.HasSuffix(l, "tombstone=true"):
			return "tombstone"
		case strings.HasPrefix(l, "OnUpdate "):
			f := strings.Fields(l)
			if rvs := strings.Split(f[2], "→"); rvs[0] == rvs[1] {
				return "same"
			}
		}
		return ""
	}
	for i := 0; i < len(out); {
		g := group(out[i])
		j := i + 1
		for j < len(out) && g != "" && group(out[j]) == g {
			j++
		}
		slices.Sort(out[i:j])
		i = j
	}
	return out
}

// fifos are the two queues, each against its client-go reference.
var fifos = []informer.FIFO{informer.FIFOReal, informer.FIFODelta}

func TestHandlerCallsScripted(t *testing.T) {
	for _, fifo := range fifos {
		t.Run(string(fifo), func(t *testing.T) { scripted(t, fifo) })
	}
}

func scripted(t *testing.T, fifo informer.FIFO) {
	s := startSides(t, fifo, []string{"a", "b", "c"}, 0)
	s.event(watch.Added, "d")
	for range 5 {
		s.event(watch.Modified, "a") // rapid updates: each a call
	}
	s.event(watch.Modified, "b")
	s.event(watch.Deleted, "c")
	s.compare()

	// While the watches are down: b deleted, d changed, e created, a
	// unchanged. The relist tombstones b, and calls OnUpdate for a
	// (unchanged: the same resourceVersion) and d, OnAdd for e.
	s.silently("b", true)
	s.silently("d", false)
	s.silently("e", false)
	s.gone([]string{"a", "b", "d"})
	s.event(watch.Modified, "e")
	s.event(watch.Deleted, "a")
	s.compare()

	// A relist that finds everything gone.
	names, _, _ := s.c.state()
	for _, n := range names {
		s.silently(n, true)
	}
	s.gone(names)
	s.event(watch.Added, "z")
	s.compare()
	got := strings.Join(s.ourCalls.snapshot(), "\n")
	if !strings.Contains(got, "OnDelete ns/b@10 tombstone=true") || !strings.Contains(got, "OnAdd ns/a@1 initial=true") ||
		!strings.Contains(got, "OnUpdate ns/a 9→9") || !strings.Contains(got, "OnAdd ns/e@14 initial=false") {
		t.Fatalf("the script did not make the calls it is about:\n%s", got)
	}
}

func TestHandlerCallsResync(t *testing.T) {
	for _, fifo := range fifos {
		t.Run(string(fifo), func(t *testing.T) {
			s := startSides(t, fifo, []string{"a", "b"}, time.Second)
			s.event(watch.Modified, "a")
			s.settle()
			// The first resync: OnUpdate(obj, obj) for each stored object.
			s.want += 2
			s.compare()
			got := s.ourCalls.snapshot()
			if !slices.Contains(got, "OnUpdate ns/b 2→2") {
				t.Fatalf("no resync call:\n%s", strings.Join(got, "\n"))
			}
		})
	}
}

// TestHandlerCallsRandom plays seeded random scripts: adds, updates and
// deletes of a few names, and at most two relists each (client-go's
// reflector backs off 0.8 s, then 1.6 s, … before each relist, which the
// test waits for).
func TestHandlerCallsRandom(t *testing.T) {
	for i := range 8 {
		seed, fifo := uint64(i/2), fifos[i%2]
		t.Run(fmt.Sprintf("%s/%d", fifo, seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 43))
			s := startSides(t, fifo, []string{"a", "b"}, 0)
			pool := []string{"a", "b", "c", "d", "e"}
			relists := 0
			for range 80 {
				names, _, _ := s.c.state()
				name := pool[r.IntN(len(pool))]
				exists := slices.Contains(names, name)
				switch n := r.IntN(20); {
				case n == 0 && relists < 2:
					relists++
					// Changes only a relist finds, then 410 Gone.
					for range 1 + r.IntN(3) {
						victim := pool[r.IntN(len(pool))]
						_, gone := s.c.objs[victim]
						s.silently(victim, gone && r.IntN(2) == 0)
					}
					s.gone(names)
				case !exists:
					s.event(watch.Added, name)
				case n < 4:
					s.event(watch.Deleted, name)
				default:
					s.event(watch.Modified, name)
				}
			}
			s.compare()
		})
	}
}
