package replay

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-deltas/kubectl-deltas/internal/informer"
)

func TestNamesType(t *testing.T) {
	target := func(group, version, resource, kind string) informer.Target {
		return informer.Target{Resource: schema.GroupVersionResource{Group: group, Version: version, Resource: resource}, Kind: schema.GroupVersionKind{Group: group, Version: version, Kind: kind}}
	}
	cms := target("", "v1", "configmaps", "ConfigMap")
	deploys := target("apps", "v1", "deployments", "Deployment")
	widgets := target("example.com", "v1", "widgets", "Widget")
	for _, tc := range []struct {
		arg    string
		target informer.Target
		want   bool
	}{
		{"configmaps", cms, true}, {"configmap", cms, true}, {"ConfigMap", cms, true}, {"cm", cms, true}, {"configmaps.v1", cms, true},
		{"deploy", deploys, true}, {"deployments.apps", deploys, true}, {"deployment.v1.apps", deploys, true}, {"Deployment", deploys, true},
		{"deployments.batch", deploys, false}, {"cm", deploys, false}, {"secrets", cms, false},
		{"widgets", widgets, true}, {"widget.example.com", widgets, true}, {"wd", widgets, false},
	} {
		if got := NamesType(tc.arg, tc.target); got != tc.want {
			t.Errorf("NamesType(%q, %s) = %v, want %v", tc.arg, tc.target.Resource, got, tc.want)
		}
	}
}
