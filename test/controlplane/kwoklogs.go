package controlplane

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"sigs.k8s.io/yaml"
)

// The files of kwok's kubelet server, in the cluster's directory.
const (
	kwokCertFile = "kwok-server.crt"
	kwokKeyFile  = "kwok-server.key"
)

// prepareKwokServer readies what kwok's kubelet server needs before kwok
// starts: a free port (kept, so a kwok started again serves the same), a
// certificate of its own, and the ClusterLogs CRD, established.
func (cp *ControlPlane) prepareKwokServer(ctx context.Context) error {
	if cp.kwokPort == 0 {
		ports, err := freePorts(1)
		if err != nil {
			return err
		}
		cp.kwokPort = ports[0]
	}
	if err := writeServingCert(cp.path(kwokCertFile), cp.path(kwokKeyFile)); err != nil {
		return err
	}
	return cp.applyCRD(ctx, filepath.Join(cp.binDir, kwokClusterLogsCRD))
}

// writeServingCert writes a self-signed certificate for 127.0.0.1 and its
// key, valid for a day.
func writeServingCert(certFile, keyFile string) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("generate kwok's server key: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(now.UnixNano()),
		Subject:      pkix.Name{CommonName: "kwok"},
		NotBefore:    now.Add(-time.Minute),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return fmt.Errorf("create kwok's server certificate: %w", err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return fmt.Errorf("encode kwok's server key: %w", err)
	}
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		return fmt.Errorf("write kwok's server certificate: %w", err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		return fmt.Errorf("write kwok's server key: %w", err)
	}
	return nil
}

// applyCRD creates the CustomResourceDefinition in the YAML file (if it
// is not there yet) and waits until it is established.
func (cp *ControlPlane) applyCRD(ctx context.Context, file string) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("read %s: %w (run make controlplane)", file, err)
	}
	body, err := yaml.YAMLToJSON(data)
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	var crd struct {
		Metadata struct{ Name string } `json:"metadata"`
	}
	if err := json.Unmarshal(body, &crd); err != nil || crd.Metadata.Name == "" {
		return fmt.Errorf("%s: not a CustomResourceDefinition (%v)", file, err)
	}
	client := newAPIClient()
	defer client.CloseIdleConnections()
	const crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
	status, msg, err := do(ctx, client, http.MethodPost, cp.Server()+crds, cp.adminToken, string(body))
	if err != nil {
		return fmt.Errorf("create CRD %s: %w", crd.Metadata.Name, err)
	}
	if status != http.StatusCreated && status != http.StatusConflict {
		return fmt.Errorf("create CRD %s: status %d: %s", crd.Metadata.Name, status, msg)
	}
	return cp.waitAll(ctx, "the CRD "+crd.Metadata.Name, "established", nil, []probe{{
		what: crd.Metadata.Name + " established",
		check: func(ctx context.Context) error {
			status, body, err := do(ctx, client, http.MethodGet, cp.Server()+crds+"/"+crd.Metadata.Name, cp.adminToken, "")
			if err != nil || status != http.StatusOK {
				return fmt.Errorf("status %d: %v", status, err)
			}
			var got struct {
				Status struct {
					Conditions []struct{ Type, Status string }
				}
			}
			if err := json.Unmarshal([]byte(body), &got); err != nil {
				return err
			}
			for _, c := range got.Status.Conditions {
				if c.Type == "Established" && c.Status == "True" {
					return nil
				}
			}
			return fmt.Errorf("not established yet")
		},
	}})
}
