package targets

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/restmapper"

	"github.com/kubectl-deltas/kubectl-deltas/internal/informer"
	"github.com/kubectl-deltas/kubectl-deltas/internal/tree"
)

// defaultExclusions are the types --all-types and categories leave out
// unless --exclude says otherwise: housekeeping types whose churn would
// drown every other change (an Event per Pod state change, a Lease renewal
// per node and controller every few seconds).
func defaultExclusions() []schema.GroupResource {
	return []schema.GroupResource{
		{Resource: "events"},
		{Group: "events.k8s.io", Resource: "events"},
		{Group: "coordination.k8s.io", Resource: "leases"},
	}
}

// aliasOf maps a resource that the server serves under a second group to
// the one kubectl deltas watches: the same objects come out of both, and
// each must be printed once.
func aliasOf(gr schema.GroupResource) (schema.GroupResource, bool) {
	if gr == (schema.GroupResource{Group: "events.k8s.io", Resource: "events"}) {
		return schema.GroupResource{Resource: "events"}, true
	}
	return schema.GroupResource{}, false
}

// typeSet is what discovery says of the served resources: for each
// group/resource of the preferred versions, whether it can be listed and
// watched and whether it is namespaced.
type typeSet struct {
	// resources are the listable and watchable resources, in discovery
	// order.
	resources []schema.GroupVersionResource
	// watchable holds the group/resources of resources.
	watchable map[schema.GroupResource]bool
	// failedGroups names the API groups discovery could not read (an
	// aggregated API that is down, say).
	failedGroups []string
}

// discoverTypes reads the server's preferred resources. A group that
// cannot be read is reported in failedGroups, not as an error: the others
// are still watched.
func discoverTypes(client discovery.DiscoveryInterface) (*typeSet, error) {
	lists, err := client.ServerPreferredResources()
	ts := &typeSet{watchable: map[schema.GroupResource]bool{}}
	var groupErr *discovery.ErrGroupDiscoveryFailed
	switch {
	case errors.As(err, &groupErr):
		for gv := range groupErr.Groups {
			ts.failedGroups = append(ts.failedGroups, gv.String())
		}
		sort.Strings(ts.failedGroups)
	case err != nil:
		return nil, err
	}
	for _, list := range lists {
		gv, err := schema.ParseGroupVersion(list.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range list.APIResources {
			if strings.Contains(r.Name, "/") || !slices.Contains(r.Verbs, "list") || !slices.Contains(r.Verbs, "watch") {
				continue
			}
			gvr := gv.WithResource(r.Name)
			ts.resources = append(ts.resources, gvr)
			ts.watchable[gvr.GroupResource()] = true
		}
	}
	return ts, nil
}

// expansion turns --all-types and categories into targets.
type expansion struct {
	mapper    meta.RESTMapper
	types     *typeSet
	expander  restmapper.CategoryExpander
	namespace string
	// allNamespaces: -A; without it --all-types watches namespaced types
	// only.
	allNamespaces bool
	// exclude are the group/resources left out.
	exclude map[schema.GroupResource]bool
}

// parseExclusions resolves --exclude (nil: the default exclusions).
func parseExclusions(mapper meta.RESTMapper, exclude []string) (map[schema.GroupResource]bool, error) {
	out := map[schema.GroupResource]bool{}
	if exclude == nil {
		for _, gr := range defaultExclusions() {
			out[gr] = true
		}
		return out, nil
	}
	for _, typ := range exclude {
		typ = strings.TrimSpace(typ)
		if typ == "" {
			continue
		}
		mapping, err := MappingFor(mapper, typ)
		if err != nil {
			return nil, fmt.Errorf("invalid --exclude: %w", err)
		}
		out[mapping.Resource.GroupResource()] = true
		if alias, ok := aliasOf(mapping.Resource.GroupResource()); ok {
			out[alias] = true
		}
	}
	return out, nil
}

// allTypes is every watchable type the server serves, less exclusions and
// aliases; cluster-scoped ones only with -A.
func (e *expansion) allTypes() []informer.Target {
	return e.typesIn(e.namespace, e.allNamespaces)
}

// scouts are the targets --tree searches for what the roots own (see
// tree.ScoutTarget): every type allTypes would watch, in the roots'
// namespace when they share one; else in every namespace, cluster-scoped
// types included, since a cluster-scoped owner's dependents may be
// anywhere.
func (e *expansion) scouts(roots []informer.Target) []informer.Target {
	namespace, everywhere := "", len(roots) == 0
	for i, r := range roots {
		if r.Namespace == "" || i > 0 && r.Namespace != namespace {
			everywhere = true
		}
		namespace = r.Namespace
	}
	if everywhere {
		namespace = ""
	}
	targets := e.typesIn(namespace, everywhere)
	for i, t := range targets {
		targets[i] = tree.ScoutTarget(t, t.Namespace)
	}
	return targets
}

// typesIn is every watchable type, less exclusions and aliases: the
// namespaced ones in namespace, or with everywhere in all namespaces and
// the cluster-scoped ones too.
func (e *expansion) typesIn(namespace string, everywhere bool) []informer.Target {
	var targets []informer.Target
	for _, gvr := range e.types.resources {
		gr := gvr.GroupResource()
		if e.exclude[gr] {
			continue
		}
		if alias, ok := aliasOf(gr); ok && e.types.watchable[alias] && !e.exclude[alias] {
			continue
		}
		t, namespaced, ok := e.target(gvr)
		if !ok || !namespaced && !everywhere {
			continue
		}
		t.Namespace = ""
		if namespaced && !everywhere {
			t.Namespace = namespace
		}
		targets = append(targets, t)
	}
	return targets
}

// category expands a category ("all", or one a CRD declares) the way
// kubectl get does, cluster-scoped members included; ok is false when name
// is no category.
func (e *expansion) category(name string) (targets []informer.Target, ok bool) {
	members, ok := e.expander.Expand(name)
	if !ok {
		return nil, false
	}
	seen := map[schema.GroupResource]bool{}
	for _, gr := range members {
		if seen[gr] || e.exclude[gr] || !e.types.watchable[gr] {
			continue
		}
		seen[gr] = true
		if t, _, ok := e.target(gr.WithVersion("")); ok {
			targets = append(targets, t)
		}
	}
	return targets, true
}

// target is the optional target of a discovered resource at its preferred
// version; ok is false when the RESTMapper does not know it (discovery
// raced a change).
func (e *expansion) target(gvr schema.GroupVersionResource) (t informer.Target, namespaced, ok bool) {
	gvk, err := e.mapper.KindFor(gvr)
	if err != nil {
		return informer.Target{}, false, false
	}
	mapping, err := e.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return informer.Target{}, false, false
	}
	t = informer.Target{Resource: mapping.Resource, Kind: mapping.GroupVersionKind, Optional: true}
	namespaced = mapping.Scope.Name() == meta.RESTScopeNameNamespace
	if namespaced && !e.allNamespaces {
		t.Namespace = e.namespace
	}
	return t, namespaced, true
}

// joinResources names the targets' group/resources for messages, sorted:
// "configmaps, roles.rbac.authorization.k8s.io".
func joinResources(targets []informer.Target) string {
	names := make([]string, 0, len(targets))
	for _, t := range targets {
		names = append(names, t.Resource.GroupResource().String())
	}
	sort.Strings(names)
	return strings.Join(slices.Compact(names), ", ")
}
