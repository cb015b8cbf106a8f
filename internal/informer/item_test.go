package informer

import (
	"reflect"
	"testing"

	"github.com/kubectl-deltas/kubectl-deltas/internal/cache"
	"github.com/kubectl-deltas/kubectl-deltas/internal/cache/cachetest"
)

// TestBatchShow: what a popped delta is shown as, decided once by the
// engine for every Sink.
func TestBatchShow(t *testing.T) {
	listed := cachetest.MustParse(t, `{"metadata":{"name":"a","namespace":"ns","resourceVersion":"1","uid":"u"}}`)
	updated := cachetest.MustParse(t, `{"metadata":{"name":"a","namespace":"ns","resourceVersion":"2","uid":"u"}}`)
	popped := func() []Item {
		return []Item{
			{Delta: cache.Delta{Type: cache.Replaced, Object: listed}, Object: listed, Key: "ns/a"},
			{Delta: cache.Delta{Type: cache.Updated, Object: updated}, Object: updated, Old: listed, Key: "ns/a"},
		}
	}
	cases := []struct {
		name            string
		initial, joined bool
		want            []string
	}{
		// A key popped during the initial list may carry, after its
		// listed state, an update the watch brought before the pop: the
		// listed state is initial, the update is a change.
		{name: "initial list", initial: true, want: []string{"Replaced initial", "Updated"}},
		// The initial list of a type that joined the running stream is news.
		{name: "joined type's list", initial: true, joined: true, want: []string{"Added", "Updated"}},
		// A relist while the stream runs: shown as popped, not initial.
		{name: "relist", want: []string{"Replaced", "Updated"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := Batch{Initial: tc.initial, Joined: tc.joined, Items: popped()}
			b.show()
			var got []string
			for _, it := range b.Items {
				s := string(it.Type)
				if it.Initial {
					s += " initial"
				}
				got = append(got, s)
				if it.Delta.Type != popped()[len(got)-1].Delta.Type {
					t.Errorf("show rewrote the popped delta: %s", it.Delta.Type)
				}
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("shown as %v, want %v", got, tc.want)
			}
		})
	}
}

// TestItemEntering: the first delta shown of an object entering a
// filtered view (a --tree member) has no previous state.
func TestItemEntering(t *testing.T) {
	old := cachetest.MustParse(t, `{"metadata":{"name":"a","resourceVersion":"1","uid":"u"}}`)
	obj := cachetest.MustParse(t, `{"metadata":{"name":"a","resourceVersion":"2","uid":"u"}}`)
	for _, tc := range []struct {
		initialState bool
		want         cache.DeltaType
	}{{true, cache.Replaced}, {false, cache.Added}} {
		it := Item{Delta: cache.Delta{Type: cache.Updated}, Type: cache.Updated, Old: old, Object: obj, Unchanged: true}
		it.Entering(tc.initialState)
		if it.Type != tc.want || it.Initial != tc.initialState || it.Old != nil || it.Unchanged {
			t.Errorf("entering (initial state %v): %+v", tc.initialState, it)
		}
	}
}
