// Package health judges an object: one status for any resource, as
// kstatus (sigs.k8s.io/cli-utils/pkg/kstatus/status) computes it, with the
// rules rollout trackers add where kstatus is silent — a Pod whose
// container cannot start for its image or its configuration, or whose init
// container crash-loops, is Failed.
package health

import (
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/kubectl-deltas/kubectl-deltas/internal/rawobj"
)

// Status is kstatus' verdict on an object.
type Status string

// The statuses, as kstatus names them.
const (
	// Current: the object is as its spec asks (a Deployment rolled out, a
	// Pod running and ready, a kind without rules that says nothing
	// against it).
	Current Status = "Current"
	// InProgress: getting there (replicas not yet updated or ready, a Pod
	// pending, a Ready condition not yet true).
	InProgress Status = "InProgress"
	// Failed: it will not get there without a change (a Deployment past
	// its progress deadline, a crash-looping or unschedulable Pod, a
	// Stalled condition, and this package's Pod rules).
	Failed Status = "Failed"
	// Terminating: it is being deleted (deletionTimestamp set).
	Terminating Status = "Terminating"
	// Unknown: its status cannot be read (malformed fields).
	Unknown Status = "Unknown"
	// NotFound: it does not exist (deleted).
	NotFound Status = "NotFound"
)

// Statuses lists every status, for help and errors.
func Statuses() []Status {
	return []Status{Current, InProgress, Failed, Terminating, Unknown, NotFound}
}

// ParseStatus reads a status name, case-insensitively.
func ParseStatus(s string) (Status, error) {
	names := make([]string, 0, len(Statuses()))
	for _, st := range Statuses() {
		if strings.EqualFold(s, string(st)) {
			return st, nil
		}
		names = append(names, string(st))
	}
	return "", fmt.Errorf("one of %s", strings.Join(names, ", "))
}

// Health is a verdict on one object.
type Health struct {
	Status Status
	// Reason is a CamelCase reason when the verdict has one
	// ("ImagePullBackOff", "PodUnschedulable"), else "".
	Reason string
	// Message says why, for people ("Deployment is available. Replicas:
	// 3").
	Message string
	// RecheckAt, when not zero, is when the verdict on this same object
	// may change although the object does not: kstatus gives a Pod
	// ScheduleWindow to be scheduled before it calls it Failed.
	RecheckAt time.Time
}

// Gone is the verdict on an object that does not exist.
func Gone() Health {
	return Health{Status: NotFound, Message: "Resource does not exist"}
}

// Of judges o now (see At).
func Of(o *rawobj.Object) Health { return At(o, time.Now()) }

// At judges o at time now; nil is an object that does not exist. A verdict
// is always returned: what cannot be read is Unknown, with the reason in
// Message.
//
// Only a Pod's verdict depends on the time: kstatus calls an unschedulable
// Pod Failed once ScheduleWindow has passed since its creation, reading the
// wall clock; At applies that rule at now instead, so that whoever
// re-judges at RecheckAt sees the change.
//
// kstatus reads an object's metadata, status and, for some kinds, spec. o
// comes with its metadata parsed; of the rest only status and spec are
// decoded, and a Pod's spec, the bulk of it, is not: no rule reads it.
func At(o *rawobj.Object, now time.Time) Health {
	if o == nil {
		return Gone()
	}
	pod := o.Kind == "Pod" && o.APIVersion == "v1"
	names := []string{"status", "spec"}
	if pod {
		names = names[:1]
	}
	raw, err := o.Members(names...)
	if err != nil {
		return unknown(err)
	}
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": o.APIVersion, "kind": o.Kind, "metadata": metadata(o)}}
	for i, name := range names {
		if raw[i] == nil {
			continue
		}
		v, err := rawobj.DecodeValue(raw[i])
		if err != nil {
			return unknown(fmt.Errorf("%s: %w", name, err))
		}
		u.Object[name] = v
	}
	res, err := status.Compute(u)
	if err != nil {
		return unknown(err)
	}
	h := Health{Status: Status(res.Status), Message: res.Message}
	for _, c := range res.Conditions {
		if c.Status == "True" && (c.Type == status.ConditionReconciling || c.Type == status.ConditionStalled) {
			h.Reason = c.Reason
		}
	}
	if pod {
		h = scheduleWindow(h, u.GetCreationTimestamp().Add(status.ScheduleWindow), now)
	}
	if pod && h.Status == InProgress {
		h = podRules(u.Object, h)
	}
	return h
}

// scheduleWindow applies kstatus' rule for an unschedulable Pod at now:
// in progress ("PodNotScheduled") until end, failed ("PodUnschedulable")
// from then on, in kstatus' words.
func scheduleWindow(h Health, end, now time.Time) Health {
	if h.Reason != "PodNotScheduled" && h.Reason != "PodUnschedulable" {
		return h
	}
	if now.Before(end) {
		return Health{Status: InProgress, Reason: "PodNotScheduled", Message: "Pod has not been scheduled", RecheckAt: end}
	}
	return Health{Status: Failed, Reason: "PodUnschedulable", Message: "Pod could not be scheduled"}
}

// metadata is the part of o's metadata that kstatus reads, as unstructured
// content: a generation of 0 is none (the API server starts at 1).
func metadata(o *rawobj.Object) map[string]any {
	m := map[string]any{"name": o.Name}
	if o.Namespace != "" {
		m["namespace"] = o.Namespace
	}
	if o.Generation != 0 {
		m["generation"] = o.Generation
	}
	if o.CreationTimestamp != "" {
		m["creationTimestamp"] = o.CreationTimestamp
	}
	if o.DeletionTimestamp != "" {
		m["deletionTimestamp"] = o.DeletionTimestamp
	}
	return m
}

// unknown is the verdict on an object whose status cannot be read.
func unknown(err error) Health {
	return Health{Status: Unknown, Reason: "StatusUnreadable", Message: "status cannot be read: " + err.Error()}
}

// failingWait reports whether a container waiting for reason will not
// start without a change to the Pod or its surroundings, which kstatus
// leaves "Pod is in the Pending phase".
func failingWait(reason string) bool {
	switch reason {
	case "ErrImagePull", "ImagePullBackOff", "ErrImageNeverPull", "InvalidImageName",
		"CreateContainerConfigError", "CreateContainerError":
		return true
	}
	return false
}

// podRules is what rollout trackers judge on a Pod beyond kstatus: a
// container (init containers included) waiting for a failingWait, or
// an init container crash-looping (kstatus looks at regular containers
// only), makes it Failed with that reason.
func podRules(pod map[string]any, h Health) Health {
	for _, field := range []string{"initContainerStatuses", "containerStatuses"} {
		statuses, _, _ := unstructured.NestedSlice(pod, "status", field)
		for _, s := range statuses {
			cs, ok := s.(map[string]any)
			if !ok {
				continue
			}
			reason, _, _ := unstructured.NestedString(cs, "state", "waiting", "reason")
			if !failingWait(reason) && (reason != "CrashLoopBackOff" || field != "initContainerStatuses") {
				continue
			}
			name, _, _ := unstructured.NestedString(cs, "name")
			message, _, _ := unstructured.NestedString(cs, "state", "waiting", "message")
			what := "container"
			if field == "initContainerStatuses" {
				what = "init container"
			}
			text := fmt.Sprintf("%s %s: %s", what, name, reason)
			if message != "" {
				text += ": " + message
			}
			return Health{Status: Failed, Reason: reason, Message: text}
		}
	}
	return h
}
