//go:build faults

package e2e

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// faultProxy is a loopback HTTPS proxy between kubectl deltas and a
// kube-apiserver, for the fault tests. It terminates TLS with a self-signed
// certificate (HTTP/2 and HTTP/1.1, so that client-go's HTTP/2 health check
// is in play), forwards requests with their own credentials, logs every
// request, and injects faults:
//
//   - connection level: reset every client connection (RST), reset new
//     ones as they come (an unreachable server), or black-hole them: no
//     byte goes through either way, nothing is closed;
//   - HTTP level: answer watch requests with an error status (429 with
//     Retry-After, 500, …) instead of forwarding them;
//   - a gate that holds plain watch requests (not streaming lists) until
//     released, without an error: the client simply waits.
type faultProxy struct {
	t        *testing.T
	target   *url.URL
	ln       net.Listener
	srv      *http.Server
	rp       *httputil.ReverseProxy
	upstream *http.Transport

	mu sync.Mutex
	// conns are the client connections handed to the HTTP server.
	conns map[*proxyConn]struct{}
	// parked are connections accepted while black-holed: never read.
	parked []net.Conn
	// mode is how new connections are treated.
	mode connMode
	// thaw is closed when a black hole ends; nil while none.
	thaw chan struct{}
	// watchFault, if set, answers watch requests instead of forwarding.
	watchFault *httpFault
	// listFaults answer the list requests of the collections whose path
	// ends in a key, instead of forwarding.
	listFaults map[string]*httpFault
	// hold holds plain watch requests; release is closed to let the held
	// ones through.
	hold    bool
	release chan struct{}
	held    int
	// requests is the log.
	requests []*proxyRequest
	// refusedAt are the times of the connections reset by refuse.
	refusedAt []time.Time
}

type connMode int

const (
	connPass connMode = iota
	connReset
	connBlackHole
)

// httpFault is an error answer.
type httpFault struct {
	code       int
	reason     string
	retryAfter int
}

// proxyRequest is one request seen by the proxy.
type proxyRequest struct {
	when   time.Time
	method string
	path   string
	query  url.Values
	// status is the status answered (0 while unknown: still running or the
	// connection died); injected means the proxy answered it.
	status   int
	injected bool
	held     bool
}

func (r *proxyRequest) isWatch() bool {
	return r.query.Get("watch") == "true" || r.query.Get("watch") == "1"
}

// isList reports whether r lists the collection: a list, or a streaming
// list (a watch with sendInitialEvents). A probe (isProbe) is not a list
// of the collection.
func (r *proxyRequest) isList() bool {
	return (!r.isWatch() && !r.isProbe()) || r.query.Get("sendInitialEvents") == "true"
}

// isProbe reports whether r is a one-object consistent list with which
// the plugin checks the server: after it was unreachable, that its
// resourceVersion did not go back (an etcd restore); beside a list from
// the watch cache, that an empty answer can be trusted.
func (r *proxyRequest) isProbe() bool {
	return !r.isWatch() && r.query.Get("limit") == "1" && r.query.Get("resourceVersion") == ""
}

func (r *proxyRequest) String() string {
	s := fmt.Sprintf("%s %s %s?%s", r.when.Format("15:04:05.000"), r.method, r.path, r.query.Encode())
	if r.status != 0 {
		s += " → " + strconv.Itoa(r.status)
	}
	if r.injected {
		s += " (injected)"
	}
	if r.held {
		s += " (held)"
	}
	return s
}

type proxyCtxKey struct{}

// newFaultProxy starts a proxy to the API server at target; it is closed
// at the end of the test.
func newFaultProxy(t *testing.T, target string) *faultProxy {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := selfSignedCert()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &faultProxy{t: t, target: u, conns: map[*proxyConn]struct{}{}}
	p.ln = &proxyListener{Listener: ln, p: p}
	p.upstream = &http.Transport{
		TLSClientConfig:   &tls.Config{InsecureSkipVerify: true},
		ForceAttemptHTTP2: true,
		DialContext:       (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
	}
	p.rp = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(u)
			pr.Out.Host = u.Host
		},
		Transport:     p.upstream,
		FlushInterval: -1,
		ErrorLog:      log.New(io.Discard, "", 0),
		ModifyResponse: func(resp *http.Response) error {
			if r, ok := resp.Request.Context().Value(proxyCtxKey{}).(*proxyRequest); ok {
				p.mu.Lock()
				r.status = resp.StatusCode
				p.mu.Unlock()
			}
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, req *http.Request, err error) {
			if r, ok := req.Context().Value(proxyCtxKey{}).(*proxyRequest); ok {
				p.mu.Lock()
				r.status = http.StatusBadGateway
				p.mu.Unlock()
			}
			w.WriteHeader(http.StatusBadGateway)
		},
	}
	p.srv = &http.Server{
		Handler:   p,
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"h2", "http/1.1"}},
		ErrorLog:  log.New(io.Discard, "", 0),
	}
	go func() { _ = p.srv.ServeTLS(p.ln, "", "") }()
	t.Cleanup(p.close)
	return p
}

// URL is the proxy's address.
func (p *faultProxy) URL() string { return "https://" + p.ln.Addr().String() }

// kubeconfig writes a kubeconfig that reaches the API server through the
// proxy with token, and returns its path.
func (p *faultProxy) kubeconfig(token string) string {
	p.t.Helper()
	path := filepath.Join(p.t.TempDir(), "proxy.kubeconfig")
	content := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: proxy
  cluster:
    server: %q
    insecure-skip-tls-verify: true
users:
- name: u
  user:
    token: %q
contexts:
- name: proxy
  context:
    cluster: proxy
    user: u
    namespace: default
current-context: proxy
`, p.URL(), token)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		p.t.Fatal(err)
	}
	return path
}

func (p *faultProxy) close() {
	p.mu.Lock()
	if p.thaw != nil {
		close(p.thaw)
		p.thaw = nil
	}
	if p.release != nil {
		close(p.release)
		p.release = nil
	}
	p.hold = false
	for _, c := range p.parked {
		c.Close()
	}
	p.parked = nil
	p.mu.Unlock()
	_ = p.srv.Close()
	p.upstream.CloseIdleConnections()
}

// ServeHTTP logs the request, then injects a fault, holds it, or forwards
// it.
func (p *faultProxy) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r := &proxyRequest{when: time.Now(), method: req.Method, path: req.URL.Path, query: req.URL.Query()}
	p.mu.Lock()
	p.requests = append(p.requests, r)
	fault := p.watchFault
	if !r.isWatch() && req.Method == http.MethodGet {
		for suffix, f := range p.listFaults {
			if strings.HasSuffix(r.path, suffix) {
				fault = f
			}
		}
	}
	var release chan struct{}
	if r.isWatch() && !r.isList() && p.hold {
		r.held = true
		p.held++
		release = p.release
	}
	p.mu.Unlock()

	if fault != nil && (r.isWatch() || fault != p.watchFault) {
		p.mu.Lock()
		r.status, r.injected = fault.code, true
		p.mu.Unlock()
		writeStatus(w, fault)
		return
	}
	if release != nil {
		select {
		case <-release:
		case <-req.Context().Done():
		}
		p.mu.Lock()
		p.held--
		p.mu.Unlock()
		if req.Context().Err() != nil {
			return
		}
	}
	p.rp.ServeHTTP(w, req.WithContext(context.WithValue(req.Context(), proxyCtxKey{}, r)))
}

// writeStatus answers with a Kubernetes Status object.
func writeStatus(w http.ResponseWriter, f *httpFault) {
	status := map[string]any{
		"kind": "Status", "apiVersion": "v1", "metadata": map[string]any{},
		"status": "Failure", "message": fmt.Sprintf("injected by the test proxy: %s", f.reason),
		"reason": f.reason, "code": f.code,
	}
	if f.retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(f.retryAfter))
		status["details"] = map[string]any{"retryAfterSeconds": f.retryAfter}
	}
	body, _ := json.Marshal(status)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(f.code)
	_, _ = w.Write(body)
}

// setListFault makes the lists of the collection whose path ends in suffix
// ("/configmaps") fail with f (nil: forward them).
func (p *faultProxy) setListFault(suffix string, f *httpFault) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.listFaults == nil {
		p.listFaults = map[string]*httpFault{}
	}
	if f == nil {
		delete(p.listFaults, suffix)
		return
	}
	p.listFaults[suffix] = f
}

// setWatchFault makes watch requests fail with f (nil: forward them).
func (p *faultProxy) setWatchFault(f *httpFault) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.watchFault = f
}

// holdWatches starts holding plain watch requests.
func (p *faultProxy) holdWatches() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.hold {
		p.hold = true
		p.release = make(chan struct{})
	}
}

// releaseHeld lets the watch requests held so far through; later ones are
// held again.
func (p *faultProxy) releaseHeld() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.hold {
		close(p.release)
		p.release = make(chan struct{})
	}
}

// openGate stops holding watch requests and lets the held ones through.
func (p *faultProxy) openGate() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.hold {
		p.hold = false
		close(p.release)
		p.release = nil
	}
}

// heldWatches is the number of watch requests waiting at the gate.
func (p *faultProxy) heldWatches() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.held
}

// resetConnections closes every client connection abruptly (TCP RST).
func (p *faultProxy) resetConnections() {
	p.mu.Lock()
	conns := make([]*proxyConn, 0, len(p.conns))
	for c := range p.conns {
		conns = append(conns, c)
	}
	p.mu.Unlock()
	for _, c := range conns {
		c.reset()
	}
}

// refuse resets new connections as they come (and every open one): the
// server is unreachable.
func (p *faultProxy) refuse() {
	p.mu.Lock()
	p.mode = connReset
	p.mu.Unlock()
	p.resetConnections()
}

// blackHole stops every byte in both directions on the open connections,
// and accepts new connections without ever answering, closing nothing.
func (p *faultProxy) blackHole() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.mode = connBlackHole
	if p.thaw == nil {
		p.thaw = make(chan struct{})
	}
}

// restore ends refuse or blackHole: the connections the black hole froze
// are closed (their peers gave up on them long ago), new ones pass.
func (p *faultProxy) restore() {
	p.mu.Lock()
	p.mode = connPass
	parked := p.parked
	p.parked = nil
	var frozen []*proxyConn
	if p.thaw != nil {
		for c := range p.conns {
			frozen = append(frozen, c)
		}
		close(p.thaw)
		p.thaw = nil
	}
	p.mu.Unlock()
	for _, c := range parked {
		c.Close()
	}
	for _, c := range frozen {
		c.reset()
	}
}

// log returns a copy of the request log.
func (p *faultProxy) log() []proxyRequest {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]proxyRequest, len(p.requests))
	for i, r := range p.requests {
		out[i] = *r
	}
	return out
}

// requestsTo returns the logged requests to a collection path ending in
// "/"+resource, from index from on.
func (p *faultProxy) requestsTo(resource string, from int) []proxyRequest {
	var out []proxyRequest
	for i, r := range p.log() {
		if i >= from && strings.HasSuffix(r.path, "/"+resource) {
			out = append(out, r)
		}
	}
	return out
}

// listsOf returns the requests of rs that list the collection (isList).
func listsOf(rs []proxyRequest) []proxyRequest {
	var out []proxyRequest
	for _, r := range rs {
		if r.isList() {
			out = append(out, r)
		}
	}
	return out
}

// renderRequests renders requests for failure messages.
func renderRequests(rs []proxyRequest) string {
	var b strings.Builder
	for _, r := range rs {
		b.WriteString("  " + r.String() + "\n")
	}
	return b.String()
}

// proxyListener hands the HTTP server the connections the mode lets
// through.
type proxyListener struct {
	net.Listener
	p *faultProxy
}

func (l *proxyListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		p := l.p
		p.mu.Lock()
		mode := p.mode
		switch mode {
		case connBlackHole:
			p.parked = append(p.parked, c)
		case connPass:
			pc := &proxyConn{Conn: c, p: p}
			p.conns[pc] = struct{}{}
			p.mu.Unlock()
			return pc, nil
		}
		if mode == connReset {
			p.refusedAt = append(p.refusedAt, time.Now())
		}
		p.mu.Unlock()
		if mode == connReset {
			resetConn(c)
		}
	}
}

// proxyConn is a client connection: tracked, and frozen by a black hole.
type proxyConn struct {
	net.Conn
	p    *faultProxy
	once sync.Once
}

// frozen blocks while a black hole lasts; false when the connection was
// closed meanwhile.
func (c *proxyConn) wait() {
	c.p.mu.Lock()
	thaw := c.p.thaw
	c.p.mu.Unlock()
	if thaw != nil {
		<-thaw
	}
}

func (c *proxyConn) Read(b []byte) (int, error) {
	c.wait()
	n, err := c.Conn.Read(b)
	// Bytes read while a black hole began are dropped with the
	// connection's future.
	c.wait()
	return n, err
}

func (c *proxyConn) Write(b []byte) (int, error) {
	c.wait()
	return c.Conn.Write(b)
}

func (c *proxyConn) Close() error {
	c.forget()
	return c.Conn.Close()
}

func (c *proxyConn) forget() {
	c.once.Do(func() {
		c.p.mu.Lock()
		delete(c.p.conns, c)
		c.p.mu.Unlock()
	})
}

// reset closes with a TCP RST.
func (c *proxyConn) reset() {
	c.forget()
	resetConn(c.Conn)
}

func resetConn(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = c.Close()
}

// selfSignedCert is a certificate for 127.0.0.1.
func selfSignedCert() (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "deltas-fault-proxy"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}

// refusedConnections returns when the connections refused so far came.
func (p *faultProxy) refusedConnections() []time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]time.Time(nil), p.refusedAt...)
}
