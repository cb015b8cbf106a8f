package events_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kubectl-deltas/kubectl-deltas/internal/cache"
	"github.com/kubectl-deltas/kubectl-deltas/internal/cache/cachetest"
	"github.com/kubectl-deltas/kubectl-deltas/internal/events"
	"github.com/kubectl-deltas/kubectl-deltas/internal/informer"
	"github.com/kubectl-deltas/kubectl-deltas/internal/rawobj"
)

// These tests run a Join in a real informer.Engine on fake ListerWatchers
// (a scripted list, watches fed by the test) and a fake clock. Nothing
// sleeps: the test waits on what reaches the Sink, or spins on Parked.

func pod(t *testing.T, name, rv string) *rawobj.Object {
	return cachetest.MustParse(t, fmt.Sprintf(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":%q,"namespace":"ns","resourceVersion":%q,"uid":"uid-%s"}}`, name, rv, name))
}

// event is an events.k8s.io/v1 Event about the Pod subject.
func event(t *testing.T, name, rv, subject string, count int) *rawobj.Object {
	return cachetest.MustParse(t, fmt.Sprintf(`{"apiVersion":"events.k8s.io/v1","kind":"Event","metadata":{"name":%q,"namespace":"ns","resourceVersion":%q,"uid":"uid-%s"},`+
		`"regarding":{"apiVersion":"v1","kind":"Pod","namespace":"ns","name":%q,"uid":"uid-%s"},"type":"Warning","reason":"BackOff","note":"n","series":{"count":%d}}`,
		name, rv, name, subject, subject, count))
}

// seen is one item as it reached the Sink after the Join.
type seen struct {
	typ     cache.DeltaType
	initial bool
	kind    string
	name    string
}

type chanSink struct{ items chan seen }

func (s chanSink) Handle(b informer.Batch) (bool, error) {
	for _, it := range b.Items {
		s.items <- seen{typ: it.Type, initial: it.Initial, kind: it.Object.Kind, name: it.Object.Name}
	}
	return false, nil
}

func (chanSink) Flush() error { return nil }

func (s chanSink) next(t *testing.T) seen {
	t.Helper()
	select {
	case it := <-s.items:
		return it
	case <-time.After(cachetest.Timeout):
		t.Fatal("nothing reached the sink")
		return seen{}
	}
}

// expect reads the next items, in any order (two informers race), and
// compares them with want.
func (s chanSink) expect(t *testing.T, want ...seen) {
	t.Helper()
	got := map[seen]int{}
	for range want {
		got[s.next(t)]++
	}
	for _, w := range want {
		if got[w] == 0 {
			t.Fatalf("want %+v among what reached the sink, got %+v", w, got)
		}
		got[w]--
	}
}

func waitParked(t *testing.T, j *events.Join, n int) {
	t.Helper()
	deadline := time.Now().Add(cachetest.Timeout)
	for j.Parked() != n {
		if time.Now().After(deadline) {
			t.Fatalf("parked %d, want %d", j.Parked(), n)
		}
		runtime.Gosched()
	}
}

func TestJoin(t *testing.T) {
	clock := clocktesting.NewFakeClock(time.Unix(1000, 0))
	pods := cachetest.NewListerWatcher(cachetest.ListOf("10", pod(t, "p1", "1")))
	evs := cachetest.NewListerWatcher(cachetest.ListOf("10", event(t, "e1", "2", "p1", 1), event(t, "other", "3", "elsewhere", 1)))
	engine := informer.New(informer.Config{
		Clock: clock,
		NewListerWatcher: func(tg informer.Target) cache.ListerWatcher {
			if tg.Role == informer.RoleEvents {
				return evs
			}
			return pods
		},
	}, nil)
	podTarget := informer.Target{
		Resource: schema.GroupVersionResource{Version: "v1", Resource: "pods"},
		Kind:     schema.GroupVersionKind{Version: "v1", Kind: "Pod"}, Namespace: "ns",
	}
	if _, err := engine.Add(podTarget); err != nil {
		t.Fatal(err)
	}
	j := events.NewJoin(engine, clock.Now)
	eventTarget := informer.Target{
		Resource: schema.GroupVersionResource{Group: "events.k8s.io", Version: "v1", Resource: "events"},
		Kind:     schema.GroupVersionKind{Group: "events.k8s.io", Version: "v1", Kind: "Event"}, Namespace: "ns",
	}
	if err := j.Watch(eventTarget); err != nil {
		t.Fatal(err)
	}
	sink := chanSink{items: make(chan seen, 64)}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- engine.Run(ctx, j.Sink(sink), informer.RunOptions{}) }()
	defer func() {
		cancel()
		if err := <-ran; !errors.Is(err, informer.ErrInterrupted) {
			t.Errorf("Run: %v", err)
		}
	}()

	// The initial state: the Pod and its Event, whichever informer comes
	// first; not the Event of an object not watched.
	sink.expect(t, seen{cache.Replaced, true, "Pod", "p1"}, seen{cache.Replaced, true, "Event", "e1"})
	podWatch, eventWatch := pods.NextWatch(t), evs.NextWatch(t)
	waitParked(t, j, 1) // "other"

	// An Event that comes before its subject waits for it, then follows
	// it as news.
	eventWatch.Add(event(t, "e2", "11", "p2", 1))
	waitParked(t, j, 2)
	podWatch.Add(pod(t, "p2", "12"))
	sink.expect(t, seen{cache.Added, false, "Pod", "p2"})
	sink.expect(t, seen{cache.Added, false, "Event", "e2"})
	waitParked(t, j, 1)

	// A repetition is an Updated; an Event's expiry is not shown.
	eventWatch.Modify(event(t, "e2", "13", "p2", 2))
	sink.expect(t, seen{cache.Updated, false, "Event", "e2"})
	eventWatch.Delete(event(t, "e1", "14", "p1", 1))
	eventWatch.Add(event(t, "e3", "15", "p1", 1))
	sink.expect(t, seen{cache.Added, false, "Event", "e3"})

	// An Event whose subject does not come within ParkFor is forgotten:
	// not held, and not shown when an object of its subject's name
	// comes much later.
	eventWatch.Add(event(t, "e4", "16", "p3", 1))
	waitParked(t, j, 2)
	clock.Step(events.ParkFor + time.Second)
	podWatch.Modify(pod(t, "p1", "17"))
	sink.expect(t, seen{cache.Updated, false, "Pod", "p1"})
	waitParked(t, j, 0)
	podWatch.Add(pod(t, "p3", "18"))
	sink.expect(t, seen{cache.Added, false, "Pod", "p3"})
	eventWatch.Add(event(t, "e5", "19", "p3", 1))
	sink.expect(t, seen{cache.Added, false, "Event", "e5"})

	// The Events Store holds the Events shown, not those of other objects.
	var keys []string
	for _, inf := range engine.Informers() {
		if inf.Target().Role == informer.RoleEvents {
			keys = inf.Store().ListKeys()
		}
	}
	if len(keys) != 3 {
		t.Errorf("Events Store holds %v, want ns/e2, ns/e3, ns/e5", keys)
	}
}
