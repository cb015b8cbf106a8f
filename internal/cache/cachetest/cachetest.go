// Package cachetest holds the fakes the tests of the packages above the
// cache share: a ListerWatcher that lists what the test says and hands
// every watch it opens to the test, and objects parsed as the informers
// parse them. Only tests import it.
package cachetest

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubectl-deltas/kubectl-deltas/internal/cache"
	"github.com/kubectl-deltas/kubectl-deltas/internal/rawobj"
)

// Timeout bounds every wait of a test; it only matters when one fails.
const Timeout = 30 * time.Second

// ListerWatcher lists what its list function returns and hands every
// watch it opens, a watch.FakeWatcher, to the test (NextWatch).
type ListerWatcher struct {
	list    func() (*rawobj.List, error)
	watches chan *watch.FakeWatcher
}

var _ cache.ListerWatcher = (*ListerWatcher)(nil)

// NewListerWatcher returns a ListerWatcher whose lists are list's.
func NewListerWatcher(list func() (*rawobj.List, error)) *ListerWatcher {
	return &ListerWatcher{list: list, watches: make(chan *watch.FakeWatcher, 16)}
}

// ListOf is a list function: the items, at resourceVersion rv.
func ListOf(rv string, items ...*rawobj.Object) func() (*rawobj.List, error) {
	return func() (*rawobj.List, error) {
		return &rawobj.List{ResourceVersion: rv, Items: items}, nil
	}
}

// List implements cache.ListerWatcher.
func (f *ListerWatcher) List(context.Context, metav1.ListOptions) (k8sruntime.Object, error) {
	l, err := f.list()
	if err != nil {
		return nil, err
	}
	return l, nil
}

// Watch implements cache.ListerWatcher: a new FakeWatcher, which the test
// takes with NextWatch.
func (f *ListerWatcher) Watch(context.Context, metav1.ListOptions) (watch.Interface, error) {
	w := watch.NewFake()
	f.watches <- w
	return w, nil
}

// NextWatch waits for the reflector to open a watch and returns it.
func (f *ListerWatcher) NextWatch(t testing.TB) *watch.FakeWatcher {
	t.Helper()
	select {
	case w := <-f.watches:
		return w
	case <-time.After(Timeout):
		t.Fatal("no watch was opened")
		return nil
	}
}

// MustParse parses js as the informers parse the server's objects.
func MustParse(t testing.TB, js string) *rawobj.Object {
	t.Helper()
	o, err := rawobj.Parse([]byte(js), rawobj.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return o
}
