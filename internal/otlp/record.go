package otlp

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/log"
	"go.opentelemetry.io/otel/trace"
)

// item is one record of the stream waiting to be sent: its JSON as -o
// json prints it, and what its log record's other fields come from. Items
// are made on the stream's goroutine and read on the sender's; once
// queued only the sender changes them (id, when the feed did not set it).
type item struct {
	// json is the record's JSON, one line without its newline.
	json []byte
	// kind is the record's type ("Updated", "OnAdd", "Verdict", …).
	kind string
	time time.Time
	// object is what the record is about (zero for a Verdict or a
	// QueueSummary); subject, for an Event record, is what the Event is
	// about.
	object, subject objectRef
	// resource and resourceVersion of object (a delta or handler call).
	resource, resourceVersion string
	// severity from what the record says; reason, for an Event record,
	// its reason.
	severity log.Severity
	reason   string
	// sync: the record repeats a state at a time (Sync, a resync's
	// OnUpdate, a Verdict): its time is part of its id.
	sync bool
	// span, when the run waits, is the span the record belongs to.
	span trace.SpanContext
	// initial: a record of an initial list. id is recordID's, set by a
	// ResendFeed when it is queued, else by the sender.
	initial bool
	id      string
	// seq numbers the item in the order queued (Exporter.queued).
	seq int64
}

// objectRef names a Kubernetes object.
type objectRef struct {
	context, apiVersion, kind, namespace, name, uid string
}

// The severities a record is exported with.
const (
	severityInfo  = log.SeverityInfo
	severityWarn  = log.SeverityWarn
	severityError = log.SeverityError
)

// severityText is the specification's short name of s.
func severityText(s log.Severity) string {
	switch s {
	case severityWarn:
		return "WARN"
	case severityError:
		return "ERROR"
	}
	return "INFO"
}

// eventName is the log record's EventName for a record of type kind
// about an object of objectKind: fixed names, one per record type
// (docs/otlp.md lists them).
func eventName(kind, objectKind string) string {
	switch kind {
	case "Added", "Updated", "Deleted", "Replaced", "Sync":
		if objectKind == "Event" {
			return "k8s.event." + strings.ToLower(kind)
		}
		return "k8s.object." + strings.ToLower(kind)
	case "OnAdd":
		return "k8s.handler.on_add"
	case "OnUpdate":
		return "k8s.handler.on_update"
	case "OnDelete":
		return "k8s.handler.on_delete"
	case "Reconcile":
		return "k8s.controller.reconcile"
	case "QueueSummary":
		return "k8s.controller.queue_summary"
	case "Verdict":
		return "k8s.wait.verdict"
	}
	return "k8s.deltas." + strings.ToLower(kind)
}

// recordID is the record's id attribute: the same record has the same id
// whenever it is sent — after a retry, a restart on the same recording or
// a backfill — so that a backend can drop a duplicate. It hashes the
// record's collection (context, apiVersion, resource), the object's uid
// and resourceVersion, and the record's type; and its time for a record
// that repeats a state (Sync) or has no object (Verdict, Reconcile,
// QueueSummary).
func recordID(it *item) string {
	h := sha256.New()
	for _, s := range []string{it.kind, it.object.context, it.object.apiVersion, it.resource, it.object.namespace, it.object.name, it.object.uid, it.resourceVersion} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	if it.sync || it.object.uid == "" {
		h.Write(strconv.AppendInt(nil, it.time.UnixNano(), 10))
	}
	var sum [sha256.Size]byte
	return hex.EncodeToString(h.Sum(sum[:0])[:16])
}

// conventionName is the short name the k8s.* semantic conventions give
// an object of group and kind for its resource attributes (k8s.pod.name,
// k8s.pod.uid…), "" for a kind they do not name.
func conventionName(group, kind string) string {
	switch group + "/" + kind {
	case "/Pod":
		return "pod"
	case "/Node":
		return "node"
	case "/Namespace":
		return "namespace"
	case "apps/ReplicaSet":
		return "replicaset"
	case "apps/Deployment":
		return "deployment"
	case "apps/StatefulSet":
		return "statefulset"
	case "apps/DaemonSet":
		return "daemonset"
	case "batch/Job":
		return "job"
	case "batch/CronJob":
		return "cronjob"
	}
	return ""
}

// groupOf is the API group of apiVersion ("" for v1).
func groupOf(apiVersion string) string {
	group, _, ok := strings.Cut(apiVersion, "/")
	if !ok {
		return ""
	}
	return group
}

// appendObjectResource appends the resource attributes of o: the cluster
// (its context, else cluster), its namespace, the conventions' kind-specific
// name and uid where they have one, and k8s.object.* for every kind.
func appendObjectResource(attrs []attribute.KeyValue, o objectRef, cluster string) []attribute.KeyValue {
	if o.context != "" {
		cluster = o.context
	}
	if cluster != "" {
		attrs = append(attrs, attribute.String("k8s.cluster.name", cluster))
	}
	if o.kind == "" {
		return attrs
	}
	if o.namespace != "" {
		attrs = append(attrs, attribute.String("k8s.namespace.name", o.namespace))
	}
	if short := conventionName(groupOf(o.apiVersion), o.kind); short != "" {
		if o.name != "" {
			attrs = append(attrs, attribute.String("k8s."+short+".name", o.name))
		}
		if o.uid != "" {
			attrs = append(attrs, attribute.String("k8s."+short+".uid", o.uid))
		}
	}
	attrs = append(attrs,
		attribute.String("k8s.object.api_version", o.apiVersion),
		attribute.String("k8s.object.kind", o.kind),
		attribute.String("k8s.object.name", o.name))
	if o.uid != "" {
		attrs = append(attrs, attribute.String("k8s.object.uid", o.uid))
	}
	return attrs
}

// resourceKey identifies the resource of it: records with the same key
// share a resource.
func resourceKey(it *item) string {
	o := it.resourceObject()
	return o.context + "\x00" + o.apiVersion + "\x00" + o.kind + "\x00" + o.namespace + "\x00" + o.name + "\x00" + o.uid
}

// resourceObject is the object whose resource the record is exported
// under: an Event's subject when it names one (its records sit beside the
// object's own), else the record's object.
func (it *item) resourceObject() objectRef {
	if it.subject.kind != "" {
		return it.subject
	}
	return it.object
}

// logAttributes are the log record's own attributes: the id, the record's
// type, and for an object's record its resource and resourceVersion, for
// an Event's the Event itself.
func logAttributes(it *item) []attribute.KeyValue {
	attrs := []attribute.KeyValue{
		attribute.String("deltas.record.id", it.id),
		attribute.String("deltas.record.type", it.kind),
	}
	if it.resource != "" {
		attrs = append(attrs, attribute.String("k8s.resource.name", it.resource))
	}
	if it.resourceVersion != "" {
		attrs = append(attrs, attribute.String("k8s.object.resource_version", it.resourceVersion))
	}
	if it.subject.kind != "" {
		attrs = append(attrs, attribute.String("k8s.event.name", it.object.name), attribute.String("k8s.event.uid", it.object.uid))
		if it.reason != "" {
			attrs = append(attrs, attribute.String("k8s.event.reason", it.reason))
		}
	}
	return attrs
}
