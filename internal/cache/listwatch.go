package cache

import (
	"context"
	"errors"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// Lister is any object that knows how to perform an initial list.
type Lister interface {
	// List should return a list type object; the Items field will be
	// extracted, and the ResourceVersion field will be used to start the
	// watch in the right place.
	List(ctx context.Context, options metav1.ListOptions) (runtime.Object, error)
}

// Watcher is any object that knows how to start a watch on a resource.
type Watcher interface {
	// Watch should begin a watch at the specified version.
	//
	// If Watch returns an error, it should handle its own cleanup, including
	// but not limited to calling Stop() on the watch, if one was
	// constructed. This allows the caller to ignore the watch, if the error
	// is non-nil.
	Watch(ctx context.Context, options metav1.ListOptions) (watch.Interface, error)
}

// ListStreamer is a Lister that can hand over the items of a list as they
// arrive instead of in one list object. The Reflector uses it when its
// store is a StreamingReplacer.
type ListStreamer interface {
	// ListEach lists as List does, calling each for every item, in order,
	// as soon as it has been read. The list it returns carries the list's
	// metadata (resourceVersion, continue) and no items. An error of each
	// ends the list and is returned. An error wrapping
	// ErrListNotStreamable says that this list must be read with List.
	ListEach(ctx context.Context, options metav1.ListOptions, each func(runtime.Object) error) (runtime.Object, error)
}

// ErrListNotStreamable is wrapped by the error of a ListStreamer's ListEach
// for a list that can only be read whole with List (its items could not be
// handed out before the end). The Reflector then lists with List from then
// on.
var ErrListNotStreamable = errors.New("list cannot be streamed")

// ListerWatcher is any object that knows how to perform an initial list and
// start a watch on a resource.
type ListerWatcher interface {
	Lister
	Watcher
}

// ListFunc knows how to list resources.
type ListFunc func(ctx context.Context, options metav1.ListOptions) (runtime.Object, error)

// WatchFunc knows how to watch resources.
type WatchFunc func(ctx context.Context, options metav1.ListOptions) (watch.Interface, error)

// ListWatch knows how to list and watch a set of apiserver resources. It
// satisfies the ListerWatcher interface. It is a convenience function for
// users of NewReflector, etc. ListFunc and WatchFunc must not be nil.
type ListWatch struct {
	ListFunc  ListFunc
	WatchFunc WatchFunc
}

var _ ListerWatcher = (*ListWatch)(nil)

// NewFilteredListWatch returns a ListWatch whose list and watch calls pass
// the reflector's options through optionsModifier before calling list and
// watch. The modifier adds the user's selectors; it must change the options
// it is given, not replace them, so that the reflector's resourceVersion,
// limit, timeout and bookmark settings reach the server.
func NewFilteredListWatch(list ListFunc, watchFn WatchFunc, optionsModifier func(*metav1.ListOptions)) *ListWatch {
	return &ListWatch{
		ListFunc: func(ctx context.Context, options metav1.ListOptions) (runtime.Object, error) {
			if optionsModifier != nil {
				optionsModifier(&options)
			}
			return list(ctx, options)
		},
		WatchFunc: func(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
			options.Watch = true
			if optionsModifier != nil {
				optionsModifier(&options)
			}
			return watchFn(ctx, options)
		},
	}
}

// List a set of apiserver resources.
func (lw *ListWatch) List(ctx context.Context, options metav1.ListOptions) (runtime.Object, error) {
	return lw.ListFunc(ctx, options)
}

// Watch a set of apiserver resources.
func (lw *ListWatch) Watch(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
	return lw.WatchFunc(ctx, options)
}
