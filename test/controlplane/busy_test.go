package controlplane

import (
	"bufio"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestBusyArgs(t *testing.T) {
	cp := &ControlPlane{
		binDir:                 "/bin-dir",
		dir:                    "/work",
		adminKubeconfig:        "/work/admin.kubeconfig",
		controllerManagerFlags: []string{"--kube-api-qps=500"},
		schedulerFlags:         []string{"--kube-api-qps=400"},
		kwokFlags:              []string{"--cidr=10.200.0.1/16"},
		kwokPort:               10250,
	}
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"controller-manager", cp.controllerManagerArgs(), []string{
			"--kubeconfig=/work/admin.kubeconfig", "--leader-elect=false", "--controllers=*",
			"--service-account-private-key-file=/work/sa.key", "--root-ca-file=/work/certs/apiserver.crt",
			"--bind-address=127.0.0.1", "--secure-port=0", "--kube-api-qps=500",
		}},
		{"scheduler", cp.schedulerArgs(), []string{
			"--kubeconfig=/work/admin.kubeconfig", "--leader-elect=false", "--bind-address=127.0.0.1", "--secure-port=0",
			"--kube-api-qps=400",
		}},
		{"kwok", cp.kwokArgs(), []string{
			"--kubeconfig=/work/admin.kubeconfig", "--config=/bin-dir/kwok-stages.yaml", "--manage-all-nodes=false",
			"--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake", "--manage-nodes-with-label-selector=",
			"--disregard-status-with-annotation-selector=kwok.x-k8s.io/status=custom", "--cidr=10.64.0.1/10",
			"--node-ip=127.0.0.1", "--node-port=10250", "--server-address=127.0.0.1:10250",
			"--tls-cert-file=/work/kwok-server.crt", "--tls-private-key-file=/work/kwok-server.key", "--enable-crds=ClusterLogs",
			"--node-lease-duration-seconds=40",
			// The caller's flags come last, so they win over the defaults.
			"--cidr=10.200.0.1/16",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !slices.Equal(tt.args, tt.want) {
				t.Fatalf("got %q,\nwant %q", tt.args, tt.want)
			}
			// kwok serves on --server-address, or on every address at
			// --node-port without one.
			loopback := slices.ContainsFunc(tt.args, func(a string) bool { return strings.HasPrefix(a, "--server-address=127.0.0.1:") })
			for _, a := range tt.args {
				if strings.Contains(a, "0.0.0.0") || strings.HasPrefix(a, "--server-address") && !loopback || strings.HasPrefix(a, "--node-port") && !loopback {
					t.Errorf("flag %q would serve beyond loopback", a)
				}
			}
		})
	}
}

func TestNodeManifest(t *testing.T) {
	var node corev1.Node
	if err := json.Unmarshal([]byte(nodeManifest(nodeName(7))), &node); err != nil {
		t.Fatalf("nodeManifest is not a Node: %v", err)
	}
	if node.Name != "kwok-node-7" || node.Kind != "Node" {
		t.Fatalf("got %s %q, want Node kwok-node-7", node.Kind, node.Name)
	}
	if got := node.Annotations[KwokNodeAnnotation]; got != KwokNodeValue {
		t.Errorf("annotation %s = %q, want %q", KwokNodeAnnotation, got, KwokNodeValue)
	}
	if got := node.Annotations["node.alpha.kubernetes.io/ttl"]; got != "0" {
		t.Errorf("ttl annotation = %q, want \"0\"", got)
	}
	if got := node.Labels["type"]; got != "kwok" {
		t.Errorf("label type = %q, want kwok (readiness selects on it)", got)
	}
	cp := &ControlPlane{nodes: 3}
	if got, want := cp.Nodes(), []string{"kwok-node-0", "kwok-node-1", "kwok-node-2"}; !slices.Equal(got, want) {
		t.Errorf("Nodes() = %q, want %q", got, want)
	}
}

func TestNodesReady(t *testing.T) {
	node := func(name, ready string, taints ...string) string {
		var ts []string
		for _, t := range taints {
			key, effect, _ := strings.Cut(t, ":")
			ts = append(ts, fmt.Sprintf(`{"key":%q,"effect":%q}`, key, effect))
		}
		return fmt.Sprintf(`{"metadata":{"name":%q},"spec":{"taints":[%s]},"status":{"conditions":[{"type":"MemoryPressure","status":"False"},{"type":"Ready","status":%q}]}}`,
			name, strings.Join(ts, ","), ready)
	}
	tests := []struct {
		name    string
		nodes   []string
		want    int
		wantErr string
	}{
		{"all ready", []string{node("a", "True"), node("b", "True")}, 2, ""},
		{"one not ready", []string{node("a", "True"), node("b", "False")}, 2, "1 of 2 Ready, not yet: b"},
		{"not-ready taint", []string{node("a", "True", "node.kubernetes.io/not-ready:NoSchedule")}, 1, "0 of 1 Ready, not yet: a"},
		{"a PreferNoSchedule taint does not keep Pods off", []string{node("a", "True", "x:PreferNoSchedule")}, 1, ""},
		{"too few", []string{node("a", "True")}, 2, "1 of 2 Ready"},
		{"no conditions yet", []string{`{"metadata":{"name":"a"}}`}, 1, "0 of 1 Ready, not yet: a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var list nodeList
			if err := json.Unmarshal([]byte(`{"items":[`+strings.Join(tt.nodes, ",")+`]}`), &list); err != nil {
				t.Fatal(err)
			}
			err := nodesReady(list, tt.want)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.wantErr {
				t.Fatalf("got error %q, want %q", got, tt.wantErr)
			}
		})
	}
}

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	touch := func(name string, mode os.FileMode) {
		t.Helper()
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, nil, mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, mode); err != nil { // WriteFile keeps an existing file's mode
			t.Fatal(err)
		}
	}
	missing := func(name string) string {
		return fmt.Sprintf(`%s not found in %s: run "make controlplane" first`, name, dir)
	}
	steps := []struct {
		name   string
		create string
		mode   os.FileMode
		nodes  int
		want   string
	}{
		{"nothing built", "", 0, 0, missing("kube-apiserver")},
		{"apiserver only", "kube-apiserver", 0o755, 0, missing("etcd")},
		{"plain control plane", "etcd", 0o755, 0, ""},
		{"busy without controller-manager", "", 0, 2, missing("kube-controller-manager")},
		{"busy without scheduler", "kube-controller-manager", 0o755, 2, missing("kube-scheduler")},
		{"busy without kwok", "kube-scheduler", 0o755, 2, missing("kwok")},
		{"kwok not executable", "kwok", 0o644, 2, fmt.Sprintf(`kwok in %s is not executable: run "make controlplane" first`, dir)},
		{"busy without stages", "kwok", 0o755, 2, missing("kwok-stages.yaml")},
		{"busy without the ClusterLogs CRD", "kwok-stages.yaml", 0o644, 2, missing("kwok-clusterlogs-crd.yaml")},
		{"busy", "kwok-clusterlogs-crd.yaml", 0o644, 2, ""},
		{"negative nodes", "", 0, -1, "options: -1 nodes: want 0 (no simulated nodes) or more"},
	}
	for _, s := range steps {
		if s.create != "" {
			touch(s.create, s.mode)
		}
		err := Check(Options{BinDir: dir, Nodes: s.nodes})
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != s.want {
			t.Errorf("%s: Check = %q, want %q", s.name, got, s.want)
		}
	}
}

// TestBusyCluster starts a busy cluster, rolls out a Deployment on its
// simulated nodes, and checks that every process listens on loopback only
// and is gone after Stop.
func TestBusyCluster(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	begin := time.Now()
	cp, err := Start(ctx, Options{Log: testLog{t}, Nodes: 2})
	if err != nil {
		t.Fatalf("start busy cluster: %v", err)
	}
	t.Cleanup(cp.Stop)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("logs:\n%s", cp.LogTail(40))
		}
	})
	t.Logf("busy cluster up in %s", time.Since(begin).Round(time.Millisecond))

	client := clientFor(t, cp.AdminKubeconfig())
	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, n := range nodes.Items {
		names = append(names, n.Name)
	}
	slices.Sort(names)
	if !slices.Equal(names, cp.Nodes()) {
		t.Fatalf("nodes %q, want %q", names, cp.Nodes())
	}
	if _, err := client.CoreV1().Pods(probeNamespace).Get(ctx, probePodName, metav1.GetOptions{}); err == nil {
		t.Errorf("the probe Pod is still there after Start")
	}

	const ns, replicas = "busy", 3
	if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{"app": "web"}
	_, err = client.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27"}}},
			},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rolledOut := time.Now()
	var last string
	for {
		pods, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		running := 0
		var states []string
		for _, p := range pods.Items {
			states = append(states, fmt.Sprintf("%s %s on %q", p.Name, p.Status.Phase, p.Spec.NodeName))
			if p.Status.Phase == corev1.PodRunning && slices.Contains(cp.Nodes(), p.Spec.NodeName) && p.Status.PodIP != "" {
				running++
			}
		}
		last = strings.Join(states, ", ")
		if running == replicas && len(pods.Items) == replicas {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("the Deployment's %d Pods never all ran; last: %s", replicas, last)
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("%d Pods Running %s after the Deployment was created: %s", replicas, time.Since(rolledOut).Round(time.Millisecond), last)

	cp.mu.Lock()
	procs := []*process{cp.etcd, cp.apiserver, cp.controllerManager, cp.scheduler, cp.kwok}
	cp.mu.Unlock()
	for _, p := range procs {
		addrs, err := listeningAddrs(p.pid())
		if err != nil {
			t.Fatalf("%s: %v", p.name, err)
		}
		for _, a := range addrs {
			if !a.IsLoopback() {
				t.Errorf("%s (pid %d) listens on %s, want 127.0.0.1 only", p.name, p.pid(), a)
			}
		}
		t.Logf("%s listens on %v", p.name, addrs)
	}

	select {
	case err := <-cp.Failed():
		t.Fatalf("unexpected failure report: %v", err)
	default:
	}
	cp.Stop()
	for _, p := range procs {
		// A process group is gone once its leader and every child are.
		if err := syscall.Kill(-p.pid(), 0); err == nil {
			t.Errorf("%s's process group %d still exists after Stop", p.name, p.pid())
		}
	}
	select {
	case err := <-cp.Failed():
		t.Fatalf("Stop reported as a failure: %v", err)
	default:
	}
}

// listeningAddrs returns the local addresses of the TCP sockets pid
// listens on, read from /proc.
func listeningAddrs(pid int) ([]net.IP, error) {
	inodes := map[string]bool{}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return nil, fmt.Errorf("list fds: %w", err)
	}
	for _, fd := range fds {
		target, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
		if inode, ok := strings.CutPrefix(target, "socket:["); err == nil && ok {
			inodes[strings.TrimSuffix(inode, "]")] = true
		}
	}
	var addrs []net.IP
	for _, table := range []string{"tcp", "tcp6"} {
		f, err := os.Open(fmt.Sprintf("/proc/%d/net/%s", pid, table))
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			// sl local_address rem_address st tx:rx tr:tm retrnsmt uid timeout inode
			fields := strings.Fields(sc.Text())
			const listen = "0A"
			if len(fields) < 10 || fields[3] != listen || !inodes[fields[9]] {
				continue
			}
			hexIP, _, _ := strings.Cut(fields[1], ":")
			ip, err := procNetIP(hexIP)
			if err != nil {
				f.Close()
				return nil, err
			}
			addrs = append(addrs, ip)
		}
		f.Close()
		if err := sc.Err(); err != nil {
			return nil, err
		}
	}
	return addrs, nil
}

// procNetIP decodes an address of /proc/net/tcp{,6}: 32-bit words in host
// (little-endian) byte order.
func procNetIP(s string) (net.IP, error) {
	b, err := hex.DecodeString(s)
	if err != nil || (len(b) != 4 && len(b) != 16) {
		return nil, fmt.Errorf("bad address %q in /proc/net: %v", s, err)
	}
	for i := 0; i < len(b); i += 4 {
		b[i], b[i+1], b[i+2], b[i+3] = b[i+3], b[i+2], b[i+1], b[i]
	}
	return net.IP(b), nil
}

func TestProcNetIP(t *testing.T) {
	tests := []struct{ in, want string }{
		{"0100007F", "127.0.0.1"},
		{"00000000", "0.0.0.0"},
		{"00000000000000000000000001000000", "::1"},
		{"0000000000000000FFFF00000100007F", "127.0.0.1"},
	}
	for _, tt := range tests {
		ip, err := procNetIP(tt.in)
		if err != nil || ip.String() != tt.want {
			t.Errorf("procNetIP(%s) = %v, %v; want %s", tt.in, ip, err, tt.want)
		}
	}
}

func TestRegisterNodes(t *testing.T) {
	tests := []struct {
		name    string
		nodes   int
		status  func(node string) int
		wantErr string
	}{
		{"all created", 50, func(string) int { return http.StatusCreated }, ""},
		{"existing nodes are fine", 5, func(n string) int {
			if n == "kwok-node-3" {
				return http.StatusConflict
			}
			return http.StatusCreated
		}, ""},
		{"a refusal stops the registration", 50, func(n string) int {
			if n == "kwok-node-7" {
				return http.StatusForbidden
			}
			return http.StatusCreated
		}, "register simulated node kwok-node-7: status 403: no"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			seen := map[string]int{}
			srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				var node corev1.Node
				if r.Method != http.MethodPost || r.URL.Path != "/api/v1/nodes" || r.Header.Get("Authorization") != "Bearer token" ||
					json.NewDecoder(r.Body).Decode(&node) != nil {
					t.Errorf("unexpected request %s %s", r.Method, r.URL)
					w.WriteHeader(http.StatusBadRequest)
					return
				}
				mu.Lock()
				seen[node.Name]++
				mu.Unlock()
				w.WriteHeader(tt.status(node.Name))
				fmt.Fprint(w, "no")
			}))
			defer srv.Close()
			cp := &ControlPlane{nodes: tt.nodes, adminToken: "token", apiPort: srv.Listener.Addr().(*net.TCPAddr).Port}

			err := cp.registerNodes(context.Background())
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.wantErr {
				t.Fatalf("got error %q, want %q", got, tt.wantErr)
			}
			mu.Lock()
			defer mu.Unlock()
			for n, count := range seen {
				if count != 1 {
					t.Errorf("node %s registered %d times", n, count)
				}
			}
			if tt.wantErr == "" && len(seen) != tt.nodes {
				t.Errorf("%d nodes registered, want %d", len(seen), tt.nodes)
			}
			if tt.wantErr != "" && len(seen) == tt.nodes {
				t.Errorf("all %d nodes registered after an error, want it to stop", tt.nodes)
			}
		})
	}
}
