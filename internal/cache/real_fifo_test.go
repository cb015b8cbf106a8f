package cache

// The RealFIFO tests port client-go v0.36.6's own
// (tools/cache/the_real_fifo_test.go), case by case, to this package's
// RealFIFO and test objects. Where they differ from client-go's, the cause
// is one of these differences of our RealFIFO, which each test respects:
//
//  1. There is no Transformer option, so TestRealFIFO_transformer is not
//     ported: nothing here transforms objects on their way in.
//  2. Without atomic events, client-go's Replace and Resync walk
//     knownObjects in ListKeys order, a map's order for a real store;
//     ours walk the known keys sorted. The expectations below are
//     therefore deterministic even with several known keys, and listedKnown
//     lists keys unsorted to show the sorting.
//  3. NewRealFIFOWithOptions returns an error for contradictory options
//     (knownObjects with atomic events, none without, bookmarks without
//     atomic events) where client-go panics; client-go's tests that set
//     emitAtomicEvents on a queue built with knownObjects build an atomic
//     queue without knownObjects instead.
//  4. The Populated option is ours: a queue that starts synced, whose
//     later Replace is not an initial list (TestRealFIFOPopulated).
//
// client-go's tests that wait for "no further item" with a timer instead
// close the queue and drain it, which is deterministic; its PopBatch tests
// call PopBatch on the test goroutine, which runs the process functions
// synchronously, instead of on goroutines raced against timers.

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// newRealFIFO returns a RealFIFO of opts, failing the test when the options
// are refused.
func newRealFIFO(t *testing.T, opts RealFIFOOptions) *RealFIFO {
	t.Helper()
	f, err := NewRealFIFOWithOptions(opts)
	if err != nil {
		t.Fatalf("NewRealFIFOWithOptions: %v", err)
	}
	return f
}

// describeRealDelta renders one delta of a RealFIFO: "Added foo@1",
// "Deleted DFSU{foo, foo@1}", "ReplacedAll 5 [foo@1, bar@2]", "SyncAll",
// "Bookmark 7".
func describeRealDelta(d Delta) string {
	switch info := d.Object.(type) {
	case ReplacedAllInfo:
		objs := make([]string, len(info.Objects))
		for i, o := range info.Objects {
			objs[i] = describe(o)
		}
		return fmt.Sprintf("%s %s [%s]", d.Type, info.ResourceVersion, strings.Join(objs, ", "))
	case SyncAllInfo:
		return string(d.Type)
	case BookmarkInfo:
		return fmt.Sprintf("%s %s", d.Type, info.ResourceVersion)
	}
	s := string(d.Type) + " " + describe(d.Object)
	if d.Coalesced > 0 {
		s += fmt.Sprintf(" (+%d)", d.Coalesced)
	}
	return s
}

// realItems renders the queued deltas of f, oldest first, without popping
// them.
func realItems(f *RealFIFO) []string {
	var out []string
	f.WithLock(func() {
		for _, d := range f.items {
			out = append(out, describeRealDelta(d))
		}
	})
	return out
}

// popReal pops one delta of f and reports whether it was popped as part of
// the initial list. A RealFIFO pops one delta at a time.
func popReal(t *testing.T, f *RealFIFO) (Delta, bool) {
	t.Helper()
	var processed Deltas
	var initial bool
	d, err := f.Pop(func(d Deltas, isInInitialList bool) error {
		processed, initial = d, isInInitialList
		return nil
	})
	if err != nil {
		t.Fatalf("Pop: %v", err)
	}
	if len(d) != 1 {
		t.Fatalf("Pop returned %d deltas, want 1: %s", len(d), describeDeltas(d))
	}
	if !reflect.DeepEqual(processed, d) {
		t.Fatalf("Pop processed %s but returned %s", describeDeltas(processed), describeDeltas(d))
	}
	return d[0], initial
}

// popAllReal pops f until it is empty, rendering each delta.
func popAllReal(t *testing.T, f *RealFIFO) []string {
	t.Helper()
	var out []string
	for f.Len() > 0 {
		d, _ := popReal(t, f)
		out = append(out, describeRealDelta(d))
	}
	return out
}

// drainConcurrently closes f and pops it on another goroutine until Pop
// reports ErrFIFOClosed; a closed queue still hands out what it holds. It
// returns the popped deltas, rendered.
func drainConcurrently(t *testing.T, f *RealFIFO) []string {
	t.Helper()
	result := make(chan []string, 1)
	go func() {
		var got []string
		defer func() { result <- got }()
		for {
			d, err := f.Pop(func(Deltas, bool) error { return nil })
			if errors.Is(err, ErrFIFOClosed) {
				return
			}
			if err != nil {
				t.Errorf("Pop: %v", err)
				return
			}
			for _, delta := range d {
				got = append(got, describeRealDelta(delta))
			}
		}
	}()
	f.Close()
	select {
	case got := <-result:
		return got
	case <-time.After(30 * time.Second):
		t.Fatal("Pop did not report ErrFIFOClosed after the queue was closed and drained")
		return nil
	}
}

// listedKnown is a KeyListerGetter that lists keys in the order given, not
// necessarily sorted, and finds only the objects of objs; GetByKey of a key
// in fail returns an error.
type listedKnown struct {
	keys []string
	objs literalKnown
	fail map[string]bool
}

func (k listedKnown) ListKeys() []string { return slices.Clone(k.keys) }

func (k listedKnown) GetByKey(key string) (any, bool, error) {
	if k.fail[key] {
		return nil, false, errors.New("lookup failed")
	}
	obj, ok := k.objs[key]
	return obj, ok, nil
}

// realFIFOCase drives a RealFIFO of opts through ops and compares every
// pop.
type realFIFOCase struct {
	name string
	opts func() RealFIFOOptions
	ops  func(t *testing.T, f *RealFIFO)
	want []string
}

// withKnown returns the options of a non-atomic RealFIFO over known.
func withKnown(known KeyListerGetter) func() RealFIFOOptions {
	return func() RealFIFOOptions { return RealFIFOOptions{KnownObjects: known} }
}

func runRealFIFOCases(t *testing.T, cases []realFIFOCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newRealFIFO(t, tc.opts())
			tc.ops(t, f)
			got := popAllReal(t, f)
			if !slices.Equal(got, tc.want) {
				t.Errorf("pops:\n got  %q\n want %q", got, tc.want)
			}
			if n := f.Len(); n != 0 {
				t.Errorf("queue holds %d deltas after popping everything: %q", n, realItems(f))
			}
		})
	}
}

// ★ TestRealFIFO_basic: two producers, one consumer; each producer's
// objects come out in the order it added them, none lost.
func TestRealFIFOBasic(t *testing.T) {
	f := newRealFIFO(t, RealFIFOOptions{KnownObjects: literalKnown{}})
	const amount = 500
	var wg sync.WaitGroup
	defer wg.Wait()
	for _, producer := range []string{"a", "b"} {
		wg.Go(func() {
			for i := 1; i <= amount; i++ {
				if err := f.Add(mkNsObj(producer, fmt.Sprintf("o%d", i), i)); err != nil {
					t.Errorf("Add: %v", err)
				}
			}
		})
	}
	last := map[string]int{}
	for n := 0; n < 2*amount; n++ {
		d, _ := popReal(t, f)
		o, ok := d.Object.(*testObj)
		if !ok || d.Type != Added {
			t.Fatalf("pop %d: %s, want an Added object", n, describeRealDelta(d))
		}
		if want := last[o.Namespace] + 1; o.val != want {
			t.Fatalf("producer %s: popped %d, want %d", o.Namespace, o.val, want)
		}
		last[o.Namespace] = o.val
	}
	if last["a"] != amount || last["b"] != amount {
		t.Errorf("last popped per producer %v, want %d each", last, amount)
	}
}

// ★ TestRealFIFO_replaceWithDeleteDeltaIn: a relisted object is queued
// (Replaced) even when the queue's newest delta for its key is a deletion,
// or an informer would miss the new object's creation (kubernetes#83810).
func TestRealFIFOReplaceWithDeleteDeltaIn(t *testing.T) {
	oldObj, newObj := mkObj("foo", 1), mkObj("foo", 2)
	f := newRealFIFO(t, RealFIFOOptions{KnownObjects: knownOf(oldObj)})
	must(t, f.Delete(oldObj))
	must(t, f.Replace([]any{newObj}, ""))
	want := []string{"Deleted foo@1", "Replaced foo@2"}
	if got := realItems(f); !slices.Equal(got, want) {
		t.Errorf("queued %q, want %q", got, want)
	}
}

// ★ TestRealFIFOW_ReplaceMakesDeletionsForObjectsOnlyInQueue, with an empty
// knownObjects: a key only queued gets one tombstone when a relist lacks
// it, and none when its newest delta is already a deletion. client-go's
// commented-out emitDeltaTypeReplaced case has no counterpart (a RealFIFO
// always emits Replaced).
func TestRealFIFOReplaceMakesDeletionsForObjectsOnlyInQueue(t *testing.T) {
	obj, objV2 := mkObj("foo", 2), mkObj("foo", 3)
	empty := withKnown(literalKnown{})
	runRealFIFOCases(t, []realFIFOCase{
		{
			name: "added object is deleted on replace",
			opts: empty,
			ops: func(t *testing.T, f *RealFIFO) {
				must(t, f.Add(obj))
				must(t, f.Replace([]any{}, "0"))
			},
			want: []string{"Added foo@2", "Deleted DFSU{foo, foo@2}"},
		},
		{
			name: "deleted object has only its own delete",
			opts: empty,
			ops: func(t *testing.T, f *RealFIFO) {
				must(t, f.Add(obj))
				must(t, f.Delete(obj))
				must(t, f.Replace([]any{}, "0"))
			},
			want: []string{"Added foo@2", "Deleted foo@2"},
		},
		{
			name: "synced object has a single delete",
			opts: empty,
			ops: func(t *testing.T, f *RealFIFO) {
				must(t, f.Add(obj))
				must(t, f.Replace([]any{obj}, "0"))
				must(t, f.Replace([]any{obj}, "0"))
				must(t, f.Replace([]any{}, "0"))
			},
			want: []string{"Added foo@2", "Replaced foo@2", "Replaced foo@2", "Deleted DFSU{foo, foo@2}"},
		},
		{
			name: "added object has a single delete on multiple replaces",
			opts: empty,
			ops: func(t *testing.T, f *RealFIFO) {
				must(t, f.Add(obj))
				must(t, f.Replace([]any{}, "0"))
				must(t, f.Replace([]any{}, "1"))
			},
			want: []string{"Added foo@2", "Deleted DFSU{foo, foo@2}"},
		},
		{
			name: "added deleted and added object is deleted with its newest state",
			opts: empty,
			ops: func(t *testing.T, f *RealFIFO) {
				must(t, f.Add(obj))
				must(t, f.Delete(obj))
				must(t, f.Add(objV2))
				must(t, f.Replace([]any{}, "0"))
			},
			want: []string{"Added foo@2", "Deleted foo@2", "Added foo@3", "Deleted DFSU{foo, foo@3}"},
		},
		{
			name: "bookmark is not queued without atomic events",
			opts: empty,
			ops: func(t *testing.T, f *RealFIFO) {
				must(t, f.Bookmark("123"))
				must(t, f.Replace([]any{}, "0"))
				must(t, f.Replace([]any{}, "1"))
			},
			want: nil,
		},
	})
}

// ★ TestRealFIFO_addUpdate: every delta of a key is queued and popped, not
// only the newest.
func TestRealFIFOAddUpdate(t *testing.T) {
	f := newRealFIFO(t, RealFIFOOptions{KnownObjects: literalKnown{}})
	must(t, f.Add(mkObj("foo", 10)))
	must(t, f.Update(mkObj("foo", 12)))
	must(t, f.Delete(mkObj("foo", 15)))
	want := []string{"Added foo@10", "Updated foo@12", "Deleted foo@15"}
	if got := realItems(f); !slices.Equal(got, want) {
		t.Errorf("queued %q, want %q", got, want)
	}
	if got := drainConcurrently(t, f); !slices.Equal(got, want) {
		t.Errorf("popped %q, want %q", got, want)
	}
	if n := f.Len(); n != 0 {
		t.Errorf("queue holds %d deltas after draining", n)
	}
}

// ★ TestRealFIFO_enqueueingNoLister, TestRealFIFO_enqueueingWithLister,
// TestRealFIFO_DeleteExistingNonPropagated: every Add, Update and Delete is
// queued, a deletion whether or not its key is known or queued. client-go's
// "no lister" test uses an empty lister, as a RealFIFO without atomic
// events needs one; the queue without any lister is the atomic one.
func TestRealFIFOEnqueueing(t *testing.T) {
	noListerOps := func(t *testing.T, f *RealFIFO) {
		must(t, f.Add(mkObj("foo", 10)))
		must(t, f.Update(mkObj("bar", 15)))
		must(t, f.Add(mkObj("qux", 17)))
		must(t, f.Delete(mkObj("qux", 18)))
		must(t, f.Delete(mkObj("baz", 20))) // neither known nor queued
	}
	noListerWant := []string{"Added foo@10", "Updated bar@15", "Added qux@17", "Deleted qux@18", "Deleted baz@20"}
	runRealFIFOCases(t, []realFIFOCase{
		{
			name: "empty lister queues everything",
			opts: withKnown(literalKnown{}),
			ops:  noListerOps,
			want: noListerWant,
		},
		{
			name: "atomic queue without lister queues everything",
			opts: func() RealFIFOOptions { return RealFIFOOptions{AtomicEvents: true} },
			ops:  noListerOps,
			want: noListerWant,
		},
		{
			name: "lister queues the delete of a known key",
			opts: withKnown(knownOf(mkObj("foo", 5), mkObj("bar", 6), mkObj("baz", 7))),
			ops: func(t *testing.T, f *RealFIFO) {
				must(t, f.Add(mkObj("foo", 10)))
				must(t, f.Update(mkObj("bar", 15)))
				must(t, f.Delete(mkObj("baz", 20)))
			},
			want: []string{"Added foo@10", "Updated bar@15", "Deleted baz@20"},
		},
		{
			name: "delete of an existing object not yet propagated",
			opts: withKnown(literalKnown{}),
			ops: func(t *testing.T, f *RealFIFO) {
				must(t, f.Add(mkObj("foo", 5)))
				must(t, f.Delete(mkObj("foo", 6)))
			},
			want: []string{"Added foo@5", "Deleted foo@6"},
		},
	})
}

// Where client-go's NewRealFIFOWithOptions panics (difference 3), ours
// returns an error and no queue.
func TestRealFIFOContradictoryOptions(t *testing.T) {
	cases := []struct {
		name string
		opts RealFIFOOptions
		want error
	}{
		{"no knownObjects without atomic events", RealFIFOOptions{}, errNoKnownObjects},
		{"knownObjects with atomic events", RealFIFOOptions{AtomicEvents: true, KnownObjects: literalKnown{}}, errKnownObjectsWithAtomic},
		{"bookmarks without atomic events", RealFIFOOptions{KnownObjects: literalKnown{}, EmitDeltaTypeBookmark: true}, errBookmarkWithoutAtomic},
		{"fine without atomic events", RealFIFOOptions{KnownObjects: literalKnown{}}, nil},
		{"fine with atomic events", RealFIFOOptions{AtomicEvents: true}, nil},
		{"fine with atomic events and bookmarks", RealFIFOOptions{AtomicEvents: true, EmitDeltaTypeBookmark: true}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, err := NewRealFIFOWithOptions(tc.opts)
			if !errors.Is(err, tc.want) {
				t.Fatalf("error %v, want %v", err, tc.want)
			}
			if (f == nil) != (tc.want != nil) {
				t.Errorf("queue %v with error %v", f, err)
			}
		})
	}
}

// ★ TestRealFIFO_addReplace: an Add then a Replace of the same key pop as
// two deltas.
func TestRealFIFOAddReplace(t *testing.T) {
	f := newRealFIFO(t, RealFIFOOptions{KnownObjects: literalKnown{}})
	must(t, f.Add(mkObj("foo", 10)))
	must(t, f.Replace([]any{mkObj("foo", 15)}, "0"))
	want := []string{"Added foo@10", "Replaced foo@15"}
	if got := drainConcurrently(t, f); !slices.Equal(got, want) {
		t.Errorf("popped %q, want %q", got, want)
	}
	if n := f.Len(); n != 0 {
		t.Errorf("queue holds %d deltas after draining", n)
	}
}

// ★ TestRealFIFO_Resync, TestRealFIFO_ResyncNonExisting,
// TestRealFIFO_UpdateResyncRace.
func TestRealFIFOResync(t *testing.T) {
	runRealFIFOCases(t, []realFIFOCase{
		{
			name: "resync queues a known object as Sync",
			opts: withKnown(knownOf(mkObj("foo", 5))),
			ops: func(t *testing.T, f *RealFIFO) {
				must(t, f.Resync())
			},
			want: []string{"Sync foo@5"},
		},
		{
			// ResyncNonExisting
			name: "resync skips a key whose delete is queued",
			opts: withKnown(knownOf(mkObj("foo", 5))),
			ops: func(t *testing.T, f *RealFIFO) {
				must(t, f.Delete(mkObj("foo", 10)))
				must(t, f.Resync())
			},
			want: []string{"Deleted foo@10"},
		},
		{
			// UpdateResyncRace: the queued update is newer than the known
			// object, which a Sync would hand out after it.
			name: "resync skips a key whose update is queued",
			opts: withKnown(knownOf(mkObj("foo", 5))),
			ops: func(t *testing.T, f *RealFIFO) {
				must(t, f.Update(mkObj("foo", 6)))
				must(t, f.Resync())
			},
			want: []string{"Updated foo@6"},
		},
		{
			// Difference 2: known keys are synced in sorted order.
			name: "resync walks known keys sorted",
			opts: withKnown(listedKnown{
				keys: []string{"c", "a", "b"},
				objs: knownOf(mkObj("a", 1), mkObj("b", 2), mkObj("c", 3)),
			}),
			ops: func(t *testing.T, f *RealFIFO) {
				must(t, f.Resync())
			},
			want: []string{"Sync a@1", "Sync b@2", "Sync c@3"},
		},
		{
			name: "resync skips keys known cannot find",
			opts: withKnown(listedKnown{
				keys: []string{"gone", "broken", "here"},
				objs: knownOf(mkObj("here", 1)),
				fail: map[string]bool{"broken": true},
			}),
			ops: func(t *testing.T, f *RealFIFO) {
				must(t, f.Resync())
			},
			want: []string{"Sync here@1"},
		},
	})
}

// ★ TestRealFIFO_ReplaceMakesDeletions, TestRealFIFO_ReplaceMakesDeletionsReplaced:
// a Replace first queues a tombstone for each queued key the relist lacks
// (unless its newest delta is a deletion), then for each known key the
// relist lacks and the queue does not hold, then the relisted objects.
func TestRealFIFOReplaceMakesDeletions(t *testing.T) {
	known := func() func() RealFIFOOptions {
		return withKnown(knownOf(mkObj("foo", 5), mkObj("bar", 6), mkObj("baz", 7)))
	}
	runRealFIFOCases(t, []realFIFOCase{
		{
			name: "pre-existing delete",
			opts: known(),
			ops: func(t *testing.T, f *RealFIFO) {
				must(t, f.Delete(mkObj("baz", 10)))
				must(t, f.Replace([]any{mkObj("foo", 5)}, "0"))
			},
			want: []string{"Deleted baz@10", "Deleted DFSU{bar, bar@6}", "Replaced foo@5"},
		},
		{
			name: "pre-existing add",
			opts: known(),
			ops: func(t *testing.T, f *RealFIFO) {
				must(t, f.Add(mkObj("baz", 10)))
				must(t, f.Replace([]any{mkObj("foo", 5)}, "0"))
			},
			want: []string{"Added baz@10", "Deleted DFSU{baz, baz@10}", "Deleted DFSU{bar, bar@6}", "Replaced foo@5"},
		},
		{
			// The tombstone carries the queue's newer object, not the
			// known one.
			name: "deleted and recreated in the queue",
			opts: known(),
			ops: func(t *testing.T, f *RealFIFO) {
				must(t, f.Delete(mkObj("bar", 6)))
				must(t, f.Add(mkObj("bar", 100)))
				must(t, f.Replace([]any{mkObj("foo", 5)}, "0"))
			},
			want: []string{"Deleted bar@6", "Added bar@100", "Deleted DFSU{bar, bar@100}", "Deleted DFSU{baz, baz@7}", "Replaced foo@5"},
		},
		{
			name: "synced first so the delete uses the latest version",
			opts: known(),
			ops: func(t *testing.T, f *RealFIFO) {
				must(t, f.Replace([]any{mkObj("bar", 100), mkObj("foo", 5)}, "0"))
				must(t, f.Replace([]any{mkObj("foo", 5)}, "0"))
			},
			want: []string{
				"Deleted DFSU{baz, baz@7}", "Replaced bar@100", "Replaced foo@5",
				"Deleted DFSU{bar, bar@100}", "Replaced foo@5",
			},
		},
		{
			name: "empty lister",
			opts: withKnown(literalKnown{}),
			ops: func(t *testing.T, f *RealFIFO) {
				must(t, f.Add(mkObj("baz", 10)))
				must(t, f.Replace([]any{mkObj("foo", 5)}, "0"))
			},
			want: []string{"Added baz@10", "Deleted DFSU{baz, baz@10}", "Replaced foo@5"},
		},
		{
			// ReplaceMakesDeletionsReplaced
			name: "relisted object is Replaced",
			opts: known(),
			ops: func(t *testing.T, f *RealFIFO) {
				must(t, f.Delete(mkObj("baz", 10)))
				must(t, f.Replace([]any{mkObj("foo", 6)}, "0"))
			},
			want: []string{"Deleted baz@10", "Deleted DFSU{bar, bar@6}", "Replaced foo@6"},
		},
		{
			// Difference 2: client-go tests one known deletion at a time,
			// its order being its store's map order; ours is sorted.
			name: "known deletions in sorted key order",
			opts: withKnown(listedKnown{
				keys: []string{"ns/c", "a", "ns/b", "b"},
				objs: knownOf(mkNsObj("ns", "c", 3), mkObj("a", 1), mkNsObj("ns", "b", 2), mkObj("b", 4)),
			}),
			ops: func(t *testing.T, f *RealFIFO) {
				must(t, f.Replace([]any{mkObj("b", 5)}, "0"))
			},
			want: []string{"Deleted DFSU{a, a@1}", "Deleted DFSU{ns/b, ns/b@2}", "Deleted DFSU{ns/c, ns/c@3}", "Replaced b@5"},
		},
		{
			name: "known key that cannot be found gets a tombstone without object",
			opts: withKnown(listedKnown{
				keys: []string{"gone", "broken"},
				fail: map[string]bool{"broken": true},
			}),
			ops: func(t *testing.T, f *RealFIFO) {
				must(t, f.Replace([]any{}, "0"))
			},
			want: []string{"Deleted DFSU{broken, nil}", "Deleted DFSU{gone, nil}"},
		},
	})
}

// ★ TestRealFIFO_HasSyncedCorrectOnDeletion: the tombstones of the first
// Replace are part of the initial list.
func TestRealFIFOHasSyncedCorrectOnDeletion(t *testing.T) {
	f := newRealFIFO(t, RealFIFOOptions{KnownObjects: knownOf(mkObj("foo", 5), mkObj("bar", 6), mkObj("baz", 7))})
	must(t, f.Replace([]any{mkObj("foo", 5)}, "0"))
	want := []string{"Deleted DFSU{bar, bar@6}", "Deleted DFSU{baz, baz@7}", "Replaced foo@5"}
	for i, w := range want {
		if f.HasSynced() {
			t.Fatalf("HasSynced true before pop %d", i+1)
		}
		d, initial := popReal(t, f)
		if got := describeRealDelta(d); got != w {
			t.Errorf("pop %d: %s, want %s", i+1, got, w)
		}
		if !initial {
			t.Errorf("pop %d: isInInitialList false, want true", i+1)
		}
	}
	if !f.HasSynced() {
		t.Error("HasSynced false after popping the initial list")
	}
	select {
	case <-f.Synced():
	default:
		t.Error("Synced channel not closed")
	}
}

// ★ TestRealFIFO_detectLineJumpers: a key's later deltas keep their places
// behind other keys', including one added after a pop.
func TestRealFIFODetectLineJumpers(t *testing.T) {
	f := newRealFIFO(t, RealFIFOOptions{KnownObjects: literalKnown{}})
	for _, o := range []*testObj{mkObj("foo", 10), mkObj("bar", 1), mkObj("foo", 11), mkObj("foo", 13), mkObj("zab", 30)} {
		must(t, f.Add(o))
	}
	if d, _ := popReal(t, f); describeRealDelta(d) != "Added foo@10" {
		t.Fatalf("first pop %s, want Added foo@10", describeRealDelta(d))
	}
	must(t, f.Add(mkObj("foo", 14)))
	want := []string{"Added bar@1", "Added foo@11", "Added foo@13", "Added zab@30", "Added foo@14"}
	if got := popAllReal(t, f); !slices.Equal(got, want) {
		t.Errorf("popped %q, want %q", got, want)
	}
}

// ★ TestRealFIFO_KeyOf.
func TestRealFIFOKeyOf(t *testing.T) {
	f := newRealFIFO(t, RealFIFOOptions{KnownObjects: literalKnown{}})
	cases := []struct {
		obj  any
		want string
	}{
		{mkObj("A", 1), "A"},
		{DeletedFinalStateUnknown{Key: "B", Obj: nil}, "B"},
		{Deltas{{Object: mkObj("C", 1)}}, "C"},
		{Deltas{{Object: DeletedFinalStateUnknown{Key: "D", Obj: nil}}}, "D"},
		{Delta{Type: Added, Object: mkNsObj("ns", "E", 1)}, "ns/E"},
		{Deltas{{Object: mkObj("old", 1)}, {Object: mkObj("F", 2)}}, "F"},
	}
	for _, tc := range cases {
		got, err := f.KeyOf(tc.obj)
		if err != nil || got != tc.want {
			t.Errorf("KeyOf(%#v) = %q, %v; want %q", tc.obj, got, err, tc.want)
		}
	}
	if _, err := f.KeyOf(Deltas{}); !errors.Is(err, ErrZeroLengthDeltasObject) {
		t.Errorf("KeyOf(empty Deltas) error = %v, want ErrZeroLengthDeltasObject", err)
	}
	if err := f.Add("not an object"); err == nil {
		t.Error("Add of a keyless object succeeded, want a key error")
	} else if ke := (KeyError{}); !errors.As(err, &ke) {
		t.Errorf("Add of a keyless object: error %v is not a KeyError", err)
	}
	if n := f.Len(); n != 0 {
		t.Errorf("a keyless object was queued: %q", realItems(f))
	}
}

// ★ TestRealFIFO_HasSynced.
func TestRealFIFOHasSynced(t *testing.T) {
	pop := func(t *testing.T, f *RealFIFO) {
		t.Helper()
		popReal(t, f)
	}
	cases := []struct {
		name   string
		atomic bool
		ops    func(t *testing.T, f *RealFIFO)
		want   bool
	}{
		{name: "nothing", ops: func(*testing.T, *RealFIFO) {}, want: false},
		{name: "add", ops: func(t *testing.T, f *RealFIFO) { must(t, f.Add(mkObj("a", 1))) }, want: true},
		{name: "empty replace", ops: func(t *testing.T, f *RealFIFO) { must(t, f.Replace([]any{}, "0")) }, want: true},
		{name: "replace two", ops: func(t *testing.T, f *RealFIFO) {
			must(t, f.Replace([]any{mkObj("a", 1), mkObj("b", 2)}, "0"))
		}, want: false},
		{name: "replace two pop one", ops: func(t *testing.T, f *RealFIFO) {
			must(t, f.Replace([]any{mkObj("a", 1), mkObj("b", 2)}, "0"))
			pop(t, f)
		}, want: false},
		{name: "replace two pop two", ops: func(t *testing.T, f *RealFIFO) {
			must(t, f.Replace([]any{mkObj("a", 1), mkObj("b", 2)}, "0"))
			pop(t, f)
			pop(t, f)
		}, want: true},
		{
			// A broken apiserver's duplicate keys are two deltas, both of
			// which must be popped.
			name: "duplicate keys pop twice", ops: func(t *testing.T, f *RealFIFO) {
				must(t, f.Replace([]any{mkObj("a", 1), mkObj("a", 2)}, "0"))
				pop(t, f)
				pop(t, f)
			}, want: true,
		},
		{name: "duplicate keys pop once", ops: func(t *testing.T, f *RealFIFO) {
			must(t, f.Replace([]any{mkObj("a", 1), mkObj("a", 2)}, "0"))
			pop(t, f)
		}, want: false},
		{name: "atomic replace two", atomic: true, ops: func(t *testing.T, f *RealFIFO) {
			must(t, f.Replace([]any{mkObj("a", 1), mkObj("b", 2)}, "0"))
		}, want: false},
		{name: "atomic replace two pops as one", atomic: true, ops: func(t *testing.T, f *RealFIFO) {
			must(t, f.Replace([]any{mkObj("a", 1), mkObj("b", 2)}, "0"))
			pop(t, f)
		}, want: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			opts := RealFIFOOptions{KnownObjects: literalKnown{}}
			if tc.atomic {
				opts = RealFIFOOptions{AtomicEvents: true}
			}
			f := newRealFIFO(t, opts)
			tc.ops(t, f)
			if got := f.HasSynced(); got != tc.want {
				t.Errorf("HasSynced = %v, want %v", got, tc.want)
			}
			closed := false
			select {
			case <-f.Synced():
				closed = true
			default:
			}
			if closed != tc.want {
				t.Errorf("Synced closed = %v, want %v", closed, tc.want)
			}
		})
	}
}

// ★ TestRealFIFO_PopShouldUnblockWhenClosed: Pops blocked on an empty queue
// return ErrFIFOClosed on Close.
func TestRealFIFOPopShouldUnblockWhenClosed(t *testing.T) {
	f := newRealFIFO(t, RealFIFOOptions{KnownObjects: knownOf(mkObj("foo", 5))})
	const pops = 10
	errs := make(chan error, pops)
	for i := 0; i < pops; i++ {
		go func() {
			_, err := f.Pop(func(Deltas, bool) error { return nil })
			errs <- err
		}()
	}
	f.Close()
	if !f.IsClosed() {
		t.Error("IsClosed false after Close")
	}
	timeout := time.After(30 * time.Second)
	for i := 0; i < pops; i++ {
		select {
		case err := <-errs:
			if !errors.Is(err, ErrFIFOClosed) {
				t.Errorf("Pop error %v, want ErrFIFOClosed", err)
			}
		case <-timeout:
			t.Fatal("Pop did not unblock after Close")
		}
	}
}

// popBatches calls f.PopBatch until f is empty. It returns each batch
// rendered, and the deltas handed out as part of the initial list, in
// order. A batch of one delta must go to processSingle, a longer one to
// processBatch.
func popBatches(t *testing.T, f *RealFIFO) (batches [][]string, initial []string) {
	t.Helper()
	record := func(deltas []Delta, isInInitialList bool) {
		var batch []string
		for _, d := range deltas {
			batch = append(batch, describeRealDelta(d))
		}
		batches = append(batches, batch)
		if isInInitialList {
			initial = append(initial, batch...)
		}
	}
	for f.Len() > 0 {
		err := f.PopBatch(func(deltas []Delta, isInInitialList bool) error {
			if len(deltas) < 2 {
				t.Errorf("processBatch called with %d deltas", len(deltas))
			}
			record(deltas, isInInitialList)
			return nil
		}, func(d Deltas, isInInitialList bool) error {
			if len(d) != 1 {
				t.Errorf("processSingle called with %d deltas", len(d))
			}
			record(d, isInInitialList)
			return nil
		})
		if err != nil {
			t.Fatalf("PopBatch: %v", err)
		}
	}
	return batches, initial
}

// ★ TestRealFIFO_PopMultipleDeltaInBatch: a batch is a run of deltas of
// distinct keys, cut by the batch size and by the end of the initial list.
func TestRealFIFOPopMultipleDeltaInBatch(t *testing.T) {
	const unlimitedBatchSize = 999999
	obj1, obj2, obj3, obj4 := mkObj("foo1", 5), mkObj("foo2", 5), mkObj("foo3", 5), mkObj("foo4", 5)
	update := func(o *testObj) func(t *testing.T, f *RealFIFO) {
		return func(t *testing.T, f *RealFIFO) { must(t, f.Update(o)) }
	}
	cases := []struct {
		name         string
		initialItems []*testObj
		actions      []func(t *testing.T, f *RealFIFO)
		batchSize    int
		want         [][]string
	}{
		{
			name:         "non-split: unique items pop together",
			initialItems: []*testObj{obj1, obj2, obj3},
			batchSize:    unlimitedBatchSize,
			want:         [][]string{{"Replaced foo1@5", "Replaced foo2@5", "Replaced foo3@5"}},
		},
		{
			name:         "split by the initial list",
			initialItems: []*testObj{obj1, obj2},
			actions:      []func(t *testing.T, f *RealFIFO){update(obj3), update(obj4)},
			batchSize:    2,
			want:         [][]string{{"Replaced foo1@5", "Replaced foo2@5"}, {"Updated foo3@5", "Updated foo4@5"}},
		},
		{
			name:         "split by non-unique #1: updates of one item go one by one",
			initialItems: []*testObj{obj1},
			actions:      []func(t *testing.T, f *RealFIFO){update(obj1), update(obj1)},
			batchSize:    unlimitedBatchSize,
			want:         [][]string{{"Replaced foo1@5"}, {"Updated foo1@5"}, {"Updated foo1@5"}},
		},
		{
			name:         "split by non-unique #2: repeated item at the end",
			initialItems: []*testObj{obj1, obj2},
			actions:      []func(t *testing.T, f *RealFIFO){update(obj2), update(obj3)},
			batchSize:    unlimitedBatchSize,
			want:         [][]string{{"Replaced foo1@5", "Replaced foo2@5"}, {"Updated foo2@5", "Updated foo3@5"}},
		},
		{
			name:         "split by non-unique #3: repeated item in the middle",
			initialItems: []*testObj{obj1, obj2, obj3},
			actions:      []func(t *testing.T, f *RealFIFO){update(obj2)},
			batchSize:    unlimitedBatchSize,
			want:         [][]string{{"Replaced foo1@5", "Replaced foo2@5", "Replaced foo3@5"}, {"Updated foo2@5"}},
		},
		{
			name:         "split by batch size #1: initial list",
			initialItems: []*testObj{obj1, obj2, obj3},
			batchSize:    2,
			want:         [][]string{{"Replaced foo1@5", "Replaced foo2@5"}, {"Replaced foo3@5"}},
		},
		{
			name:      "split by batch size #2: deltas after the initial list",
			actions:   []func(t *testing.T, f *RealFIFO){update(obj1), update(obj2), update(obj3)},
			batchSize: 2,
			want:      [][]string{{"Updated foo1@5", "Updated foo2@5"}, {"Updated foo3@5"}},
		},
		{
			name:         "split by batch size #3: mixed initial and later deltas",
			initialItems: []*testObj{obj1, obj2, obj3},
			actions:      []func(t *testing.T, f *RealFIFO){update(obj4)},
			batchSize:    2,
			want:         [][]string{{"Replaced foo1@5", "Replaced foo2@5"}, {"Replaced foo3@5"}, {"Updated foo4@5"}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newRealFIFO(t, RealFIFOOptions{KnownObjects: knownOf(tc.initialItems...)})
			f.batchSize = tc.batchSize
			list := make([]any, len(tc.initialItems))
			var wantInitial []string
			for i, o := range tc.initialItems {
				list[i] = o
				wantInitial = append(wantInitial, "Replaced "+describe(o))
			}
			must(t, f.Replace(list, "123"))
			for _, action := range tc.actions {
				action(t, f)
			}
			batches, initial := popBatches(t, f)
			if !reflect.DeepEqual(batches, tc.want) {
				t.Errorf("batches:\n got  %q\n want %q", batches, tc.want)
			}
			if !slices.Equal(initial, wantInitial) {
				t.Errorf("popped as initial list %q, want %q", initial, wantInitial)
			}
		})
	}
}

// ★ TestRealFIFO_PopBrokenItemsInBatch: a delta whose key cannot be read
// ends the batch it is in, in it.
func TestRealFIFOPopBrokenItemsInBatch(t *testing.T) {
	ok1, ok2 := mkObj("foo1", 5), mkObj("foo2", 5)
	fail3, fail4 := mkObj("foo3", 5), mkObj("foo4", 5)
	keyFunc := func(obj any) (string, error) {
		if obj == any(fail3) || obj == any(fail4) {
			return "", errors.New("test key func error")
		}
		return MetaNamespaceKeyFunc(obj)
	}
	cases := []struct {
		name     string
		incoming []*testObj
		want     [][]string
	}{
		{
			name:     "1st item is broken",
			incoming: []*testObj{fail3},
			want:     [][]string{{"Added foo3@5"}},
		},
		{
			name:     "nth item is broken",
			incoming: []*testObj{ok1, ok2, fail3},
			want:     [][]string{{"Added foo1@5", "Added foo2@5", "Added foo3@5"}},
		},
		{
			name:     "multiple nth items are broken",
			incoming: []*testObj{ok1, ok2, fail3, fail4},
			want:     [][]string{{"Added foo1@5", "Added foo2@5", "Added foo3@5"}, {"Added foo4@5"}},
		},
		{
			name:     "mixed 1st and nth items are broken",
			incoming: []*testObj{fail3, ok1, fail4},
			want:     [][]string{{"Added foo3@5"}, {"Added foo1@5", "Added foo4@5"}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newRealFIFO(t, RealFIFOOptions{KeyFunction: keyFunc, KnownObjects: literalKnown{}})
			f.batchSize = 999999
			// Add refuses keyless objects; client-go's test queues them
			// directly too.
			f.WithLock(func() {
				for _, o := range tc.incoming {
					f.items = append(f.items, Delta{Type: Added, Object: o})
				}
			})
			batches, _ := popBatches(t, f)
			if !reflect.DeepEqual(batches, tc.want) {
				t.Errorf("batches:\n got  %q\n want %q", batches, tc.want)
			}
		})
	}
}

// Not in client-go's tests, but its PopBatch's rule: an atomic delta
// (ReplacedAll, SyncAll, Bookmark) is never batched; first in the queue it
// is popped alone, later it ends the batch before it.
func TestRealFIFOPopBatchAtomicDeltasGoAlone(t *testing.T) {
	f := newRealFIFO(t, RealFIFOOptions{AtomicEvents: true, EmitDeltaTypeBookmark: true, Populated: true})
	must(t, f.Add(mkObj("a", 1)))
	must(t, f.Add(mkObj("b", 1)))
	must(t, f.Bookmark("5"))
	must(t, f.Resync())
	must(t, f.Update(mkObj("a", 2)))
	must(t, f.Replace([]any{mkObj("a", 3)}, "6"))
	batches, initial := popBatches(t, f)
	want := [][]string{{"Added a@1", "Added b@1"}, {"Bookmark 5"}, {"SyncAll"}, {"Updated a@2"}, {"ReplacedAll 6 [a@3]"}}
	if !reflect.DeepEqual(batches, want) {
		t.Errorf("batches:\n got  %q\n want %q", batches, want)
	}
	if len(initial) != 0 {
		t.Errorf("popped as initial list %q from a populated queue", initial)
	}
}

// ★ TestRealFIFO_ReplaceAtomic: with atomic events a Replace is one
// ReplacedAll delta, queued after what is queued, bookmarks included.
func TestRealFIFOReplaceAtomic(t *testing.T) {
	obj := mkObj("foo", 2)
	atomic := func() RealFIFOOptions { return RealFIFOOptions{AtomicEvents: true, EmitDeltaTypeBookmark: true} }
	runRealFIFOCases(t, []realFIFOCase{
		{
			name: "base replace",
			opts: atomic,
			ops: func(t *testing.T, f *RealFIFO) {
				must(t, f.Replace([]any{}, "123"))
			},
			want: []string{"ReplacedAll 123 []"},
		},
		{
			name: "added object stays queued before an atomic replace",
			opts: atomic,
			ops: func(t *testing.T, f *RealFIFO) {
				must(t, f.Add(obj))
				must(t, f.Replace([]any{}, "123"))
			},
			want: []string{"Added foo@2", "ReplacedAll 123 []"},
		},
		{
			name: "multiple replaces stay in order",
			opts: atomic,
			ops: func(t *testing.T, f *RealFIFO) {
				must(t, f.Add(obj))
				must(t, f.Replace([]any{obj}, "10"))
				must(t, f.Replace([]any{obj}, "20"))
				must(t, f.Replace([]any{}, "56"))
			},
			want: []string{"Added foo@2", "ReplacedAll 10 [foo@2]", "ReplacedAll 20 [foo@2]", "ReplacedAll 56 []"},
		},
		{
			name: "bookmark is not folded into a replace",
			opts: atomic,
			ops: func(t *testing.T, f *RealFIFO) {
				must(t, f.Bookmark("123"))
				must(t, f.Replace([]any{}, "1234"))
			},
			want: []string{"Bookmark 123", "ReplacedAll 1234 []"},
		},
	})
}

// ★ TestRealFIFO_ReplaceAtomicPop.
func TestRealFIFOReplaceAtomicPop(t *testing.T) {
	f := newRealFIFO(t, RealFIFOOptions{AtomicEvents: true})
	must(t, f.Add(mkObj("foo", 10)))
	relisted := []any{mkObj("foo", 15)}
	must(t, f.Replace(relisted, "20"))
	var info ReplacedAllInfo
	f.WithLock(func() {
		if len(f.items) == 2 {
			info, _ = f.items[1].Object.(ReplacedAllInfo)
		}
	})
	if len(info.Objects) != 1 || info.Objects[0] != relisted[0] || info.ResourceVersion != "20" {
		t.Errorf("queued ReplacedAllInfo %+v, want the relisted objects at 20", info)
	}
	want := []string{"Added foo@10", "ReplacedAll 20 [foo@15]"}
	if got := drainConcurrently(t, f); !slices.Equal(got, want) {
		t.Errorf("popped %q, want %q", got, want)
	}
	if n := f.Len(); n != 0 {
		t.Errorf("queue holds %d deltas after draining", n)
	}
}

// ★ TestRealFIFO_ResyncAtomic, with bookmarks: with atomic events a Resync
// is one SyncAll delta, queued in order with events and bookmarks.
func TestRealFIFOResyncAtomic(t *testing.T) {
	obj := mkObj("foo", 2)
	atomic := func() RealFIFOOptions { return RealFIFOOptions{AtomicEvents: true} }
	withBookmarks := func() RealFIFOOptions { return RealFIFOOptions{AtomicEvents: true, EmitDeltaTypeBookmark: true} }
	runRealFIFOCases(t, []realFIFOCase{
		{
			name: "base resync",
			opts: atomic,
			ops: func(t *testing.T, f *RealFIFO) {
				must(t, f.Resync())
			},
			want: []string{"SyncAll"},
		},
		{
			name: "added object stays queued before an atomic resync",
			opts: atomic,
			ops: func(t *testing.T, f *RealFIFO) {
				must(t, f.Add(obj))
				must(t, f.Resync())
			},
			want: []string{"Added foo@2", "SyncAll"},
		},
		{
			name: "bookmarks keep their places around a resync",
			opts: withBookmarks,
			ops: func(t *testing.T, f *RealFIFO) {
				must(t, f.Add(obj))
				must(t, f.Bookmark("5"))
				must(t, f.Resync())
				must(t, f.Bookmark("6"))
			},
			want: []string{"Added foo@2", "Bookmark 5", "SyncAll", "Bookmark 6"},
		},
		{
			name: "bookmarks are dropped unless emitted",
			opts: atomic,
			ops: func(t *testing.T, f *RealFIFO) {
				must(t, f.Bookmark("5"))
				must(t, f.Resync())
			},
			want: []string{"SyncAll"},
		},
	})
}

// TestRealFIFOPopulated (difference 4): a queue that starts populated is
// synced before anything is queued, and a later Replace is a relist, not
// an initial list: nothing of it is popped as part of one.
func TestRealFIFOPopulated(t *testing.T) {
	cases := []struct {
		name string
		opts RealFIFOOptions
		want []string
	}{
		{
			name: "without atomic events",
			opts: RealFIFOOptions{KnownObjects: knownOf(mkObj("foo", 5), mkObj("bar", 6)), Populated: true},
			want: []string{"Deleted DFSU{bar, bar@6}", "Replaced foo@8"},
		},
		{
			name: "with atomic events",
			opts: RealFIFOOptions{AtomicEvents: true, Populated: true},
			want: []string{"ReplacedAll 9 [foo@8]"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newRealFIFO(t, tc.opts)
			if f.Len() != 0 {
				t.Fatalf("a new queue holds %q", realItems(f))
			}
			if !f.HasSynced() {
				t.Fatal("a populated queue is not synced")
			}
			select {
			case <-f.Synced():
			default:
				t.Fatal("Synced not closed for a populated queue")
			}
			must(t, f.Replace([]any{mkObj("foo", 8)}, "9"))
			var got []string
			for f.Len() > 0 {
				d, initial := popReal(t, f)
				if initial {
					t.Errorf("%s popped as part of an initial list", describeRealDelta(d))
				}
				got = append(got, describeRealDelta(d))
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("popped %q, want %q", got, tc.want)
			}
			if !f.HasSynced() {
				t.Error("HasSynced false after a relist of a populated queue")
			}
		})
	}
}

// TestReconcile tests Reconcile directly: the tombstones of queued keys in
// the order of their first delta, then those of known keys sorted.
func TestReconcile(t *testing.T) {
	keyOf := newRealFIFO(t, RealFIFOOptions{AtomicEvents: true}).KeyOf
	dfsus := func(ts []DeletedFinalStateUnknown) []string {
		var out []string
		for _, tomb := range ts {
			out = append(out, describe(tomb))
		}
		return out
	}

	t.Run("queued keys in order of first appearance", func(t *testing.T) {
		queued := []Delta{
			{Type: Added, Object: mkObj("b", 1)},
			{Type: Added, Object: mkObj("a", 1)},
			{Type: Updated, Object: mkObj("b", 2)}, // b's newest, a after b
			{Type: Added, Object: mkObj("c", 1)},
			{Type: Added, Object: mkObj("kept", 1)},
			{Type: Deleted, Object: mkObj("d", 1)}, // already deleted
			{Type: Added, Object: mkObj("e", 1)},
			{Type: Deleted, Object: DeletedFinalStateUnknown{Key: "e", Obj: nil}}, // e's newest is a deletion
			{Type: Deleted, Object: mkObj("f", 1)},
			{Type: Added, Object: mkObj("f", 2)}, // f recreated: tombstoned again
			{Type: Bookmark, Object: BookmarkInfo{ResourceVersion: "3"}},
			{Type: SyncAll, Object: SyncAllInfo{}},
		}
		got, err := Reconcile([]any{mkObj("kept", 2)}, queued, nil, keyOf)
		must(t, err)
		want := []string{"DFSU{b, b@2}", "DFSU{a, a@1}", "DFSU{c, c@1}", "DFSU{f, f@2}"}
		if !slices.Equal(dfsus(got), want) {
			t.Errorf("tombstones %q, want %q", dfsus(got), want)
		}
	})

	t.Run("known keys sorted after queued ones", func(t *testing.T) {
		known := listedKnown{
			keys: []string{"z", "queued", "gone", "listed", "broken", "m"},
			objs: knownOf(mkObj("z", 1), mkObj("queued", 1), mkObj("listed", 1), mkObj("m", 1)),
			fail: map[string]bool{"broken": true},
		}
		queued := []Delta{{Type: Updated, Object: mkObj("queued", 2)}, {Type: Added, Object: mkObj("y", 1)}}
		got, err := Reconcile([]any{mkObj("listed", 2)}, queued, known, keyOf)
		must(t, err)
		want := []string{
			"DFSU{queued, queued@2}", "DFSU{y, y@1}",
			"DFSU{broken, nil}", "DFSU{gone, nil}", "DFSU{m, m@1}", "DFSU{z, z@1}",
		}
		if !slices.Equal(dfsus(got), want) {
			t.Errorf("tombstones %q, want %q", dfsus(got), want)
		}
	})

	t.Run("errors", func(t *testing.T) {
		if _, err := Reconcile([]any{"keyless"}, nil, nil, keyOf); !errors.As(err, new(KeyError)) {
			t.Errorf("keyless listed object: got %v, want a KeyError", err)
		}
		queued := []Delta{{Type: Added, Object: "keyless"}}
		if _, err := Reconcile(nil, queued, nil, keyOf); !errors.As(err, new(KeyError)) {
			t.Errorf("keyless queued object: got %v, want a KeyError", err)
		}
	})
}
