// Package controlplane runs a real local Kubernetes control plane (etcd and
// kube-apiserver, as separate processes listening on 127.0.0.1 only) for
// end-to-end tests, fault tests, the demo and the benchmark.
//
// The binaries are built by "make controlplane" into the repository's bin/
// directory (modules hack/controlplane and hack/kwok). Start picks free
// loopback ports, writes tokens, a service-account key and kubeconfig files
// into a work directory, starts both servers and waits until the API server
// really serves requests.
//
// With Options.Nodes > 0 the control plane is a busy cluster: it also runs
// kube-controller-manager, kube-scheduler and kwok with that many simulated
// nodes, so that workloads roll out on their own (see busy.go).
package controlplane

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

const (
	// ModulePath is the main module's path, used to find the repository root.
	ModulePath = "github.com/kubectl-deltas/kubectl-deltas"
	// BinDirEnv overrides the directory holding the etcd and kube-apiserver
	// binaries.
	BinDirEnv = "DELTAS_BIN_DIR"
	// UserName is the unprivileged user of UserKubeconfig. It has no groups;
	// tests grant it rights with RBAC.
	UserName = "alice"
	// AdminName is the user of AdminKubeconfig, in group system:masters.
	AdminName = "admin"

	etcdBinary      = "etcd"
	apiserverBinary = "kube-apiserver"

	etcdLog      = "etcd.log"
	apiserverLog = "kube-apiserver.log"

	defaultReadyTimeout = 60 * time.Second
	stopGrace           = 5 * time.Second
	logTailLines        = 30
	startAttempts       = 3
)

// Options configures Start. The zero value is usable.
type Options struct {
	// BinDir holds the etcd and kube-apiserver binaries. Default: $DELTAS_BIN_DIR,
	// else bin/ in the repository root found by walking up from the working
	// directory.
	BinDir string
	// Dir is the work directory (data, certs, tokens, kubeconfigs, logs).
	// Default: a new temporary directory, removed by Stop.
	Dir string
	// APIServerFlags are appended to kube-apiserver's command line, e.g.
	// "--min-request-timeout=5" or "--watch-cache=false".
	APIServerFlags []string
	// Log receives progress lines. Optional.
	Log io.Writer
	// ReadyTimeout bounds each wait for a server to become ready. Default 60s.
	ReadyTimeout time.Duration

	// Nodes, when positive, makes a busy cluster: kube-controller-manager,
	// kube-scheduler and kwok run too, with Nodes simulated nodes
	// (kwok-node-0 …) that are Ready when Start returns. Zero: etcd and
	// kube-apiserver only.
	Nodes int
	// ControllerManagerFlags, SchedulerFlags and KwokFlags are appended to
	// those processes' command lines (busy clusters only), e.g.
	// "--kube-api-qps=500".
	ControllerManagerFlags []string
	SchedulerFlags         []string
	KwokFlags              []string
	// KwokOnly, with Nodes > 0, runs kwok and its simulated nodes without
	// kube-controller-manager and kube-scheduler: enough for Pods created
	// with spec.nodeName set (the benchmark's), which kwok runs directly.
	KwokOnly bool
}

// requiredBinaries lists the files in the bin directory that Start with
// opts runs.
func requiredBinaries(opts Options) []string {
	names := []string{apiserverBinary, etcdBinary}
	switch {
	case opts.Nodes > 0 && opts.KwokOnly:
		names = append(names, kwokBinary)
	case opts.Nodes > 0:
		names = append(names, controllerManagerBinary, schedulerBinary, kwokBinary)
	}
	return names
}

// Check reports whether the binaries Start(opts) needs are in place, with an
// error that says to run "make controlplane" when they are not. Test mains
// call it to stop with one clear line on a fresh clone.
func Check(opts Options) error {
	if opts.Nodes < 0 {
		return fmt.Errorf("options: %d nodes: want 0 (no simulated nodes) or more", opts.Nodes)
	}
	binDir, err := resolveBinDir(opts.BinDir)
	if err != nil {
		return err
	}
	for _, name := range requiredBinaries(opts) {
		if err := checkBinary(binDir, name); err != nil {
			return err
		}
	}
	if opts.Nodes > 0 {
		for _, name := range []string{kwokStagesFile, kwokClusterLogsCRD} {
			if err := checkFile(binDir, name); err != nil {
				return err
			}
		}
	}
	return nil
}

// ControlPlane is a running etcd and kube-apiserver pair.
type ControlPlane struct {
	binDir         string
	dir            string
	ownDir         bool
	apiserverFlags []string
	log            io.Writer
	readyTimeout   time.Duration

	nodes                  int
	kwokOnly               bool
	controllerManagerFlags []string
	schedulerFlags         []string
	kwokFlags              []string

	etcdPort     int
	etcdPeerPort int
	apiPort      int

	adminToken      string
	userToken       string
	adminKubeconfig string
	userKubeconfig  string

	failed chan error
	// kwokPort is where kwok's kubelet server listens, and every node's
	// kubelet port: chosen once, when the busy cluster starts.
	kwokPort int

	mu        sync.Mutex // guards the processes (replicas too) and stopped
	etcd      *process
	apiserver *process
	// controllerManager, scheduler and kwok run in busy clusters only.
	controllerManager *process
	scheduler         *process
	kwok              *process
	// replicas are the extra kube-apiservers of StartAPIServerReplica.
	replicas []*process
	stopped  bool
	// lifecycle serialises StartAPIServer, StopAPIServer and Stop.
	lifecycle sync.Mutex
}

// Start starts etcd and kube-apiserver and waits until the API server serves
// requests. ctx bounds the startup only; the servers run until Stop. On error
// everything started so far is stopped again.
func Start(ctx context.Context, opts Options) (*ControlPlane, error) {
	if err := Check(opts); err != nil {
		return nil, err
	}
	binDir, err := resolveBinDir(opts.BinDir)
	if err != nil {
		return nil, err
	}

	cp := &ControlPlane{
		binDir:                 binDir,
		apiserverFlags:         slices.Clone(opts.APIServerFlags),
		log:                    opts.Log,
		readyTimeout:           opts.ReadyTimeout,
		nodes:                  opts.Nodes,
		kwokOnly:               opts.KwokOnly,
		controllerManagerFlags: slices.Clone(opts.ControllerManagerFlags),
		schedulerFlags:         slices.Clone(opts.SchedulerFlags),
		kwokFlags:              slices.Clone(opts.KwokFlags),
		failed:                 make(chan error, 8),
	}
	if cp.readyTimeout <= 0 {
		cp.readyTimeout = defaultReadyTimeout
	}
	if opts.Dir == "" {
		dir, err := os.MkdirTemp("", "deltas-controlplane-")
		if err != nil {
			return nil, fmt.Errorf("create control plane work dir: %w", err)
		}
		cp.dir, cp.ownDir = dir, true
	} else {
		dir, err := filepath.Abs(opts.Dir)
		if err != nil {
			return nil, fmt.Errorf("control plane work dir %q: %w", opts.Dir, err)
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("create control plane work dir: %w", err)
		}
		cp.dir = dir
	}

	if err := cp.start(ctx); err != nil {
		cp.Stop()
		return nil, err
	}
	return cp, nil
}

func (cp *ControlPlane) start(ctx context.Context) error {
	begin := time.Now()
	if err := cp.writeSecrets(); err != nil {
		return err
	}
	if err := cp.startEtcd(ctx); err != nil {
		return err
	}
	if err := cp.startAPIServerFreshPort(ctx); err != nil {
		return err
	}
	if err := cp.writeKubeconfigs(); err != nil {
		return err
	}
	if cp.nodes > 0 {
		busy := time.Now()
		if err := cp.startBusy(ctx); err != nil {
			return err
		}
		cp.mu.Lock()
		for _, p := range []*process{cp.controllerManager, cp.scheduler, cp.kwok} {
			if p != nil { // KwokOnly runs kwok alone
				p.arm()
			}
		}
		cp.mu.Unlock()
		what := "kube-controller-manager, kube-scheduler and kwok"
		if cp.kwokOnly {
			what = "kwok"
		}
		cp.logf("%s ready with %d simulated nodes in %s", what, cp.nodes, time.Since(busy).Round(time.Millisecond))
	}
	cp.logf("control plane ready in %s: %s (work dir %s)", time.Since(begin).Round(time.Millisecond), cp.Server(), cp.dir)
	return nil
}

// writeSecrets creates the tokens file and the service-account signing key.
func (cp *ControlPlane) writeSecrets() error {
	var err error
	if cp.adminToken, err = randomToken(); err != nil {
		return err
	}
	if cp.userToken, err = randomToken(); err != nil {
		return err
	}
	tokens := fmt.Sprintf("%s,%s,%s-uid,\"system:masters\"\n%s,%s,%s-uid\n",
		cp.adminToken, AdminName, AdminName, cp.userToken, UserName, UserName)
	if err := os.WriteFile(cp.path("tokens.csv"), []byte(tokens), 0o600); err != nil {
		return fmt.Errorf("write tokens file: %w", err)
	}

	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return fmt.Errorf("generate service-account key: %w", err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return fmt.Errorf("encode service-account key: %w", err)
	}
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
	if err := os.WriteFile(cp.path("sa.key"), keyPEM, 0o600); err != nil {
		return fmt.Errorf("write service-account key: %w", err)
	}
	if err := os.MkdirAll(cp.path("certs"), 0o700); err != nil {
		return fmt.Errorf("create cert dir: %w", err)
	}
	return nil
}

// startEtcd starts etcd on free ports (retrying with new ones when a port was
// taken in the meantime) and waits for /health.
func (cp *ControlPlane) startEtcd(ctx context.Context) error {
	var lastErr error
	for attempt := 0; attempt < startAttempts; attempt++ {
		ports, err := freePorts(2)
		if err != nil {
			return err
		}
		cp.etcdPort, cp.etcdPeerPort = ports[0], ports[1]
		if lastErr = cp.runEtcd(ctx); lastErr == nil {
			return nil
		}
		if !cp.logMentionsPortClash(etcdLog) || ctx.Err() != nil {
			break
		}
		cp.logf("etcd port clash, retrying with new ports")
	}
	return lastErr
}

// runEtcd starts etcd on cp.etcdPort and cp.etcdPeerPort with its data
// directory and waits for /health. On failure the process is killed.
func (cp *ControlPlane) runEtcd(ctx context.Context) error {
	begin := time.Now()
	p, err := startProcess(etcdBinary, filepath.Join(cp.binDir, etcdBinary), cp.etcdArgs(), cp.dir, cp.path(etcdLog), cp.unexpectedExit)
	if err != nil {
		return err
	}
	cp.mu.Lock()
	cp.etcd = p
	cp.mu.Unlock()
	if err := cp.waitEtcd(ctx, p); err != nil {
		p.kill()
		return err
	}
	p.arm()
	cp.logf("etcd ready on %s (pid %d) in %s", cp.EtcdURL(), p.pid(), time.Since(begin).Round(time.Millisecond))
	return nil
}

func (cp *ControlPlane) etcdArgs() []string {
	client := fmt.Sprintf("http://127.0.0.1:%d", cp.etcdPort)
	peer := fmt.Sprintf("http://127.0.0.1:%d", cp.etcdPeerPort)
	return []string{
		"--name=default",
		"--data-dir=" + cp.path("etcd-data"),
		"--listen-client-urls=" + client,
		"--advertise-client-urls=" + client,
		"--listen-peer-urls=" + peer,
		"--initial-advertise-peer-urls=" + peer,
		"--initial-cluster=default=" + peer,
		"--unsafe-no-fsync",
	}
}

// startAPIServerFreshPort starts kube-apiserver on a newly picked free port,
// retrying with another port if it was taken in the meantime.
func (cp *ControlPlane) startAPIServerFreshPort(ctx context.Context) error {
	var lastErr error
	for attempt := 0; attempt < startAttempts; attempt++ {
		ports, err := freePorts(1)
		if err != nil {
			return err
		}
		cp.apiPort = ports[0]
		lastErr = cp.runAPIServer(ctx)
		if lastErr == nil {
			return nil
		}
		if !cp.logMentionsPortClash(apiserverLog) || ctx.Err() != nil {
			break
		}
		cp.logf("kube-apiserver port clash, retrying with a new port")
	}
	return lastErr
}

// runAPIServer starts kube-apiserver on cp.apiPort and waits until it serves.
// On failure the process is killed.
func (cp *ControlPlane) runAPIServer(ctx context.Context) error {
	begin := time.Now()
	p, err := startProcess(apiserverBinary, filepath.Join(cp.binDir, apiserverBinary), cp.apiserverArgs(), cp.dir, cp.path(apiserverLog), cp.unexpectedExit)
	if err != nil {
		return err
	}
	cp.mu.Lock()
	cp.apiserver = p
	cp.mu.Unlock()
	if err := cp.waitAPIServer(ctx, p); err != nil {
		p.kill()
		return err
	}
	p.arm()
	cp.logf("kube-apiserver ready on %s (pid %d) in %s", cp.Server(), p.pid(), time.Since(begin).Round(time.Millisecond))
	return nil
}

func (cp *ControlPlane) apiserverArgs() []string {
	return cp.apiserverArgsOn(cp.apiPort)
}

// apiserverArgsOn are the flags of a kube-apiserver listening on port; a
// replica shares everything else (etcd, certificates, tokens, issuer).
func (cp *ControlPlane) apiserverArgsOn(port int) []string {
	return slices.Concat([]string{
		fmt.Sprintf("--etcd-servers=%s", cp.EtcdURL()),
		fmt.Sprintf("--secure-port=%d", port),
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--cert-dir=" + cp.path("certs"),
		"--token-auth-file=" + cp.path("tokens.csv"),
		"--authorization-mode=RBAC",
		"--service-account-issuer=" + cp.Server(),
		"--service-account-key-file=" + cp.path("sa.key"),
		"--service-account-signing-key-file=" + cp.path("sa.key"),
		"--service-cluster-ip-range=10.0.0.0/24",
		"--disable-admission-plugins=ServiceAccount",
		// The lease reconciler would keep trying to publish 127.0.0.1 as the
		// endpoint of the "kubernetes" service, which validation rejects as a
		// loopback address (an error line every 10s in the log).
		"--endpoint-reconciler-type=none",
		// kwok's nodes also have a Hostname address that resolves to
		// nothing: logs and exec go to their InternalIP, kwok's server.
		"--kubelet-preferred-address-types=InternalIP",
	}, cp.apiserverFlags)
}

// StopAPIServer kills kube-apiserver with SIGKILL and waits for it to exit.
// etcd keeps running.
func (cp *ControlPlane) StopAPIServer() error {
	cp.lifecycle.Lock()
	defer cp.lifecycle.Unlock()
	cp.mu.Lock()
	p := cp.apiserver
	cp.apiserver = nil
	cp.mu.Unlock()
	if p == nil {
		return errors.New("kube-apiserver is not running")
	}
	p.kill()
	cp.logf("kube-apiserver (pid %d) killed", p.pid())
	return nil
}

// StartAPIServer starts kube-apiserver again on the same port, with the same
// etcd, certificates and tokens, and waits until it serves requests.
func (cp *ControlPlane) StartAPIServer(ctx context.Context) error {
	cp.lifecycle.Lock()
	defer cp.lifecycle.Unlock()
	cp.mu.Lock()
	running, stopped := cp.apiserver, cp.stopped
	cp.mu.Unlock()
	if stopped {
		return errors.New("control plane is stopped")
	}
	if running != nil {
		if done, _ := running.exited(); !done {
			return errors.New("kube-apiserver is already running")
		}
	}
	if err := cp.runAPIServer(ctx); err != nil {
		cp.mu.Lock()
		cp.apiserver = nil
		cp.mu.Unlock()
		return err
	}
	return nil
}

// RestartAPIServer is StopAPIServer followed by StartAPIServer.
func (cp *ControlPlane) RestartAPIServer(ctx context.Context) error {
	if err := cp.StopAPIServer(); err != nil {
		return err
	}
	return cp.StartAPIServer(ctx)
}

// APIServerPID returns the pid of the running kube-apiserver, or 0.
func (cp *ControlPlane) APIServerPID() int {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	if cp.apiserver == nil {
		return 0
	}
	return cp.apiserver.pid()
}

// Stop stops every process (SIGTERM, then SIGKILL after a few seconds):
// first kwok, kube-scheduler and kube-controller-manager, then
// kube-apiserver, then etcd. It removes the work directory if Start created
// it. It is idempotent and safe to call from several goroutines.
func (cp *ControlPlane) Stop() {
	cp.lifecycle.Lock()
	defer cp.lifecycle.Unlock()
	cp.mu.Lock()
	if cp.stopped {
		cp.mu.Unlock()
		return
	}
	cp.stopped = true
	apiserver, etcd := cp.apiserver, cp.etcd
	busy := []*process{cp.kwok, cp.scheduler, cp.controllerManager}
	cp.apiserver, cp.etcd, cp.kwok, cp.scheduler, cp.controllerManager = nil, nil, nil, nil, nil
	replicas := cp.replicas
	cp.replicas = nil
	cp.mu.Unlock()

	cp.stopBusy(busy...)
	for _, r := range replicas {
		r.terminate()
	}
	if apiserver != nil {
		apiserver.terminate()
	}
	if etcd != nil {
		etcd.terminate()
	}
	if cp.ownDir {
		if err := os.RemoveAll(cp.dir); err != nil {
			cp.logf("remove work dir: %v", err)
		}
	}
	cp.logf("control plane stopped")
}

// Failed delivers an error whenever a process of the control plane exits
// without having been stopped through the harness.
func (cp *ControlPlane) Failed() <-chan error { return cp.failed }

func (cp *ControlPlane) unexpectedExit(err error) {
	cp.mu.Lock()
	stopped := cp.stopped
	cp.mu.Unlock()
	if stopped {
		return
	}
	select {
	case cp.failed <- err:
	default:
	}
}

// Server returns the API server URL, https://127.0.0.1:PORT.
func (cp *ControlPlane) Server() string { return fmt.Sprintf("https://127.0.0.1:%d", cp.apiPort) }

// EtcdURL returns etcd's client URL, http://127.0.0.1:PORT.
func (cp *ControlPlane) EtcdURL() string { return fmt.Sprintf("http://127.0.0.1:%d", cp.etcdPort) }

// AdminToken returns the bearer token of the admin user (group system:masters).
func (cp *ControlPlane) AdminToken() string { return cp.adminToken }

// UserToken returns the bearer token of the unprivileged user alice.
func (cp *ControlPlane) UserToken() string { return cp.userToken }

// AdminKubeconfig returns the path of the admin's kubeconfig file.
func (cp *ControlPlane) AdminKubeconfig() string { return cp.adminKubeconfig }

// UserKubeconfig returns the path of alice's kubeconfig file.
func (cp *ControlPlane) UserKubeconfig() string { return cp.userKubeconfig }

// Dir returns the work directory.
func (cp *ControlPlane) Dir() string { return cp.dir }

// Nodes returns the names of the simulated nodes (none unless
// Options.Nodes was set).
func (cp *ControlPlane) Nodes() []string {
	names := make([]string, cp.nodes)
	for i := range names {
		names[i] = nodeName(i)
	}
	return names
}

// LogTail returns the last n lines of each process's log, for failure
// messages.
func (cp *ControlPlane) LogTail(n int) string {
	var b strings.Builder
	logs := []string{etcdLog, apiserverLog}
	if cp.nodes > 0 {
		logs = append(logs, controllerManagerLog, schedulerLog, kwokLog)
	}
	for _, name := range logs {
		tail, err := tailFile(cp.path(name), n)
		if err != nil {
			tail = fmt.Sprintf("(unreadable: %v)", err)
		}
		fmt.Fprintf(&b, "==== %s (last %d lines)\n%s\n", name, n, tail)
	}
	return b.String()
}

// logTail returns the last lines of one server log, for error messages.
func (cp *ControlPlane) logTail(name string) string {
	tail, err := tailFile(cp.path(name), logTailLines)
	if err != nil {
		return fmt.Sprintf("%s unreadable: %v", name, err)
	}
	return tail
}

func (cp *ControlPlane) logMentionsPortClash(name string) bool {
	tail, err := tailFile(cp.path(name), 200)
	return err == nil && strings.Contains(tail, "address already in use")
}

func (cp *ControlPlane) path(name string) string { return filepath.Join(cp.dir, name) }

func (cp *ControlPlane) logf(format string, args ...any) {
	if cp.log == nil {
		return
	}
	fmt.Fprintf(cp.log, "controlplane: "+format+"\n", args...)
}

func randomToken() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generate token: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// freePorts returns n distinct free TCP ports on 127.0.0.1. All listeners are
// held open until every port has been picked, so the ports differ.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	listeners := make([]net.Listener, 0, n)
	defer func() {
		for _, l := range listeners {
			_ = l.Close()
		}
	}()
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("pick a free loopback port: %w", err)
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// resolveBinDir applies the BinDir defaults: explicit, $DELTAS_BIN_DIR, then
// <repo root>/bin.
func resolveBinDir(binDir string) (string, error) {
	if binDir == "" {
		binDir = os.Getenv(BinDirEnv)
	}
	if binDir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", fmt.Errorf("find repository root: %w", err)
		}
		root, err := FindRepoRoot(wd)
		if err != nil {
			return "", fmt.Errorf("find control plane binaries (set %s or Options.BinDir): %w", BinDirEnv, err)
		}
		binDir = filepath.Join(root, "bin")
	}
	abs, err := filepath.Abs(binDir)
	if err != nil {
		return "", fmt.Errorf("bin dir %q: %w", binDir, err)
	}
	return abs, nil
}

// FindRepoRoot walks up from dir to the directory whose go.mod declares
// module ModulePath.
func FindRepoRoot(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("find repository root: %w", err)
	}
	for d := dir; ; {
		if data, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil && modulePath(data) == ModulePath {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("no go.mod for module %s in %s or any parent directory", ModulePath, dir)
		}
		d = parent
	}
}

// modulePath returns the module path declared in a go.mod file.
func modulePath(gomod []byte) string {
	for _, line := range strings.Split(string(gomod), "\n") {
		line = strings.TrimSpace(line)
		rest, ok := strings.CutPrefix(line, "module")
		if !ok || (rest != "" && rest[0] != ' ' && rest[0] != '\t') {
			continue
		}
		rest = strings.TrimSpace(rest)
		if i := strings.Index(rest, "//"); i >= 0 {
			rest = strings.TrimSpace(rest[:i])
		}
		if unq, err := strconv.Unquote(rest); err == nil {
			return unq
		}
		return rest
	}
	return ""
}

// checkFile requires a regular file name in binDir, which "make
// controlplane" writes.
func checkFile(binDir, name string) error {
	info, err := os.Stat(filepath.Join(binDir, name))
	if err != nil || !info.Mode().IsRegular() {
		return fmt.Errorf("%s not found in %s: run \"make controlplane\" first", name, binDir)
	}
	return nil
}

func checkBinary(binDir, name string) error {
	info, err := os.Stat(filepath.Join(binDir, name))
	if err != nil || info.IsDir() {
		return fmt.Errorf("%s not found in %s: run \"make controlplane\" first", name, binDir)
	}
	if info.Mode()&0o111 == 0 {
		return fmt.Errorf("%s in %s is not executable: run \"make controlplane\" first", name, binDir)
	}
	return nil
}
