package informer

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-deltas/kubectl-deltas/internal/cache"
	"github.com/kubectl-deltas/kubectl-deltas/internal/cache/cachetest"
	"github.com/kubectl-deltas/kubectl-deltas/internal/rawobj"
)

func cm(t *testing.T, name, rv, uid, data string) *rawobj.Object {
	t.Helper()
	return cachetest.MustParse(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"`+name+`","namespace":"ns","resourceVersion":"`+rv+`","uid":"`+uid+`"},"data":{"k":"`+data+`"}}`)
}

func TestInformerProcess(t *testing.T) {
	store := cache.NewIndexer(cache.DeletionHandlingMetaNamespaceKeyFunc, cache.Indexers{})
	inf := &Informer{store: store}
	a1, a2 := cm(t, "a", "1", "u1", "x"), cm(t, "a", "2", "u1", "y")
	items, err := inf.process(cache.Deltas{{Type: cache.Replaced, Object: a1}}, false)
	if err != nil || len(items) != 1 || items[0].Old != nil || items[0].Unchanged {
		t.Fatalf("initial: %+v, %v", items, err)
	}
	// A relist (or a list started again) with the same resourceVersion
	// is unchanged.
	items, _ = inf.process(cache.Deltas{{Type: cache.Replaced, Object: a1}}, false)
	if !items[0].Unchanged || items[0].Old != a1 {
		t.Errorf("relist of an unchanged object: %+v", items[0])
	}
	items, _ = inf.process(cache.Deltas{{Type: cache.Updated, Object: a2}, {Type: cache.Deleted, Object: cache.DeletedFinalStateUnknown{Key: "ns/a", Obj: a2}}}, false)
	if items[0].Old != a1 || items[1].Old != a2 || !items[1].Tombstone || items[1].Key != "ns/a" {
		t.Errorf("update+tombstone: %+v", items)
	}
	if len(store.ListKeys()) != 0 {
		t.Errorf("store after delete: %v", store.ListKeys())
	}
	if _, err := inf.process(cache.Deltas{{Type: cache.Added, Object: "nope"}}, false); err == nil {
		t.Error("a foreign object was accepted")
	}
}

func TestKnownStoreResume(t *testing.T) {
	store := cache.NewIndexer(cache.DeletionHandlingMetaNamespaceKeyFunc, cache.Indexers{})
	if _, _, err := (knownStore{Indexer: store, resume: true}).GetByKey("ns/x"); !errors.Is(err, errUnknownInResume) {
		t.Errorf("resume: unknown key gave %v", err)
	}
	if _, exists, err := (knownStore{Indexer: store}).GetByKey("ns/x"); exists || err != nil {
		t.Errorf("normal: unknown key gave %v %v", exists, err)
	}
	// In resume mode a Deleted of an object never seen is still queued.
	fifo := cache.NewDeltaFIFOWithOptions(cache.DeltaFIFOOptions{KnownObjects: knownStore{Indexer: store, resume: true}})
	if err := fifo.Delete(cm(t, "x", "5", "u", "v")); err != nil || fifo.Len() != 1 {
		t.Errorf("resume delete: %v, queue %d", err, fifo.Len())
	}
}

func TestOneWarningPerOutage(t *testing.T) {
	var errOut bytes.Buffer
	now := time.Unix(0, 0)
	h := newOutages(&errOut, func() time.Time { return now }, nil)
	a, b := &Informer{}, &Informer{}
	h.recovered(a) // healthy already: silent
	h.failed(a, errors.New("dial tcp: connection refused"))
	h.failed(a, errors.New("dial tcp: connection refused"))
	h.failed(b, errors.New("dial tcp: connection refused"))
	now = now.Add(3 * time.Second)
	h.recovered(a)
	h.recovered(b)
	h.failed(a, errors.New("503"))
	lines := strings.Split(strings.TrimSpace(errOut.String()), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "warning: dial tcp") || lines[1] != "info: connection restored after 3s" || !strings.HasPrefix(lines[2], "warning: 503") {
		t.Errorf("stderr:\n%s", errOut.String())
	}
}

// An aggregated API's outage is its own: it does not hide, nor is hidden
// by, the cluster's; its warning says what its APIService says, once.
func TestOutageOfAnAggregatedAPI(t *testing.T) {
	var errOut bytes.Buffer
	now := time.Unix(0, 0)
	asked := 0
	h := newOutages(&errOut, func() time.Time { return now }, func(t Target) string {
		asked++
		return "APIService " + t.APIService + ": FailedDiscoveryCheck: failing or\nmissing response"
	})
	widgets := &Informer{target: Target{
		Resource:   schema.GroupVersionResource{Group: "fake.example.com", Version: "v1", Resource: "widgets"},
		APIService: "v1.fake.example.com",
	}}
	gadgets := &Informer{target: Target{
		Resource:   schema.GroupVersionResource{Group: "fake.example.com", Version: "v1", Resource: "gadgets"},
		APIService: "v1.fake.example.com",
	}}
	cms := &Informer{target: Target{Resource: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}}}

	h.failed(widgets, errors.New("the server is currently unable to handle the request"))
	h.failed(gadgets, errors.New("the server is currently unable to handle the request"))
	h.failed(cms, errors.New("dial tcp: connection refused"))
	now = now.Add(2 * time.Second)
	h.recovered(cms)
	now = now.Add(40 * time.Second)
	h.recovered(widgets)
	h.recovered(gadgets)

	want := []string{
		"warning: widgets.fake.example.com is down (APIService v1.fake.example.com: FailedDiscoveryCheck: failing or missing response): the server is currently unable to handle the request; retrying, its objects are kept until the server says the type is gone",
		"warning: dial tcp: connection refused; retrying, nothing is lost: the watch resumes where it stopped, or relists",
		"info: connection restored after 2s",
		"info: APIService v1.fake.example.com is back after 42s: its types stream again",
	}
	if got := strings.Split(strings.TrimSpace(errOut.String()), "\n"); !slices.Equal(got, want) {
		t.Errorf("stderr:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if asked != 1 {
		t.Errorf("the APIService was described %d times, want once per outage", asked)
	}
}

func TestFatalErrors(t *testing.T) {
	gr := schema.GroupResource{Resource: "configmaps"}
	forbidden := apierrors.NewForbidden(gr, "", errors.New("no"))
	if !IsFatal(forbidden) || !strings.Contains(ExplainFatal(forbidden).Error(), "kubectl auth can-i") {
		t.Errorf("forbidden: %v", ExplainFatal(forbidden))
	}
	unauthorized := apierrors.NewUnauthorized("expired")
	if !IsFatal(unauthorized) || !strings.Contains(ExplainFatal(unauthorized).Error(), "log in again") {
		t.Errorf("unauthorized: %v", ExplainFatal(unauthorized))
	}
	if IsFatal(apierrors.NewServiceUnavailable("x")) || IsFatal(apierrors.NewTooManyRequests("x", 1)) {
		t.Error("a retriable error is fatal")
	}
	gone := apierrors.NewGone("gone") //nolint:staticcheck // servers before 1.18 sent 410 Gone
	if !cache.IsExpired(apierrors.NewResourceExpired("old")) || !cache.IsExpired(gone) {
		t.Error("expired not recognized")
	}
}

// admitNames admits the objects whose names it holds.
type admitNames map[string]bool

func (a admitNames) Admit(obj *rawobj.Object, _ bool) bool { return a[obj.Name] }

func TestInformerAdmission(t *testing.T) {
	store := cache.NewIndexer(cache.DeletionHandlingMetaNamespaceKeyFunc, cache.Indexers{})
	admit := admitNames{}
	inf := &Informer{store: store, admission: admit, fifo: cache.NewDeltaFIFOWithOptions(cache.DeltaFIFOOptions{KnownObjects: store})}
	b1, b2, c1 := cm(t, "b", "1", "u1", "x"), cm(t, "b", "2", "u1", "y"), cm(t, "c", "3", "u2", "z")

	items, err := inf.process(cache.Deltas{{Type: cache.Replaced, Object: b1}, {Type: cache.Deleted, Object: b1}}, true)
	if err != nil || len(items) != 0 || len(store.ListKeys()) != 0 {
		t.Fatalf("not admitted: items %+v, store %v, %v", items, store.ListKeys(), err)
	}
	admit["b"] = true
	items, _ = inf.process(cache.Deltas{{Type: cache.Updated, Object: b2}}, false)
	if len(items) != 1 || items[0].Object != b2 || items[0].Old != nil {
		t.Fatalf("admitted later: %+v", items)
	}
	// Once stored, an object is followed whatever Admit says now.
	delete(admit, "b")
	items, _ = inf.process(cache.Deltas{{Type: cache.Deleted, Object: b2}}, false)
	if len(items) != 1 || items[0].Old != b2 {
		t.Fatalf("deletion of a stored object: %+v", items)
	}

	if stored, err := inf.Adopt(c1); !stored || err != nil {
		t.Fatalf("Adopt of an unknown key: %v, %v", stored, err)
	}
	newer := cm(t, "c", "4", "u2", "w")
	if err := store.Update(newer); err != nil {
		t.Fatal(err)
	}
	if stored, _ := inf.Adopt(c1); stored {
		t.Error("Adopt replaced a newer version")
	}
	if got, _, _ := store.GetByKey("ns/c"); got != newer {
		t.Errorf("store has %v, want the newer version", got)
	}
}
