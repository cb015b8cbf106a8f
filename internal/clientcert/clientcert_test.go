package clientcert

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

// authority signs the test server's certificate and the client's.
type authority struct {
	cert   *x509.Certificate
	key    *ecdsa.PrivateKey
	pem    []byte
	serial int64
}

func newAuthority(t *testing.T) *authority {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "test-ca"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &authority{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), serial: 1}
}

// issue returns a certificate and key in PEM and the certificate's serial.
func (a *authority) issue(t *testing.T, server bool) (certPEM, keyPEM []byte, serial int64) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	a.serial++
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(a.serial),
		Subject:      pkix.Name{CommonName: "client"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if server {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1")}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, a.cert, &key.PublicKey, a.key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), a.serial
}

// server accepts the client certificates whose serial is valid, as
// kube-apiserver does per request: an expired certificate is refused on a
// connection it was accepted on before.
type server struct {
	mu      sync.Mutex
	valid   map[int64]bool
	seen    []int64
	refused int
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var serial int64
	if len(r.TLS.PeerCertificates) > 0 {
		serial = r.TLS.PeerCertificates[0].SerialNumber.Int64()
	}
	s.seen = append(s.seen, serial)
	if !s.valid[serial] {
		s.refused++
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = io.WriteString(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Unauthorized","code":401}`)
		return
	}
	_, _ = io.WriteString(w, "ok")
}

func (s *server) set(valid ...int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.valid = map[int64]bool{}
	for _, v := range valid {
		s.valid[v] = true
	}
}

func (s *server) counts() (last int64, refused int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seen[len(s.seen)-1], s.refused
}

// fixture is a TLS server asking for client certificates, and a client
// whose certificate and key are one file, rotated by writing a new one.
type fixture struct {
	t      *testing.T
	ca     *authority
	srv    *server
	file   string
	client *http.Client
	url    string
	r      *Renewer
	now    time.Time
}

// newFixture starts the server and connects a client through a Renewer,
// with a first certificate the server takes.
func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{t: t, ca: newAuthority(t), srv: &server{}, now: time.Unix(1_000_000, 0)}
	certPEM, keyPEM, _ := f.ca.issue(t, true)
	serverCert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewUnstartedServer(f.srv)
	hs.EnableHTTP2 = true
	hs.TLS = &tls.Config{Certificates: []tls.Certificate{serverCert}, ClientAuth: tls.RequestClientCert}
	hs.StartTLS()
	t.Cleanup(hs.Close)
	f.url = hs.URL

	f.file = filepath.Join(t.TempDir(), "client.pem")
	f.srv.set(f.rotate())
	f.r = New()
	f.r.now = func() time.Time { return f.now }
	config := f.r.Wrap(&rest.Config{Host: hs.URL, TLSClientConfig: rest.TLSClientConfig{CAData: f.ca.pem, CertFile: f.file, KeyFile: f.file}})
	if config.Dial == nil {
		t.Fatal("Wrap left a config with certificate files without its Dial")
	}
	if f.client, err = rest.HTTPClientFor(config); err != nil {
		t.Fatal(err)
	}
	return f
}

// rotate writes a new certificate and key (one file, renamed into place)
// and returns its serial.
func (f *fixture) rotate() int64 {
	f.t.Helper()
	certPEM, keyPEM, serial := f.ca.issue(f.t, false)
	tmp := f.file + ".tmp"
	if err := os.WriteFile(tmp, append(certPEM, keyPEM...), 0o600); err != nil {
		f.t.Fatal(err)
	}
	if err := os.Rename(tmp, f.file); err != nil {
		f.t.Fatal(err)
	}
	return serial
}

func (f *fixture) get() int {
	f.t.Helper()
	resp, err := f.client.Get(f.url + "/api")
	if err != nil {
		f.t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode
}

// openConns is the number of connections r tracks.
func openConns(r *Renewer) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.conns)
}

func TestRenewerRotatedFiles(t *testing.T) {
	f := newFixture(t)
	if code := f.get(); code != http.StatusOK {
		t.Fatalf("first request: status %d, want 200", code)
	}
	if n := openConns(f.r); n != 1 {
		t.Fatalf("%d tracked connections after the first request, want 1", n)
	}

	// The certificate is renewed on disk, and the old one expires: the
	// kept-alive connection still presents the old one and is refused; the
	// request is retried on a new connection, with the new certificate.
	second := f.rotate()
	f.srv.set(second)
	if code := f.get(); code != http.StatusOK {
		t.Fatalf("request after the rotation: status %d, want 200 (retried with the new certificate)", code)
	}
	last, refused := f.srv.counts()
	if last != second || refused != 1 {
		t.Fatalf("server saw serial %d last and refused %d requests; want %d and 1", last, refused, second)
	}
	if n := openConns(f.r); n != 1 {
		t.Fatalf("%d tracked connections after the renewal, want 1 (the old one closed)", n)
	}

	// A refusal with unchanged files, long after the renewal, is the
	// server's verdict: returned at once, not retried.
	f.now = f.now.Add(time.Minute)
	f.srv.set()
	if code := f.get(); code != http.StatusUnauthorized {
		t.Fatalf("request with a revoked certificate: status %d, want 401", code)
	}
	if _, refused := f.srv.counts(); refused != 2 {
		t.Fatalf("server refused %d requests in all; want 2 (no retry of a refusal with unchanged files)", refused)
	}
}

func TestRenewerRenewedButStillRefused(t *testing.T) {
	f := newFixture(t)
	if code := f.get(); code != http.StatusOK {
		t.Fatalf("first request: status %d, want 200", code)
	}
	// A new certificate the server does not take either: one retry, then
	// the 401 comes back.
	f.rotate()
	f.srv.set()
	if code := f.get(); code != http.StatusUnauthorized {
		t.Fatalf("request after a rotation to a refused certificate: status %d, want 401", code)
	}
	if _, refused := f.srv.counts(); refused != 2 {
		t.Fatalf("server refused %d requests; want 2 (the request and its one retry)", refused)
	}
}

func TestWrapLeavesOtherConfigs(t *testing.T) {
	r := New()
	for name, c := range map[string]*rest.Config{
		"token":           {BearerToken: "t"},
		"inline cert":     {TLSClientConfig: rest.TLSClientConfig{CertData: []byte("c"), KeyData: []byte("k")}},
		"cert file only":  {TLSClientConfig: rest.TLSClientConfig{CertFile: "c"}},
		"file and inline": {TLSClientConfig: rest.TLSClientConfig{CertFile: "c", KeyFile: "k", KeyData: []byte("k")}},
	} {
		got := r.Wrap(c)
		if got.Dial != nil || got.WrapTransport != nil {
			t.Errorf("%s: Wrap changed a config client-go does not reload", name)
		}
	}
}
