package diff

import (
	"encoding/json"
	"testing"
)

// deploymentJSON is a realistic Deployment of about 2 KB.
const deploymentJSON = `{
  "apiVersion": "apps/v1",
  "kind": "Deployment",
  "metadata": {
    "name": "web",
    "namespace": "shop",
    "uid": "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0",
    "resourceVersion": "123456",
    "generation": 7,
    "creationTimestamp": "2026-11-21T20:48:40Z",
    "labels": {"app.kubernetes.io/name": "web", "app.kubernetes.io/part-of": "shop", "tier": "frontend"},
    "annotations": {"deployment.kubernetes.io/revision": "7", "team": "storefront"}
  },
  "spec": {
    "replicas": 3,
    "revisionHistoryLimit": 10,
    "progressDeadlineSeconds": 600,
    "selector": {"matchLabels": {"app.kubernetes.io/name": "web"}},
    "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}},
    "template": {
      "metadata": {"labels": {"app.kubernetes.io/name": "web", "tier": "frontend"}},
      "spec": {
        "serviceAccountName": "web",
        "terminationGracePeriodSeconds": 30,
        "containers": [
          {
            "name": "web",
            "image": "registry.example.com/shop/web:1.24.3",
            "imagePullPolicy": "IfNotPresent",
            "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}],
            "env": [
              {"name": "LOG_LEVEL", "value": "info"},
              {"name": "CACHE_URL", "value": "redis://cache:6379"},
              {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}
            ],
            "resources": {"limits": {"cpu": "500m", "memory": "256Mi"}, "requests": {"cpu": "100m", "memory": "128Mi"}},
            "readinessProbe": {"httpGet": {"path": "/healthz", "port": "http"}, "periodSeconds": 10},
            "volumeMounts": [{"name": "config", "mountPath": "/etc/web"}]
          },
          {
            "name": "proxy",
            "image": "registry.example.com/infra/proxy:2.1.0",
            "args": ["--upstream=http://127.0.0.1:8080", "--listen=:8443"],
            "ports": [{"name": "https", "containerPort": 8443, "protocol": "TCP"}]
          }
        ],
        "volumes": [{"name": "config", "configMap": {"name": "web-config"}}]
      }
    }
  },
  "status": {
    "observedGeneration": 7,
    "replicas": 3,
    "updatedReplicas": 3,
    "readyReplicas": 3,
    "availableReplicas": 3,
    "conditions": [
      {"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable", "lastUpdateTime": "2026-11-21T20:49:00Z"},
      {"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable", "lastUpdateTime": "2026-11-21T20:49:00Z"}
    ]
  }
}`

func BenchmarkCompute(b *testing.B) {
	var oldV, newV any
	if err := json.Unmarshal([]byte(deploymentJSON), &oldV); err != nil {
		b.Fatal(err)
	}
	if err := json.Unmarshal([]byte(deploymentJSON), &newV); err != nil {
		b.Fatal(err)
	}
	containers := newV.(map[string]any)["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)
	containers[0].(map[string]any)["image"] = "registry.example.com/shop/web:1.24.4"
	opts := Options{Ignore: []string{"/metadata/managedFields", "/metadata/resourceVersion"}}
	if ops := Compute(oldV, newV, opts); len(ops) != 1 {
		b.Fatalf("Compute() = %v, want one operation", ops)
	}
	b.SetBytes(int64(len(deploymentJSON)))
	b.ReportAllocs()
	for b.Loop() {
		Compute(oldV, newV, opts)
	}
}

// BenchmarkText is the text of one change, as the timeline writes it for
// every change of a stream.
func BenchmarkText(b *testing.B) {
	op := Operation{Op: OpReplace, Path: "/data/churn", Old: "1764169011000000000-41", Value: "1764169031000000000-42"}
	b.ReportAllocs()
	for b.Loop() {
		if op.Text(240) == "" {
			b.Fatal("no text")
		}
	}
}
