package otlp

import (
	"context"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/kubectl-deltas/kubectl-deltas/internal/printer"
)

// waitTrace is the trace of a run that waits (--until, --fail-when): a
// span for the wait, from the run's start to its verdict, OK when the
// conditions were met, Error with the blocker otherwise; and under it, a
// span for each time an object was not Current (from the record that
// said so to the one that said Current again, or the verdict), with the
// Events about it as span events. Spans carry the records' own times, so
// a replay exports the trace as it happened. Used from the goroutine that
// prints.
type waitTrace struct {
	provider *sdktrace.TracerProvider
	tracer   trace.Tracer
	cluster  string
	// start is when the wait began (zero: at the first record, in a
	// replay); wait is its span, begun by begin, and ctx holds it.
	start time.Time
	wait  trace.Span
	ctx   context.Context
	// open are the spans of the objects not Current now, by context/uid.
	open map[string]*objectSpan
	// ended: the verdict came; later records add nothing. lastTime is
	// the last record's time.
	ended    bool
	lastTime time.Time
}

// objectSpan is an object's span while it is not Current.
type objectSpan struct {
	span   trace.Span
	status string
	// message is its last health's reason and message.
	message string
}

// newWaitTrace is the wait's trace, from start (zero: from the first
// record); its spans go to s's traces endpoint.
func newWaitTrace(s *Settings, base []attribute.KeyValue, cluster, version string, start time.Time) (*waitTrace, error) {
	opts := []otlptracehttp.Option{
		otlptracehttp.WithEndpointURL(s.TracesURL),
		otlptracehttp.WithTimeout(s.Timeout),
	}
	if len(s.Headers) > 0 {
		opts = append(opts, otlptracehttp.WithHeaders(s.Headers))
	}
	if s.TLS != nil {
		opts = append(opts, otlptracehttp.WithTLSClientConfig(s.TLS))
	} else {
		opts = append(opts, otlptracehttp.WithInsecure())
	}
	if s.Gzip {
		opts = append(opts, otlptracehttp.WithCompression(otlptracehttp.GzipCompression))
	}
	exp, err := otlptracehttp.New(context.Background(), opts...)
	if err != nil {
		return nil, fmt.Errorf("the OTLP trace exporter for %s: %w", s.Shown, err)
	}
	attrs := append([]attribute.KeyValue(nil), base...)
	if cluster != "" {
		attrs = append(attrs, attribute.String("k8s.cluster.name", cluster))
	}
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(exp),
		sdktrace.WithResource(resource.NewSchemaless(attrs...)),
		sdktrace.WithSampler(sdktrace.AlwaysSample()),
	)
	return &waitTrace{provider: tp, tracer: tp.Tracer(scopeName, trace.WithInstrumentationVersion(version)), cluster: cluster,
		start: start, open: map[string]*objectSpan{}}, nil
}

// begin starts the wait's span, once: at start, else at t.
func (w *waitTrace) begin(t time.Time) {
	if w.wait != nil {
		return
	}
	if w.start.IsZero() || t.Before(w.start) {
		w.start = t
	}
	w.ctx, w.wait = w.tracer.Start(context.Background(), "kubectl deltas wait", trace.WithTimestamp(w.start))
}

// objectKey is the key of an object in the trace.
func objectKey(context, uid string) string { return context + "/" + uid }

// note follows the health of r's object: a span begins when it is not
// Current, and ends when it is again; an Event about an object is an
// event of its span. It returns the span context a record about r's
// object belongs to (zero when none).
func (w *waitTrace) note(r *printer.Record) trace.SpanContext {
	if w.ended {
		return trace.SpanContext{}
	}
	w.begin(r.Time)
	w.lastTime = r.Time
	if e := r.Event; e != nil {
		// An Event is an event of its object's span while it is open
		// (an ended span takes none), else of the wait's.
		span := w.wait
		if s := w.open[objectKey(r.Context, e.UID)]; s != nil {
			span = s.span
		}
		span.AddEvent(e.Reason, trace.WithTimestamp(r.Time), trace.WithAttributes(
			attribute.String("k8s.event.type", e.Type), attribute.String("k8s.event.reason", e.Reason),
			attribute.String("k8s.event.message", e.Message), attribute.Int("k8s.event.count", e.Count),
			attribute.String("k8s.object.kind", e.Kind), attribute.String("k8s.object.name", e.Name)))
		return span.SpanContext()
	}
	if r.Health == nil || r.UID == "" || r.IsCall() && r.Call.Delta == "" {
		return w.wait.SpanContext()
	}
	key := objectKey(r.Context, r.UID)
	s := w.open[key]
	current := r.Health.Status == "Current"
	switch {
	case s == nil && !current:
		attrs := appendObjectResource(nil, objectRef{context: r.Context, apiVersion: r.APIVersion, kind: r.Kind, namespace: r.Namespace, name: r.Name, uid: r.UID}, w.cluster)
		_, span := w.tracer.Start(w.ctx, r.Kind+" "+r.Name, trace.WithTimestamp(r.Time), trace.WithAttributes(attrs...))
		s = &objectSpan{span: span}
		w.open[key] = s
	case s != nil && current:
		s.span.SetAttributes(attribute.String("deltas.health.status", "Current"))
		s.span.SetStatus(codes.Ok, "")
		s.span.End(trace.WithTimestamp(r.Time))
		delete(w.open, key)
		return s.span.SpanContext()
	case s == nil:
		return w.wait.SpanContext()
	}
	if s.status != r.Health.Status {
		s.span.AddEvent(r.Health.Status, trace.WithTimestamp(r.Time), trace.WithAttributes(
			attribute.String("deltas.health.reason", r.Health.Reason), attribute.String("deltas.health.message", r.Health.Message)))
	}
	s.status = r.Health.Status
	s.message = r.Health.Reason + ": " + r.Health.Message
	return s.span.SpanContext()
}

// end ends the trace at the final verdict v: the objects still not
// Current end with it (Error, with their health), and the wait, OK when
// the conditions were met, else Error with the blocker.
func (w *waitTrace) end(v *printer.Verdict) {
	if w.ended {
		return
	}
	w.ended = true
	w.begin(v.Time)
	judged := map[string]*printer.Health{} // the verdict's health of each object: the newest
	for _, o := range v.Objects {
		if o.Health != nil {
			judged[objectKey(o.Context, o.UID)] = o.Health
		}
	}
	for key, s := range w.open {
		if h := judged[key]; h != nil {
			s.status, s.message = h.Status, h.Reason+": "+h.Message
		}
		s.span.SetAttributes(attribute.String("deltas.health.status", s.status))
		s.span.SetStatus(codes.Error, s.message)
		s.span.End(trace.WithTimestamp(v.Time))
	}
	w.wait.SetAttributes(attribute.String("deltas.wait.condition", v.Condition), attribute.String("deltas.wait.outcome", v.Outcome))
	if v.Outcome == "Met" {
		w.wait.SetStatus(codes.Ok, "")
	} else {
		w.wait.SetStatus(codes.Error, blocker(v))
	}
	w.wait.End(trace.WithTimestamp(v.Time))
}

// waitSpan is the span context of the wait, begun at t if it was not.
func (w *waitTrace) waitSpan(t time.Time) trace.SpanContext {
	w.begin(t)
	return w.wait.SpanContext()
}

// blocker is what a verdict says holds the wait up: its first object and
// that object's health.
func blocker(v *printer.Verdict) string {
	msg := v.Outcome + " on " + v.Condition
	if len(v.Objects) == 0 {
		return msg
	}
	o := v.Objects[0]
	for _, f := range v.Objects {
		if f.Health != nil && f.Health.Status == "Failed" {
			o = f // what failed holds it up first
			break
		}
	}
	msg += ": " + o.Kind + " " + o.Name
	if o.Health != nil {
		msg += " " + o.Health.Status
		if o.Health.Reason != "" {
			msg += " (" + o.Health.Reason + ")"
		}
		if o.Health.Message != "" {
			msg += ": " + o.Health.Message
		}
	}
	return msg
}

// shutdown ends a trace that had no verdict (the run was interrupted) at
// its last record, and sends the spans that wait, for at most within.
func (w *waitTrace) shutdown(within time.Duration) error {
	if !w.ended && w.wait != nil {
		w.end(&printer.Verdict{Time: w.lastTime, Outcome: "Interrupted"})
	}
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	return w.provider.Shutdown(ctx)
}
