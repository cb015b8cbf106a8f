package events

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-deltas/kubectl-deltas/internal/informer"
)

func TestTargets(t *testing.T) {
	deploy := informer.Target{Context: "prod", Namespace: "shop", Name: "web",
		Resource: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"},
		Kind:     schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}}
	nodes := informer.Target{Resource: schema.GroupVersionResource{Version: "v1", Resource: "nodes"}, Kind: schema.GroupVersionKind{Version: "v1", Kind: "Node"}}
	scout := deploy
	scout.Name, scout.Role, scout.Namespace = "", informer.RoleScout, ""
	cms := informer.Target{Namespace: "a", Resource: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}}
	cmsB := cms
	cmsB.Namespace = "b"
	describe := func(ts []informer.Target) []string {
		var out []string
		for _, t := range ts {
			if t.Role != informer.RoleEvents || t.Resource.Group != "events.k8s.io" || !t.Optional {
				out = append(out, "NOT AN EVENTS TARGET")
			}
			out = append(out, t.Context+"|"+t.Namespace+"|"+t.FieldSelector)
		}
		return out
	}
	for _, tc := range []struct {
		name    string
		targets []informer.Target
		all     bool
		tree    bool
		want    []string
	}{
		{"one named object", []informer.Target{deploy}, false, false, []string{"prod|shop|regarding.name=web,regarding.kind=Deployment"}},
		{"one named object, a tree", []informer.Target{deploy}, false, true, []string{"prod|shop|"}},
		{"a tree's scouts search everywhere", []informer.Target{deploy, scout}, false, true, []string{"prod||"}},
		{"cluster-scoped: default", []informer.Target{nodes}, false, false, []string{"|default|"}},
		{"two namespaces, sorted", []informer.Target{cmsB, cms}, false, false, []string{"|a|", "|b|"}},
		{"-A", []informer.Target{cms}, true, false, []string{"||"}},
	} {
		got := describe(Targets(tc.targets[0].Context, tc.targets, tc.all, tc.tree))
		if len(got) != len(tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
				break
			}
		}
	}
}
