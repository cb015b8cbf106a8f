package targets

import (
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-deltas/kubectl-deltas/internal/informer"
)

// testExpansion serves Pods, Deployments and Leases (namespaced) and Nodes
// (cluster-scoped), with the default exclusions.
func testExpansion(t *testing.T) *expansion {
	t.Helper()
	mapper := meta.NewDefaultRESTMapper(nil)
	types := &typeSet{watchable: map[schema.GroupResource]bool{}}
	for _, k := range []struct {
		gvk   schema.GroupVersionKind
		scope meta.RESTScope
	}{
		{schema.GroupVersionKind{Version: "v1", Kind: "Pod"}, meta.RESTScopeNamespace},
		{schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, meta.RESTScopeNamespace},
		{schema.GroupVersionKind{Group: "coordination.k8s.io", Version: "v1", Kind: "Lease"}, meta.RESTScopeNamespace},
		{schema.GroupVersionKind{Version: "v1", Kind: "Node"}, meta.RESTScopeRoot},
	} {
		mapper.Add(k.gvk, k.scope)
		gvr, _ := meta.UnsafeGuessKindToResource(k.gvk)
		types.resources = append(types.resources, gvr)
		types.watchable[gvr.GroupResource()] = true
	}
	exclude, err := parseExclusions(mapper, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &expansion{mapper: mapper, types: types, exclude: exclude}
}

func TestTreeScouts(t *testing.T) {
	e := testExpansion(t)
	root := func(resource, namespace string) informer.Target {
		return informer.Target{Resource: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: resource}, Namespace: namespace, Name: "web"}
	}
	cases := []struct {
		name  string
		roots []informer.Target
		want  []string
	}{
		{"one namespace: its namespaced types", []informer.Target{root("deployments", "a"), root("deployments", "a")},
			[]string{"deployments.apps in a", "pods in a"}},
		{"two namespaces: everywhere, cluster-scoped types too", []informer.Target{root("deployments", "a"), root("deployments", "b")},
			[]string{"deployments.apps in ", "nodes in ", "pods in "}},
		{"a cluster-scoped root: everywhere", []informer.Target{root("nodes", "")},
			[]string{"deployments.apps in ", "nodes in ", "pods in "}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for _, s := range e.scouts(c.roots) {
				if s.Role != informer.RoleScout || !s.Optional || s.Name != "" {
					t.Errorf("%s: not a scout: %+v", s.Resource, s)
				}
				got = append(got, s.Resource.GroupResource().String()+" in "+s.Namespace)
			}
			slices.Sort(got)
			if !slices.Equal(got, c.want) {
				t.Errorf("scouts\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(c.want, "\n  "))
			}
		})
	}
}
