package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kubectl-deltas/kubectl-deltas/test/controlplane"
)

const (
	// podPrefix starts every scale-benchmark Pod's name and occurs nowhere
	// else in a Pod's JSON or in any client's line for it, so that the
	// harness can count it and find the Pod a line is about.
	podPrefix = "bench-pod-"
	// podDigits is the fixed width of the number after podPrefix.
	podDigits = 6
	// seedWriters create the Pods in parallel (issue 11: 16).
	seedWriters = 16
)

func podName(i int) string { return fmt.Sprintf("%s%0*d", podPrefix, podDigits, i) }

// podManifest is scale-benchmark Pod i on node: what a Deployment's Pod
// looks like in a real cluster (two containers with ports, probes, env,
// resources and mounts; labels and annotations as controllers and tools set
// them), placed on its node directly so that no scheduler is needed. kwok
// writes its status. About 2.2 KB of JSON without managedFields once kwok
// has written the status.
func podManifest(i int, node string) []byte {
	app := fmt.Sprintf("shop-%02d", i%40)
	hash := fmt.Sprintf("%08x", uint32(i/250)*2654435761)
	pod := map[string]any{
		"apiVersion": "v1",
		"kind":       "Pod",
		"metadata": map[string]any{
			"name":      podName(i),
			"namespace": benchNamespace,
			"labels": map[string]string{
				"app.kubernetes.io/name":      app,
				"app.kubernetes.io/instance":  app + "-prod",
				"app.kubernetes.io/component": []string{"frontend", "api", "worker", "cache"}[i%4],
				"app.kubernetes.io/part-of":   "shop",
				"pod-template-hash":           hash,
				"tier":                        []string{"web", "backend"}[i%2],
			},
			"annotations": map[string]string{
				"prometheus.io/scrape":                           "true",
				"prometheus.io/port":                             "9090",
				"kubectl.kubernetes.io/default-container":        "app",
				"checksum/config":                                fmt.Sprintf("%016x", uint64(i/250)*0x9e3779b97f4a7c15),
				"cluster-autoscaler.kubernetes.io/safe-to-evict": "true",
			},
		},
		"spec": map[string]any{
			"nodeName":                      node,
			"terminationGracePeriodSeconds": 30,
			"containers": []any{
				map[string]any{
					"name":            "app",
					"image":           fmt.Sprintf("shop/%s:1.%d.%d", app, i%7, i%13),
					"imagePullPolicy": "IfNotPresent",
					"args":            []string{"--config=/etc/app/config.yaml", "--log-format=json"},
					"ports": []any{
						map[string]any{"name": "http", "containerPort": 8080, "protocol": "TCP"},
						map[string]any{"name": "metrics", "containerPort": 9090, "protocol": "TCP"},
					},
					"env": []any{
						map[string]any{"name": "APP_ENV", "value": "production"},
						map[string]any{"name": "LOG_LEVEL", "value": "info"},
						map[string]any{"name": "GOMAXPROCS", "value": "2"},
						map[string]any{"name": "DB_HOST", "value": "postgres.shop.svc.cluster.local"},
						map[string]any{"name": "POD_IP", "valueFrom": map[string]any{"fieldRef": map[string]any{"fieldPath": "status.podIP"}}},
						map[string]any{"name": "NODE_NAME", "valueFrom": map[string]any{"fieldRef": map[string]any{"fieldPath": "spec.nodeName"}}},
					},
					"resources": map[string]any{
						"requests": map[string]string{"cpu": "100m", "memory": "128Mi"},
						"limits":   map[string]string{"cpu": "500m", "memory": "256Mi"},
					},
					"livenessProbe": map[string]any{
						"httpGet":             map[string]any{"path": "/healthz", "port": "http"},
						"initialDelaySeconds": 10, "periodSeconds": 10, "failureThreshold": 3,
					},
					"readinessProbe": map[string]any{
						"httpGet":       map[string]any{"path": "/ready", "port": "http"},
						"periodSeconds": 5, "failureThreshold": 3,
					},
					"volumeMounts": []any{map[string]any{"name": "config", "mountPath": "/etc/app", "readOnly": true}},
				},
				map[string]any{
					"name":  "proxy",
					"image": "proxy:1.31.2",
					"ports": []any{
						map[string]any{"name": "proxy", "containerPort": 15001, "protocol": "TCP"},
						map[string]any{"name": "admin", "containerPort": 15000, "protocol": "TCP"},
					},
					"env": []any{
						map[string]any{"name": "PROXY_MODE", "value": "sidecar"},
						map[string]any{"name": "UPSTREAM_PORT", "value": "8080"},
					},
					"resources": map[string]any{
						"requests": map[string]string{"cpu": "50m", "memory": "64Mi"},
						"limits":   map[string]string{"memory": "128Mi"},
					},
					"readinessProbe": map[string]any{
						"tcpSocket":     map[string]any{"port": 15001},
						"periodSeconds": 10,
					},
				},
			},
			"volumes": []any{map[string]any{"name": "config", "configMap": map[string]any{"name": app + "-config"}}},
		},
	}
	b, _ := json.Marshal(pod) // maps, slices, strings and numbers always marshal
	return b
}

// writeClient is an HTTP/2 client for many parallel writes: one connection,
// no response decoding.
func writeClient() *http.Client {
	return &http.Client{Transport: &http.Transport{
		TLSClientConfig:     &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // loopback benchmark server
		ForceAttemptHTTP2:   true,
		MaxIdleConnsPerHost: 64,
	}}
}

// send sends one request with a JSON body and reads the whole response.
func (c *cluster) send(ctx context.Context, hc *http.Client, method, path, contentType string, body []byte) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.server+path, bytes.NewReader(body))
	if err != nil {
		return 0, nil, fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	return resp.StatusCode, b, nil
}

// seedPods creates the namespace and n Pods, Pod i on node i%nodes, with
// seedWriters parallel writers.
func (c *cluster) seedPods(ctx context.Context, n, nodes int, progress func(done int)) error {
	hc := writeClient()
	defer hc.CloseIdleConnections()
	status, body, err := c.send(ctx, hc, http.MethodPost, "/api/v1/namespaces", "application/json", []byte(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"`+benchNamespace+`"}}`))
	if err != nil {
		return fmt.Errorf("create namespace %s: %w", benchNamespace, err)
	}
	if status != http.StatusCreated && status != http.StatusConflict {
		return fmt.Errorf("create namespace %s: status %d: %s", benchNamespace, status, truncate(string(body), 300))
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var next, done atomic.Int64
	var once sync.Once
	var firstErr error
	var wg sync.WaitGroup
	path := "/api/v1/namespaces/" + benchNamespace + "/pods?fieldManager=" + fieldManager
	for range seedWriters {
		wg.Go(func() {
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				status, body, err := c.send(ctx, hc, http.MethodPost, path, "application/json", podManifest(i, controlplane.NodeNamePrefix+strconv.Itoa(i%nodes)))
				if err == nil && status != http.StatusCreated && status != http.StatusConflict {
					err = fmt.Errorf("status %d: %s", status, truncate(string(body), 300))
				}
				if err != nil {
					once.Do(func() {
						firstErr = fmt.Errorf("create pod %s: %w", podName(i), err)
						cancel()
					})
					return
				}
				if d := done.Add(1); d%10000 == 0 && progress != nil {
					progress(int(d))
				}
			}
		})
	}
	wg.Wait()
	return firstErr
}

// waitPodsRunning waits until no Pod in the benchmark namespace is outside
// phase Running (kwok has written every status), polling every interval.
func (c *cluster) waitPodsRunning(ctx context.Context, timeout time.Duration, progress func(notRunning string)) error {
	deadline := time.Now().Add(timeout)
	q := url.Values{"fieldSelector": {"status.phase!=Running"}, "limit": {"1"}}
	for {
		body, err := c.get(ctx, "/api/v1/namespaces/"+benchNamespace+"/pods?"+q.Encode())
		if err != nil {
			return err
		}
		var list struct {
			Metadata struct {
				Continue string `json:"continue"`
			} `json:"metadata"`
			Items []json.RawMessage `json:"items"`
		}
		if err := json.Unmarshal(body, &list); err != nil {
			return fmt.Errorf("decode the Pod list: %w", err)
		}
		if len(list.Items) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("pods still not Running after %s (is kwok running? see its log in the control plane's work dir)", timeout)
		}
		if progress != nil {
			var p struct {
				Metadata struct {
					Name string `json:"name"`
				} `json:"metadata"`
			}
			_ = json.Unmarshal(list.Items[0], &p)
			progress(p.Metadata.Name)
		}
		select {
		case <-time.After(5 * time.Second):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// podStats describes the Pods as the server lists them.
type podStats struct {
	// Items is the number of Pods in all namespaces; Running how many of
	// them are in phase Running.
	Items, Running int
	// ListBytes is the JSON of the paginated list (limit 500), pages
	// summed; ObjectBytes the items as the server sent them;
	// StrippedBytes the items without metadata.managedFields, compact, as
	// kubectl deltas' Store keeps them.
	ListBytes, ObjectBytes, StrippedBytes int64
	// ResourceVersion is the last page's.
	ResourceVersion string
}

// listPods pages through every Pod (limit 500) and measures them.
func (c *cluster) listPods(ctx context.Context) (podStats, error) {
	var st podStats
	q := url.Values{"limit": {"500"}}
	for {
		body, err := c.get(ctx, "/api/v1/pods?"+q.Encode())
		if err != nil {
			return st, err
		}
		st.ListBytes += int64(len(body))
		var list struct {
			Metadata struct {
				Continue        string `json:"continue"`
				ResourceVersion string `json:"resourceVersion"`
			} `json:"metadata"`
			Items []json.RawMessage `json:"items"`
		}
		if err := json.Unmarshal(body, &list); err != nil {
			return st, fmt.Errorf("decode a Pod list page: %w", err)
		}
		for _, item := range list.Items {
			st.Items++
			st.ObjectBytes += int64(len(item))
			var obj map[string]json.RawMessage
			if err := json.Unmarshal(item, &obj); err != nil {
				return st, fmt.Errorf("decode a Pod: %w", err)
			}
			var meta map[string]json.RawMessage
			if err := json.Unmarshal(obj["metadata"], &meta); err != nil {
				return st, fmt.Errorf("decode a Pod's metadata: %w", err)
			}
			delete(meta, "managedFields")
			m, err := json.Marshal(meta)
			if err != nil {
				return st, fmt.Errorf("encode a Pod's metadata: %w", err)
			}
			obj["metadata"] = m
			stripped, err := json.Marshal(obj)
			if err != nil {
				return st, fmt.Errorf("encode a Pod: %w", err)
			}
			st.StrippedBytes += int64(len(stripped))
			if bytes.Contains(obj["status"], []byte(`"phase":"Running"`)) {
				st.Running++
			}
		}
		st.ResourceVersion = list.Metadata.ResourceVersion
		if list.Metadata.Continue == "" {
			return st, nil
		}
		q.Set("continue", list.Metadata.Continue)
	}
}

// currentRV is the resourceVersion of a one-item list of the collection
// at path (every Pod: "/api/v1/pods"): a watch from it sees the changes
// made after this call only.
func (c *cluster) currentRV(ctx context.Context, path string) (string, error) {
	body, err := c.get(ctx, path+"?limit=1")
	if err != nil {
		return "", err
	}
	var list struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(body, &list); err != nil || list.Metadata.ResourceVersion == "" {
		return "", fmt.Errorf("no resourceVersion in the list of %s (%v): check the server", path, err)
	}
	return list.Metadata.ResourceVersion, nil
}
