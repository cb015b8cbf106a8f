package cache

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/types"
)

// Object is the view of a Kubernetes object that the cache needs: enough to
// key it, to tell versions apart and to tell a re-created object from the old
// one. The Store and the DeltaFIFO never look further into an object, so any
// representation works: decoded *unstructured.Unstructured, typed objects, or
// a light wrapper around the raw JSON the server sent.
type Object interface {
	GetNamespace() string
	GetName() string
	GetResourceVersion() string
	GetUID() types.UID
}

// ExplicitKey can be passed to MetaNamespaceKeyFunc when the key is already
// known; it is returned verbatim.
type ExplicitKey string

// KeyFunc knows how to make a key from an object. Implementations should be
// deterministic.
type KeyFunc func(obj any) (string, error)

// KeyError will be returned any time a KeyFunc gives an error; it includes the
// object at fault.
type KeyError struct {
	Obj any
	Err error
}

// Error gives a human-readable description of the error.
func (k KeyError) Error() string {
	return fmt.Sprintf("couldn't create key for object %+v: %v", k.Obj, k.Err)
}

// Unwrap implements errors.Unwrap.
func (k KeyError) Unwrap() error {
	return k.Err
}

// errNoMeta is returned by MetaNamespaceKeyFunc for an object that does not
// implement Object.
var errNoMeta = errors.New("object has no meta")

// MetaNamespaceKeyFunc is the default KeyFunc. It returns "namespace/name" for
// namespaced objects and "name" for cluster-scoped ones. An ExplicitKey is
// returned as it is.
func MetaNamespaceKeyFunc(obj any) (string, error) {
	if key, ok := obj.(ExplicitKey); ok {
		return string(key), nil
	}
	o, ok := obj.(Object)
	if !ok {
		return "", fmt.Errorf("%w: %v", errNoMeta, obj)
	}
	return ObjectKey(o), nil
}

// ObjectKey returns the key of o, "namespace/name" or "name".
func ObjectKey(o Object) string {
	if ns := o.GetNamespace(); ns != "" {
		return ns + "/" + o.GetName()
	}
	return o.GetName()
}

// DeletionHandlingMetaNamespaceKeyFunc checks for DeletedFinalStateUnknown
// objects before calling MetaNamespaceKeyFunc.
func DeletionHandlingMetaNamespaceKeyFunc(obj any) (string, error) {
	if d, ok := obj.(DeletedFinalStateUnknown); ok {
		return d.Key, nil
	}
	return MetaNamespaceKeyFunc(obj)
}

// SplitMetaNamespaceKey returns the namespace and name that
// MetaNamespaceKeyFunc encoded into key. "name" gives ("", "name"), "ns/name"
// gives ("ns", "name"); anything with more separators is an error.
func SplitMetaNamespaceKey(key string) (namespace, name string, err error) {
	first := -1
	for i := 0; i < len(key); i++ {
		if key[i] != '/' {
			continue
		}
		if first >= 0 {
			return "", "", fmt.Errorf("unexpected key format: %q", key)
		}
		first = i
	}
	if first < 0 {
		return "", key, nil
	}
	return key[:first], key[first+1:], nil
}
