package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

const (
	benchNamespace = "bench"
	// objectPrefix starts every benchmark object's name; the harness counts
	// it in outputs that are not one line per object.
	objectPrefix = "bench-obj-"
	// fieldManager is the manager of every write, so that updates merge
	// into the creation's managedFields entry instead of adding one.
	fieldManager = "bench"
	writers      = 8
)

func objectName(i int) string { return fmt.Sprintf("%s%06d", objectPrefix, i) }

// configMap is benchmark object i: about 700 bytes of JSON as the API
// server lists it (metadata with managedFields, and a data section that
// looks like configuration).
func configMap(i int) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Name:      objectName(i),
			Namespace: benchNamespace,
			Labels: map[string]string{
				"app.kubernetes.io/name": "bench",
				"shard":                  fmt.Sprintf("s%02d", i%32),
			},
		},
		Data: map[string]string{
			"app.properties": fmt.Sprintf("log.level=info\nlog.format=json\nserver.port=%d\nserver.timeout=30s\nfeature.alpha=false\nfeature.beta=true\n", 8000+i%1000),
			"owner":          fmt.Sprintf("team-%02d", i%17),
			"revision":       fmt.Sprintf("%08x%08x", uint32(i)*2654435761, uint32(i)*40503),
		},
	}
}

type cluster struct {
	server     string
	token      string
	kubeconfig string
	client     kubernetes.Interface
	http       *http.Client
}

func newCluster(server, token, kubeconfig string) (*cluster, error) {
	config, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("load the admin kubeconfig: %w", err)
	}
	config.QPS, config.Burst = 5000, 5000
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		return nil, fmt.Errorf("create a client: %w", err)
	}
	return &cluster{
		server:     server,
		token:      token,
		kubeconfig: kubeconfig,
		client:     client,
		http: &http.Client{Transport: &http.Transport{
			TLSClientConfig:    &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // loopback benchmark server
			DisableCompression: true,
		}},
	}, nil
}

// serverGC makes kube-apiserver collect its garbage now (the heap profile
// handler of /debug/pprof with gc=1), so that the next client does not pay
// for the garbage the previous one made the server create.
func (c *cluster) serverGC(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.server+"/debug/pprof/heap?gc=1", nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("garbage-collect kube-apiserver: %w", err)
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return fmt.Errorf("garbage-collect kube-apiserver: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("garbage-collect kube-apiserver: %s", resp.Status)
	}
	return nil
}

// seed creates the namespace and n ConfigMaps with parallel writers.
func (c *cluster) seed(ctx context.Context, n int, progress func(done int)) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: benchNamespace}}
	if _, err := c.client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s: %w", benchNamespace, err)
	}
	cms := c.client.CoreV1().ConfigMaps(benchNamespace)
	var next, done atomic.Int64
	var firstErr error
	var once sync.Once
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := 0; w < 16; w++ {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				select {
				case <-stop:
					return
				default:
				}
				_, err := cms.Create(ctx, configMap(i), metav1.CreateOptions{FieldManager: fieldManager})
				if err != nil && !apierrors.IsAlreadyExists(err) {
					once.Do(func() {
						firstErr = fmt.Errorf("create %s: %w", objectName(i), err)
						close(stop)
					})
					return
				}
				if d := done.Add(1); d%5000 == 0 && progress != nil {
					progress(int(d))
				}
			}
		})
	}
	wg.Wait()
	return firstErr
}

// get sends an authenticated GET and returns the body.
func (c *cluster) get(ctx context.Context, path string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.server+path, nil)
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Accept", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s: %s", path, resp.Status, truncate(string(body), 300))
	}
	return body, nil
}

// listStats lists the namespace once and returns the number of items and
// the size of the list's JSON.
func (c *cluster) listStats(ctx context.Context) (items, size int, err error) {
	body, err := c.get(ctx, "/api/v1/namespaces/"+benchNamespace+"/configmaps")
	if err != nil {
		return 0, 0, err
	}
	var list struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return 0, 0, fmt.Errorf("decode the list: %w", err)
	}
	return len(list.Items), len(body), nil
}

// serverVersion is the API server's gitVersion.
func (c *cluster) serverVersion(ctx context.Context) string {
	body, err := c.get(ctx, "/version")
	if err != nil {
		return "unknown"
	}
	var v struct {
		GitVersion string `json:"gitVersion"`
	}
	if json.Unmarshal(body, &v) != nil || v.GitVersion == "" {
		return "unknown"
	}
	return v.GitVersion
}

// burstResult describes one update burst.
type burstResult struct {
	// lastResponse is when the last of the writes returned.
	lastResponse time.Time
	// took is from the first write sent to the last response.
	took time.Duration
}

// burst patches m distinct objects, first..first+m-1 modulo n, each with a
// value unique to this burst, with parallel writers, as fast as the server
// takes them.
func (c *cluster) burst(ctx context.Context, tag string, first, m, n int) (burstResult, error) {
	cms := c.client.CoreV1().ConfigMaps(benchNamespace)
	var next atomic.Int64
	var mu sync.Mutex
	var last time.Time
	var firstErr error
	var wg sync.WaitGroup
	begin := time.Now()
	for w := 0; w < writers; w++ {
		wg.Go(func() {
			for {
				j := int(next.Add(1) - 1)
				if j >= m {
					return
				}
				name := objectName((first + j) % n)
				patch := fmt.Sprintf(`{"data":{"burst":%q}}`, fmt.Sprintf("%s-%06d", tag, j))
				_, err := cms.Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: fieldManager})
				now := time.Now()
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = fmt.Errorf("patch %s: %w", name, err)
				}
				if now.After(last) {
					last = now
				}
				mu.Unlock()
				if err != nil {
					return
				}
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		return burstResult{}, firstErr
	}
	return burstResult{lastResponse: last, took: last.Sub(begin)}, nil
}

func truncate(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
