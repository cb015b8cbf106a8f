// Package cacheconformance checks internal/cache against client-go's own
// tools/cache, which only tests may import.
package cacheconformance

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	clientgocache "k8s.io/client-go/tools/cache"

	"github.com/kubectl-deltas/kubectl-deltas/internal/cache"
)

// The differential test drives this package's cache.DeltaFIFO and client-go's own
// tools/cache.DeltaFIFO (the reference; used by tests only) with the same
// operations and requires the same popped sequences. Each side has a
// consumer that keeps its knownObjects store up to date as client-go's
// processDeltas does.

// diffKeys are the keys the operations pick from: few, so that operations
// collide on the same keys.
var diffKeys = [...]string{"a", "b", "c", "ns/d"}

// sortedKeys lists a store's keys in sorted order, so that both FIFOs see
// knownObjects in the same order (client-go's Replace and Resync follow
// ListKeys order; map order would make pops differ for no real reason).
type sortedKeys struct {
	listKeys func() []string
	getByKey func(string) (any, bool, error)
}

func (s sortedKeys) ListKeys() []string {
	keys := s.listKeys()
	sort.Strings(keys)
	return keys
}

func (s sortedKeys) GetByKey(key string) (any, bool, error) { return s.getByKey(key) }

type differential struct {
	ours       *cache.DeltaFIFO
	oursStore  cache.Store
	theirs     *clientgocache.DeltaFIFO
	theirStore clientgocache.Store
	// val numbers objects; it doubles as resourceVersion.
	val int
	// log records the operations for failure messages.
	log []string
}

func newDifferential(emitReplaced bool) *differential {
	d := &differential{
		oursStore:  cache.NewIndexer(cache.DeletionHandlingMetaNamespaceKeyFunc, cache.Indexers{}),
		theirStore: clientgocache.NewStore(clientgocache.DeletionHandlingMetaNamespaceKeyFunc),
	}
	oursOpts := cache.DeltaFIFOOptions{
		KnownObjects:          sortedKeys{d.oursStore.ListKeys, d.oursStore.GetByKey},
		EmitDeltaTypeReplaced: emitReplaced,
	}
	theirOpts := clientgocache.DeltaFIFOOptions{
		KnownObjects:          sortedKeys{d.theirStore.ListKeys, d.theirStore.GetByKey},
		EmitDeltaTypeReplaced: emitReplaced,
	}
	d.ours = cache.NewDeltaFIFOWithOptions(oursOpts)
	d.theirs = clientgocache.NewDeltaFIFOWithOptions(theirOpts)
	// Closed at once so that its Pop never blocks; see pop.
	d.theirs.Close()
	return d
}

func (d *differential) next(key string) *testObj {
	d.val++
	ns, name, _ := cache.SplitMetaNamespaceKey(key)
	return mkNsObj(ns, name, d.val)
}

// describeTheirs renders client-go's deltas in describeDeltas' format.
func describeTheirs(obj any) string {
	deltas, ok := obj.(clientgocache.Deltas)
	if !ok {
		return fmt.Sprintf("%T", obj)
	}
	ours := make(cache.Deltas, 0, len(deltas))
	for _, delta := range deltas {
		o := delta.Object
		if t, ok := o.(clientgocache.DeletedFinalStateUnknown); ok {
			o = cache.DeletedFinalStateUnknown{Key: t.Key, Obj: t.Obj}
		}
		ours = append(ours, cache.Delta{Type: cache.DeltaType(delta.Type), Object: o})
	}
	return describeDeltas(ours)
}

// processOurs is processDeltas for this package's side.
func processOurs(store cache.Store, deltas cache.Deltas) error {
	for _, delta := range deltas {
		switch delta.Type {
		case cache.Sync, cache.Replaced, cache.Added, cache.Updated:
			if _, exists, err := store.Get(delta.Object); err == nil && exists {
				if err := store.Update(delta.Object); err != nil {
					return err
				}
			} else if err := store.Add(delta.Object); err != nil {
				return err
			}
		case cache.Deleted:
			if err := store.Delete(delta.Object); err != nil {
				return err
			}
		}
	}
	return nil
}

// processTheirs is client-go's processDeltas for the reference side.
func processTheirs(store clientgocache.Store, deltas clientgocache.Deltas) error {
	for _, delta := range deltas {
		switch delta.Type {
		case clientgocache.Sync, clientgocache.Replaced, clientgocache.Added, clientgocache.Updated:
			if _, exists, err := store.Get(delta.Object); err == nil && exists {
				if err := store.Update(delta.Object); err != nil {
					return err
				}
			} else if err := store.Add(delta.Object); err != nil {
				return err
			}
		case clientgocache.Deleted:
			if err := store.Delete(delta.Object); err != nil {
				return err
			}
		}
	}
	return nil
}

// pop pops one key from each side and compares. The reference has no Len,
// but it is closed from the start: a closed cache.DeltaFIFO still accepts items
// and drains them, and Pop on an empty closed queue returns
// ErrFIFOClosed instead of blocking.
func (d *differential) pop(t *testing.T) {
	t.Helper()
	var oursInitial bool
	oursDeltas, err := d.ours.Pop(func(deltas cache.Deltas, initial bool) error {
		oursInitial = initial
		return processOurs(d.oursStore, deltas)
	})
	if err != nil {
		t.Fatalf("our Pop: %v\n%s", err, d.history())
	}
	ours := describeDeltas(oursDeltas)
	d.log = append(d.log, "Pop -> "+ours)
	var theirInitial bool
	obj, err := d.theirs.Pop(func(obj any, initial bool) error {
		theirInitial = initial
		return processTheirs(d.theirStore, obj.(clientgocache.Deltas))
	})
	if errors.Is(err, clientgocache.ErrFIFOClosed) {
		t.Fatalf("client-go's queue is empty but ours popped %s\n%s", ours, d.history())
	}
	if err != nil {
		t.Fatalf("client-go Pop: %v", err)
	}
	theirs := describeTheirs(obj)
	if ours != theirs || oursInitial != theirInitial {
		t.Fatalf("popped differently:\n ours   %s initial=%v\n theirs %s initial=%v\n%s", ours, oursInitial, theirs, theirInitial, d.history())
	}
}

func (d *differential) history() string {
	return "operations:\n  " + strings.Join(d.log, "\n  ")
}

// apply runs one operation on both sides. Errors must agree too.
func (d *differential) apply(t *testing.T, op, arg byte) {
	t.Helper()
	key := diffKeys[int(arg)%len(diffKeys)]
	var oursErr, theirErr error
	switch op % 8 {
	case 0, 1:
		o := d.next(key)
		d.log = append(d.log, "Add "+describe(o))
		oursErr, theirErr = d.ours.Add(o), d.theirs.Add(o)
	case 2:
		o := d.next(key)
		d.log = append(d.log, "Update "+describe(o))
		oursErr, theirErr = d.ours.Update(o), d.theirs.Update(o)
	case 3:
		o := d.next(key)
		d.log = append(d.log, "Delete "+describe(o))
		oursErr, theirErr = d.ours.Delete(o), d.theirs.Delete(o)
	case 4:
		// arg's bits pick the keys of the list; bit 4 duplicates one.
		var list []any
		var names []string
		for i, k := range diffKeys {
			if arg&(1<<i) != 0 {
				o := d.next(k)
				list = append(list, o)
				names = append(names, describe(o))
			}
		}
		if arg&16 != 0 && len(list) > 0 {
			o := d.next(key)
			list = append(list, o)
			names = append(names, describe(o))
		}
		theirList := append([]any(nil), list...)
		if arg&32 != 0 {
			// Ours a streamed Replace (StartReplace, Add…, Finish), which
			// must have Replace's effect when nothing pops in between.
			d.log = append(d.log, "StartReplace, Add…, Finish ["+strings.Join(names, ", ")+"]")
			rep := d.ours.StartReplace()
			// Objects one by one, or all at once (arg bit 6).
			if arg&64 != 0 {
				oursErr = rep.Add(list)
			} else {
				for _, o := range list {
					if oursErr = rep.Add([]any{o}); oursErr != nil {
						break
					}
				}
			}
			if oursErr == nil {
				oursErr = rep.Finish("0")
			}
			theirErr = d.theirs.Replace(theirList, "0")
			break
		}
		d.log = append(d.log, "Replace ["+strings.Join(names, ", ")+"]")
		oursErr, theirErr = d.ours.Replace(list, "0"), d.theirs.Replace(theirList, "0")
	case 5:
		d.log = append(d.log, "Resync")
		oursErr, theirErr = d.ours.Resync(), d.theirs.Resync()
	default:
		if d.ours.Len() > 0 {
			d.pop(t)
		}
		return
	}
	if (oursErr == nil) != (theirErr == nil) {
		t.Fatalf("errors differ: ours %v, theirs %v\n%s", oursErr, theirErr, d.history())
	}
	if o, th := d.ours.HasSynced(), d.theirs.HasSynced(); o != th {
		t.Fatalf("HasSynced differs: ours %v, theirs %v\n%s", o, th, d.history())
	}
}

// runDifferential interprets data as operations: the first byte picks the
// options, then each pair of bytes is an operation and its argument. At the
// end both queues are drained and the consumers' stores compared.
func runDifferential(t *testing.T, data []byte) {
	t.Helper()
	if len(data) == 0 {
		return
	}
	d := newDifferential(data[0]&1 != 0)
	for i := 1; i+1 < len(data); i += 2 {
		d.apply(t, data[i], data[i+1])
	}
	for d.ours.Len() > 0 {
		d.pop(t)
	}
	ours, theirs := d.oursStore.List(), d.theirStore.List()
	if got, want := keysOf(t, ours), keysOf(t, theirs); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("consumer stores differ: ours %v, theirs %v\n%s", got, want, d.history())
	}
	// Both queues are drained: client-go's must not pop anything more.
	if _, err := d.theirs.Pop(func(any, bool) error { return nil }); err == nil {
		t.Fatalf("client-go's queue still held items after ours was drained\n%s", d.history())
	}
}

// TestDeltaFIFODifferential runs a few thousand random sequences with fixed
// seeds, so that every `go test` run compares the implementations.
func TestDeltaFIFODifferential(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 1500; i++ {
		data := make([]byte, 1+2*(1+rng.IntN(40)))
		for j := range data {
			data[j] = byte(rng.UintN(256))
		}
		runDifferential(t, data)
		if t.Failed() {
			return
		}
	}
}

// FuzzDeltaFIFODifferential lets the fuzzer search for sequences on which
// the implementations disagree:
//
//	go test -run=^$ -fuzz=FuzzDeltaFIFODifferential ./internal/cache/
func FuzzDeltaFIFODifferential(f *testing.F) {
	seeds := [][]byte{
		// Delete then Replace with the deleted key relisted.
		{1, 0, 0, 6, 0, 3, 0, 4, 1},
		// Add, relist without it (queue-only tombstone), pop.
		{3, 0, 1, 4, 0, 7, 0, 7, 0},
		// Update then Resync (the resync race).
		{0, 0, 2, 6, 0, 2, 2, 5, 0, 6, 0},
		// Initial list with duplicates, then pops and deletes.
		{1, 4, 31, 6, 0, 3, 1, 6, 0, 4, 2, 6, 0, 6, 0},
		// Repeated deletes of the same key around relists.
		{1, 0, 3, 6, 0, 3, 3, 3, 3, 4, 0, 4, 0, 6, 0},
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 400 {
			data = data[:400]
		}
		runDifferential(t, data)
	})
}
