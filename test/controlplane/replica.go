package controlplane

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
)

// Replica is an extra kube-apiserver on the control plane's etcd, as in a
// highly available cluster: same certificates, tokens and service-account
// issuer, its own port and log.
type Replica struct {
	p    *process
	port int
}

// URL is the replica's https://127.0.0.1:PORT.
func (r *Replica) URL() string { return fmt.Sprintf("https://127.0.0.1:%d", r.port) }

// Kill stops the replica with SIGKILL, as a crash would.
func (r *Replica) Kill() { r.p.kill() }

// StartAPIServerReplica starts another kube-apiserver on etcd and waits
// until it serves. Stop stops it with the rest; it does not count as a
// failure of the control plane when it exits.
func (cp *ControlPlane) StartAPIServerReplica(ctx context.Context) (*Replica, error) {
	ports, err := freePorts(1)
	if err != nil {
		return nil, err
	}
	cp.mu.Lock()
	n, stopped := len(cp.replicas)+1, cp.stopped
	cp.mu.Unlock()
	if stopped {
		return nil, errors.New("control plane is stopped")
	}
	logName := fmt.Sprintf("kube-apiserver-replica-%d.log", n)
	p, err := startProcess(apiserverBinary, filepath.Join(cp.binDir, apiserverBinary), cp.apiserverArgsOn(ports[0]), cp.dir, cp.path(logName), func(error) {})
	if err != nil {
		return nil, err
	}
	r := &Replica{p: p, port: ports[0]}
	cp.mu.Lock()
	cp.replicas = append(cp.replicas, p)
	cp.mu.Unlock()
	if err := cp.waitAPIServerAt(ctx, p, r.URL(), logName); err != nil {
		p.kill()
		return nil, err
	}
	cp.logf("kube-apiserver replica ready on %s (pid %d)", r.URL(), p.pid())
	return r, nil
}
