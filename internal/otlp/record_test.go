package otlp

import (
	"testing"

	"go.opentelemetry.io/otel/attribute"
)

// TestEventNames: one fixed name per record type; an Event object's
// deltas under k8s.event.
func TestEventNames(t *testing.T) {
	for _, tc := range []struct{ kind, objectKind, want string }{
		{"Added", "ConfigMap", "k8s.object.added"},
		{"Replaced", "Pod", "k8s.object.replaced"},
		{"Sync", "Pod", "k8s.object.sync"},
		{"Updated", "Event", "k8s.event.updated"},
		{"OnAdd", "Pod", "k8s.handler.on_add"},
		{"OnUpdate", "Pod", "k8s.handler.on_update"},
		{"OnDelete", "Pod", "k8s.handler.on_delete"},
		{"Reconcile", "Pod", "k8s.controller.reconcile"},
		{"QueueSummary", "", "k8s.controller.queue_summary"},
		{"Verdict", "", "k8s.wait.verdict"},
	} {
		if got := eventName(tc.kind, tc.objectKind); got != tc.want {
			t.Errorf("eventName(%s, %s) = %s, want %s", tc.kind, tc.objectKind, got, tc.want)
		}
	}
}

// TestObjectResource: a record's own context names its cluster before the
// run's; the conventions' kind-specific names where they have one; a
// Namespace is its own k8s.namespace.name; an object-less record has the
// cluster only.
func TestObjectResource(t *testing.T) {
	asMap := func(kvs []attribute.KeyValue) map[string]string {
		m := map[string]string{}
		for _, kv := range kvs {
			m[string(kv.Key)] = kv.Value.AsString()
		}
		return m
	}
	got := asMap(appendObjectResource(nil, objectRef{context: "prod", apiVersion: "apps/v1", kind: "StatefulSet", namespace: "db", name: "pg", uid: "u"}, "dev"))
	want := map[string]string{"k8s.cluster.name": "prod", "k8s.namespace.name": "db", "k8s.statefulset.name": "pg", "k8s.statefulset.uid": "u",
		"k8s.object.api_version": "apps/v1", "k8s.object.kind": "StatefulSet", "k8s.object.name": "pg", "k8s.object.uid": "u"}
	if len(got) != len(want) {
		t.Errorf("resource %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q (all: %v)", k, got[k], v, got)
		}
	}
	ns := asMap(appendObjectResource(nil, objectRef{apiVersion: "v1", kind: "Namespace", name: "shop", uid: "n"}, "dev"))
	if ns["k8s.namespace.name"] != "shop" || ns["k8s.cluster.name"] != "dev" || ns["k8s.namespace.uid"] != "n" {
		t.Errorf("a Namespace's resource: %v", ns)
	}
	crd := asMap(appendObjectResource(nil, objectRef{apiVersion: "example.com/v1", kind: "Pod", name: "x"}, ""))
	if _, ok := crd["k8s.pod.name"]; ok || crd["k8s.object.kind"] != "Pod" {
		t.Errorf("a Pod of another group is no k8s.pod: %v", crd)
	}
	if none := asMap(appendObjectResource(nil, objectRef{}, "dev")); len(none) != 1 || none["k8s.cluster.name"] != "dev" {
		t.Errorf("an object-less record's resource: %v", none)
	}
}
