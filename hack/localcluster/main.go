// Command localcluster runs a local control plane (etcd and kube-apiserver on
// 127.0.0.1) until SIGINT or SIGTERM, for the demo and manual tests. With
// -nodes N it is a busy cluster: kube-controller-manager, kube-scheduler and
// kwok run too, with N simulated nodes, so Deployments roll out on their own.
//
//	go run ./hack/localcluster -kubeconfig FILE [-user-kubeconfig FILE] [-nodes N] [-- extra kube-apiserver flags]
//
// It writes the admin kubeconfig to FILE (and alice's, an unprivileged user,
// to the -user-kubeconfig FILE), prints one "ready: ..." line to stderr and
// creates nothing else. It exits 0 after a signal, and non-zero if a server
// dies on its own.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/kubectl-deltas/kubectl-deltas/test/controlplane"
)

func main() {
	if err := run(os.Args[1:], os.Stderr); err != nil {
		fmt.Fprintf(os.Stderr, "localcluster: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("localcluster", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: localcluster -kubeconfig FILE [-user-kubeconfig FILE] [-nodes N] [-dir DIR] [-bin-dir DIR] [-v] [-- extra kube-apiserver flags]")
		fs.PrintDefaults()
	}
	kubeconfig := fs.String("kubeconfig", "", "write the admin kubeconfig to this `file` (required)")
	userKubeconfig := fs.String("user-kubeconfig", "", "write the unprivileged user's (alice) kubeconfig to this `file`")
	dir := fs.String("dir", "", "work `directory` (kept on exit); default a temporary directory, removed on exit")
	binDir := fs.String("bin-dir", "", "`directory` with the etcd and kube-apiserver binaries (default $"+controlplane.BinDirEnv+" or bin/ in the repository)")
	timeout := fs.Duration("ready-timeout", 60*time.Second, "how long to wait for each server to become ready")
	verbose := fs.Bool("v", false, "print progress lines to stderr")
	nodes := fs.Int("nodes", 0, "run kube-controller-manager, kube-scheduler and kwok with this many simulated `nodes` (0: etcd and kube-apiserver only)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if *kubeconfig == "" {
		fs.Usage()
		return errors.New("-kubeconfig is required")
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	opts := controlplane.Options{
		BinDir:         *binDir,
		Dir:            *dir,
		APIServerFlags: fs.Args(),
		ReadyTimeout:   *timeout,
		Nodes:          *nodes,
	}
	if *verbose {
		opts.Log = stderr
	}
	cp, err := controlplane.Start(ctx, opts)
	if err != nil {
		if ctx.Err() != nil {
			return nil // interrupted while starting
		}
		return err
	}
	defer cp.Stop()

	if err := copyFile(cp.AdminKubeconfig(), *kubeconfig); err != nil {
		return err
	}
	if *userKubeconfig != "" {
		if err := copyFile(cp.UserKubeconfig(), *userKubeconfig); err != nil {
			return err
		}
	}
	if *nodes > 0 {
		fmt.Fprintf(stderr, "ready: kubeconfig %s (server %s, %d simulated nodes)\n", *kubeconfig, cp.Server(), *nodes)
	} else {
		fmt.Fprintf(stderr, "ready: kubeconfig %s (server %s)\n", *kubeconfig, cp.Server())
	}

	select {
	case <-ctx.Done():
		return nil
	case err := <-cp.Failed():
		return fmt.Errorf("%w\n%s", err, cp.LogTail(20))
	}
}

// copyFile writes the contents of src to dst (mode 0600), creating dst's
// directory if needed.
func copyFile(src, dst string) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return fmt.Errorf("read %s: %w", src, err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fmt.Errorf("create directory for %s: %w", dst, err)
	}
	if err := os.WriteFile(dst, data, 0o600); err != nil {
		return fmt.Errorf("write %s: %w", dst, err)
	}
	return nil
}
