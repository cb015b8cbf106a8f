package targets

import (
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-deltas/kubectl-deltas/internal/informer"
)

// apiServiceList has a local APIService (a built-in group), an aggregated
// one that is available and one that is not, as kube-apiserver serves
// them.
const apiServiceList = `{"kind":"APIServiceList","apiVersion":"apiregistration.k8s.io/v1","items":[
{"metadata":{"name":"v1.apps"},"spec":{"group":"apps","version":"v1","groupPriorityMinimum":17800,"versionPriority":15},
 "status":{"conditions":[{"type":"Available","status":"True","reason":"Local","message":"Local APIServices are always available"}]}},
{"metadata":{"name":"v1beta1.metrics.k8s.io"},"spec":{"service":{"namespace":"kube-system","name":"metrics-server","port":443},"group":"metrics.k8s.io","version":"v1beta1"},
 "status":{"conditions":[{"type":"Available","status":"True","reason":"Passed","message":"all checks passed"}]}},
{"metadata":{"name":"v1.fake.example.com"},"spec":{"service":{"namespace":"default","name":"fake-api","port":443},"group":"fake.example.com","version":"v1"},
 "status":{"conditions":[{"type":"Available","status":"False","reason":"FailedDiscoveryCheck","message":"failing or missing response from https://192.0.2.10:443/apis/fake.example.com/v1:\n 503"}]}}
]}`

func testAPIServices(t *testing.T) APIServices {
	t.Helper()
	services, err := parseAPIServices([]byte(apiServiceList))
	if err != nil {
		t.Fatal(err)
	}
	return services
}

func TestParseAPIServices(t *testing.T) {
	services := testAPIServices(t)
	apps := services[schema.GroupVersion{Group: "apps", Version: "v1"}]
	metrics := services[schema.GroupVersion{Group: "metrics.k8s.io", Version: "v1beta1"}]
	fake := services[schema.GroupVersion{Group: "fake.example.com", Version: "v1"}]
	if apps.Name != "v1.apps" || apps.Aggregated || !apps.Available {
		t.Errorf("local: %+v", apps)
	}
	if !metrics.Aggregated || !metrics.Available {
		t.Errorf("aggregated, available: %+v", metrics)
	}
	if !fake.Aggregated || fake.Available || fake.Reason != "FailedDiscoveryCheck" {
		t.Errorf("aggregated, down: %+v", fake)
	}
	if got := fake.Status(); got != "APIService v1.fake.example.com: FailedDiscoveryCheck: failing or missing response from https://192.0.2.10:443/apis/fake.example.com/v1: 503" {
		t.Errorf("Status() = %q", got)
	}
	if got := services.Unavailable(); len(got) != 1 || got[0].Name != "v1.fake.example.com" {
		t.Errorf("Unavailable() = %+v", got)
	}
	if _, err := parseAPIServices([]byte(`{"items":[`)); err == nil {
		t.Error("a truncated list was read")
	}
}

func TestAPIServicesMark(t *testing.T) {
	services := testAPIServices(t)
	ts := []informer.Target{
		{Resource: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}},
		{Resource: schema.GroupVersionResource{Group: "metrics.k8s.io", Version: "v1beta1", Resource: "pods"}},
		{Resource: schema.GroupVersionResource{Group: "fake.example.com", Version: "v1", Resource: "widgets"}},
	}
	services.Mark(ts)
	var got []string
	for _, t := range ts {
		got = append(got, t.APIService)
	}
	if want := []string{"", "v1beta1.metrics.k8s.io", "v1.fake.example.com"}; !slices.Equal(got, want) {
		t.Errorf("marked %q, want %q", got, want)
	}
	var none APIServices // could not be read
	none.Mark(ts[:1])
	if ts[0].APIService != "" {
		t.Error("nil APIServices marked a target")
	}
}

func TestAPIServicesExplain(t *testing.T) {
	services := testAPIServices(t)
	const down = "APIService v1.fake.example.com, which is unavailable (FailedDiscoveryCheck: failing or missing response from https://192.0.2.10:443/apis/fake.example.com/v1: 503)"
	for _, arg := range []string{"widgets.fake.example.com", "widgets.v1.fake.example.com"} {
		err := services.ExplainUnknown(arg)
		if err == nil || err.Error() != "widgets.fake.example.com is served by "+down+": try again when it is back (kubectl get apiservice v1.fake.example.com)" {
			t.Errorf("ExplainUnknown(%q) = %v", arg, err)
		}
	}
	if err := services.ExplainUnknown("widgets"); err == nil || !strings.Contains(err.Error(), `resource type "widgets" now; it may be a type of `+down) {
		t.Errorf("ExplainUnknown(widgets) = %v", err)
	}
	if err := services.ExplainUnknown("gadgets.other.io"); err != nil {
		t.Errorf("a group no unavailable APIService serves: %v", err)
	}
	available := APIServices{}
	for gv, s := range services {
		s.Available = true
		available[gv] = s
	}
	if err := available.ExplainUnknown("widgets"); err != nil {
		t.Errorf("nothing down: %v", err)
	}

	widgets := informer.Target{Resource: schema.GroupVersionResource{Group: "fake.example.com", Version: "v1", Resource: "widgets"}}
	if err := services.NamedTypeDown([]informer.Target{widgets}); err == nil || !strings.HasPrefix(err.Error(), "widgets.fake.example.com is served by "+down) {
		t.Errorf("NamedTypeDown = %v", err)
	}
	widgets.Optional = true // a member of --all-types: not an error
	if err := services.NamedTypeDown([]informer.Target{widgets}); err != nil {
		t.Errorf("NamedTypeDown(optional) = %v", err)
	}

	got := services.DownGroups([]string{"fake.example.com/v1", "stale.example.com/v2"})
	want := []string{
		"fake.example.com/v1 (APIService v1.fake.example.com: FailedDiscoveryCheck: failing or missing response from https://192.0.2.10:443/apis/fake.example.com/v1: 503)",
		"stale.example.com/v2",
	}
	if !slices.Equal(got, want) {
		t.Errorf("DownGroups = %q, want %q", got, want)
	}
}

func TestNeedsAPIServices(t *testing.T) {
	target := func(group, version, resource string) informer.Target {
		return informer.Target{Resource: schema.GroupVersionResource{Group: group, Version: version, Resource: resource}}
	}
	configMaps, deployments := target("", "v1", "configmaps"), target("apps", "v1", "deployments")
	metrics := target("metrics.k8s.io", "v1beta1", "pods")
	widgets := target("example.com", "v1", "widgets")
	cases := []struct {
		name string
		res  Resolution
		want bool
	}{
		{"built-in types", Resolution{Targets: []informer.Target{configMaps, deployments}}, false},
		{"an aggregated group", Resolution{Targets: []informer.Target{configMaps, metrics}}, true},
		{"a custom resource", Resolution{Targets: []informer.Target{widgets}}, true},
		{"a scout of a custom resource", Resolution{Targets: []informer.Target{deployments}, Scouts: []informer.Target{widgets}}, true},
		{"a group discovery failed", Resolution{Targets: []informer.Target{configMaps}, FailedGroups: []string{"fake.example.com/v1"}}, true},
		{"a built-in group at a version client-go does not know", Resolution{Targets: []informer.Target{target("apps", "v9", "deployments")}}, true},
	}
	for _, c := range cases {
		if got := c.res.NeedsAPIServices(); got != c.want {
			t.Errorf("%s: NeedsAPIServices() = %v, want %v", c.name, got, c.want)
		}
	}
}
