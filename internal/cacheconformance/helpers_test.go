package cacheconformance

import (
	"fmt"
	"sort"
	"strconv"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-deltas/kubectl-deltas/internal/cache"
)

// testObj is a name and a value, the value doubling as resourceVersion.
// Through the embedded ObjectMeta it is a metav1.Object, so client-go can
// key it, and a cache.Object.
type testObj struct {
	metav1.ObjectMeta
	val int
}

var _ cache.Object = (*testObj)(nil)

func mkNsObj(ns, name string, val int) *testObj {
	return &testObj{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, ResourceVersion: strconv.Itoa(val), UID: types.UID("uid-" + name)},
		val:        val,
	}
}

// describe renders an object or tombstone: "foo@10", "DFSU{foo, foo@10}".
func describe(obj any) string {
	switch o := obj.(type) {
	case nil:
		return "nil"
	case *testObj:
		return fmt.Sprintf("%s@%d", cache.ObjectKey(o), o.val)
	case cache.DeletedFinalStateUnknown:
		return fmt.Sprintf("DFSU{%s, %s}", o.Key, describe(o.Obj))
	default:
		return fmt.Sprintf("%#v", obj)
	}
}

// describeDeltas renders deltas as "[Added foo@1, Deleted DFSU{foo, foo@1}]".
func describeDeltas(d cache.Deltas) string {
	s := "["
	for i, delta := range d {
		if i > 0 {
			s += ", "
		}
		s += string(delta.Type) + " " + describe(delta.Object)
	}
	return s + "]"
}

func keysOf(t *testing.T, objs []any) []string {
	t.Helper()
	out := make([]string, 0, len(objs))
	for _, o := range objs {
		out = append(out, describe(o))
	}
	sort.Strings(out)
	return out
}
