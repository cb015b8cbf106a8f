package cache

import (
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// fifoCase drives a DeltaFIFO through ops and compares every pop.
type fifoCase struct {
	name     string
	known    literalKnown // nil: no knownObjects
	replaced bool         // EmitDeltaTypeReplaced
	ops      func(t *testing.T, f *DeltaFIFO)
	want     []string
}

func runFIFOCases(t *testing.T, cases []fifoCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			opts := DeltaFIFOOptions{EmitDeltaTypeReplaced: tc.replaced}
			if tc.known != nil {
				opts.KnownObjects = tc.known
			}
			f := NewDeltaFIFOWithOptions(opts)
			tc.ops(t, f)
			got := popAll(t, f)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("pops:\n got  %q\n want %q", got, tc.want)
			}
			if len(f.items) != 0 || len(f.queue) != 0 {
				t.Errorf("queue not empty after popping everything: items=%v queue=%v", f.items, f.queue)
			}
		})
	}
}

func TestDeltaFIFOEnqueueing(t *testing.T) {
	runFIFOCases(t, []fifoCase{
		{
			// With knownObjects nil, a delete of an unknown key is dropped.
			name: "no lister drops deletes of unqueued keys",
			ops: func(t *testing.T, f *DeltaFIFO) {
				must(t, f.Add(mkObj("foo", 10)))
				must(t, f.Update(mkObj("bar", 15)))
				must(t, f.Add(mkObj("qux", 17)))
				must(t, f.Delete(mkObj("qux", 18)))
				must(t, f.Delete(mkObj("baz", 20)))
			},
			want: []string{"[Added foo@10]", "[Updated bar@15]", "[Added qux@17, Deleted qux@18]"},
		},
		{
			// With knownObjects, baz is known, so its delete is queued.
			name:  "lister queues deletes of known keys",
			known: knownOf(mkObj("baz", 1)),
			ops: func(t *testing.T, f *DeltaFIFO) {
				must(t, f.Add(mkObj("foo", 10)))
				must(t, f.Update(mkObj("bar", 15)))
				must(t, f.Delete(mkObj("baz", 20)))
				must(t, f.Delete(mkObj("zzz", 21))) // neither known nor queued
			},
			want: []string{"[Added foo@10]", "[Updated bar@15]", "[Deleted baz@20]"},
		},
		{
			name:  "delete of existing object not yet propagated",
			known: knownOf(),
			ops: func(t *testing.T, f *DeltaFIFO) {
				must(t, f.Add(mkObj("foo", 5)))
				must(t, f.Delete(mkObj("foo", 6)))
			},
			want: []string{"[Added foo@5, Deleted foo@6]"},
		},
		{
			name: "add update delete pop as one",
			ops: func(t *testing.T, f *DeltaFIFO) {
				must(t, f.Add(mkObj("foo", 10)))
				must(t, f.Update(mkObj("foo", 12)))
				must(t, f.Delete(mkObj("foo", 15)))
			},
			want: []string{"[Added foo@10, Updated foo@12, Deleted foo@15]"},
		},
		{
			name: "add then replace pops once with the newest last",
			ops: func(t *testing.T, f *DeltaFIFO) {
				must(t, f.Add(mkObj("foo", 10)))
				must(t, f.Replace([]any{mkObj("foo", 15)}, "0"))
			},
			want: []string{"[Added foo@10, Sync foo@15]"},
		},
		{
			// ★ no line jumping: a queued key keeps its place.
			name: "detect line jumpers",
			ops: func(t *testing.T, f *DeltaFIFO) {
				must(t, f.Add(mkObj("foo", 10)))
				must(t, f.Add(mkObj("bar", 1)))
				must(t, f.Add(mkObj("foo", 11)))
				must(t, f.Add(mkObj("foo", 13)))
				must(t, f.Add(mkObj("zab", 30)))
			},
			want: []string{"[Added foo@10, Added foo@11, Added foo@13]", "[Added bar@1]", "[Added zab@30]"},
		},
		{
			// Consecutive deletes collapse to the older real one.
			name: "dedup deletes keeps the older object",
			ops: func(t *testing.T, f *DeltaFIFO) {
				must(t, f.Add(mkObj("foo", 1)))
				must(t, f.Delete(mkObj("foo", 2)))
				must(t, f.Delete(mkObj("foo", 3)))
			},
			want: []string{"[Added foo@1, Deleted foo@2]"},
		},
		{
			name: "updates are not deduplicated",
			ops: func(t *testing.T, f *DeltaFIFO) {
				must(t, f.Update(mkObj("foo", 1)))
				must(t, f.Update(mkObj("foo", 2)))
			},
			want: []string{"[Updated foo@1, Updated foo@2]"},
		},
	})
}

func TestDeltaFIFOLineJumpersAfterPop(t *testing.T) {
	f := NewDeltaFIFOWithOptions(DeltaFIFOOptions{})
	for _, o := range []*testObj{mkObj("foo", 10), mkObj("bar", 1), mkObj("foo", 11), mkObj("foo", 13), mkObj("zab", 30)} {
		must(t, f.Add(o))
	}
	d, err := f.Pop(func(Deltas, bool) error { return nil })
	must(t, err)
	if got := describe(d.Newest().Object); got != "foo@13" {
		t.Fatalf("first pop newest: got %s, want foo@13", got)
	}
	must(t, f.Add(mkObj("foo", 14)))
	got := popAll(t, f)
	want := []string{"[Added bar@1]", "[Added zab@30]", "[Added foo@14]"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestDedupDeltas(t *testing.T) {
	dfsu := func(name string, val int) DeletedFinalStateUnknown {
		return DeletedFinalStateUnknown{Key: name, Obj: mkObj(name, val)}
	}
	cases := []struct {
		name string
		in   Deltas
		want string
	}{
		{"deleted then deleted keeps older", Deltas{{Type: Deleted, Object: mkObj("a", 2)}, {Type: Deleted, Object: mkObj("a", 3)}}, "[Deleted a@2]"},
		{"dfsu then deleted keeps newer", Deltas{{Type: Deleted, Object: dfsu("a", 1)}, {Type: Deleted, Object: mkObj("a", 5)}}, "[Deleted a@5]"},
		{"deleted then dfsu keeps deleted", Deltas{{Type: Deleted, Object: mkObj("a", 1)}, {Type: Deleted, Object: dfsu("a", 5)}}, "[Deleted a@1]"},
		{"dfsu then dfsu keeps newer", Deltas{{Type: Deleted, Object: dfsu("a", 1)}, {Type: Deleted, Object: dfsu("a", 5)}}, "[Deleted DFSU{a, a@5}]"},
		{"sync then updated stays", Deltas{{Type: Sync, Object: mkObj("a", 1)}, {Type: Updated, Object: mkObj("a", 2)}}, "[Sync a@1, Updated a@2]"},
		{"only the last two are compared", Deltas{{Type: Deleted, Object: mkObj("a", 1)}, {Type: Added, Object: mkObj("a", 2)}, {Type: Deleted, Object: mkObj("a", 3)}}, "[Deleted a@1, Added a@2, Deleted a@3]"},
		{"single", Deltas{{Type: Added, Object: mkObj("a", 1)}}, "[Added a@1]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := describeDeltas(dedupDeltas(tc.in)); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

func TestDeltaFIFOReplace(t *testing.T) {
	foo5, bar6, baz7 := mkObj("foo", 5), mkObj("bar", 6), mkObj("baz", 7)
	known := func() literalKnown { return knownOf(foo5, bar6, baz7) }
	runFIFOCases(t, []fifoCase{
		{
			// ★ TestDeltaFIFO_replaceWithDeleteDeltaIn
			name:  "replace with delete delta in queue",
			known: knownOf(mkObj("foo", 1)),
			ops: func(t *testing.T, f *DeltaFIFO) {
				must(t, f.Delete(mkObj("foo", 1)))
				must(t, f.Replace([]any{mkObj("foo", 2)}, "0"))
			},
			want: []string{"[Deleted foo@1, Sync foo@2]"},
		},
		{
			// ★ TestDeltaFIFO_ReplaceMakesDeletions (a)
			name:  "makes deletions (a)",
			known: known(),
			ops: func(t *testing.T, f *DeltaFIFO) {
				must(t, f.Delete(mkObj("baz", 10)))
				must(t, f.Replace([]any{mkObj("foo", 5)}, "0"))
			},
			want: []string{"[Deleted baz@10]", "[Sync foo@5]", "[Deleted DFSU{bar, bar@6}]"},
		},
		{
			// (b)
			name:  "makes deletions (b) queue-only key gets a tombstone",
			known: known(),
			ops: func(t *testing.T, f *DeltaFIFO) {
				must(t, f.Add(mkObj("baz", 10)))
				must(t, f.Replace([]any{mkObj("foo", 5)}, "0"))
			},
			want: []string{"[Added baz@10, Deleted DFSU{baz, baz@10}]", "[Sync foo@5]", "[Deleted DFSU{bar, bar@6}]"},
		},
		{
			// (c)
			name:  "makes deletions (c)",
			known: known(),
			ops: func(t *testing.T, f *DeltaFIFO) {
				must(t, f.Delete(mkObj("bar", 6)))
				must(t, f.Add(mkObj("bar", 100)))
				must(t, f.Replace([]any{mkObj("foo", 5)}, "0"))
			},
			want: []string{"[Deleted bar@6, Added bar@100, Deleted DFSU{bar, bar@100}]", "[Sync foo@5]", "[Deleted DFSU{baz, baz@7}]"},
		},
		{
			// (d)
			name:  "makes deletions (d) two replaces",
			known: known(),
			ops: func(t *testing.T, f *DeltaFIFO) {
				must(t, f.Replace([]any{mkObj("bar", 100), mkObj("foo", 5)}, "0"))
				must(t, f.Replace([]any{mkObj("foo", 5)}, "0"))
			},
			want: []string{"[Sync bar@100, Deleted DFSU{bar, bar@100}]", "[Sync foo@5, Sync foo@5]", "[Deleted DFSU{baz, baz@7}]"},
		},
		{
			// (e) without knownObjects only queued keys get tombstones.
			name: "makes deletions (e) no lister",
			ops: func(t *testing.T, f *DeltaFIFO) {
				must(t, f.Delete(mkObj("bar", 6)))
				must(t, f.Add(mkObj("baz", 10)))
				must(t, f.Replace([]any{mkObj("foo", 5)}, "0"))
			},
			want: []string{"[Added baz@10, Deleted DFSU{baz, baz@10}]", "[Sync foo@5]"},
		},
		{
			name:     "makes deletions replaced type",
			known:    known(),
			replaced: true,
			ops: func(t *testing.T, f *DeltaFIFO) {
				must(t, f.Add(mkObj("baz", 10)))
				must(t, f.Replace([]any{mkObj("foo", 5)}, "0"))
			},
			want: []string{"[Added baz@10, Deleted DFSU{baz, baz@10}]", "[Replaced foo@5]", "[Deleted DFSU{bar, bar@6}]"},
		},
		{
			name:  "tombstone of a vanished known object carries nil",
			known: literalKnown{"gone": nil},
			ops: func(t *testing.T, f *DeltaFIFO) {
				must(t, f.Replace([]any{}, "0"))
			},
			want: []string{"[Deleted DFSU{gone, nil}]"},
		},
		{
			// #83810: a delete then a relisted object keeps the Sync.
			name:     "replace appends after a delete",
			known:    knownOf(mkObj("foo", 1)),
			replaced: true,
			ops: func(t *testing.T, f *DeltaFIFO) {
				must(t, f.Delete(mkObj("foo", 1)))
				must(t, f.Replace([]any{mkObj("foo", 3)}, "0"))
			},
			want: []string{"[Deleted foo@1, Replaced foo@3]"},
		},
	})
}

// ★ TestDeltaFIFOW_ReplaceMakesDeletionsForObjectsOnlyInQueue, with both an
// empty knownObjects and none.
// TestDeltaFIFOReplacement: a Replace made one batch at a time
// (StartReplace) is Replace when the list is read once, and a list started
// again (Restart) neither hands out twice what is still queued nor forgets
// to tombstone what the earlier rounds queued and the last one lacks.
func TestDeltaFIFOReplacement(t *testing.T) {
	add := func(t *testing.T, r Replacement, objs ...any) {
		t.Helper()
		must(t, r.Add(objs))
	}
	runFIFOCases(t, []fifoCase{
		{
			name:  "read once: as Replace",
			known: knownOf(mkObj("gone", 1), mkObj("foo", 1)),
			ops: func(t *testing.T, f *DeltaFIFO) {
				r := f.StartReplace()
				r.Restart() // the Reflector restarts every replacement first
				add(t, r, mkObj("foo", 2), mkObj("bar", 2))
				add(t, r, mkObj("foo", 3)) // twice in one list: queued twice
				must(t, r.Finish("9"))
			},
			want: []string{"[Sync foo@2, Sync foo@3]", "[Sync bar@2]", "[Deleted DFSU{gone, gone@1}]"},
		},
		{
			name: "restarted: still queued objects are replaced, the others tombstoned",
			ops: func(t *testing.T, f *DeltaFIFO) {
				r := f.StartReplace()
				r.Restart()
				add(t, r, mkObj("a", 1), mkObj("b", 1), mkObj("c", 1))
				r.Restart()
				add(t, r, mkObj("b", 2), mkObj("d", 2), mkObj("b", 3))
				must(t, r.Finish("9"))
			},
			want: []string{"[Sync a@1, Deleted DFSU{a, a@1}]", "[Sync b@2, Sync b@3]", "[Sync c@1, Deleted DFSU{c, c@1}]", "[Sync d@2]"},
		},
		{
			name: "restarted twice: every earlier round counts",
			ops: func(t *testing.T, f *DeltaFIFO) {
				r := f.StartReplace()
				add(t, r, mkObj("a", 1))
				r.Restart()
				add(t, r, mkObj("b", 2))
				r.Restart()
				add(t, r, mkObj("a", 3), mkObj("b", 3))
				must(t, r.Finish("9"))
			},
			want: []string{"[Sync a@3]", "[Sync b@3]"},
		},
	})
}

// TestDeltaFIFOFirstReplacementPopped: the first list of a queue, whose
// objects the consumer pops into knownObjects as they come, tombstones
// nothing when read once, and, started again, what the earlier round
// listed and the last one lacks, popped or still queued.
func TestDeltaFIFOFirstReplacementPopped(t *testing.T) {
	tests := []struct {
		name  string
		again []string // the names listed after a Restart; nil: no Restart
		want  []string // the pops after the first two
	}{
		{"read once", nil, []string{"[Sync c@1]"}},
		{"started again", []string{"b", "c"}, []string{"[Sync c@2]", "[Sync b@2]", "[Deleted DFSU{a, a@1}]"}},
		{"started again without the queued one", []string{"a"}, []string{"[Sync c@1, Deleted DFSU{c, c@1}]", "[Sync a@2]", "[Deleted DFSU{b, b@1}]"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			store := NewIndexer(MetaNamespaceKeyFunc, nil)
			f := NewDeltaFIFOWithOptions(DeltaFIFOOptions{KnownObjects: store})
			r := f.StartReplace()
			r.Restart()
			must(t, r.Add([]any{mkObj("a", 1), mkObj("b", 1), mkObj("c", 1)}))
			for range 2 {
				if _, err := f.Pop(func(d Deltas, _ bool) error { return store.Add(d.Newest().Object) }); err != nil {
					t.Fatal(err)
				}
			}
			if tc.again != nil {
				r.Restart()
				for _, name := range tc.again {
					must(t, r.Add([]any{mkObj(name, 2)}))
				}
			}
			must(t, r.Finish("9"))
			if got := popAll(t, f); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("pops:\n got  %q\n want %q", got, tc.want)
			}
		})
	}
}

func TestDeltaFIFOReplaceMakesDeletionsForObjectsOnlyInQueue(t *testing.T) {
	obj := mkObj("foo", 2)
	obj2 := mkObj("foo", 3)
	type step func(t *testing.T, f *DeltaFIFO)
	add := func(o *testObj) step { return func(t *testing.T, f *DeltaFIFO) { must(t, f.Add(o)) } }
	del := func(o *testObj) step { return func(t *testing.T, f *DeltaFIFO) { must(t, f.Delete(o)) } }
	replace := func(objs ...any) step {
		return func(t *testing.T, f *DeltaFIFO) { must(t, f.Replace(objs, "0")) }
	}
	scripts := []struct {
		name     string
		steps    []step
		replaced bool
		want     string
	}{
		{"add then empty replace", []step{add(obj), replace()}, false, "[Added foo@2, Deleted DFSU{foo, foo@2}]"},
		{"add replace empty replace", []step{add(obj), replace(obj), replace()}, false, "[Added foo@2, Sync foo@2, Deleted DFSU{foo, foo@2}]"},
		{"add replace empty replace, replaced type", []step{add(obj), replace(obj), replace()}, true, "[Added foo@2, Replaced foo@2, Deleted DFSU{foo, foo@2}]"},
		{"add delete empty replace", []step{add(obj), del(obj), replace()}, false, "[Added foo@2, Deleted foo@2]"},
		{"add replace twice empty replace", []step{add(obj), replace(obj), replace(obj), replace()}, false, "[Added foo@2, Sync foo@2, Sync foo@2, Deleted DFSU{foo, foo@2}]"},
		{"add two empty replaces", []step{add(obj), replace(), replace()}, false, "[Added foo@2, Deleted DFSU{foo, foo@2}]"},
		{"add delete add empty replace", []step{add(obj), del(obj), add(obj2), replace()}, false, "[Added foo@2, Deleted foo@2, Added foo@3, Deleted DFSU{foo, foo@3}]"},
	}
	for _, withKnown := range []bool{false, true} {
		for _, s := range scripts {
			name := s.name + "/no lister"
			if withKnown {
				name = s.name + "/empty lister"
			}
			t.Run(name, func(t *testing.T) {
				opts := DeltaFIFOOptions{EmitDeltaTypeReplaced: s.replaced}
				if withKnown {
					opts.KnownObjects = literalKnown{}
				}
				f := NewDeltaFIFOWithOptions(opts)
				for _, st := range s.steps {
					st(t, f)
				}
				got := popAll(t, f)
				if len(got) != 1 || got[0] != s.want {
					t.Errorf("got %q, want [%q]", got, s.want)
				}
			})
		}
	}
}

func TestDeltaFIFOResync(t *testing.T) {
	runFIFOCases(t, []fifoCase{
		{
			name:  "resync queues known objects as Sync",
			known: knownOf(mkObj("foo", 5)),
			ops: func(t *testing.T, f *DeltaFIFO) {
				must(t, f.Resync())
			},
			want: []string{"[Sync foo@5]"},
		},
		{
			// ★ TestDeltaFIFO_UpdateResyncRace
			name:  "resync skips keys with queued deltas",
			known: knownOf(mkObj("foo", 5)),
			ops: func(t *testing.T, f *DeltaFIFO) {
				must(t, f.Update(mkObj("foo", 6)))
				must(t, f.Resync())
			},
			want: []string{"[Updated foo@6]"},
		},
		{
			name:  "resync of a non-existing known key after a queued delete",
			known: knownOf(mkObj("foo", 5)),
			ops: func(t *testing.T, f *DeltaFIFO) {
				must(t, f.Delete(mkObj("foo", 10)))
				must(t, f.Resync())
			},
			want: []string{"[Deleted foo@10]"},
		},
		{
			name: "resync without knownObjects does nothing",
			ops: func(t *testing.T, f *DeltaFIFO) {
				must(t, f.Resync())
			},
			want: nil,
		},
		{
			name:  "resync skips keys that vanished from knownObjects",
			known: literalKnown{"a": mkObj("a", 1)},
			ops: func(t *testing.T, f *DeltaFIFO) {
				f.knownObjects = vanishingKnown{literalKnown{"a": mkObj("a", 1)}}
				must(t, f.Resync())
			},
			want: nil,
		},
	})
}

// vanishingKnown lists keys it then does not find.
type vanishingKnown struct{ literalKnown }

func (vanishingKnown) GetByKey(string) (any, bool, error) { return nil, false, nil }

func TestDeltaFIFOKeyOf(t *testing.T) {
	f := NewDeltaFIFOWithOptions(DeltaFIFOOptions{})
	cases := []struct {
		obj  any
		want string
	}{
		{mkObj("A", 1), "A"},
		{DeletedFinalStateUnknown{Key: "B", Obj: nil}, "B"},
		{Deltas{{Type: Added, Object: mkObj("C", 1)}}, "C"},
		{Deltas{{Type: Deleted, Object: DeletedFinalStateUnknown{Key: "D"}}}, "D"},
		{mkNsObj("ns", "E", 1), "ns/E"},
	}
	for _, tc := range cases {
		got, err := f.KeyOf(tc.obj)
		if err != nil || got != tc.want {
			t.Errorf("KeyOf(%s) = %q, %v; want %q", describe(tc.obj), got, err, tc.want)
		}
	}
	if _, err := f.KeyOf(Deltas{}); !errors.Is(err, ErrZeroLengthDeltasObject) {
		t.Errorf("KeyOf(empty Deltas) error = %v, want ErrZeroLengthDeltasObject", err)
	}
	if err := f.Add("not an object"); err == nil {
		t.Error("Add of a non-object succeeded, want a key error")
	} else if ke := (KeyError{}); !errors.As(err, &ke) {
		t.Errorf("Add of a non-object: error %v is not a KeyError", err)
	}
}

// ★ TestDeltaFIFO_HasSyncedCorrectOnDeletion
func TestDeltaFIFOHasSyncedCorrectOnDeletion(t *testing.T) {
	f := NewDeltaFIFOWithOptions(DeltaFIFOOptions{KnownObjects: knownOf(mkObj("foo", 5), mkObj("bar", 6), mkObj("baz", 7))})
	must(t, f.Replace([]any{mkObj("foo", 5)}, "0"))
	for i := 0; i < 3; i++ {
		if f.HasSynced() {
			t.Fatalf("HasSynced true before pop %d", i+1)
		}
		var initial bool
		_, err := f.Pop(func(_ Deltas, isInInitialList bool) error { initial = isInInitialList; return nil })
		must(t, err)
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

func TestDeltaFIFOHasSynced(t *testing.T) {
	pop := func(t *testing.T, f *DeltaFIFO) {
		t.Helper()
		_, err := f.Pop(func(Deltas, bool) error { return nil })
		must(t, err)
	}
	cases := []struct {
		name string
		ops  func(t *testing.T, f *DeltaFIFO)
		want bool
	}{
		{"nothing", func(*testing.T, *DeltaFIFO) {}, false},
		{"add", func(t *testing.T, f *DeltaFIFO) { must(t, f.Add(mkObj("a", 1))) }, true},
		{"update", func(t *testing.T, f *DeltaFIFO) { must(t, f.Update(mkObj("a", 1))) }, true},
		{"delete", func(t *testing.T, f *DeltaFIFO) { must(t, f.Delete(mkObj("a", 1))) }, true},
		{"empty replace", func(t *testing.T, f *DeltaFIFO) { must(t, f.Replace([]any{}, "0")) }, true},
		{"replace two", func(t *testing.T, f *DeltaFIFO) {
			must(t, f.Replace([]any{mkObj("a", 1), mkObj("b", 2)}, "0"))
		}, false},
		{"replace two pop one", func(t *testing.T, f *DeltaFIFO) {
			must(t, f.Replace([]any{mkObj("a", 1), mkObj("b", 2)}, "0"))
			pop(t, f)
		}, false},
		{"replace two pop two", func(t *testing.T, f *DeltaFIFO) {
			must(t, f.Replace([]any{mkObj("a", 1), mkObj("b", 2)}, "0"))
			pop(t, f)
			pop(t, f)
		}, true},
		{"duplicate keys count once", func(t *testing.T, f *DeltaFIFO) {
			must(t, f.Replace([]any{mkObj("a", 1), mkObj("a", 2)}, "0"))
			pop(t, f)
		}, true},
		{"later replace does not unsync", func(t *testing.T, f *DeltaFIFO) {
			must(t, f.Replace([]any{}, "0"))
			must(t, f.Replace([]any{mkObj("a", 1)}, "0"))
		}, true},
		{"add before replace: first batch is empty", func(t *testing.T, f *DeltaFIFO) {
			must(t, f.Add(mkObj("z", 1)))
			must(t, f.Replace([]any{mkObj("a", 1)}, "0"))
		}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := NewDeltaFIFOWithOptions(DeltaFIFOOptions{})
			tc.ops(t, f)
			if got := f.HasSynced(); got != tc.want {
				t.Errorf("HasSynced = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestDeltaFIFOIsInInitialList(t *testing.T) {
	f := NewDeltaFIFOWithOptions(DeltaFIFOOptions{KnownObjects: literalKnown{}, EmitDeltaTypeReplaced: true})
	must(t, f.Replace([]any{mkObj("a", 1), mkObj("b", 1)}, "1"))
	must(t, f.Add(mkObj("c", 1)))
	must(t, f.Update(mkObj("a", 2))) // joins a's queued deltas: still initial
	var got []bool
	for f.Len() > 0 {
		_, err := f.Pop(func(_ Deltas, initial bool) error { got = append(got, initial); return nil })
		must(t, err)
	}
	if want := []bool{true, true, false}; !reflect.DeepEqual(got, want) {
		t.Errorf("isInInitialList per pop = %v, want %v", got, want)
	}
}

func TestDeltaFIFOPopReturnsProcessError(t *testing.T) {
	f := NewDeltaFIFOWithOptions(DeltaFIFOOptions{})
	must(t, f.Add(mkObj("a", 1)))
	boom := errors.New("boom")
	d, err := f.Pop(func(Deltas, bool) error { return boom })
	if !errors.Is(err, boom) {
		t.Errorf("Pop error = %v, want boom", err)
	}
	if describeDeltas(d) != "[Added a@1]" {
		t.Errorf("Pop returned %s", describeDeltas(d))
	}
	if f.Len() != 0 {
		t.Error("item was requeued; ErrRequeue is not supported")
	}
}

// TestDeltaFIFOPopShouldUnblockWhenClosed: blocked Pops return
// ErrFIFOClosed on Close.
func TestDeltaFIFOPopShouldUnblockWhenClosed(t *testing.T) {
	f := NewDeltaFIFOWithOptions(DeltaFIFOOptions{})
	const pops = 10
	errs := make(chan error, pops)
	for i := 0; i < pops; i++ {
		go func() {
			_, err := f.Pop(func(Deltas, bool) error { return nil })
			errs <- err
		}()
	}
	f.Close()
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

func TestDeltaFIFOCloseDrainsQueuedItems(t *testing.T) {
	f := NewDeltaFIFOWithOptions(DeltaFIFOOptions{})
	must(t, f.Add(mkObj("a", 1)))
	f.Close()
	// Close does not gate producers.
	must(t, f.Add(mkObj("b", 1)))
	if got := popAll(t, f); !reflect.DeepEqual(got, []string{"[Added a@1]", "[Added b@1]"}) {
		t.Errorf("drained %q", got)
	}
	if _, err := f.Pop(func(Deltas, bool) error { return nil }); !errors.Is(err, ErrFIFOClosed) {
		t.Errorf("Pop on closed empty queue: %v, want ErrFIFOClosed", err)
	}
}

// TestDeltaFIFOConcurrentProducers: the order of each producer's keys is
// preserved.
func TestDeltaFIFOConcurrentProducers(t *testing.T) {
	f := NewDeltaFIFOWithOptions(DeltaFIFOOptions{})
	const producers, perProducer = 10, 100
	var wg sync.WaitGroup
	for p := 0; p < producers; p++ {
		wg.Go(func() {
			for i := 0; i < perProducer; i++ {
				if err := f.Add(mkNsObj(string(rune('a'+p)), "o"+string(rune('A'+i/26))+string(rune('a'+i%26)), i)); err != nil {
					t.Error(err)
				}
			}
		})
	}
	last := map[string]int{}
	for n := 0; n < producers*perProducer; n++ {
		d, err := f.Pop(func(Deltas, bool) error { return nil })
		must(t, err)
		o := d.Newest().Object.(*testObj)
		if prev, ok := last[o.Namespace]; ok && o.val != prev+1 {
			t.Fatalf("producer %s: popped %d after %d", o.Namespace, o.val, prev)
		}
		last[o.Namespace] = o.val
	}
	wg.Wait()
}

func TestDeltaFIFOCoalescesUpdatedBacklog(t *testing.T) {
	cases := []struct {
		name string
		max  int
		ops  func(t *testing.T, f *DeltaFIFO)
		want []string
	}{
		{
			name: "run of updates folds into the newest",
			max:  2,
			ops: func(t *testing.T, f *DeltaFIFO) {
				for i := 1; i <= 6; i++ {
					must(t, f.Update(mkObj("a", i)))
				}
			},
			want: []string{"[Updated a@1, Updated a@6 (+4)]"},
		},
		{
			name: "added and deleted are never folded",
			max:  1,
			ops: func(t *testing.T, f *DeltaFIFO) {
				must(t, f.Add(mkObj("a", 1)))
				must(t, f.Update(mkObj("a", 2)))
				must(t, f.Update(mkObj("a", 3)))
				must(t, f.Delete(mkObj("a", 4)))
				must(t, f.Add(mkObj("a", 5)))
				must(t, f.Update(mkObj("a", 6)))
			},
			want: []string{"[Added a@1, Updated a@3 (+1), Deleted a@4, Added a@5, Updated a@6]"},
		},
		{
			name: "zero keeps everything",
			max:  0,
			ops: func(t *testing.T, f *DeltaFIFO) {
				for i := 1; i <= 3; i++ {
					must(t, f.Update(mkObj("a", i)))
				}
			},
			want: []string{"[Updated a@1, Updated a@2, Updated a@3]"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := NewDeltaFIFOWithOptions(DeltaFIFOOptions{MaxUpdatedBacklog: tc.max})
			tc.ops(t, f)
			if got := popAll(t, f); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestDeltasOldestNewest(t *testing.T) {
	var empty Deltas
	if empty.Oldest() != nil || empty.Newest() != nil {
		t.Error("empty Deltas has an oldest/newest")
	}
	d := Deltas{{Type: Added, Object: mkObj("a", 1)}, {Type: Updated, Object: mkObj("a", 2)}}
	if describe(d.Oldest().Object) != "a@1" || describe(d.Newest().Object) != "a@2" {
		t.Errorf("Oldest/Newest = %s/%s", describe(d.Oldest().Object), describe(d.Newest().Object))
	}
}

// TestDeltaFIFOPopulated: a queue that starts populated (a resumed stream,
// its known objects the state it resumes from) is synced at once, and a
// later Replace is a relist, not an initial list: what changed is
// Replaced, what vanished Deleted with its final state unknown, and
// nothing is popped as part of an initial list.
func TestDeltaFIFOPopulated(t *testing.T) {
	f := NewDeltaFIFOWithOptions(DeltaFIFOOptions{
		KnownObjects:          knownOf(mkObj("foo", 5), mkObj("bar", 6)),
		EmitDeltaTypeReplaced: true,
		Populated:             true,
	})
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
		_, err := f.Pop(func(d Deltas, initial bool) error {
			if initial {
				t.Errorf("%v popped as part of an initial list", d)
			}
			for _, delta := range d {
				key, _ := f.KeyOf(delta.Object)
				got = append(got, string(delta.Type)+" "+key)
			}
			return nil
		})
		must(t, err)
	}
	if want := "Replaced foo,Deleted bar"; strings.Join(got, ",") != want {
		t.Errorf("popped %v, want %s", got, want)
	}
}
