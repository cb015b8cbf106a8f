package condition

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-deltas/kubectl-deltas/internal/cache"
	"github.com/kubectl-deltas/kubectl-deltas/internal/delta"
	"github.com/kubectl-deltas/kubectl-deltas/internal/health"
	"github.com/kubectl-deltas/kubectl-deltas/internal/informer"
	"github.com/kubectl-deltas/kubectl-deltas/internal/rawobj"
)

// fakeStream runs the targets of an engine that is never started.
type fakeStream struct{ engine *informer.Engine }

func (s fakeStream) Targets() []informer.Target { return s.engine.Targets() }

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
	scout.Role, scout.Optional = informer.RoleScout, true
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
	if !stop || !errors.As(err, &failed) || failed.Held.Name != "pod/other" || !strings.Contains(err.Error(), "matched --fail-when=jsonpath={.status.phase}=Failed") {
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

// object parses JSON as the informers do.
func object(t *testing.T, data string) *rawobj.Object {
	t.Helper()
	o, err := rawobj.Parse([]byte(data), rawobj.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// podAt is a Pod created at created with the given status.
func podAt(t *testing.T, name string, created time.Time, status string) *rawobj.Object {
	t.Helper()
	return object(t, `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"`+name+`","namespace":"ns","uid":"`+name+
		`","resourceVersion":"1","creationTimestamp":"`+created.UTC().Format(time.RFC3339)+`"},"status":`+status+`}`)
}

// TestWaiterStatus: status=… under --tree is a verdict on the root and
// every member shown; a verdict that changes with time alone is judged
// again once its time has come; failing and timing out name the object
// and its health.
func TestWaiterStatus(t *testing.T) {
	engine := informer.New(informer.Config{NewListerWatcher: func(informer.Target) cache.ListerWatcher { return nil }}, nil)
	root := informer.Target{
		Resource:  schema.GroupVersionResource{Version: "v1", Resource: "configmaps"},
		Kind:      schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"},
		Namespace: "ns", Name: "web",
	}
	owned := pods
	owned.Role = informer.RoleOwned
	rootInf, err := engine.Add(root)
	if err != nil {
		t.Fatal(err)
	}
	ownedInf, err := engine.Add(owned)
	if err != nil {
		t.Fatal(err)
	}
	var errOut bytes.Buffer
	w := NewWaiter(mustConditions(t, "--until", "status=Current"), nil, mustConditions(t, "--fail-when", "status=Failed"), &errOut)
	if !w.OnHealth() {
		t.Fatal("a waiter on status does not ask to be checked with time")
	}
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	w.SetNow(func() time.Time { return now })
	sink := w.Sink(fakeStream{engine}, &discard{})
	hand := func(inf *informer.Informer, typ delta.Type, obj *rawobj.Object) {
		t.Helper()
		b := informer.Batch{Informer: inf, Items: []informer.Item{{Type: typ, Object: obj, Key: "ns/" + obj.Name}}}
		if _, err := sink.Handle(b); err != nil {
			t.Fatal(err)
		}
	}
	check := func(what string, wantStop bool) error {
		t.Helper()
		stop, err := w.Check()
		if stop != wantStop {
			t.Fatalf("%s: stop %v, %v", what, stop, err)
		}
		return err
	}
	noError := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}

	hand(rootInf, delta.Added, object(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"web","namespace":"ns","uid":"web","resourceVersion":"1"}}`))
	unschedulable := `{"phase":"Pending","conditions":[{"type":"PodScheduled","status":"False","reason":"Unschedulable"}]}`
	hand(ownedInf, delta.Added, podAt(t, "web-1", now.Add(-5*time.Second), unschedulable))
	// The root is Current, its Pod is not: not done, not failed yet.
	noError(check("a Pod pending for 5s", false))
	err = w.TimedOut()
	if err == nil || err.Error() != "timed out waiting for the condition on configmaps/web\n  pod/web-1: InProgress (PodNotScheduled): Pod has not been scheduled" {
		t.Errorf("TimedOut: %v", err)
	}
	// No delta, only time: 15 s after its creation the Pod has failed.
	now = now.Add(9 * time.Second)
	noError(check("a Pod pending for 14s", false))
	now = now.Add(time.Second)
	err = check("a Pod pending for 15s", true)
	var failed *FailedError
	if !errors.As(err, &failed) || err.Error() != "pod/web-1 matched --fail-when=status=Failed: Failed (PodUnschedulable): Pod could not be scheduled" {
		t.Fatalf("failed: %v", err)
	}
	// Scheduled and ready: root and member Current.
	hand(ownedInf, delta.Updated, podAt(t, "web-1", now, `{"phase":"Running","conditions":[{"type":"Ready","status":"True"}]}`))
	noError(check("the Pod ready", true))
	if got := errOut.String(); got != "configmap/web condition met\n" {
		t.Errorf("stderr %q", got)
	}
	// Without status to judge, messages name the objects only.
	w.SetMetadataOnly()
	hand(ownedInf, delta.Updated, podAt(t, "web-1", now, unschedulable))
	if err := w.TimedOut(); err == nil || !strings.HasSuffix(err.Error(), "\n  pod/web-1") {
		t.Errorf("TimedOut without status: %v", err)
	}
}

// TestWaiterTimedOutNamesWhatHeld: with several clusters or several named
// objects, a timeout names only the objects whose condition did not hold,
// not those met.
func TestWaiterTimedOutNamesWhatHeld(t *testing.T) {
	engine := informer.New(informer.Config{NewListerWatcher: func(informer.Target) cache.ListerWatcher { return nil }}, nil)
	add := func(context, name string) *informer.Informer {
		t.Helper()
		target := pods
		target.Context, target.Name = context, name
		inf, err := engine.Add(target)
		if err != nil {
			t.Fatal(err)
		}
		return inf
	}
	add("staging", "web")
	prod, other := add("prod", "web"), add("prod", "db")
	w := NewWaiter(mustConditions(t, "--until", "jsonpath={.status.phase}=Running"), nil, nil, &bytes.Buffer{})
	sink := w.Sink(fakeStream{engine}, &discard{})
	for _, h := range []struct {
		inf   *informer.Informer
		name  string
		phase string
	}{{prod, "web", "Running"}, {other, "db", "Pending"}} {
		b := informer.Batch{Informer: h.inf, Items: []informer.Item{{Type: delta.Added, Object: pod(t, h.name, h.phase), Key: "ns/" + h.name}}}
		if _, err := sink.Handle(b); err != nil {
			t.Fatal(err)
		}
	}
	want := `timed out waiting for the condition on pods/web in context "staging", pods/db in context "prod"` + "\n" +
		`  context "prod": pod/db: Current (no status): Resource is current` + "\n" + // no kind: nothing says
		`  context "staging": pod/web: NotFound: Resource does not exist`
	if err := w.TimedOut(); err == nil || err.Error() != want {
		t.Errorf("TimedOut:\n%v\nwant\n%s", err, want)
	}
}

// TestFailedNamesItsReason: the health in a --fail-when error has its
// (Reason) also when the message repeats it, as an image pull's does.
func TestFailedNamesItsReason(t *testing.T) {
	engine := informer.New(informer.Config{NewListerWatcher: func(informer.Target) cache.ListerWatcher { return nil }}, nil)
	inf, err := engine.Add(pods)
	if err != nil {
		t.Fatal(err)
	}
	w := NewWaiter(nil, nil, mustConditions(t, "--fail-when", "status=Failed"), &bytes.Buffer{})
	w.SetFailAfter(0) // --fail-after=0: a pull error fails at first sight
	sink := w.Sink(fakeStream{engine}, &discard{})
	pulling := podAt(t, "web-1", time.Now(), `{"phase":"Pending","containerStatuses":[{"name":"c","ready":false,"restartCount":0,"image":"nope","imageID":"",`+
		`"state":{"waiting":{"reason":"ErrImagePull","message":"pull access denied for nope"}}}]}`)
	if _, err := sink.Handle(informer.Batch{Informer: inf, Items: []informer.Item{{Type: delta.Added, Object: pulling, Key: "ns/web-1"}}}); err != nil {
		t.Fatal(err)
	}
	stop, err := w.Check()
	want := "pod/web-1 matched --fail-when=status=Failed: Failed (ErrImagePull): container c: ErrImagePull: pull access denied for nope"
	if !stop || err == nil || err.Error() != want {
		t.Errorf("got stop %v, %v\nwant %s", stop, err, want)
	}
}

// TestStableFor: --until holds only once it has held for --stable-for
// without a break, on the waiter's clock; a break starts the window
// again; a timeout within the window says how long it held.
func TestStableFor(t *testing.T) {
	engine := informer.New(informer.Config{NewListerWatcher: func(informer.Target) cache.ListerWatcher { return nil }}, nil)
	target := pods
	target.Name = "web"
	inf, err := engine.Add(target)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	f := &Flags{Until: []string{"jsonpath={.status.phase}=Running"}, StableFor: 10 * time.Second}
	if err := f.Validate(); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	w := f.ToWaiter(&out, false, 0, func() time.Time { return now })
	if got := w.CheckEvery(); got != time.Second {
		t.Errorf("CheckEvery %s, want a second: the window ends with time alone", got)
	}
	sink := w.Sink(fakeStream{engine}, &discard{})
	show := func(phase string) {
		t.Helper()
		b := informer.Batch{Informer: inf, Items: []informer.Item{{Type: delta.Updated, Object: pod(t, "web", phase), Key: "ns/web"}}}
		if _, err := sink.Handle(b); err != nil {
			t.Fatal(err)
		}
	}
	check := func(want bool, when string) {
		t.Helper()
		if done, err := w.Check(); done != want || err != nil {
			t.Fatalf("%s: Check = %v, %v; want %v", when, done, err, want)
		}
	}
	show("Running")
	check(false, "held for 0s")
	now = now.Add(4 * time.Second)
	check(false, "held for 4s")
	if err := w.TimedOut(); err == nil || !strings.Contains(err.Error(), "it has held for 4s of the 10s --stable-for asks") {
		t.Errorf("a timeout within the window: %v", err)
	}
	show("Pending") // a break: crash-looping, say
	check(false, "broken")
	now = now.Add(7 * time.Second)
	show("Running")
	check(false, "held again for 0s, 11s after it first held")
	now = now.Add(10 * time.Second)
	check(true, "held for 10s")
	if out.String() != "pod/web condition met\n" {
		t.Errorf("outcome %q", out.String())
	}
}

func TestStableForAndFailAfterNeedWhatTheyApplyTo(t *testing.T) {
	for _, tc := range []struct {
		f    Flags
		want string
	}{
		{Flags{StableFor: time.Second}, "--stable-for says how long --until must hold: add --until=COND"},
		{Flags{Until: []string{"delete"}, StableFor: -time.Second}, "invalid --stable-for -1s"},
		{Flags{FailWhen: []string{"delete"}, StableFor: time.Second}, "--stable-for says how long --until must hold"},
	} {
		if err := tc.f.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.f, err, tc.want)
		}
	}
}

// TestWaiterReportsChangesOfTheVerdict: with ReportChanges, each change
// of the worst health of the objects waited on is reported once, naming
// the objects that have it; not the one that ends the run.
func TestWaiterReportsChangesOfTheVerdict(t *testing.T) {
	engine := informer.New(informer.Config{NewListerWatcher: func(informer.Target) cache.ListerWatcher { return nil }}, nil)
	inf, err := engine.Add(pods)
	if err != nil {
		t.Fatal(err)
	}
	w := NewWaiter(mustConditions(t, "--until", "status=Current"), nil, nil, &bytes.Buffer{})
	var reported []string
	w.ReportChanges(func(status health.Status, cause []Held) {
		names := make([]string, len(cause))
		for i, h := range cause {
			names[i] = h.Name
			if h.Verdict == nil || h.Verdict.Status != status {
				t.Errorf("%s is named for %s but judged %+v", h.Name, status, h.Verdict)
			}
		}
		reported = append(reported, string(status)+" "+strings.Join(names, ","))
	})
	sink := w.Sink(fakeStream{engine}, &discard{})
	step := func(stopWanted bool, objs ...*rawobj.Object) {
		t.Helper()
		b := informer.Batch{Informer: inf}
		for _, o := range objs {
			b.Items = append(b.Items, informer.Item{Type: delta.Updated, Object: o, Key: "ns/" + o.Name})
		}
		if _, err := sink.Handle(b); err != nil {
			t.Fatal(err)
		}
		if stop, err := w.Check(); stop != stopWanted || err != nil {
			t.Fatalf("stop %v, %v; want stop %v (reported %q)", stop, err, stopWanted, reported)
		}
	}
	kindPod := func(name, phase string) *rawobj.Object {
		status := `{"phase":"` + phase + `"}`
		if phase == "CrashLoopBackOff" {
			status = `{"phase":"Running","containerStatuses":[{"name":"c","ready":false,"restartCount":3,"state":{"waiting":{"reason":"CrashLoopBackOff"}}}]}`
		}
		o, err := rawobj.Parse([]byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"`+name+`","namespace":"ns","uid":"`+name+`","resourceVersion":"1"},"status":`+status+`}`), rawobj.ParseOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	step(false, kindPod("a", "Pending"), kindPod("b", "Succeeded"))
	step(false, kindPod("a", "Pending"))          // the same verdict: nothing new
	step(false, kindPod("b", "CrashLoopBackOff")) // b fails: the worst is Failed
	step(false, kindPod("b", "Succeeded"))        // back to a's InProgress
	step(true, kindPod("a", "Succeeded"))         // met: the outcome says it, not a report
	want := []string{"InProgress pod/a", "Failed pod/b", "InProgress pod/a"}
	if strings.Join(reported, "|") != strings.Join(want, "|") {
		t.Fatalf("reported %q, want %q", reported, want)
	}
	// Objects that left the view take their judgements along.
	for _, name := range []string{"a", "b"} {
		o := kindPod(name, "Succeeded")
		b := informer.Batch{Informer: inf, Items: []informer.Item{{Type: delta.Updated, Object: o, Key: "ns/" + name}}}
		if _, err := sink.Handle(b); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Check(); err != nil {
			t.Fatal(err)
		}
		b.Items[0].Type = delta.Deleted
		if _, err := sink.Handle(b); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Check(); err != nil {
		t.Fatal(err)
	}
	kept := len(w.byUID)
	for _, tv := range w.view {
		kept += len(tv.entries)
	}
	for _, n := range w.healths.count {
		kept += n
	}
	if kept != 0 || w.tallies[0].notHolding != [3]int{} {
		t.Fatalf("after every object was deleted the waiter keeps %d objects or judgements, tally %+v", kept, w.tallies[0])
	}
}

// TestWaiterHearsOfScaleUps: an Event the stream shows (--events) that a
// scale-up was triggered for an unschedulable Pod keeps --fail-when
// from calling it Failed while the scale-up runs.
func TestWaiterHearsOfScaleUps(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 10, 0, 0, time.UTC)
	unschedulable, err := rawobj.Parse([]byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web","namespace":"ns","uid":"web-uid","resourceVersion":"1","creationTimestamp":"2030-01-01T00:00:00Z"},"status":{"phase":"Pending","conditions":[{"type":"PodScheduled","status":"False","reason":"Unschedulable"}]}}`), rawobj.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	event, err := rawobj.Parse([]byte(`{"apiVersion":"v1","kind":"Event","metadata":{"name":"web.1","namespace":"ns","uid":"ev","resourceVersion":"2"},"involvedObject":{"apiVersion":"v1","kind":"Pod","namespace":"ns","name":"web","uid":"web-uid"},"type":"Normal","reason":"TriggeredScaleUp","message":"pod triggered scale-up","lastTimestamp":"2030-01-01T00:09:50Z"}`), rawobj.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	eventsTarget := informer.Target{
		Resource: schema.GroupVersionResource{Version: "v1", Resource: "events"},
		Kind:     schema.GroupVersionKind{Version: "v1", Kind: "Event"},
		Role:     informer.RoleEvents, Namespace: "ns",
	}
	for _, withEvent := range []bool{false, true} {
		engine := informer.New(informer.Config{NewListerWatcher: func(informer.Target) cache.ListerWatcher { return nil }}, nil)
		podInf, err := engine.Add(pods)
		if err != nil {
			t.Fatal(err)
		}
		evInf, err := engine.Add(eventsTarget)
		if err != nil {
			t.Fatal(err)
		}
		w := NewWaiter(nil, nil, mustConditions(t, "--fail-when", "status=Failed"), &bytes.Buffer{})
		w.SetNow(func() time.Time { return now })
		sink := w.Sink(fakeStream{engine}, &discard{})
		if withEvent {
			if _, err := sink.Handle(informer.Batch{Informer: evInf, Items: []informer.Item{{Type: delta.Added, Object: event, Key: "ns/web.1"}}}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := sink.Handle(informer.Batch{Informer: podInf, Items: []informer.Item{{Type: delta.Added, Object: unschedulable, Key: "ns/web"}}}); err != nil {
			t.Fatal(err)
		}
		stop, err := w.Check()
		if withEvent && (stop || err != nil) {
			t.Errorf("a scale-up 10s old: stop %v, %v; want it still InProgress", stop, err)
		}
		if !withEvent && (!stop || err == nil) {
			t.Errorf("no scale-up: stop %v, %v; want Failed", stop, err)
		}
	}
}

// TestATimeoutSaysTheSameExplanationOnce: objects held up for the same
// reason, with the same Warning, are said once with all their names;
// others as they are, in order.
func TestATimeoutSaysTheSameExplanationOnce(t *testing.T) {
	why := "Warning FailedScheduling: 0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector."
	stuck := "Failed (PodUnschedulable): Pod could not be scheduled"
	e := &TimeoutError{Waited: "deployments/web", Held: []Held{
		{Name: "deployment.apps/web", Health: "InProgress (LessAvailable): Available: 0/3"},
		{Name: "pod/web-1", Health: stuck, Explained: why},
		{Name: "pod/web-2", Health: stuck, Explained: why},
		{Name: "pod/other", Health: stuck, Explained: "Warning FailedScheduling: something else"},
		{Name: "pod/web-3", Health: stuck, Explained: why},
	}}
	want := "timed out waiting for the condition on deployments/web\n" +
		"  deployment.apps/web: InProgress (LessAvailable): Available: 0/3\n" +
		"  pod/web-1, pod/web-2, pod/web-3: " + stuck + "\n    " + why + "\n" +
		"  pod/other: " + stuck + "\n    Warning FailedScheduling: something else"
	if got := e.Error(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestWaiterSaysTheErrorOfTheConditionThatErred: a condition that cannot
// be evaluated on an object stops the run with its own error — not
// another condition's on the same object — and the objects it cannot be
// evaluated on stop counting once they change.
func TestWaiterSaysTheErrorOfTheConditionThatErred(t *testing.T) {
	engine := informer.New(informer.Config{NewListerWatcher: func(informer.Target) cache.ListerWatcher { return nil }}, nil)
	inf, err := engine.Add(pods)
	if err != nil {
		t.Fatal(err)
	}
	divides := `cel=1 / (size(object.metadata.name) - size(name)) == 1`
	w := NewWaiter(mustConditions(t, "--until", `cel=object.metadata.name == "nope"`, divides), nil,
		mustConditions(t, "--fail-when", `cel=object.metadata.name == "nope"`), &bytes.Buffer{})
	sink := w.Sink(fakeStream{engine}, &discard{})
	hand := func(typ delta.Type, o *rawobj.Object) {
		t.Helper()
		if _, err := sink.Handle(informer.Batch{Informer: inf, Items: []informer.Item{{Type: typ, Object: o, Key: "ns/" + o.Name}}}); err != nil {
			t.Fatal(err)
		}
	}
	hand(delta.Added, pod(t, "web", "Running"))
	stop, err := w.Check()
	if !stop || err == nil || !strings.Contains(err.Error(), "division by zero") || !strings.Contains(err.Error(), "size(name)") {
		t.Fatalf("a condition that divides by zero: stop %v, %v; want its error", stop, err)
	}
	hand(delta.Deleted, pod(t, "web", "Running"))
	if stop, err := w.Check(); stop || err != nil {
		t.Fatalf("once the object is gone: stop %v, %v", stop, err)
	}

	// Two conditions err on the same object: --fail-when, checked first,
	// says its own.
	parses := `cel=int(object.metadata.name) == 1`
	w = NewWaiter(mustConditions(t, "--until", divides), nil, mustConditions(t, "--fail-when", parses), &bytes.Buffer{})
	sink = w.Sink(fakeStream{engine}, &discard{})
	hand(delta.Added, pod(t, "web", "Running"))
	stop, err = w.Check()
	if !stop || err == nil || !strings.Contains(err.Error(), "int(object.metadata.name)") {
		t.Fatalf("--fail-when that cannot parse: stop %v, %v; want its error", stop, err)
	}
}
