package cache

import (
	"fmt"
	"sort"
	"strconv"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// testObj is the object of the cache tests: a name and a value, the value
// doubling as resourceVersion. It implements Object and, through the
// embedded ObjectMeta, metav1.Object, so client-go's tools/cache (the
// reference oracle of the differential test) can key it too.
type testObj struct {
	metav1.ObjectMeta
	val int
}

func (t *testObj) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }
func (t *testObj) DeepCopyObject() runtime.Object {
	c := *t
	t.ObjectMeta.DeepCopyInto(&c.ObjectMeta)
	return &c
}

var _ Object = (*testObj)(nil)

func mkObj(name string, val int) *testObj {
	return &testObj{
		ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: strconv.Itoa(val), UID: types.UID("uid-" + name)},
		val:        val,
	}
}

func mkNsObj(ns, name string, val int) *testObj {
	o := mkObj(name, val)
	o.Namespace = ns
	return o
}

// describe renders an object or tombstone compactly: "foo@10",
// "DFSU{foo, foo@10}", "DFSU{foo, nil}".
func describe(obj any) string {
	switch o := obj.(type) {
	case nil:
		return "nil"
	case *testObj:
		return fmt.Sprintf("%s@%d", ObjectKey(o), o.val)
	case DeletedFinalStateUnknown:
		return fmt.Sprintf("DFSU{%s, %s}", o.Key, describe(o.Obj))
	default:
		return fmt.Sprintf("%#v", obj)
	}
}

// describeDeltas renders deltas as "[Added foo@1, Deleted DFSU{foo, foo@1}]".
func describeDeltas(d Deltas) string {
	s := "["
	for i, delta := range d {
		if i > 0 {
			s += ", "
		}
		s += string(delta.Type) + " " + describe(delta.Object)
		if delta.Coalesced > 0 {
			s += fmt.Sprintf(" (+%d)", delta.Coalesced)
		}
	}
	return s + "]"
}

// literalKnown is a KeyListerGetter over a fixed map, listing keys sorted.
type literalKnown map[string]any

func (kl literalKnown) ListKeys() []string {
	keys := make([]string, 0, len(kl))
	for k := range kl {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func (kl literalKnown) GetByKey(key string) (any, bool, error) {
	obj, ok := kl[key]
	return obj, ok, nil
}

func knownOf(objs ...*testObj) literalKnown {
	kl := literalKnown{}
	for _, o := range objs {
		kl[ObjectKey(o)] = o
	}
	return kl
}

// popAll pops until the queue is empty, returning each pop rendered.
func popAll(t *testing.T, f *DeltaFIFO) []string {
	t.Helper()
	var out []string
	for f.Len() > 0 {
		d, err := f.Pop(func(Deltas, bool) error { return nil })
		if err != nil {
			t.Fatalf("Pop: %v", err)
		}
		out = append(out, describeDeltas(d))
	}
	return out
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// newStore returns a Store without indices.
func newStore(keyFunc KeyFunc) Store {
	return NewIndexer(keyFunc, Indexers{})
}
