// Package health judges an object: one status for any resource, as
// kstatus (sigs.k8s.io/cli-utils/pkg/kstatus/status) computes it, with the
// rules rollout trackers add where kstatus is silent — a Pod whose
// container cannot start for its image or its configuration, or whose init
// container crash-loops, is Failed.
package health

import (
	"fmt"
	"hash/maphash"
	"strings"
	"sync"
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

// Source is where a verdict came from.
type Source string

// The sources of a verdict.
const (
	// SourceKind: a rule for the object's kind decided (kstatus' rules
	// for Deployments, Pods, Jobs…, or this package's Pod rules).
	SourceKind Source = "kind"
	// SourceConditions: its kind has no rule, and its status or metadata
	// said: a Ready, Reconciling or Stalled condition, a generation not
	// yet observed, a deletion.
	SourceConditions Source = "conditions"
	// SourceNone: nothing in the object says; kstatus calls it Current by
	// default (a custom resource without status, or one its controller
	// has not touched yet): Current, not done.
	SourceNone Source = "none"
)

// Health is a verdict on one object.
type Health struct {
	Status Status
	// Source is where the verdict came from; "" for an object that does
	// not exist or cannot be read.
	Source Source
	// Container is the container whose state decided the verdict (a
	// Pod's, by this package's rules), "" when none did.
	Container string
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

// Judge judges objects; it is safe for concurrent use. NewJudge's decodes
// little and keeps verdicts; the zero value decodes whole statuses and
// keeps nothing (the reference the tests hold NewJudge's to).
type Judge struct {
	// podStatus is what the Pod rules (kstatus' and this package's) read
	// of a Pod's status; the rest of it — a container's image, resources,
	// mounts, last state, when it started; the Pod's IPs — is skipped, not
	// decoded. TestPodStatusFields holds it to the whole status.
	podStatus rawobj.Fields
	// podSelection is podStatus compiled for hashing.
	podSelection *rawobj.Selection
	// seed seeds the hashes of podStatus that key pods.
	seed maphash.Seed

	// lock guards pods: the verdicts on Pods by what they depend on, so
	// that the many Pods of a cluster in the same state (Running and
	// ready) are judged once. Verdicts that depend on the time are not
	// kept. It is emptied when it reaches maxPodVerdicts.
	lock sync.Mutex
	pods map[podKey]Health
	// since holds, by Pod UID and container name, when a container was
	// first seen failing in a transient way (transient), so that the
	// failure counts only once it has lasted failAfter; a Pod none of
	// whose containers fails so is forgotten. Guarded by lock; emptied
	// when it reaches maxPodVerdicts.
	since     map[string]map[string]failingSince
	failAfter time.Duration
	// scheduling holds, by Pod UID, the times of the latest scheduling
	// Events about it that the Judge was told of (NoteEvent): a
	// scale-up a cluster autoscaler triggered after the Pod's last
	// FailedScheduling keeps it from counting as unschedulable for
	// failAfter. Guarded by lock; emptied when it reaches maxPodVerdicts.
	scheduling map[string]schedulingEvents
	// rules holds, by apiVersion and kind, the rule kstatus judges it by
	// (withoutStatus). Guarded by lock; emptied when it reaches
	// maxPodVerdicts.
	rules map[typeKey]kindRule
}

// schedulingEvents are the latest times of the scheduling Events about a
// Pod: FailedScheduling (the scheduler found no node) and
// TriggeredScaleUp (the cluster autoscaler is adding one).
type schedulingEvents struct {
	failed, scaleUp time.Time
}

// NoteEvent tells the Judge of an Event about the object uid that
// happened last at last: of a Pod, FailedScheduling and TriggeredScaleUp
// change how long it may wait to be scheduled (see At); other Events say
// nothing of health.
func (j *Judge) NoteEvent(uid, reason string, last time.Time) {
	if uid == "" || !EventJudged(reason) {
		return
	}
	j.lock.Lock()
	defer j.lock.Unlock()
	if j.scheduling == nil || len(j.scheduling) >= maxPodVerdicts {
		j.scheduling = map[string]schedulingEvents{}
	}
	e := j.scheduling[uid]
	switch {
	case reason == "FailedScheduling" && last.After(e.failed):
		e.failed = last
	case reason == "TriggeredScaleUp" && last.After(e.scaleUp):
		e.scaleUp = last
	}
	j.scheduling[uid] = e
}

// EventJudged reports whether an Event of reason can change its
// subject's health (NoteEvent keeps it): whoever keeps verdicts judges the
// subject again after one.
func EventJudged(reason string) bool {
	return reason == "FailedScheduling" || reason == "TriggeredScaleUp"
}

// scalingUp applies the autoscaler's rule to h, the verdict on the
// unschedulable Pod uid at now: while a scale-up triggered after its last
// FailedScheduling is younger than failAfter, it is InProgress
// (TriggeredScaleUp), and Failed again once that has passed.
func (j *Judge) scalingUp(uid string, h Health, now time.Time) Health {
	j.lock.Lock()
	e, ok := j.scheduling[uid]
	j.lock.Unlock()
	if !ok || e.scaleUp.IsZero() || !e.scaleUp.After(e.failed) {
		return h
	}
	until := e.scaleUp.Add(j.failAfter)
	if !now.Before(until) {
		return Health{Status: Failed, Source: SourceKind, Reason: h.Reason,
			Message: fmt.Sprintf("%s: the scale-up triggered at %s has not brought a node for it", h.Message, e.scaleUp.UTC().Format(time.RFC3339))}
	}
	return Health{Status: InProgress, Source: SourceKind, Reason: "TriggeredScaleUp", RecheckAt: until,
		Message: fmt.Sprintf("%s yet; a scale-up was triggered at %s (counts as Failed if it is still unschedulable at %s)",
			h.Message, e.scaleUp.UTC().Format(time.RFC3339), until.UTC().Format(time.RFC3339))}
}

// failingSince is when a container was first seen failing in a transient
// way, and how (the reasons of one kind of failure count as one: an image
// pull alternates ErrImagePull and ImagePullBackOff).
type failingSince struct {
	kind string
	at   time.Time
}

// DefaultFailAfter is how long a transient failure (transient) must last
// before it counts as Failed: long enough for a registry's passing
// trouble, as kapp waits on a failure condition.
const DefaultFailAfter = 30 * time.Second

// SetFailAfter sets how long a transient failure must last before it
// counts as Failed (0: at first sight). Call it before the Judge is used.
func (j *Judge) SetFailAfter(d time.Duration) { j.failAfter = d }

// podKey is everything a verdict on a Pod depends on, but the time: its
// generation, whether it is being deleted, and what podStatus selects of
// its status (hashed with a seed of the process, so that no one can write
// a status that collides with another on purpose).
type podKey struct {
	generation int64
	deleting   bool
	status     uint64
}

// maxPodVerdicts bounds Judge.pods.
const maxPodVerdicts = 4096

// NewJudge returns a Judge.
func NewJudge() *Judge {
	container := rawobj.Fields{"name": nil, "state": {"waiting": {"reason": nil, "message": nil}}}
	podStatus := rawobj.Fields{
		"phase": nil, "observedGeneration": nil,
		"conditions":            {"type": nil, "status": nil, "reason": nil, "message": nil},
		"containerStatuses":     container,
		"initContainerStatuses": container,
	}
	return &Judge{
		podStatus:    podStatus,
		podSelection: rawobj.Select(podStatus),
		seed:         maphash.MakeSeed(),
		pods:         map[podKey]Health{},
		rules:        map[typeKey]kindRule{},
		since:        map[string]map[string]failingSince{},
		failAfter:    DefaultFailAfter,
	}
}

// Of judges o now (see At).
func (j *Judge) Of(o *rawobj.Object) Health { return j.At(o, time.Now()) }

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
// decoded, and of a Pod, the bulk of the objects, only the part of its
// status the rules read (Judge.podStatus): no rule reads its spec.
func (j *Judge) At(o *rawobj.Object, now time.Time) Health {
	if o == nil {
		return Gone()
	}
	pod := o.Kind == "Pod" && o.APIVersion == "v1"
	// An object this package parsed without a status (a ConfigMap, a
	// Secret) needs no second reading of its JSON to be judged by its kind.
	if !pod && j.pods != nil && o.WithoutStatus() && o.DeletionTimestamp == "" {
		if h, ok := j.withoutStatus(o); ok {
			return h
		}
	}
	names := []string{"status", "spec"}
	if pod {
		names = names[:1]
	}
	raw, err := o.Members(names...)
	if err != nil {
		return unknown(err)
	}
	if !pod && j.pods != nil && raw[0] == nil && o.DeletionTimestamp == "" {
		if h, ok := j.withoutStatus(o); ok {
			return h
		}
	}
	var key podKey
	if pod && j.pods != nil {
		if key, err = j.podKey(o, raw[0]); err != nil {
			return unknown(err)
		}
		j.lock.Lock()
		h, ok := j.pods[key]
		if ok {
			// Kept verdicts are never a transient failure's: none of
			// its containers is failing now.
			delete(j.since, o.UID)
		}
		j.lock.Unlock()
		if ok {
			return h
		}
	}
	h := j.judge(o, names, raw, pod, now)
	if pod && j.pods != nil && h.RecheckAt.IsZero() && h.Reason != "PodUnschedulable" && !transient(h.Reason) {
		j.lock.Lock()
		if len(j.pods) >= maxPodVerdicts {
			clear(j.pods)
		}
		// Copies: the strings may share the memory of this Pod's JSON,
		// which the cache would otherwise keep.
		j.pods[key] = Health{Status: h.Status, Source: h.Source, Container: strings.Clone(h.Container), Reason: strings.Clone(h.Reason), Message: strings.Clone(h.Message)}
		j.lock.Unlock()
	}
	return h
}

// withoutStatus is the verdict on o, which has no status and is not being
// deleted, when it depends on o's kind alone, and whether it does: with
// nothing in a status to go by, kstatus' generic checks (deletion,
// observed generation, Reconciling and Stalled conditions) and its last
// (a Ready condition) find nothing, so a kind without a rule of its own
// is Current by default, and a kind whose rule is alwaysReady (ConfigMap,
// Secret, CronJob) is Current by that rule. Every other rule reads the
// spec or the generation. The bulk of many streams — ConfigMaps and
// Secrets — are judged so without kstatus' decoding.
func (j *Judge) withoutStatus(o *rawobj.Object) (Health, bool) {
	key := typeKey{o.APIVersion, o.Kind}
	j.lock.Lock()
	rule, known := j.rules[key]
	j.lock.Unlock()
	if !known {
		rule = ruleOf(o.APIVersion, o.Kind)
		j.lock.Lock()
		if len(j.rules) >= maxPodVerdicts {
			clear(j.rules)
		}
		j.rules[typeKey{strings.Clone(o.APIVersion), strings.Clone(o.Kind)}] = rule
		j.lock.Unlock()
	}
	switch rule {
	case noRule:
		return Health{Status: Current, Source: SourceNone, Message: "Resource is current"}, true
	case alwaysReadyRule:
		return Health{Status: Current, Source: SourceKind, Message: "Resource is always ready"}, true
	}
	return Health{}, false
}

// typeKey is an object's apiVersion and kind, as sent.
type typeKey struct{ apiVersion, kind string }

// kindRule is what kstatus judges a kind by, besides its generic checks.
type kindRule uint8

const (
	// noRule: kstatus has no rule for the kind.
	noRule kindRule = iota
	// alwaysReadyRule: its rule calls any object of the kind Current.
	alwaysReadyRule
	// otherRule: its rule reads the object.
	otherRule
)

// ruleOf is the rule kstatus judges objects of apiVersion and kind by.
// The kinds of its alwaysReady rule are named here, as kstatus names them
// (TestAlwaysReadyKindsAreKstatus' holds the list to kstatus' own).
func ruleOf(apiVersion, kind string) kindRule {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind}}
	if status.GetLegacyConditionsFn(u) == nil {
		return noRule
	}
	switch gk := u.GroupVersionKind().GroupKind(); gk.String() {
	case "ConfigMap", "Secret", "CronJob.batch":
		return alwaysReadyRule
	}
	return otherRule
}

// podKey is the key of a Pod's verdict; status is its status' JSON.
func (j *Judge) podKey(o *rawobj.Object, status []byte) (podKey, error) {
	key := podKey{generation: o.Generation, deleting: o.DeletionTimestamp != ""}
	if status != nil {
		var h maphash.Hash
		h.SetSeed(j.seed)
		if err := o.HashMember(&h, status, j.podSelection); err != nil {
			return podKey{}, fmt.Errorf("status: %w", err)
		}
		key.status = h.Sum64()
	}
	return key, nil
}

// judge computes the verdict on o, whose members names are raw.
func (j *Judge) judge(o *rawobj.Object, names []string, raw [][]byte, pod bool, now time.Time) Health {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": o.APIVersion, "kind": o.Kind, "metadata": metadata(o)}}
	for i, name := range names {
		if raw[i] == nil {
			continue
		}
		var keep rawobj.Fields
		if pod && name == "status" {
			keep = j.podStatus
		}
		v, err := rawobj.DecodeFields(raw[i], keep)
		if err != nil {
			return unknown(fmt.Errorf("%s: %w", name, err))
		}
		u.Object[name] = v
	}
	res, err := status.Compute(u)
	if err != nil {
		return unknown(err)
	}
	h := Health{Status: Status(res.Status), Message: res.Message, Source: sourceOf(u, Status(res.Status))}
	for _, c := range res.Conditions {
		if c.Status == "True" && (c.Type == status.ConditionReconciling || c.Type == status.ConditionStalled) {
			h.Reason = c.Reason
		}
	}
	if pod {
		h = scheduleWindow(h, u.GetCreationTimestamp().Add(status.ScheduleWindow), now)
		if h.Reason == "PodUnschedulable" {
			h = j.scalingUp(o.UID, h, now)
		}
	}
	switch {
	case pod && h.Status == InProgress:
		h = j.podRules(o.UID, u.Object, h, now)
	case pod:
		j.forgetPassed(o.UID, nil) // none of its containers fails now
		if h.Reason == "ContainerCrashLooping" {
			h.Container = crashLooping(u.Object) // kstatus names it in prose only
		}
	}
	return h
}

// crashLooping is the first container of pod waiting in CrashLoopBackOff,
// "" if none is.
func crashLooping(pod map[string]any) string {
	statuses, _, _ := unstructured.NestedSlice(pod, "status", "containerStatuses")
	for _, s := range statuses {
		if cs, ok := s.(map[string]any); ok {
			if reason, _, _ := unstructured.NestedString(cs, "state", "waiting", "reason"); reason == "CrashLoopBackOff" {
				name, _, _ := unstructured.NestedString(cs, "name")
				return name
			}
		}
	}
	return ""
}

// sourceOf says where kstatus' verdict st on u came from: its kind's rule;
// else, if anything in it spoke (a verdict other than the default Current,
// or a Ready, Reconciling or Stalled condition), its conditions; else
// nothing.
func sourceOf(u *unstructured.Unstructured, st Status) Source {
	if status.GetLegacyConditionsFn(u) != nil {
		return SourceKind
	}
	if st != Current {
		return SourceConditions
	}
	conditions, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conditions {
		m, ok := c.(map[string]any)
		if !ok {
			continue
		}
		switch m["type"] {
		case "Ready", string(status.ConditionReconciling), string(status.ConditionStalled):
			return SourceConditions
		}
	}
	return SourceNone
}

// scheduleWindow applies kstatus' rule for an unschedulable Pod at now:
// in progress ("PodNotScheduled") until end, failed ("PodUnschedulable")
// from then on, in kstatus' words.
func scheduleWindow(h Health, end, now time.Time) Health {
	if h.Reason != "PodNotScheduled" && h.Reason != "PodUnschedulable" {
		return h
	}
	if now.Before(end) {
		return Health{Status: InProgress, Source: SourceKind, Reason: "PodNotScheduled", Message: "Pod has not been scheduled", RecheckAt: end}
	}
	return Health{Status: Failed, Source: SourceKind, Reason: "PodUnschedulable", Message: "Pod could not be scheduled"}
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
// leaves "Pod is in the Pending phase". Of these, transient ones count
// only once they have lasted (Judge.SetFailAfter).
func failingWait(reason string) bool {
	switch reason {
	case "ErrImagePull", "ImagePullBackOff", "ErrImageNeverPull", "InvalidImageName",
		"CreateContainerConfigError", "CreateContainerError":
		return true
	}
	return false
}

// transient reports whether a failing wait for reason may pass by itself:
// an image pull (a registry's passing trouble; krane made it fail at
// once and reverted that), a container's configuration (a ConfigMap or
// Secret not created yet). Its kind groups the reasons that alternate.
func transient(reason string) bool { return transientKind(reason) != "" }

func transientKind(reason string) string {
	switch reason {
	case "ErrImagePull", "ImagePullBackOff":
		return "pull"
	case "CreateContainerConfigError":
		return "config"
	}
	return ""
}

// imageMissing reports whether a pull error's message says the image does
// not exist, which no wait mends (krane's rule).
func imageMissing(message string) bool {
	m := strings.ToLower(message)
	return strings.Contains(m, "not found") || strings.Contains(m, "manifest unknown") || strings.Contains(m, "repository does not exist")
}

// podRules is what rollout trackers judge on a Pod beyond kstatus: a
// container (init containers included) waiting for a failingWait, or
// an init container crash-looping (kstatus looks at regular containers
// only), makes it Failed with that reason — a transient one once it has
// lasted failAfter (InProgress until then, with the reason, and RecheckAt
// when it will count), or at once when the image does not exist. uid is
// the Pod's, now the time of the judgement.
func (j *Judge) podRules(uid string, pod map[string]any, h Health, now time.Time) Health {
	failing := map[string]bool{} // containers failing transiently now
	defer j.forgetPassed(uid, failing)
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
			kind := transientKind(reason)
			if kind == "" || (kind == "pull" && imageMissing(message)) || j.failAfter <= 0 || uid == "" {
				return Health{Status: Failed, Source: SourceKind, Container: name, Reason: reason, Message: text}
			}
			failing[name] = true
			since := j.failingSince(uid, name, kind, now)
			if !now.Before(since.Add(j.failAfter)) {
				return Health{Status: Failed, Source: SourceKind, Container: name, Reason: reason, Message: fmt.Sprintf("%s (for %s)", text, now.Sub(since).Round(time.Second))}
			}
			until := since.Add(j.failAfter)
			return Health{Status: InProgress, Source: SourceKind, Container: name, Reason: reason, RecheckAt: until,
				Message: fmt.Sprintf("%s (counts as Failed if it lasts until %s)", text, until.UTC().Format(time.RFC3339))}
		}
	}
	return h
}

// failingSince is when the container name of Pod uid was first seen
// failing in a transient way of kind, now if it is the first time.
func (j *Judge) failingSince(uid, name, kind string, now time.Time) time.Time {
	j.lock.Lock()
	defer j.lock.Unlock()
	pod := j.since[uid]
	if pod == nil {
		if len(j.since) >= maxPodVerdicts {
			clear(j.since)
		}
		pod = map[string]failingSince{}
		j.since[uid] = pod
	}
	f, ok := pod[name]
	if !ok || f.kind != kind || now.Before(f.at) {
		f = failingSince{kind: kind, at: now}
		pod[name] = f
	}
	return f.at
}

// forgetPassed forgets when the containers of Pod uid that are not
// failing transiently now (failing) began to.
func (j *Judge) forgetPassed(uid string, failing map[string]bool) {
	j.lock.Lock()
	defer j.lock.Unlock()
	pod := j.since[uid]
	for name := range pod {
		if !failing[name] {
			delete(pod, name)
		}
	}
	if len(pod) == 0 {
		delete(j.since, uid)
	}
}
