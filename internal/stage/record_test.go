package stage

import (
	"bytes"
	"encoding/json"
	"io"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-deltas/kubectl-deltas/internal/cache"
	"github.com/kubectl-deltas/kubectl-deltas/internal/cache/cachetest"
	"github.com/kubectl-deltas/kubectl-deltas/internal/celexpr"
	"github.com/kubectl-deltas/kubectl-deltas/internal/informer"
	"github.com/kubectl-deltas/kubectl-deltas/internal/printer"
	"github.com/kubectl-deltas/kubectl-deltas/internal/rawobj"
)

func TestParseTypes(t *testing.T) {
	got, err := ParseTypes([]string{"added", " Deleted"})
	if err != nil || !reflect.DeepEqual(got, []cache.DeltaType{cache.Added, cache.Deleted}) {
		t.Errorf("got %v, %v", got, err)
	}
	if _, err := ParseTypes([]string{"Modified"}); err == nil || !strings.Contains(err.Error(), `invalid --types value "Modified": must be one or more of Added,Updated,Deleted,Replaced,Sync`) {
		t.Errorf("error = %v", err)
	}
	if got := TypeNames(); !reflect.DeepEqual(got, []string{"Added", "Updated", "Deleted", "Replaced", "Sync"}) {
		t.Errorf("TypeNames() = %v", got)
	}
}

func TestChangeManager(t *testing.T) {
	withManagers := func(entries string) *rawobj.Object {
		return cachetest.MustParse(t, `{"metadata":{"name":"a","managedFields":[`+entries+`]}}`)
	}
	create := `{"manager":"kubectl-create","operation":"Update","time":"2026-01-01T00:00:00Z"}`
	edit := `{"manager":"kubectl-edit","operation":"Update","time":"2026-01-02T00:00:00Z"}`
	editLater := `{"manager":"kubectl-edit","operation":"Update","time":"2026-01-03T00:00:00Z"}`
	cases := []struct {
		name          string
		old, obj      *rawobj.Object
		manager, oper string
	}{
		{"added: newest entry", nil, withManagers(create + "," + edit), "kubectl-edit", "Update"},
		{"new manager", withManagers(create), withManagers(create + "," + edit), "kubectl-edit", "Update"},
		{"moved time", withManagers(create + "," + edit), withManagers(create + "," + editLater), "kubectl-edit", "Update"},
		{"same object", withManagers(create), withManagers(create), "", ""},
		{"same second, fields changed", withManagers(create + "," + edit), withManagers(create + "," + strings.Replace(edit, "}", `,"fieldsV1":{"f:data":{}}}`, 1)), "kubectl-edit", "Update"},
	}
	// No entry moved with the change: no one is named — not the newest
	// entry, who wrote before, nor a status writer.
	rv := func(v, entries string) *rawobj.Object {
		return cachetest.MustParse(t, `{"metadata":{"name":"a","resourceVersion":"`+v+`","managedFields":[`+entries+`]}}`)
	}
	status := `{"manager":"kube-controller-manager","operation":"Update","subresource":"status","time":"2026-01-05T00:00:00Z"}`
	pod := func(v, meta, spec string) *rawobj.Object {
		return cachetest.MustParse(t, `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","resourceVersion":"`+v+`"`+meta+`,"managedFields":[`+create+`]},"spec":`+spec+`}`)
	}
	unmoved := []struct {
		name     string
		old, obj *rawobj.Object
	}{
		{"same manager, second and fields", rv("1", create+","+edit), rv("2", create+","+edit)},
		{"a status writer's entry that did not move", rv("1", create+","+status), rv("2", create+","+status)},
		{"bound to a node", pod("1", "", `{"containers":[]}`), pod("2", "", `{"containers":[],"nodeName":"node-0"}`)},
		{"deleted", pod("1", "", `{}`), pod("2", `,"deletionTimestamp":"2026-01-04T00:00:00Z","deletionGracePeriodSeconds":30`, `{}`)},
		{"deleted sooner", pod("1", `,"deletionTimestamp":"2026-01-04T00:00:30Z"`, `{}`), pod("2", `,"deletionTimestamp":"2026-01-04T00:00:00Z"`, `{}`)},
	}
	for _, tc := range unmoved {
		if m, op := changeManager(tc.old, tc.obj); m != "" || op != "" {
			t.Errorf("%s: got %q %q, want no one", tc.name, m, op)
		}
	}
	for _, tc := range cases {
		m, op := changeManager(tc.old, tc.obj)
		if m != tc.manager || op != tc.oper {
			t.Errorf("%s: got %q %q, want %q %q", tc.name, m, op, tc.manager, tc.oper)
		}
	}
}

func TestRedactSecretJSON(t *testing.T) {
	in := `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s","annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{\"data\":{\"password\":\"aHVudGVyMg==\"}}","other":"kept"}},"data":{"password":"aHVudGVyMg=="},"stringData":{"token":"t0k3n"},"type":"Opaque"}`
	out, err := redactSecretJSON([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"aHVudGVyMg==", "t0k3n"} {
		if bytes.Contains(out, []byte(secret)) {
			t.Errorf("redacted JSON still holds %q: %s", secret, out)
		}
	}
	var got map[string]any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if got["data"].(map[string]any)["password"] != redactedValue || got["metadata"].(map[string]any)["annotations"].(map[string]any)["other"] != "kept" {
		t.Errorf("redacted: %s", out)
	}
	if _, err := redactSecretJSON([]byte("{")); err == nil {
		t.Error("invalid JSON accepted")
	}
}

func TestDiffConfig(t *testing.T) {
	dc, err := newDiffer(DiffOptions{Show: true, ChangedOnly: true, IgnoreStatus: true, IgnorePaths: []string{"metadata.labels.x"}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"/metadata/resourceVersion", "/metadata/managedFields", "/metadata/generation", "/status", "metadata.labels.x"}
	if !reflect.DeepEqual(dc.ignore, want) {
		t.Errorf("ignore = %v, want %v", dc.ignore, want)
	}
	old := cachetest.MustParse(t, `{"metadata":{"name":"a","resourceVersion":"1","labels":{"x":"1"}},"status":{"phase":"A"},"spec":{"replicas":1}}`)
	obj := cachetest.MustParse(t, `{"metadata":{"name":"a","resourceVersion":"2","labels":{"x":"2"}},"status":{"phase":"B"},"spec":{"replicas":3}}`)
	changes, err := dc.compute(old, obj, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(changes) != 1 || changes[0].Path != "/spec/replicas" {
		t.Errorf("changes = %+v, want only /spec/replicas", changes)
	}
	upd := &informer.Item{Delta: cache.Delta{Type: cache.Updated}, Type: cache.Updated, Old: old, Object: obj}
	if !dc.applies(upd) {
		t.Error("an update is not diffed")
	}
	added := &informer.Item{Delta: cache.Delta{Type: cache.Added}, Type: cache.Added, Object: obj}
	if dc.applies(added) {
		t.Error("an add is diffed")
	}
	relist := &informer.Item{Delta: cache.Delta{Type: cache.Replaced}, Type: cache.Replaced, Old: old, Object: obj}
	initialList := *relist
	initialList.Initial = true
	if !dc.applies(relist) || dc.applies(&initialList) {
		t.Error("relist Replaced of a changed object must be diffed, initial ones not")
	}
	secret := cachetest.MustParse(t, `{"metadata":{"name":"s"},"data":{"password":"YQ=="}}`)
	secret2 := cachetest.MustParse(t, `{"metadata":{"name":"s"},"data":{"password":"Yg=="}}`)
	changes, _ = dc.compute(secret, secret2, true)
	if len(changes) != 1 || !changes[0].Redacted || changes[0].Old != nil || changes[0].Value != nil {
		t.Errorf("secret diff not redacted: %+v", changes)
	}
}

func TestIsSecretValuePath(t *testing.T) {
	tests := []struct {
		name string
		path []string
		want bool
	}{
		{name: "root", path: nil, want: false},
		{name: "data", path: []string{"data"}, want: true},
		{name: "stringData", path: []string{"stringData"}, want: true},
		{name: "data key is under data", path: []string{"data", "password"}, want: false},
		{name: "last-applied", path: []string{"metadata", "annotations", corev1.LastAppliedConfigAnnotation}, want: true},
		{name: "other annotation", path: []string{"metadata", "annotations", "x"}, want: false},
		{name: "type", path: []string{"type"}, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := isSecretValuePath(tt.path); got != tt.want {
				t.Errorf("isSecretValuePath(%q) = %v, want %v", tt.path, got, tt.want)
			}
		})
	}
}

func TestStageFill(t *testing.T) {
	configMaps := informer.Target{
		Resource: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"},
		Kind:     schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"},
	}
	secrets := informer.Target{
		Resource: schema.GroupVersionResource{Version: "v1", Resource: "secrets"},
		Kind:     schema.GroupVersionKind{Version: "v1", Kind: "Secret"},
	}
	old := cachetest.MustParse(t, `{"metadata":{"name":"a","namespace":"ns","resourceVersion":"1","uid":"u"},"data":{"k":"x"}}`)
	obj := cachetest.MustParse(t, `{"metadata":{"name":"a","namespace":"ns","resourceVersion":"2","uid":"u","managedFields":[{"manager":"kubectl-edit","operation":"Update","time":"2026-01-01T00:00:00Z"}]},"data":{"k":"y"}}`)
	touched := cachetest.MustParse(t, `{"metadata":{"name":"a","namespace":"ns","resourceVersion":"2","uid":"u"},"data":{"k":"x"}}`)
	secretOld := cachetest.MustParse(t, `{"metadata":{"name":"s","namespace":"ns","resourceVersion":"1"},"data":{"password":"YQ=="}}`)
	secretNew := cachetest.MustParse(t, `{"metadata":{"name":"s","namespace":"ns","resourceVersion":"2"},"data":{"password":"Yg=="}}`)
	now := time.Unix(1000, 0)
	cases := []struct {
		name    string
		opts    Options
		target  informer.Target
		item    informer.Item
		initial bool
		keep    bool
		check   func(t *testing.T, r *printer.Record)
	}{
		{name: "update", target: configMaps, item: informer.Item{Delta: cache.Delta{Type: cache.Updated}, Old: old, Object: obj}, keep: true,
			check: func(t *testing.T, r *printer.Record) {
				if r.Type != "Updated" || r.Kind != "ConfigMap" || r.APIVersion != "v1" || r.Resource != "configmaps" || r.Namespace != "ns" || r.Name != "a" ||
					r.ResourceVersion != "2" || r.UID != "u" || r.Manager != "kubectl-edit" || !r.Time.Equal(now) || r.Changes != nil {
					t.Errorf("record %+v", r)
				}
			}},
		{name: "tombstone without a last state", target: configMaps, item: informer.Item{Delta: cache.Delta{Type: cache.Deleted}, Key: "ns/gone", Tombstone: true}, keep: true,
			check: func(t *testing.T, r *printer.Record) {
				if r.Namespace != "ns" || r.Name != "gone" || !r.FinalStateUnknown || string(r.Object) != "null" {
					t.Errorf("record %+v", r)
				}
			}},
		{name: "type filtered out", opts: Options{Types: []cache.DeltaType{cache.Deleted}}, target: configMaps,
			item: informer.Item{Delta: cache.Delta{Type: cache.Updated}, Old: old, Object: obj}},
		{name: "watch-only drops the initial list", opts: Options{WatchOnly: true}, target: configMaps, initial: true,
			item: informer.Item{Delta: cache.Delta{Type: cache.Replaced}, Object: obj}},
		{name: "unchanged relist dropped", target: configMaps, item: informer.Item{Delta: cache.Delta{Type: cache.Replaced}, Old: obj, Object: obj, Unchanged: true}},
		{name: "--relist=all keeps it", opts: Options{RelistAll: true}, target: configMaps, keep: true,
			item: informer.Item{Delta: cache.Delta{Type: cache.Replaced}, Old: obj, Object: obj, Unchanged: true}},
		{name: "--changed-only drops a touch", opts: Options{Diff: DiffOptions{ChangedOnly: true}}, target: configMaps,
			item: informer.Item{Delta: cache.Delta{Type: cache.Updated}, Old: old, Object: touched}},
		{name: "--diff", opts: Options{Diff: DiffOptions{Show: true}}, target: configMaps, keep: true,
			item: informer.Item{Delta: cache.Delta{Type: cache.Updated}, Old: old, Object: obj},
			check: func(t *testing.T, r *printer.Record) {
				if len(r.Changes) != 1 || r.Changes[0].Path != "/data/k" {
					t.Errorf("changes %+v", r.Changes)
				}
			}},
		{name: "Secret redacted in object and diff", opts: Options{Diff: DiffOptions{Show: true}}, target: secrets, keep: true,
			item: informer.Item{Delta: cache.Delta{Type: cache.Updated}, Old: secretOld, Object: secretNew},
			check: func(t *testing.T, r *printer.Record) {
				if bytes.Contains(r.Object, []byte("Yg==")) || !bytes.Contains(r.Object, []byte(redactedValue)) {
					t.Errorf("object %s", r.Object)
				}
				if len(r.Changes) != 1 || !r.Changes[0].Redacted || r.Changes[0].Value != nil {
					t.Errorf("changes %+v", r.Changes)
				}
			}},
		{name: "--where true", opts: Options{Where: mustCEL(t, `object.data.k == "y" && oldObject.data.k == "x" && deltaType == "Updated"`)}, target: configMaps, keep: true,
			item: informer.Item{Delta: cache.Delta{Type: cache.Updated}, Old: old, Object: obj}},
		{name: "--where false", opts: Options{Where: mustCEL(t, `object.data.k == "x"`)}, target: configMaps,
			item: informer.Item{Delta: cache.Delta{Type: cache.Updated}, Old: old, Object: obj}},
		{name: "--where sees Secrets redacted", opts: Options{Where: mustCEL(t, `object.data.password == "<redacted>" && oldObject.data.password == "<redacted>"`)}, target: secrets, keep: true,
			item: informer.Item{Delta: cache.Delta{Type: cache.Updated}, Old: secretOld, Object: secretNew}},
		{name: "--where on a tombstone without a state", opts: Options{Where: mustCEL(t, `object == null && name == "gone"`)}, target: configMaps, keep: true,
			item: informer.Item{Delta: cache.Delta{Type: cache.Deleted}, Key: "ns/gone", Tombstone: true}},
		{name: "--show-secret-data", opts: Options{ShowSecretData: true}, target: secrets, keep: true,
			item: informer.Item{Delta: cache.Delta{Type: cache.Updated}, Old: secretOld, Object: secretNew},
			check: func(t *testing.T, r *printer.Record) {
				if !bytes.Contains(r.Object, []byte("Yg==")) {
					t.Errorf("object %s", r.Object)
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			stage, err := NewStage(tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			var r printer.Record
			// The engine decides what a delta is shown as; here the case does.
			tc.item.Type, tc.item.Initial = tc.item.Delta.Type, tc.initial
			keep, err := stage.Fill(&r, tc.target, &tc.item, now)
			if err != nil || keep != tc.keep {
				t.Fatalf("keep = %v, %v; want %v", keep, err, tc.keep)
			}
			if keep && tc.check != nil {
				tc.check(t, &r)
			}
		})
	}
	if _, err := NewStage(Options{Diff: DiffOptions{IgnorePaths: []string{"/a/~2"}}}); err == nil || !strings.Contains(err.Error(), "invalid --ignore-path") {
		t.Errorf("bad --ignore-path: %v", err)
	}
}

func mustCEL(t *testing.T, expr string) []*celexpr.Program {
	t.Helper()
	p, err := celexpr.Compile("--where", expr)
	if err != nil {
		t.Fatal(err)
	}
	return []*celexpr.Program{p}
}

// TestSinkPrintsWhatTheEngineDecided: the Sink prints a delta as the
// type and initial flag the engine handed out with it (informer's
// TestBatchShow covers the decision) and never rewrites them: here the
// initial list of a type that joined, and an update popped with it.
func TestSinkPrintsWhatTheEngineDecided(t *testing.T) {
	inf, _ := idleInformer(t, "configmaps", "ConfigMap")
	listed := cachetest.MustParse(t, `{"metadata":{"name":"a","namespace":"ns","resourceVersion":"1","uid":"u"}}`)
	updated := cachetest.MustParse(t, `{"metadata":{"name":"a","namespace":"ns","resourceVersion":"2","uid":"u"}}`)
	stage, err := NewStage(Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := printer.New(printer.Options{Format: "json"})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	sink := NewRecordSink(stage, p, &out, 0, nil)
	b := informer.Batch{Informer: inf, Initial: true, Items: []informer.Item{
		{Delta: cache.Delta{Type: cache.Replaced, Object: listed}, Type: cache.Replaced, Initial: true, Object: listed, Key: "ns/a"},
		{Delta: cache.Delta{Type: cache.Replaced, Object: listed}, Type: cache.Added, Object: listed, Key: "ns/a"},
		{Delta: cache.Delta{Type: cache.Updated, Object: updated}, Type: cache.Updated, Object: updated, Old: listed, Key: "ns/a"},
	}}
	if _, err := sink.Handle(b); err != nil {
		t.Fatal(err)
	}
	if err := sink.Flush(); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var r struct {
			Type    string `json:"type"`
			Initial bool   `json:"initial"`
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		got = append(got, r.Type+" "+strconv.FormatBool(r.Initial))
	}
	if want := []string{"Replaced true", "Added false", "Updated false"}; !reflect.DeepEqual(got, want) {
		t.Errorf("records %v, want %v", got, want)
	}
}

// idleInformer is an informer of the core resource of kind in an engine
// that never runs: batches of it are made by hand.
func idleInformer(t *testing.T, resource, kind string) (*informer.Informer, informer.Target) {
	t.Helper()
	target := informer.Target{
		Resource: schema.GroupVersionResource{Version: "v1", Resource: resource},
		Kind:     schema.GroupVersionKind{Version: "v1", Kind: kind},
	}
	engine := informer.New(informer.Config{NewListerWatcher: func(informer.Target) cache.ListerWatcher { return nil }}, nil)
	inf, err := engine.Add(target)
	if err != nil {
		t.Fatal(err)
	}
	return inf, target
}

// sinkWithPage is a Sink printing in format, into out, the records of a
// stage with opts, and handing o those of the deltas it shows completed
// by a stage with pageOpts (as --timeline's page is).
func sinkWithPage(t *testing.T, opts Options, format string, pageOpts Options, o Observer) (sink *RecordSink, out *bytes.Buffer) {
	t.Helper()
	stage, err := NewStage(opts)
	if err != nil {
		t.Fatal(err)
	}
	p, err := printer.New(printer.Options{Format: format})
	if err != nil {
		t.Fatal(err)
	}
	out = &bytes.Buffer{}
	sink = NewRecordSink(stage, p, out, 0, nil)
	page, err := NewStage(pageOpts)
	if err != nil {
		t.Fatal(err)
	}
	sink.ObserveWith(page, o)
	return sink, out
}

// observed collects what an Observer is handed.
type observed struct{ types []string }

func (o *observed) Observe(rec *printer.Record, _ *rawobj.Object, _ Changes) {
	o.types = append(o.types, rec.Type)
}
func (o *observed) ObserveHidden(*printer.Record, *rawobj.Object) {}

// TestSinkHandlerCalls: with --handler the Sink prints the handler call
// of each delta — OnAdd with isInInitialList, OnUpdate with the old
// resourceVersion (a relist's unchanged object too), OnDelete of a
// tombstone — tells the CallHooks of each, before and after, and hands
// the page the deltas.
func TestSinkHandlerCalls(t *testing.T) {
	inf, _ := idleInformer(t, "configmaps", "ConfigMap")
	v1 := cachetest.MustParse(t, `{"metadata":{"name":"a","namespace":"ns","resourceVersion":"1","uid":"u"}}`)
	v2 := cachetest.MustParse(t, `{"metadata":{"name":"a","namespace":"ns","resourceVersion":"2","uid":"u"}}`)
	var o observed
	sink, out := sinkWithPage(t, Options{Handler: true}, "text", Options{RelistAll: true}, &o)
	var hooks []string
	sink.CallsTo(&CallHooks{
		Before: func(time.Time, PrintFunc) error { hooks = append(hooks, "before"); return nil },
		After: func(rec *printer.Record, _ *rawobj.Object, _ CallFrom, emit PrintFunc) error {
			hooks = append(hooks, rec.Type)
			return emit(func(_ printer.Printer, w io.Writer) error {
				_, err := io.WriteString(w, "  after "+rec.Type+"\n")
				return err
			})
		},
	})
	items := []informer.Item{
		{Delta: cache.Delta{Type: cache.Replaced, Object: v1}, Object: v1, Key: "ns/a"},
		{Delta: cache.Delta{Type: cache.Updated, Object: v2}, Object: v2, Old: v1, Key: "ns/a"},
		{Delta: cache.Delta{Type: cache.Replaced, Object: v2}, Object: v2, Old: v2, Key: "ns/a", Unchanged: true},
		{Delta: cache.Delta{Type: cache.Deleted, Object: cache.DeletedFinalStateUnknown{Key: "ns/a", Obj: v2}}, Object: v2, Old: v2, Key: "ns/a", Tombstone: true},
	}
	for i, it := range items {
		b := informer.Batch{Informer: inf, Initial: i == 0, Items: []informer.Item{it}}
		b.Items[0].Type, b.Items[0].InInitialList = it.Delta.Type, i == 0
		if _, err := sink.Handle(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := sink.Flush(); err != nil {
		t.Fatal(err)
	}
	want := "OnAdd: a (initial list)\n  after OnAdd\nOnUpdate: a 1→2\n  after OnUpdate\nOnUpdate: a 2→2 (relist, unchanged)\n  after OnUpdate\n" +
		"OnDelete: a (DeletedFinalStateUnknown, last seen 2)\n  after OnDelete\n"
	if out.String() != want {
		t.Errorf("printed:\n%s\nwant:\n%s", out.String(), want)
	}
	if w := []string{"before", "OnAdd", "before", "OnUpdate", "before", "OnUpdate", "before", "OnDelete"}; !reflect.DeepEqual(hooks, w) {
		t.Errorf("hooks %v, want %v", hooks, w)
	}
	if w := []string{"Replaced", "Updated", "Replaced", "Deleted"}; !reflect.DeepEqual(o.types, w) {
		t.Errorf("the page was handed %v, want the deltas %v", o.types, w)
	}
}

// healthObserved collects the health an Observer is handed.
type healthObserved struct{ health []string }

func (o *healthObserved) Observe(rec *printer.Record, _ *rawobj.Object, _ Changes) {
	h := "none"
	if rec.Health != nil {
		h = rec.Health.Status
	}
	o.health = append(o.health, h)
}
func (o *healthObserved) ObserveHidden(*printer.Record, *rawobj.Object) {}

// TestSinkObserverCompletesWithoutChangingWhatIsPrinted: the page's stage
// completes the printed record in place, after it is printed: the page
// gets each delta's health, and no printed line — of that delta or the
// next — shows what the page added.
func TestSinkObserverCompletesWithoutChangingWhatIsPrinted(t *testing.T) {
	inf, _ := idleInformer(t, "configmaps", "ConfigMap")
	a := cachetest.MustParse(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"ns","resourceVersion":"1","uid":"ua"}}`)
	b := cachetest.MustParse(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b","namespace":"ns","resourceVersion":"2","uid":"ub"}}`)
	var o healthObserved
	sink, out := sinkWithPage(t, Options{}, "json", Options{Health: true}, &o)
	for _, obj := range []*rawobj.Object{a, b} {
		it := informer.Item{Delta: cache.Delta{Type: cache.Added, Object: obj}, Object: obj, Key: "ns/" + obj.Name}
		it.Type = cache.Added
		if _, err := sink.Handle(informer.Batch{Informer: inf, Items: []informer.Item{it}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := sink.Flush(); err != nil {
		t.Fatal(err)
	}
	if w := []string{"Current", "Current"}; !reflect.DeepEqual(o.health, w) {
		t.Errorf("the page was handed health %v, want %v", o.health, w)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("printed %d lines, want 2:\n%s", len(lines), out.String())
	}
	for _, l := range lines {
		if strings.Contains(l, `"health"`) {
			t.Errorf("a printed record shows the health only the page asked for:\n%s", l)
		}
	}
}
