package events

import (
	"maps"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-deltas/kubectl-deltas/internal/informer"
)

// Targets are the Events informers of --events for the targets of one
// cluster (context): the
// namespaces its objects are in (an object's Events are in its namespace,
// a cluster-scoped object's in "default"), or every namespace with -A or
// a tree searched everywhere. One named object, without --tree, is
// narrowed by the server to the Events of its name and kind. They watch
// events.k8s.io/v1, the Events API of every supported server (core/v1
// Events are the same objects).
func Targets(context string, targets []informer.Target, allNamespaces, tree bool) []informer.Target {
	base := informer.Target{
		Context:  context,
		Resource: schema.GroupVersionResource{Group: "events.k8s.io", Version: "v1", Resource: "events"},
		Kind:     schema.GroupVersionKind{Group: "events.k8s.io", Version: "v1", Kind: "Event"},
		Role:     informer.RoleEvents, Optional: true,
	}
	everywhere := allNamespaces
	var roots []informer.Target
	namespaces := map[string]bool{}
	for _, t := range targets {
		switch {
		case t.Role.Unfiltered() && t.Namespace == "":
			everywhere = true // a scout of every namespace
		case t.Role.Unfiltered():
			namespaces[t.Namespace] = true
		case t.Namespace == "":
			namespaces[metav1.NamespaceDefault] = true // cluster-scoped
			roots = append(roots, t)
		default:
			namespaces[t.Namespace] = true
			roots = append(roots, t)
		}
	}
	if everywhere {
		return []informer.Target{base}
	}
	if len(roots) == 1 && roots[0].Name != "" && !tree {
		r := roots[0]
		base.Namespace = r.Namespace
		if base.Namespace == "" {
			base.Namespace = metav1.NamespaceDefault
		}
		base.FieldSelector = "regarding.name=" + r.Name + ",regarding.kind=" + r.Kind.Kind
		return []informer.Target{base}
	}
	out := make([]informer.Target, 0, len(namespaces))
	for _, ns := range slices.Sorted(maps.Keys(namespaces)) {
		t := base
		t.Namespace = ns
		out = append(out, t)
	}
	return out
}
