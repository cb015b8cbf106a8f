package controlplane

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
)

// etcdutlBinary restores snapshots (RestoreEtcd); `make controlplane`
// builds it from go.etcd.io/etcd/etcdutl/v3 at the etcd version in use.
const etcdutlBinary = "etcdutl"

// SnapshotEtcd saves etcd's database to dst, as a backup taken at this
// moment: kube-apiserver and etcd are stopped, etcd's db file is copied
// (restore it with the hash check skipped, as RestoreEtcd does), and both
// are started again on the same ports. Clients see a restart of the API
// server.
func (cp *ControlPlane) SnapshotEtcd(ctx context.Context, dst string) error {
	return cp.withEtcdStopped(ctx, func() error {
		return copyFile(filepath.Join(cp.path("etcd-data"), "member", "snap", "db"), dst)
	})
}

// RestoreEtcd replaces etcd's data with snapshot, as the Kubernetes
// documentation's disaster recovery does: kube-apiserver and etcd are
// stopped, `etcdutl snapshot restore` writes a new data directory —
// with bump > 0 its revision is raised by bump and marked compacted
// (--bump-revision, --mark-compacted), so that resourceVersions never go
// back and watches from before the restore are answered "too old"; with 0
// the revision is the snapshot's, lower than what clients have seen — and
// both are started again on the same ports.
func (cp *ControlPlane) RestoreEtcd(ctx context.Context, snapshot string, bump uint64) error {
	if err := checkBinary(cp.binDir, etcdutlBinary); err != nil {
		return err
	}
	return cp.withEtcdStopped(ctx, func() error {
		data := cp.path("etcd-data")
		restored := data + ".restored"
		if err := os.RemoveAll(restored); err != nil {
			return err
		}
		peer := fmt.Sprintf("http://127.0.0.1:%d", cp.etcdPeerPort)
		args := []string{
			"snapshot", "restore", snapshot, "--skip-hash-check",
			"--data-dir=" + restored,
			"--name=default", "--initial-cluster=default=" + peer, "--initial-advertise-peer-urls=" + peer,
		}
		if bump > 0 {
			args = append(args, "--bump-revision="+strconv.FormatUint(bump, 10), "--mark-compacted")
		}
		cmd := exec.CommandContext(ctx, filepath.Join(cp.binDir, etcdutlBinary), args...)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("etcdutl snapshot restore: %w\n%s", err, out)
		}
		if err := os.RemoveAll(data); err != nil {
			return err
		}
		return os.Rename(restored, data)
	})
}

// withEtcdStopped stops kube-apiserver and etcd, runs do, and starts both
// again on their ports (also when do fails, so that the control plane
// runs on).
func (cp *ControlPlane) withEtcdStopped(ctx context.Context, do func() error) error {
	cp.lifecycle.Lock()
	defer cp.lifecycle.Unlock()
	cp.mu.Lock()
	apiserver, etcd, stopped := cp.apiserver, cp.etcd, cp.stopped
	cp.apiserver, cp.etcd = nil, nil
	cp.mu.Unlock()
	if stopped || etcd == nil {
		return errors.New("control plane is stopped")
	}
	if apiserver != nil {
		apiserver.kill()
	}
	etcd.terminate()
	cp.logf("kube-apiserver and etcd stopped")
	err := do()
	if startErr := cp.runEtcd(ctx); startErr != nil {
		return errors.Join(err, startErr)
	}
	if startErr := cp.runAPIServer(ctx); startErr != nil {
		return errors.Join(err, startErr)
	}
	return err
}

// copyFile copies src to dst.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
