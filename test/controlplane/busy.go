package controlplane

// The busy cluster: kube-controller-manager, kube-scheduler and kwok next to
// etcd and kube-apiserver, with simulated nodes, so that Deployments roll
// out, ReplicaSets and Pods are created by the controllers, and Pods are
// scheduled and turn Running — a cluster that changes by itself, with no
// container runtime.

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

const (
	controllerManagerBinary = "kube-controller-manager"
	schedulerBinary         = "kube-scheduler"
	kwokBinary              = "kwok"
	// kwokStagesFile holds the node and pod stages that ship in kwok's
	// module, joined into one YAML stream by "make controlplane".
	kwokStagesFile = "kwok-stages.yaml"
	// kwokClusterLogsCRD is kwok's ClusterLogs CRD, from its module, by
	// "make controlplane": a test points the containers of its Pods at
	// log files with it, and kwok's kubelet server answers their logs.
	kwokClusterLogsCRD = "kwok-clusterlogs-crd.yaml"

	controllerManagerLog = "kube-controller-manager.log"
	schedulerLog         = "kube-scheduler.log"
	kwokLog              = "kwok.log"

	// KwokNodeAnnotation marks a Node as one of kwok's: kwok manages only
	// nodes annotated KwokNodeAnnotation=KwokNodeValue.
	KwokNodeAnnotation = "kwok.x-k8s.io/node"
	// KwokNodeValue is the value of KwokNodeAnnotation on simulated nodes.
	KwokNodeValue = "fake"
	// NodeNamePrefix starts the names of the simulated nodes:
	// kwok-node-0, kwok-node-1, …
	NodeNamePrefix = "kwok-node-"
	// CustomStatusAnnotation is the annotation that, set to "custom" on a
	// Pod, makes kwok leave its status alone: a test writes it (an image
	// pull error, say).
	CustomStatusAnnotation = "kwok.x-k8s.io/status"

	// probeNamespace holds the probe Pod that proves the scheduler and kwok
	// work before Start returns; it is deleted again.
	probeNamespace = "kube-system"
	probePodName   = "controlplane-probe"
)

// controllerManagerArgs is kube-controller-manager's command line: every
// default controller, against the admin kubeconfig, serving nothing (no
// port at all, so nothing listens beyond loopback and no port can clash).
func (cp *ControlPlane) controllerManagerArgs() []string {
	return slices.Concat([]string{
		"--kubeconfig=" + cp.adminKubeconfig,
		"--leader-elect=false",
		"--controllers=*",
		"--service-account-private-key-file=" + cp.path("sa.key"),
		// kube-apiserver generates its self-signed serving certificate here.
		"--root-ca-file=" + filepath.Join(cp.path("certs"), "apiserver.crt"),
		"--bind-address=127.0.0.1",
		"--secure-port=0",
	}, cp.controllerManagerFlags)
}

// schedulerArgs is kube-scheduler's command line, serving nothing like the
// controller-manager.
func (cp *ControlPlane) schedulerArgs() []string {
	return slices.Concat([]string{
		"--kubeconfig=" + cp.adminKubeconfig,
		"--leader-elect=false",
		"--bind-address=127.0.0.1",
		"--secure-port=0",
	}, cp.schedulerFlags)
}

// kwokArgs is kwok's command line: it manages only the nodes annotated
// KwokNodeAnnotation=KwokNodeValue and plays the shipped fast node and pod
// stages, except on Pods annotated CustomStatusAnnotation=custom. Its
// kubelet server listens on 127.0.0.1:cp.kwokPort (TLS, a certificate of
// its own the kube-apiserver does not verify), every node's address and
// port, and answers container logs as the ClusterLogs objects say.
func (cp *ControlPlane) kwokArgs() []string {
	return slices.Concat([]string{
		"--kubeconfig=" + cp.adminKubeconfig,
		"--config=" + filepath.Join(cp.binDir, kwokStagesFile),
		"--manage-all-nodes=false",
		"--manage-nodes-with-annotation-selector=" + KwokNodeAnnotation + "=" + KwokNodeValue,
		"--manage-nodes-with-label-selector=",
		// A Pod annotated so keeps the status a test writes.
		"--disregard-status-with-annotation-selector=" + CustomStatusAnnotation + "=custom",
		"--cidr=10.64.0.1/10",
		"--node-ip=127.0.0.1",
		fmt.Sprintf("--node-port=%d", cp.kwokPort),
		fmt.Sprintf("--server-address=127.0.0.1:%d", cp.kwokPort),
		"--tls-cert-file=" + cp.path(kwokCertFile),
		"--tls-private-key-file=" + cp.path(kwokKeyFile),
		"--enable-crds=ClusterLogs",
		"--node-lease-duration-seconds=40",
	}, cp.kwokFlags)
}

// nodeName is the name of the i-th simulated node.
func nodeName(i int) string { return fmt.Sprintf("%s%d", NodeNamePrefix, i) }

// nodeManifest is a simulated node as JSON: kwok fills in its status
// (Ready, addresses, a large capacity) and keeps its lease.
func nodeManifest(name string) string {
	node := map[string]any{
		"apiVersion": "v1",
		"kind":       "Node",
		"metadata": map[string]any{
			"name": name,
			"annotations": map[string]string{
				KwokNodeAnnotation: KwokNodeValue,
				// No node-ttl bookkeeping for nodes without a kubelet.
				"node.alpha.kubernetes.io/ttl": "0",
			},
			"labels": map[string]string{
				"kubernetes.io/hostname": name,
				"kubernetes.io/os":       "linux",
				"kubernetes.io/arch":     "amd64",
				"type":                   "kwok",
			},
		},
	}
	data, _ := json.Marshal(node) // maps of strings always marshal
	return string(data)
}

// probePodManifest is a Pod with no node: the scheduler must place it and
// kwok run it. The image is never pulled.
func probePodManifest() string {
	return fmt.Sprintf(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":%q},"spec":{"containers":[{"name":"probe","image":"pause"}],"terminationGracePeriodSeconds":0}}`, probePodName)
}

// probePodOnNode is the probe Pod placed on node directly, for clusters
// without a scheduler (Options.KwokOnly).
func probePodOnNode(node string) string {
	return fmt.Sprintf(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":%q},"spec":{"nodeName":%q,"containers":[{"name":"probe","image":"pause"}],"terminationGracePeriodSeconds":0}}`, probePodName, node)
}

// startBusy starts kube-controller-manager, kube-scheduler and kwok,
// registers cp.nodes simulated nodes, and returns once each process has
// shown that it works: the controller-manager created the default
// ServiceAccount, every node is Ready without a not-ready taint, and a
// probe Pod was scheduled, ran and is gone again. The admin kubeconfig
// must exist.
func (cp *ControlPlane) startBusy(ctx context.Context) error {
	if err := cp.prepareKwokServer(ctx); err != nil {
		return err
	}
	specs := []struct {
		name, log string
		args      []string
		slot      **process
	}{
		{controllerManagerBinary, controllerManagerLog, cp.controllerManagerArgs(), &cp.controllerManager},
		{schedulerBinary, schedulerLog, cp.schedulerArgs(), &cp.scheduler},
		{kwokBinary, kwokLog, cp.kwokArgs(), &cp.kwok},
	}
	if cp.kwokOnly {
		specs = specs[2:]
	}
	var procs []watched
	for _, s := range specs {
		p, err := startProcess(s.name, filepath.Join(cp.binDir, s.name), s.args, cp.dir, cp.path(s.log), cp.unexpectedExit)
		if err != nil {
			return err
		}
		cp.mu.Lock()
		*s.slot = p
		cp.mu.Unlock()
		procs = append(procs, watched{p, s.log})
	}

	client := newAPIClient()
	defer client.CloseIdleConnections()
	if err := cp.registerNodes(ctx); err != nil {
		return err
	}

	get := func(ctx context.Context, path string, into any) (int, error) {
		status, body, err := getLarge(ctx, client, cp.Server()+path, cp.adminToken)
		if err != nil || status != http.StatusOK {
			return status, err
		}
		if err := json.Unmarshal(body, into); err != nil {
			return status, fmt.Errorf("decode %s: %w", path, err)
		}
		return status, nil
	}
	probes := []probe{
		{
			what: "kube-controller-manager creates ServiceAccount default/default",
			check: func(ctx context.Context) error {
				status, err := get(ctx, "/api/v1/namespaces/default/serviceaccounts/default", &struct{}{})
				if err == nil && status != http.StatusOK {
					err = fmt.Errorf("status %d", status)
				}
				return err
			},
		},
		{
			what: fmt.Sprintf("%d simulated nodes Ready", cp.nodes),
			check: func(ctx context.Context) error {
				var list nodeList
				status, err := get(ctx, "/api/v1/nodes?labelSelector="+url.QueryEscape("type=kwok"), &list)
				if err == nil && status != http.StatusOK {
					err = fmt.Errorf("status %d", status)
				}
				if err != nil {
					return err
				}
				if cp.kwokOnly {
					// The not-ready taint that admission puts on a new
					// node is removed by the controller-manager only; Pods
					// that name their node do not mind it.
					for i := range list.Items {
						list.Items[i].Spec.Taints = nil
					}
				}
				return nodesReady(list, cp.nodes)
			},
		},
		{
			what: "a probe Pod is scheduled and Running",
			check: func(ctx context.Context) error {
				return cp.probePodRunning(ctx, client)
			},
		},
		{
			what: "the probe Pod is gone",
			check: func(ctx context.Context) error {
				status, _, err := do(ctx, client, http.MethodDelete, cp.Server()+probePodPath()+"?gracePeriodSeconds=0", cp.adminToken, "")
				if err != nil {
					return err
				}
				if status != http.StatusNotFound {
					return fmt.Errorf("delete: status %d", status)
				}
				return nil
			},
		},
	}
	if cp.kwokOnly {
		// No controller-manager to create ServiceAccounts.
		probes = probes[1:]
	}
	return cp.waitAll(ctx, "the busy cluster", "ready", procs, probes)
}

// StopKwok stops kwok (busy clusters only) and leaves every object as it
// last wrote it: without kube-controller-manager (Options.KwokOnly) nothing
// notices that the simulated nodes stop renewing their leases, so a
// benchmark can measure on a cluster that holds its Pods Running and
// otherwise stays quiet. Stop still stops everything else.
func (cp *ControlPlane) StopKwok() error {
	cp.mu.Lock()
	p := cp.kwok
	cp.kwok = nil
	cp.mu.Unlock()
	if p == nil {
		return errors.New("kwok is not running")
	}
	p.terminate()
	cp.logf("kwok stopped")
	return nil
}

// getLarge is do for GET requests whose answer may exceed do's 64 KiB, such
// as the list of a thousand nodes.
func getLarge(ctx context.Context, client *http.Client, url, token string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, nil, fmt.Errorf("read response: %w", err)
	}
	return resp.StatusCode, data, nil
}

// registerNodes creates the simulated nodes, a few requests at a time (a
// benchmark registers thousands). A node that already exists (a work
// directory reused with its etcd data) is fine.
func (cp *ControlPlane) registerNodes(ctx context.Context) error {
	const parallel = 8
	// Unlike newAPIClient's, connections are kept alive across requests.
	client := &http.Client{Transport: &http.Transport{
		TLSClientConfig:     &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // local test server with a self-signed certificate
		MaxIdleConnsPerHost: parallel,
	}}
	defer client.CloseIdleConnections()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	next := make(chan int)
	errs := make(chan error, parallel)
	var wg sync.WaitGroup
	for range parallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				status, body, err := do(ctx, client, http.MethodPost, cp.Server()+"/api/v1/nodes", cp.adminToken, nodeManifest(nodeName(i)))
				if err == nil && status != http.StatusCreated && status != http.StatusConflict {
					err = fmt.Errorf("status %d: %s", status, truncate(body))
				}
				if err != nil {
					errs <- fmt.Errorf("register simulated node %s: %w", nodeName(i), err)
					cancel()
					return
				}
			}
		}()
	}
feed:
	for i := 0; i < cp.nodes; i++ {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("register simulated nodes: %w", err)
	}
	return nil
}

func probePodPath() string {
	return "/api/v1/namespaces/" + probeNamespace + "/pods/" + probePodName
}

// probePod is the probe Pod's manifest: scheduled, or placed on the first
// node when there is no scheduler.
func (cp *ControlPlane) probePod() string {
	if cp.kwokOnly {
		return probePodOnNode(nodeName(0))
	}
	return probePodManifest()
}

// probePodRunning creates the probe Pod if it does not exist yet and
// reports whether it is Running.
func (cp *ControlPlane) probePodRunning(ctx context.Context, client *http.Client) error {
	status, body, err := do(ctx, client, http.MethodGet, cp.Server()+probePodPath(), cp.adminToken, "")
	if err != nil {
		return err
	}
	if status == http.StatusNotFound {
		status, body, err = do(ctx, client, http.MethodPost, cp.Server()+"/api/v1/namespaces/"+probeNamespace+"/pods", cp.adminToken, cp.probePod())
		if err != nil {
			return err
		}
		if status != http.StatusCreated {
			return fmt.Errorf("create: status %d: %s", status, truncate(body))
		}
	} else if status != http.StatusOK {
		return fmt.Errorf("get: status %d: %s", status, truncate(body))
	}
	var pod struct {
		Spec struct {
			NodeName string `json:"nodeName"`
		} `json:"spec"`
		Status struct {
			Phase string `json:"phase"`
		} `json:"status"`
	}
	if err := json.Unmarshal([]byte(body), &pod); err != nil {
		return fmt.Errorf("decode the probe Pod: %w", err)
	}
	switch {
	case pod.Spec.NodeName == "":
		return errors.New("not scheduled yet (is kube-scheduler running?)")
	case pod.Status.Phase != "Running":
		return fmt.Errorf("on %s, phase %q (is kwok running?)", pod.Spec.NodeName, pod.Status.Phase)
	}
	return nil
}

// nodeList is the part of a NodeList that readiness reads.
type nodeList struct {
	Items []struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
		Spec struct {
			Taints []struct {
				Key    string `json:"key"`
				Effect string `json:"effect"`
			} `json:"taints"`
		} `json:"spec"`
		Status struct {
			Conditions []struct {
				Type   string `json:"type"`
				Status string `json:"status"`
			} `json:"conditions"`
		} `json:"status"`
	} `json:"items"`
}

// nodesReady reports whether list holds at least want nodes that are Ready
// and carry no taint that keeps Pods off them; the error names the first
// node that is not.
func nodesReady(list nodeList, want int) error {
	ready := 0
	var notReady []string
	for _, n := range list.Items {
		ok := false
		for _, c := range n.Status.Conditions {
			if c.Type == "Ready" {
				ok = c.Status == "True"
			}
		}
		for _, t := range n.Spec.Taints {
			if t.Effect == "NoSchedule" || t.Effect == "NoExecute" {
				ok = false
			}
		}
		if ok {
			ready++
		} else {
			notReady = append(notReady, n.Metadata.Name)
		}
	}
	if ready >= want {
		return nil
	}
	if len(notReady) > 0 {
		return fmt.Errorf("%d of %d Ready, not yet: %s", ready, want, strings.Join(notReady, ", "))
	}
	return fmt.Errorf("%d of %d Ready", ready, want)
}

// stopBusy stops kwok, kube-scheduler and kube-controller-manager, all at
// once, before the servers they talk to go away.
func (cp *ControlPlane) stopBusy(procs ...*process) {
	var wg sync.WaitGroup
	for _, p := range procs {
		if p == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.terminate()
		}()
	}
	wg.Wait()
}
