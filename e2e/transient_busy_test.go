//go:build faults

package e2e

// Transient is not terminal, on the busy cluster: Pods whose status the
// test writes (kwok leaves the status of a Pod annotated
// kwok.x-k8s.io/status=custom alone), judged as --fail-when and --until
// judge them.

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-deltas/kubectl-deltas/test/controlplane"
)

// customPod creates Pod name on a simulated node with the status status
// (phase, conditions and container statuses), which kwok leaves alone.
func customPod(t *testing.T, c *cluster, ns, name string, status corev1.PodStatus) {
	t.Helper()
	pod, err := c.client.CoreV1().Pods(ns).Create(bg, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{controlplane.CustomStatusAnnotation: "custom"}},
		Spec:       corev1.PodSpec{NodeName: c.cp.Nodes()[0], Containers: []corev1.Container{{Name: "web", Image: "web:v1"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	setPodStatus(t, c, pod, status)
}

// setPodStatus writes pod's status.
func setPodStatus(t *testing.T, c *cluster, pod *corev1.Pod, status corev1.PodStatus) {
	t.Helper()
	for range 5 {
		current, err := c.client.CoreV1().Pods(pod.Namespace).Get(bg, pod.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		current.Status = status
		if _, err = c.client.CoreV1().Pods(pod.Namespace).UpdateStatus(bg, current, metav1.UpdateOptions{}); err == nil {
			return
		}
	}
	t.Fatalf("could not write the status of %s", pod.Name)
}

func waiting(reason, message string) corev1.PodStatus {
	return corev1.PodStatus{
		Phase:      corev1.PodPending,
		Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}},
		ContainerStatuses: []corev1.ContainerStatus{{Name: "web", Image: "web:v1",
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: message}}}},
	}
}

func running(ready bool, waitingReason string) corev1.PodStatus {
	st := corev1.ConditionFalse
	if ready {
		st = corev1.ConditionTrue
	}
	cs := corev1.ContainerStatus{Name: "web", Image: "web:v1", Ready: ready, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}}
	if waitingReason != "" {
		cs.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: waitingReason, Message: "back-off 10s restarting failed container"}}
		cs.RestartCount = 2
	}
	return corev1.PodStatus{
		Phase: corev1.PodRunning, PodIP: "10.64.0.9", HostIP: "10.0.0.1", StartTime: ptrTime(metav1.Now()),
		Conditions: []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}, {Type: corev1.PodInitialized, Status: corev1.ConditionTrue},
			{Type: corev1.ContainersReady, Status: st}, {Type: corev1.PodReady, Status: st},
		},
		ContainerStatuses: []corev1.ContainerStatus{cs},
	}
}

func ptrTime(t metav1.Time) *metav1.Time { return &t }

// TestBusyTransientFailures: a Pod in ErrImagePull for 5 s that then runs
// does not trip --fail-when=status=Failed; a manifest that does not exist
// trips it at once; a generic pull error trips it after --fail-after;
// --stable-for catches a Pod that is Ready and then crash-loops.
func TestBusyTransientFailures(t *testing.T) {
	c := busyCluster(t)
	ns := c.namespace(t)
	kc := c.cp.AdminKubeconfig()

	t.Run("a passing pull error", func(t *testing.T) {
		customPod(t, c, ns, "passing", waiting("ErrImagePull", "rpc error: code = Unknown desc = connection reset by peer"))
		s := startAs(t, kc, "pod/passing", "-n", ns, "--until=status=Current", "--fail-when=status=Failed", "--timeout=60s", "--health")
		s.waitFor(func(l string) bool { return l != "" }, 30*time.Second)
		time.Sleep(5 * time.Second)
		pod, err := c.client.CoreV1().Pods(ns).Get(bg, "passing", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		setPodStatus(t, c, pod, running(true, ""))
		if code := s.waitExit(30 * time.Second); code != 0 {
			t.Fatalf("exit %d, want 0 (met, not failed); stderr %q; lines %q", code, s.stderr.String(), s.seen)
		}
	})

	t.Run("an image that does not exist", func(t *testing.T) {
		customPod(t, c, ns, "missing", waiting("ErrImagePull", "failed to resolve reference \"web:v9\": manifest unknown"))
		began := time.Now()
		res := runAs(t, kc, time.Minute, "pod/missing", "-n", ns, "--fail-when=status=Failed", "--timeout=40s", "-q")
		if res.code != 2 || time.Since(began) > 20*time.Second {
			t.Errorf("exit %d after %s, want 2 at once; stderr %q", res.code, time.Since(began).Round(time.Second), res.stderr)
		}
	})

	t.Run("a pull error that lasts", func(t *testing.T) {
		customPod(t, c, ns, "lasting", waiting("ImagePullBackOff", "Back-off pulling image \"web:v1\""))
		began := time.Now()
		res := runAs(t, kc, time.Minute, "pod/lasting", "-n", ns, "--fail-when=status=Failed", "--fail-after=3s", "--timeout=40s", "-q")
		took := time.Since(began)
		if res.code != 2 || took < 3*time.Second || took > 25*time.Second {
			t.Errorf("exit %d after %s, want 2 after --fail-after's 3s; stderr %q", res.code, took.Round(100*time.Millisecond), res.stderr)
		}
	})

	t.Run("stable for", func(t *testing.T) {
		customPod(t, c, ns, "blink", running(true, ""))
		s := startAs(t, kc, "pod/blink", "-n", ns, "--until=status=Current", "--stable-for=8s", "--fail-when=status=Failed", "--timeout=60s")
		s.waitFor(func(l string) bool { return l != "" }, 30*time.Second)
		time.Sleep(time.Second)
		pod, err := c.client.CoreV1().Pods(ns).Get(bg, "blink", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		setPodStatus(t, c, pod, running(false, "CrashLoopBackOff"))
		if code := s.waitExit(30 * time.Second); code != 2 {
			t.Fatalf("exit %d, want 2: Current for a second, then crash-looping; stderr %q", code, s.stderr.String())
		}
		// Without --stable-for it passed at once.
		res := runAs(t, kc, time.Minute, "pod/passing", "-n", ns, "--until=status=Current", "--timeout=30s", "-q")
		if res.code != 0 {
			t.Errorf("a Ready Pod without --stable-for: exit %d", res.code)
		}
	})

	t.Run("each change of the verdict is a record", func(t *testing.T) {
		customPod(t, c, ns, "flaky", waiting("ErrImagePull", "rpc error: code = Unknown desc = connection reset by peer"))
		s := startAs(t, kc, "pod/flaky", "-n", ns, "--until=status=Current", "--timeout=60s", "--health", "-o", "json")
		verdictLine := func(status string) func(string) bool {
			return func(l string) bool {
				return strings.Contains(l, `"type":"Verdict","time"`) && strings.Contains(l, `"outcome":"Pending","status":"`+status+`"`)
			}
		}
		if !s.waitFor(verdictLine("InProgress"), 30*time.Second) {
			t.Fatalf("no Pending Verdict record with status InProgress; lines %q", s.seen)
		}
		pod, err := c.client.CoreV1().Pods(ns).Get(bg, "flaky", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		setPodStatus(t, c, pod, running(false, "CrashLoopBackOff"))
		if !s.waitFor(verdictLine("Failed"), 30*time.Second) {
			t.Fatalf("no Pending Verdict record with status Failed; lines %q", s.seen)
		}
		var v struct {
			Objects []struct {
				Name      string
				Container string
				Health    struct{ Status, Reason string }
			}
		}
		if err := json.Unmarshal([]byte(s.seen[len(s.seen)-1]), &v); err != nil || len(v.Objects) != 1 ||
			v.Objects[0].Name != "flaky" || v.Objects[0].Container != "web" || v.Objects[0].Health.Reason != "ContainerCrashLooping" {
			t.Fatalf("the Failed record must name the Pod, its container and reason: %v %q", err, s.seen[len(s.seen)-1])
		}
		setPodStatus(t, c, pod, running(true, ""))
		if !s.waitFor(func(l string) bool { return strings.Contains(l, `"outcome":"Met"`) }, 30*time.Second) {
			t.Fatalf("no Met Verdict; lines %q", s.seen)
		}
		if code := s.waitExit(30 * time.Second); code != 0 {
			t.Fatalf("exit %d, want 0; stderr %q", code, s.stderr.String())
		}
		for _, l := range s.seen {
			if strings.Contains(l, `"status":"Current"`) && strings.Contains(l, `"outcome":"Pending"`) {
				t.Errorf("the change that ends the run is its outcome, not a Pending record: %q", l)
			}
		}
	})

	t.Run("a scale-up keeps an unschedulable Pod waiting", func(t *testing.T) {
		unschedulable := corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{
			Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable, Message: "0/3 nodes are available"}}}
		customPod(t, c, ns, "scaling", unschedulable)
		pod, err := c.client.CoreV1().Pods(ns).Get(bg, "scaling", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// What the scheduler, then the cluster autoscaler, say of it.
		event := func(reason, typ string, at time.Time) {
			t.Helper()
			ev := &corev1.Event{
				ObjectMeta:     metav1.ObjectMeta{GenerateName: "scaling.", Namespace: ns},
				InvolvedObject: corev1.ObjectReference{APIVersion: "v1", Kind: "Pod", Namespace: ns, Name: "scaling", UID: pod.UID},
				Reason:         reason, Type: typ, Message: reason + " for the test", Count: 1,
				FirstTimestamp: metav1.NewTime(at), LastTimestamp: metav1.NewTime(at), Source: corev1.EventSource{Component: "e2e"},
			}
			if _, err := c.client.CoreV1().Events(ns).Create(bg, ev, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		event("FailedScheduling", corev1.EventTypeWarning, time.Now())
		event("TriggeredScaleUp", corev1.EventTypeNormal, time.Now().Add(time.Second))
		// Past kstatus' 15 s window the Pod would be Failed; the scale-up,
		// newer than the FailedScheduling, keeps it InProgress for the 30 s
		// --fail-after.
		res := runAs(t, kc, time.Minute, "pod/scaling", "-n", ns, "--events", "--until=status=Current", "--fail-when=status=Failed",
			"--timeout=20s", "--health", "-o", "json")
		lines := strings.Split(strings.TrimSpace(res.stdout), "\n")
		last := lines[len(lines)-1]
		if res.code != 1 || !strings.Contains(last, `"outcome":"TimedOut"`) || !strings.Contains(last, `"reason":"TriggeredScaleUp"`) {
			t.Fatalf("exit %d, want 1 (timed out waiting, not failed), its verdict naming the scale-up; last line %q; stderr %q", res.code, last, res.stderr)
		}
		// Without the Events it is Failed once the window passed.
		res = runAs(t, kc, time.Minute, "pod/scaling", "-n", ns, "--fail-when=status=Failed", "--timeout=30s", "-q")
		if res.code != 2 || !strings.Contains(res.stderr, "PodUnschedulable") {
			t.Fatalf("without --events: exit %d, want 2 (PodUnschedulable); stderr %q", res.code, res.stderr)
		}
		// With a dwell the scale-up outlived, Failed too.
		res = runAs(t, kc, time.Minute, "pod/scaling", "-n", ns, "--events", "--fail-when=status=Failed", "--fail-after=1s", "--timeout=30s", "-q")
		if res.code != 2 || !strings.Contains(res.stderr, "has not brought a node") {
			t.Fatalf("a scale-up older than --fail-after: exit %d, want 2; stderr %q", res.code, res.stderr)
		}
	})
}
