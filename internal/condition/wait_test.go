package condition

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-deltas/kubectl-deltas/internal/cache"
	"github.com/kubectl-deltas/kubectl-deltas/internal/delta"
	"github.com/kubectl-deltas/kubectl-deltas/internal/informer"
	"github.com/kubectl-deltas/kubectl-deltas/internal/rawobj"
)

// fakeStream runs the targets of an engine that is never started; roots
// are the targets without the Unfiltered mark, as --tree's.
type fakeStream struct{ engine *informer.Engine }

func (s fakeStream) Targets() []informer.Target  { return s.engine.Targets() }
func (fakeStream) IsRoot(t informer.Target) bool { return !t.Unfiltered }

// discard is the Sink behind the waiter; it counts the batches.
type discard struct{ batches int }

func (d *discard) Handle(informer.Batch) (bool, error) { d.batches++; return false, nil }
func (*discard) Flush() error                          { return nil }

var pods = informer.Target{
	Resource:  schema.GroupVersionResource{Version: "v1", Resource: "pods"},
	Kind:      schema.GroupVersionKind{Version: "v1", Kind: "Pod"},
	Namespace: "ns",
}

func pod(t *testing.T, name, phase string) *rawobj.Object {
	t.Helper()
	o, err := rawobj.Parse([]byte(`{"metadata":{"name":"`+name+`","namespace":"ns","uid":"`+name+`","resourceVersion":"1"},"status":{"phase":"`+phase+`"}}`), rawobj.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func mustConditions(t *testing.T, flag string, values ...string) []*Condition {
	t.Helper()
	var out []*Condition
	for _, v := range values {
		c, err := Parse(flag, v)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, c)
	}
	return out
}

// TestWaiter: the conditions are evaluated on what the Sink was handed,
// roots only for --until, every object for --fail-when.
func TestWaiter(t *testing.T) {
	engine := informer.New(informer.Config{NewListerWatcher: func(informer.Target) cache.ListerWatcher { return nil }}, nil)
	named := pods
	named.Name = "web"
	scout := pods
	scout.Unfiltered, scout.MetadataOnly, scout.Optional = true, true, true
	webInf, err := engine.Add(named)
	if err != nil {
		t.Fatal(err)
	}
	scoutInf, err := engine.Add(scout)
	if err != nil {
		t.Fatal(err)
	}
	var errOut bytes.Buffer
	w := NewWaiter(mustConditions(t, "--until", "jsonpath={.status.phase}=Running"), nil,
		mustConditions(t, "--fail-when", "jsonpath={.status.phase}=Failed"), &errOut)
	if !w.Active() {
		t.Fatal("a waiter with conditions is not active")
	}
	next := &discard{}
	sink := w.Sink(fakeStream{engine}, next)
	hand := func(inf *informer.Informer, typ delta.Type, obj *rawobj.Object) {
		t.Helper()
		b := informer.Batch{Informer: inf, Items: []informer.Item{{Type: typ, Object: obj, Key: "ns/" + obj.Name}}}
		if _, err := sink.Handle(b); err != nil {
			t.Fatal(err)
		}
	}

	if stop, err := w.Check(); stop || err != nil {
		t.Fatalf("before the named object exists: stop %v, %v", stop, err)
	}
	hand(webInf, delta.Added, pod(t, "web", "Pending"))
	// An object the scouts found stays Pending: --until is about the roots.
	hand(scoutInf, delta.Added, pod(t, "other", "Pending"))
	if stop, err := w.Check(); stop || err != nil {
		t.Fatalf("named object Pending: stop %v, %v", stop, err)
	}
	hand(webInf, delta.Updated, pod(t, "web", "Running"))
	if stop, err := w.Check(); !stop || err != nil {
		t.Fatalf("named object Running: stop %v, %v", stop, err)
	}
	if got := errOut.String(); got != "pod/web condition met\n" {
		t.Errorf("stderr %q", got)
	}
	// --fail-when looks at every object shown, the scouts' too.
	hand(scoutInf, delta.Updated, pod(t, "other", "Failed"))
	stop, err := w.Check()
	var failed *FailedError
	if !stop || !errors.As(err, &failed) || failed.Object != "pod/other" || !strings.Contains(err.Error(), "matched --fail-when=jsonpath={.status.phase}=Failed") {
		t.Fatalf("failed object: stop %v, %v", stop, err)
	}
	// A deleted object leaves the view.
	hand(scoutInf, delta.Deleted, pod(t, "other", "Failed"))
	if stop, err := w.Check(); !stop || err != nil {
		t.Fatalf("after the failed object was deleted: stop %v, %v", stop, err)
	}
	if next.batches != 5 {
		t.Errorf("the next sink got %d batches, want 5", next.batches)
	}
	if err := w.TimedOut(); err == nil || err.Error() != "timed out waiting for the condition on pods/web" {
		t.Errorf("TimedOut: %v", err)
	}
}
