package cmd

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-deltas/kubectl-deltas/internal/cache"
	"github.com/kubectl-deltas/kubectl-deltas/internal/rawobj"
)

func TestParseArgs(t *testing.T) {
	cases := []struct {
		args    []string
		want    []resourceArg
		wantErr string
	}{
		{[]string{"cm"}, []resourceArg{{typ: "cm"}}, ""},
		{[]string{"cm,secrets"}, []resourceArg{{typ: "cm"}, {typ: "secrets"}}, ""},
		{[]string{"cm", "a", "b"}, []resourceArg{{typ: "cm", name: "a"}, {typ: "cm", name: "b"}}, ""},
		{[]string{"cm/a", "deploy.apps/b"}, []resourceArg{{typ: "cm", name: "a"}, {typ: "deploy.apps", name: "b"}}, ""},
		{[]string{"cm", "cm/a"}, nil, "there is no need to specify a resource type as a separate argument"},
		{[]string{"cm/"}, nil, "must have a single resource and name"},
		{[]string{"cm/a/b"}, nil, "must have a single resource and name"},
		{[]string{"cm,,x"}, nil, "empty type"},
		{nil, nil, "no resource type"},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			got, err := parseArgs(tc.args)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

func TestParseDeltaTypes(t *testing.T) {
	got, err := parseDeltaTypes([]string{"added", "Deleted"})
	if err != nil || !got[cache.Added] || !got[cache.Deleted] || got[cache.Updated] {
		t.Errorf("got %v, %v", got, err)
	}
	all, _ := parseDeltaTypes(nil)
	if len(all) != 5 {
		t.Errorf("default types %v", all)
	}
	if _, err := parseDeltaTypes([]string{"Modified"}); err == nil || !strings.Contains(err.Error(), `invalid --types value "Modified"`) {
		t.Errorf("error = %v", err)
	}
}

// TestValidate runs the command up to Validate through Execute, as a user
// would, and checks the message and that nothing reached stdout.
func TestValidate(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no type", nil, "error: you must specify the type of resource to watch"},
		{"bad selector", []string{"cm", "-l", "a=(b"}, `error: invalid --selector "a=(b"`},
		{"bad field selector", []string{"cm", "--field-selector", "a"}, `error: invalid --field-selector "a"`},
		{"bad duration", []string{"cm", "--timeout", "soon"}, `error: invalid argument "soon" for "--timeout" flag`},
		{"negative count", []string{"cm", "--count=-1"}, "error: invalid --count -1"},
		{"bad output", []string{"cm", "-o", "foo"}, `error: unable to match a printer suitable for the output format "foo"`},
		{"bad types", []string{"cm", "--types", "Modified"}, `error: invalid --types value "Modified"`},
		{"conflict until-synced watch-only", []string{"cm", "--until-synced", "--watch-only"}, "error: --until-synced cannot be used with --watch-only"},
		{"conflict until-synced resource-version", []string{"cm", "--until-synced", "--resource-version=5"}, "error: --until-synced cannot be used with --resource-version"},
		{"bad color", []string{"cm", "--color", "pink"}, `error: invalid --color value "pink"`},
		{"bad watch-list", []string{"cm", "--watch-list", "maybe"}, `error: invalid --watch-list value "maybe"`},
		{"bad relist", []string{"cm", "--relist", "some"}, `error: invalid --relist value "some"`},
		{"ignore-path without diff", []string{"cm", "--ignore-path", "status"}, "error: --ignore-path only applies to diffs"},
		{"bad ignore-path", []string{"cm", "--diff", "--ignore-path", "a[x"}, `error: invalid --ignore-path "a[x"`},
		{"unknown flag", []string{"cm", "--nope"}, "error: unknown flag: --nope"},
		{"short resync", []string{"cm", "--resync=10ms"}, "error: invalid --resync 10ms: must be at least 1s"},
		{"mixed forms", []string{"cm", "cm/a"}, "error: there is no need to specify a resource type"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			streams, _, out, errOut := genericiooptions.NewTestIOStreams()
			code := Execute(streams, append(tc.args, "--kubeconfig=/nonexistent/kubeconfig"))
			if code != 1 {
				t.Errorf("exit code %d, want 1", code)
			}
			if out.Len() != 0 {
				t.Errorf("stdout %q, want nothing", out.String())
			}
			if !strings.HasPrefix(errOut.String(), tc.want) {
				t.Errorf("stderr %q, want prefix %q", errOut.String(), tc.want)
			}
		})
	}
}

func TestVersionFlag(t *testing.T) {
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	if code := Execute(streams, []string{"--version"}); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if strings.TrimSpace(out.String()) == "" {
		t.Error("--version printed nothing")
	}
}

func mustParse(t *testing.T, js string) *rawobj.Object {
	t.Helper()
	o, err := rawobj.Parse([]byte(js), rawobj.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func cm(t *testing.T, name, rv, uid, data string) *rawobj.Object {
	t.Helper()
	return mustParse(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"`+name+`","namespace":"ns","resourceVersion":"`+rv+`","uid":"`+uid+`"},"data":{"k":"`+data+`"}}`)
}

func TestInformerProcess(t *testing.T) {
	store := cache.NewIndexer(cache.DeletionHandlingMetaNamespaceKeyFunc, cache.Indexers{})
	inf := &informer{store: store}
	a1, a2 := cm(t, "a", "1", "u1", "x"), cm(t, "a", "2", "u1", "y")
	items, err := inf.process(cache.Deltas{{Type: cache.Replaced, Object: a1}}, false)
	if err != nil || len(items) != 1 || items[0].old != nil || items[0].unchanged {
		t.Fatalf("initial: %+v, %v", items, err)
	}
	// A relist (or a list started again) with the same resourceVersion
	// is unchanged; --relist=all keeps it.
	items, _ = inf.process(cache.Deltas{{Type: cache.Replaced, Object: a1}}, false)
	if !items[0].unchanged || items[0].old != a1 {
		t.Errorf("relist of an unchanged object: %+v", items[0])
	}
	items, _ = inf.process(cache.Deltas{{Type: cache.Replaced, Object: a1}}, true)
	if items[0].unchanged {
		t.Error("--relist=all marked an object unchanged")
	}
	items, _ = inf.process(cache.Deltas{{Type: cache.Updated, Object: a2}, {Type: cache.Deleted, Object: cache.DeletedFinalStateUnknown{Key: "ns/a", Obj: a2}}}, false)
	if items[0].old != a1 || items[1].old != a2 || !items[1].tombstone || items[1].key != "ns/a" {
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

func TestChangeManager(t *testing.T) {
	withManagers := func(entries string) *rawobj.Object {
		return mustParse(t, `{"metadata":{"name":"a","managedFields":[`+entries+`]}}`)
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
	// Same manager, same second, same fields, but a new resourceVersion:
	// the newest entry, unless two tie.
	rv := func(v, entries string) *rawobj.Object {
		return mustParse(t, `{"metadata":{"name":"a","resourceVersion":"`+v+`","managedFields":[`+entries+`]}}`)
	}
	cases = append(cases,
		struct {
			name          string
			old, obj      *rawobj.Object
			manager, oper string
		}{"newest as last resort", rv("1", create+","+edit), rv("2", create+","+edit), "kubectl-edit", "Update"},
		struct {
			name          string
			old, obj      *rawobj.Object
			manager, oper string
		}{"tie", rv("1", create+","+strings.Replace(edit, "kubectl-edit", "other", 1)+","+edit), rv("2", create+","+strings.Replace(edit, "kubectl-edit", "other", 1)+","+edit), "", ""},
	)
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
	dc, err := newDiffConfig(true, true, false, []string{"metadata.labels.x"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"/metadata/resourceVersion", "/metadata/managedFields", "/metadata/generation", "/status", "metadata.labels.x"}
	if !reflect.DeepEqual(dc.ignore, want) {
		t.Errorf("ignore = %v, want %v", dc.ignore, want)
	}
	old := mustParse(t, `{"metadata":{"name":"a","resourceVersion":"1","labels":{"x":"1"}},"status":{"phase":"A"},"spec":{"replicas":1}}`)
	obj := mustParse(t, `{"metadata":{"name":"a","resourceVersion":"2","labels":{"x":"2"}},"status":{"phase":"B"},"spec":{"replicas":3}}`)
	changes, err := dc.compute(old, obj, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(changes) != 1 || changes[0].Path != "/spec/replicas" {
		t.Errorf("changes = %+v, want only /spec/replicas", changes)
	}
	upd := &item{delta: cache.Delta{Type: cache.Updated}, old: old, obj: obj}
	if !dc.applies(upd, false) {
		t.Error("an update is not diffed")
	}
	added := &item{delta: cache.Delta{Type: cache.Added}, obj: obj}
	if dc.applies(added, false) {
		t.Error("an add is diffed")
	}
	relist := &item{delta: cache.Delta{Type: cache.Replaced}, old: old, obj: obj}
	if !dc.applies(relist, false) || dc.applies(relist, true) {
		t.Error("relist Replaced of a changed object must be diffed, initial ones not")
	}
	var off *diffConfig
	if off.enabled() {
		t.Error("nil config enabled")
	}
	secret := mustParse(t, `{"metadata":{"name":"s"},"data":{"password":"YQ=="}}`)
	secret2 := mustParse(t, `{"metadata":{"name":"s"},"data":{"password":"Yg=="}}`)
	changes, _ = dc.compute(secret, secret2, true)
	if len(changes) != 1 || !changes[0].Redacted || changes[0].Old != nil || changes[0].Value != nil {
		t.Errorf("secret diff not redacted: %+v", changes)
	}
}

func TestHealthOneWarningPerOutage(t *testing.T) {
	var errOut bytes.Buffer
	now := time.Unix(0, 0)
	h := newHealth(&errOut, func() time.Time { return now })
	a, b := &informer{}, &informer{}
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

func TestFatalErrors(t *testing.T) {
	gr := schema.GroupResource{Resource: "configmaps"}
	forbidden := apierrors.NewForbidden(gr, "", errors.New("no"))
	if !isFatal(forbidden) || !strings.Contains(fatalError(forbidden).Error(), "kubectl auth can-i") {
		t.Errorf("forbidden: %v", fatalError(forbidden))
	}
	unauthorized := apierrors.NewUnauthorized("expired")
	if !isFatal(unauthorized) || !strings.Contains(fatalError(unauthorized).Error(), "log in again") {
		t.Errorf("unauthorized: %v", fatalError(unauthorized))
	}
	if isFatal(apierrors.NewServiceUnavailable("x")) || isFatal(apierrors.NewTooManyRequests("x", 1)) {
		t.Error("a retriable error is fatal")
	}
	gone := apierrors.NewGone("gone") //nolint:staticcheck // servers before 1.18 sent 410 Gone
	if !isExpired(apierrors.NewResourceExpired("old")) || !isExpired(gone) {
		t.Error("expired not recognized")
	}
}
