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
