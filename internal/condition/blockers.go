package condition

import (
	"context"
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/kubectl-deltas/kubectl-deltas/internal/health"
	"github.com/kubectl-deltas/kubectl-deltas/internal/printer"
	"github.com/kubectl-deltas/kubectl-deltas/internal/rawobj"
	"github.com/kubectl-deltas/kubectl-deltas/internal/textsafe"
)

// workloads are the kinds whose Pods blockers looks up: those that select
// their Pods by a label selector in spec.selector.
var workloads = map[string]bool{
	"apps/v1/Deployment": true, "apps/v1/ReplicaSet": true, "apps/v1/StatefulSet": true,
	"apps/v1/DaemonSet": true, "batch/v1/Job": true,
}

// maxBlockerPods bounds the one list of a workload's Pods.
const maxBlockerPods = 100

// blockers looks up, below h, a workload that did not meet a condition,
// what blocks it when the stream did not watch it (no --tree): its Pods
// (by its selector, one list) that are not Current, judged by judge at
// the time of the look-up, each with its owner path from h; at most
// limit of them.
func blockers(ctx context.Context, client rest.Interface, h *Held, judge *health.Judge, limit int) ([]Held, error) {
	if h.obj == nil || !workloads[h.APIVersion+"/"+h.Kind] || limit <= 0 {
		return nil, nil
	}
	raw, err := h.obj.Member("spec")
	if err != nil || raw == nil {
		return nil, err
	}
	var spec struct {
		Selector *metav1.LabelSelector `json:"selector"`
	}
	if err := json.Unmarshal(raw, &spec); err != nil || spec.Selector == nil {
		return nil, err
	}
	selector, err := metav1.LabelSelectorAsSelector(spec.Selector)
	if err != nil || selector.Empty() {
		return nil, err
	}
	body, err := client.Get().AbsPath("/api/v1/namespaces", h.Namespace, "pods").
		Param("labelSelector", selector.String()).Param("limit", fmt.Sprint(maxBlockerPods)).Do(ctx).Raw()
	if err != nil {
		return nil, fmt.Errorf("listing the Pods of %s: %w", h.Name, err)
	}
	list, err := rawobj.ParseList(body, rawobj.ParseOptions{})
	if err != nil {
		return nil, fmt.Errorf("reading the Pods of %s: %w", h.Name, err)
	}
	var out []Held
	for _, pod := range list.Items {
		if len(out) == limit {
			break
		}
		pod.APIVersion, pod.Kind = "v1", "Pod"
		v := judge.Of(pod)
		if v.Status == health.Current {
			continue
		}
		b := Held{
			Name: "pod/" + pod.Name, Context: h.Context, Namespace: pod.Namespace, UID: pod.UID, obj: pod,
			APIVersion: "v1", Kind: "Pod", ObjectName: pod.Name, Verdict: &v, Health: healthText(v),
			Path: []printer.Owner{{APIVersion: h.APIVersion, Kind: h.Kind, Name: h.ObjectName, UID: h.UID}},
		}
		if r, err := pod.Controller(); err == nil && r != nil && string(r.UID) != h.UID {
			b.Path = append(b.Path, printer.Owner{APIVersion: r.APIVersion, Kind: r.Kind, Name: r.Name, UID: string(r.UID)})
		}
		out = append(out, b)
	}
	return out, nil
}

// healthText is a verdict as messages say it: "Failed (PodUnschedulable):
// Pod could not be scheduled", "Current (no status): …".
func healthText(v health.Health) string {
	msg := textsafe.String(v.Message)
	switch {
	case v.Reason != "":
		return fmt.Sprintf("%s (%s): %s", v.Status, textsafe.String(v.Reason), msg)
	case v.Source == health.SourceNone:
		// Current because nothing says otherwise, which is not done.
		return fmt.Sprintf("%s (no status): %s", v.Status, msg)
	}
	return fmt.Sprintf("%s: %s", v.Status, msg)
}
