//go:build faults

package e2e

// Two kube-apiservers on one etcd behind a loopback TCP balancer of the
// test's own (issue 14, scenario 3).

import (
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// balancer hands each TCP connection to the next backend that accepts it,
// round robin, as a layer-4 load balancer in front of API servers does.
type balancer struct {
	ln net.Listener
	mu sync.Mutex
	// backends are host:port; next is the index of the next one to try.
	backends []string
	next     int
	conns    sync.WaitGroup
}

func newBalancer(t *testing.T, backends ...string) *balancer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b := &balancer{ln: ln, backends: backends}
	go b.serve()
	t.Cleanup(func() {
		_ = ln.Close()
		b.conns.Wait()
	})
	return b
}

func (b *balancer) addr() string { return b.ln.Addr().String() }

// set replaces the backends.
func (b *balancer) set(backends ...string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.backends = backends
}

func (b *balancer) serve() {
	for {
		c, err := b.ln.Accept()
		if err != nil {
			return
		}
		b.conns.Go(func() { b.relay(c) })
	}
}

// relay connects c to a backend (the next that accepts) and copies both
// ways until either side closes.
func (b *balancer) relay(c net.Conn) {
	defer c.Close()
	b.mu.Lock()
	backends := append([]string(nil), b.backends...)
	start := b.next
	b.next++
	b.mu.Unlock()
	var up net.Conn
	for i := range backends {
		conn, err := net.DialTimeout("tcp", backends[(start+i)%len(backends)], 2*time.Second)
		if err == nil {
			up = conn
			break
		}
	}
	if up == nil {
		return
	}
	defer up.Close()
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(up, c); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, up); done <- struct{}{} }()
	<-done
}

// hostPort is the host:port of an https:// URL.
func hostPort(url string) string { return strings.TrimPrefix(url, "https://") }

// TestFaultTwoAPIServers: the stream and a writer reach two API servers
// through the balancer; each is killed in turn (a new replica takes the
// place of the first): the stream goes on through the other, ends in the
// server's state, and breaks no ledger rule.
func TestFaultTwoAPIServers(t *testing.T) {
	c := startCluster(t)
	ns := c.namespace(t)
	ctx, cancel := context.WithTimeout(bg, 3*time.Minute)
	defer cancel()
	replica, err := c.cp.StartAPIServerReplica(ctx)
	must(t, err)
	lb := newBalancer(t, hostPort(c.cp.Server()), hostPort(replica.URL()))

	raw, err := os.ReadFile(c.cp.AdminKubeconfig())
	must(t, err)
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	must(t, os.WriteFile(kubeconfig, []byte(strings.ReplaceAll(string(raw), c.cp.Server(), "https://"+lb.addr())), 0o600))
	config, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	must(t, err)
	config.QPS, config.Burst = 200, 400
	viaLB := &cluster{cp: c.cp, client: kubernetes.NewForConfigOrDie(config)}

	d := startJSON(t, kubeconfig, "cm", "-n", ns, "--min-watch-timeout=5s")
	d.waitWatchingJSON(viaLB, ns, 30*time.Second)
	w := newWriter(viaLB.client, ns)
	stop := w.runPaced(names("cm", 20), 100*time.Millisecond, 3)

	time.Sleep(5 * time.Second)
	t.Log("killing the replica")
	replica.Kill()
	time.Sleep(10 * time.Second)
	second, err := c.cp.StartAPIServerReplica(ctx)
	must(t, err)
	lb.set(hostPort(c.cp.Server()), hostPort(second.URL()))
	time.Sleep(5 * time.Second)
	t.Log("killing the first kube-apiserver")
	must(t, c.cp.StopAPIServer())
	lb.set(hostPort(second.URL()))
	time.Sleep(15 * time.Second)
	steps := stop()
	ok, failed := w.total()
	t.Logf("%d writer steps: %d writes, %d failed (a write in flight on a killed server)", steps, ok, failed)
	d.converge(viaLB, ns, 60*time.Second)
	if ok < 100 {
		t.Errorf("only %d writes went through: the balancer did not carry the load", ok)
	}
	for _, l := range strings.Split(d.stderr.String(), "\n") {
		if strings.HasPrefix(l, "error:") {
			t.Errorf("stderr has an error: %s", l)
		}
	}
	if code := d.stop(); code != 130 {
		t.Errorf("exit code after SIGINT = %d, want 130", code)
	}
	noStackTrace(t, d.stderr.String())
}
