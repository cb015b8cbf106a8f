// Command demo is `make demo`: it starts a local control plane, runs
// `kubectl deltas configmaps -n demo` against it, and lets a scripted
// writer create, update and delete ConfigMaps so the stream shows every
// delta type. Everything is stopped and removed at the end.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-deltas/kubectl-deltas/internal/controlplane"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
		os.Exit(1)
	}
}

func run() error {
	step := flag.Duration("step", 1500*time.Millisecond, "pause between the writer's changes")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	say("starting a local control plane (kube-apiserver + etcd on 127.0.0.1)…")
	cp, err := controlplane.Start(ctx, controlplane.Options{})
	if err != nil {
		return err
	}
	defer cp.Stop()

	config, err := clientcmd.BuildConfigFromFlags("", cp.AdminKubeconfig())
	if err != nil {
		return err
	}
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		return err
	}
	cms := client.CoreV1().ConfigMaps("demo")
	if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "demo"}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	if _, err := cms.Create(ctx, configMap("settings", "color", "blue"), metav1.CreateOptions{}); err != nil {
		return err
	}

	root, err := controlplane.FindRepoRoot(".")
	if err != nil {
		return err
	}
	plugin := filepath.Join(root, "bin", "kubectl-deltas")
	args := []string{"configmaps", "-n", "demo", "--kubeconfig", cp.AdminKubeconfig()}
	say("running: kubectl deltas configmaps -n demo")
	say("(stdout below is the plugin's; lines starting with » are the writer's, on stderr)")
	cmd := exec.CommandContext(ctx, plugin, args...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w (run \"make build\" first)", plugin, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	changes := []struct {
		say string
		do  func() error
	}{
		{"create ConfigMap demo", func() error {
			_, err := cms.Create(ctx, configMap("demo", "greeting", "hello"), metav1.CreateOptions{})
			return err
		}},
		{"update demo: greeting=hello, world", func() error { return update(ctx, client, "demo", "greeting", "hello, world") }},
		{"update demo: add key farewell", func() error { return update(ctx, client, "demo", "farewell", "bye") }},
		{"delete ConfigMap demo", func() error { return cms.Delete(ctx, "demo", metav1.DeleteOptions{}) }},
		{"update settings: color=green", func() error { return update(ctx, client, "settings", "color", "green") }},
	}
	for _, c := range changes {
		if err := pause(ctx, exited, *step); err != nil {
			return err
		}
		say(c.say)
		if err := c.do(); err != nil {
			return err
		}
	}
	if err := pause(ctx, exited, *step); err != nil {
		return err
	}
	say("done; stopping kubectl deltas and the control plane")
	_ = cmd.Process.Signal(os.Interrupt)
	if err := <-exited; err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 130 {
			return fmt.Errorf("kubectl deltas: %w", err)
		}
	}
	return nil
}

func say(msg string) { fmt.Fprintf(os.Stderr, "» %s\n", msg) }

// pause waits d, failing early if the plugin exited or the user pressed
// Ctrl-C.
func pause(ctx context.Context, exited <-chan error, d time.Duration) error {
	select {
	case <-time.After(d):
		return nil
	case err := <-exited:
		return fmt.Errorf("kubectl deltas exited early: %v", err)
	case <-ctx.Done():
		return ctx.Err()
	}
}

func configMap(name, key, value string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{key: value}}
}

func update(ctx context.Context, client kubernetes.Interface, name, key, value string) error {
	cms := client.CoreV1().ConfigMaps("demo")
	cm, err := cms.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
	cm.Data[key] = value
	_, err = cms.Update(ctx, cm, metav1.UpdateOptions{FieldManager: "demo-writer"})
	return err
}
