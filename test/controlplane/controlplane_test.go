package controlplane

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// testLog forwards the harness's progress lines to the test log.
type testLog struct{ t *testing.T }

func (w testLog) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func TestControlPlane(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	begin := time.Now()
	cp, err := Start(ctx, Options{Log: testLog{t}})
	if err != nil {
		t.Fatalf("start control plane: %v", err)
	}
	t.Cleanup(cp.Stop)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("server logs:\n%s", cp.LogTail(40))
		}
	})
	t.Logf("control plane up in %s at %s", time.Since(begin).Round(time.Millisecond), cp.Server())

	if !strings.HasPrefix(cp.Server(), "https://127.0.0.1:") || !strings.HasPrefix(cp.EtcdURL(), "http://127.0.0.1:") {
		t.Fatalf("servers not on loopback: %s, %s", cp.Server(), cp.EtcdURL())
	}
	if cp.AdminToken() == cp.UserToken() || len(cp.AdminToken()) < 32 {
		t.Fatalf("bad tokens %q, %q", cp.AdminToken(), cp.UserToken())
	}
	for _, f := range []string{cp.AdminKubeconfig(), cp.UserKubeconfig()} {
		if filepath.Dir(f) != cp.Dir() {
			t.Errorf("kubeconfig %s not in work dir %s", f, cp.Dir())
		}
	}

	// Raw HTTP: admin may list namespaces, alice may not.
	if got := rawStatus(ctx, t, cp, cp.AdminToken(), "/api/v1/namespaces"); got != http.StatusOK {
		t.Fatalf("admin GET /api/v1/namespaces: status %d, want 200", got)
	}
	if got := rawStatus(ctx, t, cp, cp.UserToken(), "/api/v1/namespaces"); got != http.StatusForbidden {
		t.Fatalf("alice GET /api/v1/namespaces: status %d, want 403", got)
	}

	// client-go from the kubeconfig files.
	admin := clientFor(t, cp.AdminKubeconfig())
	alice := clientFor(t, cp.UserKubeconfig())
	if _, err := alice.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("alice list configmaps: err = %v, want Forbidden", err)
	}
	cm, err := admin.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "harness-check"},
		Data:       map[string]string{"k": "v"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create configmap: %v", err)
	}
	createdRV, err := strconv.ParseInt(cm.ResourceVersion, 10, 64)
	if err != nil {
		t.Fatalf("configmap resourceVersion %q: %v", cm.ResourceVersion, err)
	}

	// Stop the API server: requests fail, etcd keeps the data.
	server, pid := cp.Server(), cp.APIServerPID()
	if pid == 0 {
		t.Fatal("APIServerPID() = 0 while running")
	}
	if err := cp.StopAPIServer(); err != nil {
		t.Fatalf("stop apiserver: %v", err)
	}
	if cp.APIServerPID() != 0 {
		t.Fatalf("APIServerPID() = %d after StopAPIServer", cp.APIServerPID())
	}
	if err := syscall.Kill(pid, 0); err == nil {
		t.Fatalf("kube-apiserver pid %d still exists after StopAPIServer", pid)
	}
	shortCtx, shortCancel := context.WithTimeout(ctx, 3*time.Second)
	_, err = admin.CoreV1().ConfigMaps("default").Get(shortCtx, "harness-check", metav1.GetOptions{})
	shortCancel()
	if err == nil {
		t.Fatal("get configmap succeeded while kube-apiserver was stopped")
	}

	restart := time.Now()
	if err := cp.StartAPIServer(ctx); err != nil {
		t.Fatalf("start apiserver again: %v", err)
	}
	t.Logf("kube-apiserver restarted in %s", time.Since(restart).Round(time.Millisecond))
	if cp.Server() != server {
		t.Fatalf("server moved from %s to %s", server, cp.Server())
	}
	got, err := admin.CoreV1().ConfigMaps("default").Get(ctx, "harness-check", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get configmap after restart: %v", err)
	}
	if got.Data["k"] != "v" || got.UID != cm.UID {
		t.Fatalf("configmap after restart = %+v, want the one created before", got)
	}
	if err := cp.StartAPIServer(ctx); err == nil {
		t.Fatal("StartAPIServer while running: want an error")
	}

	// Compaction.
	rev, err := cp.CompactEtcd(ctx)
	if err != nil {
		t.Fatalf("compact etcd: %v", err)
	}
	if rev < createdRV {
		t.Fatalf("compacted at revision %d, before the configmap's %d", rev, createdRV)
	}
	rev2, err := cp.CompactEtcd(ctx)
	if err != nil {
		t.Fatalf("compact etcd again: %v", err)
	}
	if rev2 < rev {
		t.Fatalf("second compaction at %d, before the first at %d", rev2, rev)
	}
	// A write outside /registry/ moves the revision on, so the next
	// compaction passes every resourceVersion handed out before.
	if err := cp.AdvanceEtcdRevision(ctx); err != nil {
		t.Fatalf("advance etcd's revision: %v", err)
	}
	rev3, err := cp.CompactEtcd(ctx)
	if err != nil {
		t.Fatalf("compact etcd after advancing: %v", err)
	}
	if rev3 <= rev2 {
		t.Fatalf("compaction after advancing at %d, not past %d", rev3, rev2)
	}

	// An API server killed behind the harness's back is reported on Failed,
	// and can be started again.
	select {
	case err := <-cp.Failed():
		t.Fatalf("unexpected failure report: %v", err)
	default:
	}
	if err := syscall.Kill(cp.APIServerPID(), syscall.SIGKILL); err != nil {
		t.Fatalf("kill apiserver: %v", err)
	}
	select {
	case err := <-cp.Failed():
		if !strings.Contains(err.Error(), "kube-apiserver") {
			t.Fatalf("failure report %q does not name kube-apiserver", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no failure reported for a killed kube-apiserver")
	}
	if err := cp.RestartAPIServer(ctx); err != nil {
		t.Fatalf("restart apiserver after it died: %v", err)
	}
	if got := rawStatus(ctx, t, cp, cp.AdminToken(), "/api/v1/namespaces/default/configmaps/harness-check"); got != http.StatusOK {
		t.Fatalf("get configmap after restart: status %d", got)
	}

	tail := cp.LogTail(5)
	if !strings.Contains(tail, "etcd.log") || !strings.Contains(tail, "kube-apiserver.log") {
		t.Fatalf("LogTail does not name both logs:\n%s", tail)
	}

	dir := cp.Dir()
	cp.Stop()
	cp.Stop() // idempotent
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("work dir %s still exists after Stop (err %v)", dir, err)
	}
	select {
	case err := <-cp.Failed():
		t.Fatalf("Stop reported as a failure: %v", err)
	default:
	}
}

func TestStartMissingBinary(t *testing.T) {
	dir := t.TempDir()
	_, err := Start(context.Background(), Options{BinDir: dir})
	want := fmt.Sprintf(`kube-apiserver not found in %s: run "make controlplane" first`, dir)
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %s", err, want)
	}
}

func TestBinDirDefaults(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module "+ModulePath+"\n\ngo 1.26\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A nested module with another path must be skipped.
	sub := filepath.Join(root, "hack", "controlplane", "etcd")
	if err := os.MkdirAll(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "hack", "controlplane", "go.mod"), []byte("module "+ModulePath+"/hack/controlplane\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := FindRepoRoot(sub)
	if err != nil || got != root {
		t.Fatalf("FindRepoRoot(%s) = %q, %v; want %q", sub, got, err, root)
	}
	if _, err := FindRepoRoot(t.TempDir()); err == nil {
		t.Fatal("FindRepoRoot outside the repository: want an error")
	}

	t.Setenv(BinDirEnv, "/from/env")
	if got, err := resolveBinDir(""); err != nil || got != "/from/env" {
		t.Fatalf("resolveBinDir with %s = %q, %v", BinDirEnv, got, err)
	}
	if got, err := resolveBinDir("/explicit"); err != nil || got != "/explicit" {
		t.Fatalf("resolveBinDir(explicit) = %q, %v", got, err)
	}
	t.Setenv(BinDirEnv, "")
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	repo, err := FindRepoRoot(wd)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := resolveBinDir(""); err != nil || got != filepath.Join(repo, "bin") {
		t.Fatalf("resolveBinDir default = %q, %v; want %s", got, err, filepath.Join(repo, "bin"))
	}
}

func TestKubeconfigLoads(t *testing.T) {
	cfg, err := clientcmd.Load([]byte(kubeconfig("https://127.0.0.1:1234", "alice", "abc123")))
	if err != nil {
		t.Fatalf("load kubeconfig: %v", err)
	}
	ctx := cfg.Contexts[cfg.CurrentContext]
	if ctx == nil || ctx.Namespace != "default" || ctx.AuthInfo != "alice" {
		t.Fatalf("current context = %+v", ctx)
	}
	cluster := cfg.Clusters[ctx.Cluster]
	if cluster == nil || cluster.Server != "https://127.0.0.1:1234" || !cluster.InsecureSkipTLSVerify {
		t.Fatalf("cluster = %+v", cluster)
	}
	if user := cfg.AuthInfos["alice"]; user == nil || user.Token != "abc123" {
		t.Fatalf("user = %+v", user)
	}
}

func rawStatus(ctx context.Context, t *testing.T, cp *ControlPlane, token, path string) int {
	t.Helper()
	client := newAPIClient()
	defer client.CloseIdleConnections()
	status, _, err := do(ctx, client, http.MethodGet, cp.Server()+path, token, "")
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	return status
}

func clientFor(t *testing.T, kubeconfigPath string) *kubernetes.Clientset {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfigPath)
	if err != nil {
		t.Fatalf("load %s: %v", kubeconfigPath, err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatalf("client for %s: %v", kubeconfigPath, err)
	}
	return cs
}
