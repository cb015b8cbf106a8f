package celexpr

import "testing"

// BenchmarkAll is --where's cost per delta: decoding a Pod of a
// Deployment and evaluating a comprehension over its container statuses.
func BenchmarkAll(b *testing.B) {
	pod := []byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web-7665494998-p5cws","namespace":"demo","labels":{"app":"web","pod-template-hash":"7665494998"},"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web-7665494998","uid":"1b5c0f4e-5f0e-4bb4-9a43-3b7c7e8f0a11","controller":true}]},
		"spec":{"containers":[{"name":"web","image":"nginx:1.27","ports":[{"containerPort":80}],"resources":{"limits":{"memory":"128Mi"}}}],"nodeName":"kwok-node-0"},
		"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"},{"type":"PodScheduled","status":"True"}],
		"containerStatuses":[{"name":"web","ready":true,"restartCount":0,"state":{"running":{"startedAt":"2026-11-25T06:00:00Z"}}}]}}`)
	p, err := Compile("--where", `object.status.containerStatuses.exists(c, has(c.state.waiting) && c.state.waiting.reason == "CrashLoopBackOff") || object.status.phase == "Running"`)
	if err != nil {
		b.Fatal(err)
	}
	v := Vars{Object: pod, Type: "Updated", Kind: "Pod", Name: "web-7665494998-p5cws", Namespace: "demo"}
	b.ReportAllocs()
	for b.Loop() {
		if ok, err := All([]*Program{p}, v); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}
