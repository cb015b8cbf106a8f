//go:build faults

package e2e

import (
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-deltas/kubectl-deltas/test/otelcol"
)

// spansOf returns the wait's span and its children, failing unless there
// is exactly one wait in spans.
func spansOf(t *testing.T, spans []otelcol.ReceivedSpan) (wait otelcol.ReceivedSpan, children []otelcol.ReceivedSpan) {
	t.Helper()
	var waits []otelcol.ReceivedSpan
	for _, s := range spans {
		if s.Name == "kubectl deltas wait" {
			waits = append(waits, s)
		}
	}
	if len(waits) != 1 {
		t.Fatalf("%d wait spans, want 1: %+v", len(waits), spans)
	}
	wait = waits[0]
	for _, s := range spans {
		if s.SpanID == wait.SpanID {
			continue
		}
		if s.TraceID != wait.TraceID || s.ParentSpanID != wait.SpanID {
			t.Errorf("span %q is not a child of the wait: %+v", s.Name, s)
		}
		if s.StartTimeUnixNano < wait.StartTimeUnixNano || s.EndTimeUnixNano > wait.EndTimeUnixNano || s.EndTimeUnixNano < s.StartTimeUnixNano {
			t.Errorf("span %q from %d to %d, outside the wait's %d to %d", s.Name, s.StartTimeUnixNano, s.EndTimeUnixNano, wait.StartTimeUnixNano, wait.EndTimeUnixNano)
		}
		children = append(children, s)
	}
	return wait, children
}

// TestBusyOTLPRolloutTrace: a rollout waited on with --otlp is a trace —
// the wait's span, OK when it is met, and a span per object for the time
// it was not Current, with the Events about it; a rollout that fails is a
// wait span in Error naming the blocker, its Pod's span in Error with the
// Warning as an event. The records of the wait belong to its trace.
func TestBusyOTLPRolloutTrace(t *testing.T) {
	c := busyCluster(t)
	kc := c.cp.AdminKubeconfig()
	col := startCollector(t)

	r := &rollout{t: t, c: c, ns: c.namespace(t), minReadySeconds: 1}
	r.create(2, "web:v1")
	res := runAs(t, kc, 2*time.Minute, "deploy/web", "-n", r.ns, "--tree", "--events", "--until=status=Current", "--timeout=100s", "-q", "--otlp="+col.URL())
	if res.code != 0 || res.stdout != "" {
		t.Fatalf("the rollout: exit %d, stdout %q, stderr %q", res.code, res.stdout, res.stderr)
	}
	spans := col.waitSpans(t, 2, 30*time.Second)
	wait, children := spansOf(t, spans)
	if wait.StatusCode != 1 || wait.Attributes["deltas.wait.outcome"] != "Met" {
		t.Errorf("the wait's span: status %d %q, attributes %v; want OK, Met", wait.StatusCode, wait.StatusMessage, wait.Attributes)
	}
	kinds := map[string]int{}
	events := 0
	for _, s := range children {
		kinds[s.Attributes["k8s.object.kind"].(string)]++
		if s.StatusCode != 1 {
			t.Errorf("span %q ended %d %q, want OK: it became Current", s.Name, s.StatusCode, s.StatusMessage)
		}
		events += len(s.Events)
	}
	// kwok's Pods are Ready at once, often before --tree sees them: the
	// Deployment and its ReplicaSet wait for minReadySeconds.
	if kinds["Deployment"] != 1 || kinds["ReplicaSet"] != 1 {
		t.Errorf("object spans by kind %v, want the Deployment's and the ReplicaSet's", kinds)
	}
	if events += len(wait.Events); events == 0 {
		t.Errorf("no span has an Event: %+v %+v", wait, children)
	}
	logs := col.waitLogs(t, 1, 30*time.Second)
	inTrace := 0
	for _, l := range logs {
		if l.TraceID == wait.TraceID {
			inTrace++
		}
	}
	if inTrace != len(logs) {
		t.Errorf("%d of %d log records belong to the wait's trace", inTrace, len(logs))
	}

	failing := startCollector(t)
	ns := c.namespace(t)
	createBroken(t, c, ns, "stuck", nil, map[string]string{"disk": "none"})
	res = runAs(t, kc, 2*time.Minute, "deploy/stuck", "-n", ns, "--tree", "--events", "--until=status=Current", "--fail-when=status=Failed", "--timeout=90s", "-q", "--otlp="+failing.URL())
	if res.code != 2 {
		t.Fatalf("the stuck rollout: exit %d, stderr %q", res.code, res.stderr)
	}
	wait, children = spansOf(t, failing.waitSpans(t, 2, 30*time.Second))
	if wait.StatusCode != 2 || !strings.Contains(wait.StatusMessage, "Pod stuck-") || !strings.Contains(wait.StatusMessage, "PodUnschedulable") {
		t.Errorf("the failed wait's span: status %d %q, want Error naming the Pod and why", wait.StatusCode, wait.StatusMessage)
	}
	var pod *otelcol.ReceivedSpan
	for i, s := range children {
		if s.Attributes["k8s.object.kind"] == "Pod" {
			pod = &children[i]
		}
	}
	if pod == nil {
		t.Fatalf("no Pod span: %+v", children)
	}
	warned := false
	for _, e := range pod.Events {
		warned = warned || e.Name == "FailedScheduling"
	}
	if pod.StatusCode != 2 || !strings.Contains(pod.StatusMessage, "PodUnschedulable") || !warned {
		t.Errorf("the Pod's span: status %d %q, events %+v; want Error, PodUnschedulable, a FailedScheduling event", pod.StatusCode, pod.StatusMessage, pod.Events)
	}
	var severities []string
	for _, l := range failing.waitLogs(t, 1, 30*time.Second) {
		if strings.HasPrefix(l.EventName, "k8s.event.") || l.EventName == "k8s.wait.verdict" {
			severities = append(severities, l.EventName+"="+l.SeverityText)
		}
	}
	joined := strings.Join(severities, " ")
	if !strings.Contains(joined, "=WARN") || !strings.Contains(joined, "k8s.wait.verdict=ERROR") {
		t.Errorf("severities %v: want a WARN Event and an ERROR Verdict", severities)
	}
	noFailure(t, c)
}

// TestFaultLiveAndOTLP: --live --otlp draws the view and exports the
// stream: what the view shows arrives at the collector.
func TestFaultLiveAndOTLP(t *testing.T) {
	t.Parallel()
	c := sharedCluster()
	ns := c.namespace(t)
	col := startCollector(t)
	live := startLive(t, c.cp.AdminKubeconfig(), 100, 20, "configmaps", "-n", ns, "--live", "--otlp="+col.URL())
	for _, name := range []string{"one", "two", "three"} {
		_, err := c.client.CoreV1().ConfigMaps(ns).Create(bg, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
		must(t, err)
	}
	live.waitFrame("with the three ConfigMaps", 30*time.Second, func(lines []string) bool {
		return rowOf(lines, "configmap/one") != "" && rowOf(lines, "configmap/two") != "" && rowOf(lines, "configmap/three") != ""
	})
	logs := col.waitLogs(t, 3, 30*time.Second)
	names := map[string]bool{}
	for _, l := range logs {
		if l.EventName != "k8s.object.added" && l.EventName != "k8s.object.replaced" { // made before or after the list
			t.Errorf("exported %s, want k8s.object.added or .replaced", l.EventName)
		}
		names[l.Resource["k8s.object.name"].(string)] = true
	}
	if len(logs) != 3 || !names["one"] || !names["two"] || !names["three"] {
		t.Errorf("exported %d records of %v, want the three ConfigMaps once", len(logs), names)
	}
	_ = syscall.Kill(-live.cmd.Process.Pid, syscall.SIGINT)
	if code := live.waitExit(30 * time.Second); code != 130 {
		t.Errorf("exit %d after Ctrl-C, want 130; stderr: %s", code, live.stderr.String())
	}
}
