// Command demo is `make demo`: it starts a busy cluster in a box (etcd,
// kube-apiserver, kube-controller-manager, kube-scheduler and kwok with
// simulated nodes, all on 127.0.0.1), runs
//
//	kubectl deltas deployment/web --tree -n demo --diff
//
// against it, and lets a writer create a Deployment, roll it to a new image,
// scale it and delete it. The writer only touches the Deployment: every
// ReplicaSet and Pod line comes from the controllers, the scheduler and the
// simulated kubelets. The writer's steps go to stderr, prefixed with "»".
// Everything is stopped and removed at the end, also on Ctrl-C.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	"github.com/kubectl-deltas/kubectl-deltas/test/controlplane"
)

const (
	namespace  = "demo"
	deployment = "web"
	// exitInterrupted is the exit code after Ctrl-C, as the plugin's.
	exitInterrupted = 130
)

func main() {
	o := &options{stdout: os.Stdout, stderr: os.Stderr}
	fs := flag.NewFlagSet("demo", flag.ExitOnError)
	o.addFlags(fs)
	_ = fs.Parse(os.Args[1:]) // ExitOnError: Parse exits on bad flags
	os.Exit(o.main())
}

// options configures the demo.
type options struct {
	// beat is the pause after each step has settled, for the reader.
	beat time.Duration
	// nodes is the number of simulated nodes.
	nodes int
	// stepTimeout bounds the wait for each step's outcome.
	stepTimeout time.Duration
	// diff adds --diff to the plugin's command line.
	diff bool

	stdout, stderr io.Writer

	// Set by complete.
	binDir string
}

func (o *options) addFlags(fs *flag.FlagSet) {
	fs.DurationVar(&o.beat, "beat", 1500*time.Millisecond, "pause after each step has settled, to read the output")
	fs.IntVar(&o.nodes, "nodes", 3, "number of simulated nodes")
	fs.DurationVar(&o.stepTimeout, "step-timeout", time.Minute, "how long each step may take to settle")
	fs.BoolVar(&o.diff, "diff", true, "run the plugin with --diff")
}

// main runs the demo and returns the exit code: 0, 1 on an error, 130
// after Ctrl-C.
func (o *options) main() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := o.complete()
	if err == nil {
		err = o.validate()
	}
	if err == nil {
		err = o.run(ctx)
	}
	switch {
	case err == nil:
		return 0
	case ctx.Err() != nil:
		o.say("interrupted; everything is stopped")
		return exitInterrupted
	default:
		fmt.Fprintf(o.stderr, "error: %v\n", err)
		return 1
	}
}

func (o *options) complete() error {
	root, err := controlplane.FindRepoRoot(".")
	if err != nil {
		return fmt.Errorf("run the demo from the repository (make demo): %w", err)
	}
	o.binDir = filepath.Join(root, "bin")
	return nil
}

func (o *options) validate() error {
	if o.nodes < 1 {
		return fmt.Errorf("-nodes %d: the Pods need at least one node", o.nodes)
	}
	if o.beat < 0 || o.stepTimeout <= 0 {
		return errors.New("-beat must not be negative and -step-timeout must be positive")
	}
	if err := controlplane.Check(controlplane.Options{BinDir: o.binDir, Nodes: o.nodes}); err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(o.binDir, "kubectl-deltas")); err != nil {
		return fmt.Errorf("kubectl-deltas not found in %s: run \"make build\" first", o.binDir)
	}
	return nil
}

func (o *options) run(ctx context.Context) error {
	began := time.Now()
	o.say("starting a cluster in a box on 127.0.0.1: etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok with %d simulated nodes…", o.nodes)
	cp, err := controlplane.Start(ctx, controlplane.Options{BinDir: o.binDir, Nodes: o.nodes})
	if err != nil {
		return err
	}
	defer cp.Stop()
	o.say("cluster ready in %s", time.Since(began).Round(100*time.Millisecond))

	config, err := clientcmd.BuildConfigFromFlags("", cp.AdminKubeconfig())
	if err != nil {
		return fmt.Errorf("load the admin kubeconfig: %w", err)
	}
	w := &writer{client: kubernetes.NewForConfigOrDie(config), timeout: o.stepTimeout}
	if _, err := w.client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create namespace %s: %w", namespace, err)
	}

	// The Deployment and what it owns, transitively: its ReplicaSets and
	// their Pods, each with its owner path. web does not exist yet: the
	// stream waits for it.
	// The page of it all, to open once the demo is done (--timeline).
	page := filepath.Join(o.binDir, "demo-timeline.html")
	args := []string{"deltas", "deployment/" + deployment, "--tree", "-n", namespace, "--timeline=" + page}
	if o.diff {
		// What changed, and who changed it; status writes (the counts the
		// controllers report, Pods turning Running) are left out to keep
		// the story short.
		args = append(args, "--diff", "--changed-only", "--status=false")
	}
	plugin, err := o.startPlugin(cp, args)
	if err != nil {
		return err
	}
	// On an error path the plugin is stopped here; its exit status then
	// adds nothing to the error being returned.
	defer func() { _ = plugin.stop() }()
	o.say("running: kubectl %s", strings.Join(args, " "))
	o.say("(stdout below is the plugin's; lines starting with » are the writer's, on stderr)")
	if err := plugin.pause(ctx, o.beat); err != nil {
		return err
	}

	steps := []struct {
		say string
		do  func(ctx context.Context) error
	}{
		{"create Deployment web, 2 replicas of nginx:1.27: its controller makes a ReplicaSet, which makes Pods; the scheduler puts them on nodes",
			func(ctx context.Context) error { return w.create(ctx, "nginx:1.27", 2) }},
		{"roll web to nginx:1.28: a new ReplicaSet scales up as the old one scales down, Pod by Pod",
			func(ctx context.Context) error { return w.setImage(ctx, "nginx:1.28") }},
		{"scale web to 4", func(ctx context.Context) error { return w.scale(ctx, 4) }},
		{"delete Deployment web: the garbage collector deletes its ReplicaSets, then their Pods", w.remove},
	}
	for _, s := range steps {
		o.say("%s", s.say)
		if err := s.do(ctx); err != nil {
			return err
		}
		if err := plugin.pause(ctx, o.beat); err != nil {
			return err
		}
	}
	o.say("done in %s; stopping kubectl deltas and the cluster", time.Since(began).Round(100*time.Millisecond))
	if err := plugin.stop(); err != nil {
		return err
	}
	o.say("the timeline of what you just saw, to open in a browser: %s", page)
	return nil
}

func (o *options) say(format string, args ...any) {
	fmt.Fprintf(o.stderr, "» "+format+"\n", args...)
}

// plugin is the running `kubectl deltas`.
type plugin struct {
	cmd    *exec.Cmd
	exited chan struct{}
	err    error
}

// startPlugin runs bin/kubectl with args, bin/ first on PATH so that kubectl
// finds the plugin there, as a user's kubectl would.
func (o *options) startPlugin(cp *controlplane.ControlPlane, args []string) (*plugin, error) {
	cmd := exec.Command(filepath.Join(o.binDir, "kubectl"), args...)
	cmd.Env = append(os.Environ(),
		"PATH="+o.binDir+string(os.PathListSeparator)+os.Getenv("PATH"),
		"KUBECONFIG="+cp.AdminKubeconfig(),
		// kubectl's discovery cache goes into the cluster's work directory,
		// removed with it.
		"HOME="+cp.Dir(),
	)
	cmd.Stdout, cmd.Stderr = o.stdout, o.stderr
	// Nothing outlives the demo, even when it is killed.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start kubectl deltas: %w", err)
	}
	p := &plugin{cmd: cmd, exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// pause waits d, failing early if the plugin exited or the user pressed
// Ctrl-C.
func (p *plugin) pause(ctx context.Context, d time.Duration) error {
	select {
	case <-time.After(d):
		return nil
	case <-p.exited:
		return fmt.Errorf("kubectl deltas exited early: %v", p.err)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// stop interrupts the plugin as Ctrl-C would and waits for it; exit code
// 130 is its normal answer to that. It is idempotent.
func (p *plugin) stop() error {
	select {
	case <-p.exited:
	default:
		_ = p.cmd.Process.Signal(os.Interrupt)
		select {
		case <-p.exited:
		case <-time.After(10 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.exited
			return errors.New("kubectl deltas did not exit within 10s of SIGINT")
		}
	}
	var exit *exec.ExitError
	if p.err != nil && (!errors.As(p.err, &exit) || exit.ExitCode() != exitInterrupted) {
		return fmt.Errorf("kubectl deltas: %w", p.err)
	}
	return nil
}

// writer changes the Deployment and waits for the cluster to settle after
// each change.
type writer struct {
	client  kubernetes.Interface
	timeout time.Duration
}

func (w *writer) create(ctx context.Context, image string, replicas int32) error {
	labels := map[string]string{"app": deployment}
	_, err := w.client.AppsV1().Deployments(namespace).Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: deployment},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: image}}},
			},
		},
	}, metav1.CreateOptions{FieldManager: "demo-writer"})
	if err != nil {
		return fmt.Errorf("create deployment %s: %w", deployment, err)
	}
	return w.rolledOut(ctx)
}

func (w *writer) setImage(ctx context.Context, image string) error {
	patch := fmt.Sprintf(`{"spec":{"template":{"spec":{"containers":[{"name":"nginx","image":%q}]}}}}`, image)
	return w.patch(ctx, patch)
}

func (w *writer) scale(ctx context.Context, replicas int32) error {
	return w.patch(ctx, fmt.Sprintf(`{"spec":{"replicas":%d}}`, replicas))
}

func (w *writer) patch(ctx context.Context, patch string) error {
	_, err := w.client.AppsV1().Deployments(namespace).Patch(ctx, deployment, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: "demo-writer"})
	if err != nil {
		return fmt.Errorf("patch deployment %s: %w", deployment, err)
	}
	return w.rolledOut(ctx)
}

func (w *writer) remove(ctx context.Context) error {
	if err := w.client.AppsV1().Deployments(namespace).Delete(ctx, deployment, metav1.DeleteOptions{}); err != nil {
		return fmt.Errorf("delete deployment %s: %w", deployment, err)
	}
	return w.until(ctx, "deployment web and everything it owned are gone", func(ctx context.Context) (bool, error) {
		if _, err := w.client.AppsV1().Deployments(namespace).Get(ctx, deployment, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return false, err // nil while it still exists
		}
		rs, err := w.client.AppsV1().ReplicaSets(namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		pods, err := w.client.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		return len(rs.Items) == 0 && len(pods.Items) == 0, nil
	})
}

// rolledOut waits until the Deployment's controller has acted on its latest
// spec and exactly the wanted number of up-to-date Pods run, as `kubectl
// rollout status` does, and no Pod of an old ReplicaSet is left.
func (w *writer) rolledOut(ctx context.Context) error {
	return w.until(ctx, "deployment web rolled out", func(ctx context.Context) (bool, error) {
		d, err := w.client.AppsV1().Deployments(namespace).Get(ctx, deployment, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		want := ptr.Deref(d.Spec.Replicas, 1)
		s := d.Status
		if s.ObservedGeneration < d.Generation || s.UpdatedReplicas != want || s.AvailableReplicas != want || s.Replicas != want {
			return false, nil
		}
		pods, err := w.client.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		running := 0
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
				running++
			}
		}
		return running == int(want) && len(pods.Items) == int(want), nil
	})
}

// until polls cond until it holds, for at most w.timeout.
func (w *writer) until(ctx context.Context, what string, cond func(context.Context) (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, w.timeout)
	defer cancel()
	var lastErr error
	for {
		ok, err := cond(ctx)
		if ok {
			return nil
		}
		if err != nil {
			lastErr = err
		}
		select {
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return fmt.Errorf("waiting for %s: not within %s (last error: %v)", what, w.timeout, lastErr)
			}
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}
