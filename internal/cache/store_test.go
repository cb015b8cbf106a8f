package cache

import (
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

func keysOf(t *testing.T, objs []any) []string {
	t.Helper()
	out := make([]string, 0, len(objs))
	for _, o := range objs {
		out = append(out, describe(o))
	}
	sort.Strings(out)
	return out
}

func TestStoreCRUD(t *testing.T) {
	for name, store := range map[string]Store{
		"store":   newStore(MetaNamespaceKeyFunc),
		"indexer": NewIndexer(MetaNamespaceKeyFunc, Indexers{NamespaceIndex: MetaNamespaceIndexFunc}),
	} {
		t.Run(name, func(t *testing.T) {
			must(t, store.Add(mkObj("foo", 1)))
			must(t, store.Add(mkObj("bar", 2)))
			must(t, store.Update(mkObj("foo", 3)))
			item, ok, err := store.Get(mkObj("foo", 0))
			if err != nil || !ok || describe(item) != "foo@3" {
				t.Errorf("Get(foo) = %s, %v, %v", describe(item), ok, err)
			}
			must(t, store.Delete(mkObj("bar", 0)))
			must(t, store.Delete(mkObj("missing", 0))) // S4: no-op
			if _, ok, _ := store.GetByKey("bar"); ok {
				t.Error("bar still present after Delete")
			}
			if got, want := keysOf(t, store.List()), []string{"foo@3"}; !reflect.DeepEqual(got, want) {
				t.Errorf("List = %v, want %v", got, want)
			}
			if got := store.ListKeys(); !reflect.DeepEqual(got, []string{"foo"}) {
				t.Errorf("ListKeys = %v", got)
			}
			must(t, store.Replace([]any{mkObj("a", 1), mkObj("b", 1)}, "9"))
			if got, want := keysOf(t, store.List()), []string{"a@1", "b@1"}; !reflect.DeepEqual(got, want) {
				t.Errorf("after Replace List = %v, want %v", got, want)
			}
			must(t, store.Resync())
			if err := store.Add(42); err == nil {
				t.Error("Add(42) succeeded; want a key error")
			}
			if _, _, err := store.Get(42); err == nil {
				t.Error("Get(42) succeeded; want a key error")
			}
			if err := store.Replace([]any{42}, ""); err == nil {
				t.Error("Replace([42]) succeeded; want a key error")
			}
		})
	}
}

func TestMetaNamespaceKeyFunc(t *testing.T) {
	cases := []struct {
		obj     any
		want    string
		wantErr bool
	}{
		{mkObj("a", 1), "a", false},
		{mkNsObj("ns", "a", 1), "ns/a", false},
		{ExplicitKey("x/y/z"), "x/y/z", false},
		{"string", "", true},
	}
	for _, tc := range cases {
		got, err := MetaNamespaceKeyFunc(tc.obj)
		if got != tc.want || (err != nil) != tc.wantErr {
			t.Errorf("MetaNamespaceKeyFunc(%v) = %q, %v", tc.obj, got, err)
		}
		if err != nil && !strings.Contains(err.Error(), "object has no meta") {
			t.Errorf("error %q does not say the object has no meta", err)
		}
	}
	got, err := DeletionHandlingMetaNamespaceKeyFunc(DeletedFinalStateUnknown{Key: "ns/gone"})
	if err != nil || got != "ns/gone" {
		t.Errorf("DeletionHandlingMetaNamespaceKeyFunc(DFSU) = %q, %v", got, err)
	}
	got, err = DeletionHandlingMetaNamespaceKeyFunc(mkNsObj("ns", "live", 1))
	if err != nil || got != "ns/live" {
		t.Errorf("DeletionHandlingMetaNamespaceKeyFunc(obj) = %q, %v", got, err)
	}
}

func TestSplitMetaNamespaceKey(t *testing.T) {
	cases := []struct {
		key, ns, name string
		wantErr       bool
	}{
		{"name", "", "name", false},
		{"ns/name", "ns", "name", false},
		{"/x", "", "x", false},
		{"a/b/c", "", "", true},
		{"", "", "", false},
	}
	for _, tc := range cases {
		ns, name, err := SplitMetaNamespaceKey(tc.key)
		if ns != tc.ns || name != tc.name || (err != nil) != tc.wantErr {
			t.Errorf("SplitMetaNamespaceKey(%q) = %q, %q, %v", tc.key, ns, name, err)
		}
		if tc.wantErr && err.Error() != `unexpected key format: "a/b/c"` {
			t.Errorf("error = %q", err)
		}
	}
}

func TestKeyErrorUnwraps(t *testing.T) {
	inner := errors.New("inner")
	err := KeyError{Obj: "x", Err: KeyError{Obj: "y", Err: inner}}
	if !errors.Is(err, inner) {
		t.Error("errors.Is through nested KeyErrors failed")
	}
	if !strings.Contains(err.Error(), "couldn't create key for object") {
		t.Errorf("message %q", err.Error())
	}
}

func TestMetaNamespaceIndexFunc(t *testing.T) {
	got, err := MetaNamespaceIndexFunc(mkNsObj("ns", "a", 1))
	if err != nil || !reflect.DeepEqual(got, []string{"ns"}) {
		t.Errorf("got %v, %v", got, err)
	}
	got, err = MetaNamespaceIndexFunc(42)
	if err == nil || !reflect.DeepEqual(got, []string{""}) {
		t.Errorf("non-object: got %v, %v; want [\"\"] and an error", got, err)
	}
}

// usersIndexFunc indexes testObjs by the comma-separated "users" annotation.
func usersIndexFunc(obj any) ([]string, error) {
	o, ok := obj.(*testObj)
	if !ok {
		return nil, errors.New("not a testObj")
	}
	users := o.Annotations["users"]
	if users == "" {
		return nil, nil
	}
	return strings.Split(users, ","), nil
}

func withUsers(name, users string) *testObj {
	o := mkObj(name, 1)
	o.Annotations = map[string]string{"users": users}
	return o
}

// ★ TestMultiIndexKeys
func TestMultiIndexKeys(t *testing.T) {
	index := NewIndexer(MetaNamespaceKeyFunc, Indexers{"byUser": usersIndexFunc})
	must(t, index.Add(withUsers("one", "ernie,bert")))
	must(t, index.Add(withUsers("two", "bert,oscar")))
	must(t, index.Add(withUsers("tre", "ernie,elmo")))

	expected := map[string][]string{
		"ernie": {"one", "tre"},
		"bert":  {"one", "two"},
		"elmo":  {"tre"},
		"oscar": {"two"},
	}
	for value, want := range expected {
		got, err := index.IndexKeys("byUser", value)
		must(t, err)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("IndexKeys(%s) = %v, want %v", value, got, want)
		}
	}

	must(t, index.Delete(withUsers("tre", "")))
	if got, _ := index.IndexKeys("byUser", "elmo"); len(got) != 0 {
		t.Errorf("elmo still indexed to %v after deleting tre", got)
	}
	// The empty set is dropped, not kept (#84959).
	values := index.ListIndexFuncValues("byUser")
	sort.Strings(values)
	if want := []string{"bert", "ernie", "oscar"}; !reflect.DeepEqual(values, want) {
		t.Errorf("ListIndexFuncValues = %v, want %v", values, want)
	}

	must(t, index.Update(withUsers("two", "oscar")))
	if got, _ := index.IndexKeys("byUser", "bert"); !reflect.DeepEqual(got, []string{"one"}) {
		t.Errorf("bert = %v, want [one]", got)
	}

	byUser, err := index.ByIndex("byUser", "oscar")
	must(t, err)
	if len(byUser) != 1 || byUser[0].(*testObj).Name != "two" {
		t.Errorf("ByIndex(oscar) = %v", keysOf(t, byUser))
	}
	// Index: union over the object's values, deduplicated.
	got, err := index.Index("byUser", withUsers("q", "ernie,bert,oscar"))
	must(t, err)
	if want := []string{"one@1", "two@1"}; !reflect.DeepEqual(keysOf(t, got), want) {
		t.Errorf("Index = %v, want %v", keysOf(t, got), want)
	}
	got, err = index.Index("byUser", withUsers("q", "oscar"))
	must(t, err)
	if want := []string{"two@1"}; !reflect.DeepEqual(keysOf(t, got), want) {
		t.Errorf("Index single value = %v, want %v", keysOf(t, got), want)
	}
}

func TestIndexErrors(t *testing.T) {
	index := NewIndexer(MetaNamespaceKeyFunc, Indexers{"byUser": usersIndexFunc})
	const msg = "Index with name nope does not exist"
	if _, err := index.Index("nope", mkObj("a", 1)); err == nil || err.Error() != msg {
		t.Errorf("Index: %v", err)
	}
	if _, err := index.ByIndex("nope", "x"); err == nil || err.Error() != msg {
		t.Errorf("ByIndex: %v", err)
	}
	if _, err := index.IndexKeys("nope", "x"); err == nil || err.Error() != msg {
		t.Errorf("IndexKeys: %v", err)
	}
	if got := index.ListIndexFuncValues("nope"); len(got) != 0 {
		t.Errorf("ListIndexFuncValues(unknown) = %v", got)
	}
	if got, err := index.ByIndex("byUser", "nobody"); err != nil || len(got) != 0 {
		t.Errorf("ByIndex(no match) = %v, %v", got, err)
	}
	// An IndexFunc error is returned and leaves the store unchanged.
	must(t, index.Add(withUsers("one", "a")))
	if err := index.Add(ExplicitKey("k")); err == nil {
		t.Error("Add with failing IndexFunc succeeded")
	}
	if err := index.Replace([]any{withUsers("two", "b"), ExplicitKey("k")}, ""); err == nil {
		t.Error("Replace with failing IndexFunc succeeded")
	}
	if keys := index.ListKeys(); !reflect.DeepEqual(keys, []string{"one"}) {
		t.Errorf("store changed by failed calls: %v", keys)
	}
	if _, err := index.Index("byUser", ExplicitKey("k")); err == nil {
		t.Error("Index with failing IndexFunc succeeded")
	}
}

func TestAddIndexers(t *testing.T) {
	index := NewIndexer(MetaNamespaceKeyFunc, nil)
	must(t, index.Add(withUsers("one", "ernie")))
	must(t, index.Add(mkNsObj("ns", "two", 1)))
	// Existing items are indexed by new indexers.
	must(t, index.AddIndexers(Indexers{NamespaceIndex: MetaNamespaceIndexFunc}))
	got, err := index.IndexKeys(NamespaceIndex, "ns")
	must(t, err)
	if !reflect.DeepEqual(got, []string{"ns/two"}) {
		t.Errorf("IndexKeys(ns) = %v", got)
	}
	err = index.AddIndexers(Indexers{NamespaceIndex: MetaNamespaceIndexFunc})
	if err == nil || !strings.Contains(err.Error(), "indexer conflict") {
		t.Errorf("conflicting AddIndexers: %v", err)
	}
	if _, ok := index.GetIndexers()[NamespaceIndex]; !ok {
		t.Error("GetIndexers lacks the added index")
	}
	// A failing indexer is not added.
	must(t, index.Add(plainObj{name: "plain"}))
	if err := index.AddIndexers(Indexers{"byUser": usersIndexFunc}); err == nil {
		t.Error("AddIndexers with failing IndexFunc succeeded")
	}
	if _, ok := index.GetIndexers()["byUser"]; ok {
		t.Error("failing indexer was added")
	}
}

func TestIndexReplaceRebuilds(t *testing.T) {
	index := NewIndexer(MetaNamespaceKeyFunc, Indexers{NamespaceIndex: MetaNamespaceIndexFunc})
	must(t, index.Add(mkNsObj("old", "a", 1)))
	must(t, index.Replace([]any{mkNsObj("new", "b", 1)}, "1"))
	if got, _ := index.IndexKeys(NamespaceIndex, "old"); len(got) != 0 {
		t.Errorf("old namespace still indexed: %v", got)
	}
	if got, _ := index.IndexKeys(NamespaceIndex, "new"); !reflect.DeepEqual(got, []string{"new/b"}) {
		t.Errorf("new namespace = %v", got)
	}
	// Update keeping the same single value takes the fast path.
	must(t, index.Update(mkNsObj("new", "b", 2)))
	if got, _ := index.IndexKeys(NamespaceIndex, "new"); !reflect.DeepEqual(got, []string{"new/b"}) {
		t.Errorf("after update = %v", got)
	}
}

// plainObj is an Object that is not a *testObj.
type plainObj struct{ ns, name string }

func (p plainObj) GetNamespace() string       { return p.ns }
func (p plainObj) GetName() string            { return p.name }
func (p plainObj) GetResourceVersion() string { return "" }
func (p plainObj) GetUID() types.UID          { return "" }

// NamespaceIndex is the name of the index MetaNamespaceIndexFunc is usually
// registered under.
const NamespaceIndex string = "namespace"

// MetaNamespaceIndexFunc is the index function of these tests that indexes based on an
// object's namespace. On error it returns [""] together with the error.
func MetaNamespaceIndexFunc(obj any) ([]string, error) {
	o, ok := obj.(Object)
	if !ok {
		return []string{""}, fmt.Errorf("%w: %v", errNoMeta, obj)
	}
	return []string{o.GetNamespace()}, nil
}
