//go:build faults

package e2e

// Client certificates rotated on disk (issue 14, scenario 5): the
// kubeconfig names a certificate and key file that a renewer of the test's
// replaces every few seconds with a new certificate that lives 20 s; the
// API server checks a certificate's validity on every request, also on a
// connection it accepted it on before.

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// certLife is how long a client certificate of the test is valid.
const certLife = 20 * time.Second

// clientCA issues the short-lived client certificates.
type clientCA struct {
	t      *testing.T
	cert   *x509.Certificate
	key    *ecdsa.PrivateKey
	mu     sync.Mutex
	serial int64
}

func newClientCA(t *testing.T, dir string) (*clientCA, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must(t, err)
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "deltas-test-client-ca"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	must(t, err)
	cert, err := x509.ParseCertificate(der)
	must(t, err)
	path := filepath.Join(dir, "client-ca.crt")
	must(t, os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	return &clientCA{t: t, cert: cert, key: key, serial: 1}, path
}

// renew writes a new certificate (user rotating-cert-admin, group
// system:masters, valid for certLife from now) and its key into one file,
// renamed into place so that a reader never sees half of it.
func (ca *clientCA) renew(path string) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must(ca.t, err)
	ca.mu.Lock()
	ca.serial++
	serial := ca.serial
	ca.mu.Unlock()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial),
		Subject:      pkix.Name{CommonName: "rotating-cert-admin", Organization: []string{"system:masters"}},
		NotBefore:    time.Now().Add(-time.Minute),
		NotAfter:     time.Now().Add(certLife),
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		KeyUsage:     x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	must(ca.t, err)
	keyDER, err := x509.MarshalECPrivateKey(key)
	must(ca.t, err)
	content := append(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})...)
	must(ca.t, os.WriteFile(path+".tmp", content, 0o600))
	must(ca.t, os.Rename(path+".tmp", path))
}

func (ca *clientCA) issued() int64 {
	ca.mu.Lock()
	defer ca.mu.Unlock()
	return ca.serial - 1
}

// TestFaultClientCertRotated: the stream runs 70 s on client certificates
// that live 20 s and are renewed on disk every 8 s, across many re-watches
// (each lasts 5–10 s), with writes all along: no error, nothing lost. Then
// the renewals stop: once the last certificate expires, the next request is
// refused and the plugin ends with the server's verdict, exit 1, not a
// retry loop.
func TestFaultClientCertRotated(t *testing.T) {
	dir := t.TempDir()
	ca, caFile := newClientCA(t, dir)
	c := startCluster(t, "--client-ca-file="+caFile)
	ns := c.namespace(t)

	certFile := filepath.Join(dir, "client.pem")
	ca.renew(certFile)
	kubeconfig := rotatingKubeconfig(t, c, ns, dir, &clientcmdapi.AuthInfo{ClientCertificate: certFile, ClientKey: certFile})

	stopRenewing := make(chan struct{})
	var renewer sync.WaitGroup
	renewer.Go(func() {
		tick := time.NewTicker(8 * time.Second)
		defer tick.Stop()
		for {
			select {
			case <-stopRenewing:
				return
			case <-tick.C:
				ca.renew(certFile)
			}
		}
	})
	defer func() {
		select {
		case <-stopRenewing:
		default:
			close(stopRenewing)
		}
		renewer.Wait()
	}()

	d, steps := watchUnderWrites(t, c, ns, kubeconfig, 70*time.Second)
	t.Logf("%d writes; %d certificates renewed on disk", steps, ca.issued())
	// A renewal is not an outage: nothing on stderr.
	if errs := d.stderr.String(); errs != "" {
		t.Errorf("stderr is not empty while the certificates were renewed:\n%s", errs)
	}
	select {
	case <-d.done:
		t.Fatalf("the plugin exited while its certificates were renewed\n%s", d.describe())
	default:
	}

	// No more renewals: within certLife the certificate in use expires,
	// and the next re-watch (at most 10 s later) is refused.
	close(stopRenewing)
	renewer.Wait()
	if code := d.wait(certLife + 40*time.Second); code != 1 {
		t.Errorf("exit code after the certificate expired = %d, want 1\n%s", code, d.describe())
	}
	errs := d.stderr.String()
	if !strings.Contains(errs, "error: ") || !strings.Contains(errs, "Unauthorized") || !strings.Contains(errs, "client certificate") {
		t.Errorf("stderr does not report the refused certificate:\n%s", errs)
	}
	if n := strings.Count(errs, "error: "); n != 1 {
		t.Errorf("%d error lines, want 1:\n%s", n, errs)
	}
}
