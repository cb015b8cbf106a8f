// Package otlp sends the stream's records to an OpenTelemetry collector
// over OTLP/HTTP (--otlp): one log record per record of the stream, its
// body the record's JSON as -o json prints it, through the OpenTelemetry
// Go SDK's OTLP exporter. Records wait in a bounded queue while the
// collector is down and are sent again until it takes them; what cannot
// wait is counted and said, never dropped silently.
package otlp

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/url"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	"go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/sdk/resource"
	"go.opentelemetry.io/otel/trace"
)

// Limits of the queue and of a request.
const (
	// maxBatch records, or maxBatchBytes of their JSON, go in one request.
	maxBatch      = 512
	maxBatchBytes = 4 << 20
	// linger is how long a batch that is not full waits for more records.
	linger = 200 * time.Millisecond
	// maxWaiting bounds the JSON of the records waiting for the
	// collector; past it new records are dropped, counted and said.
	maxWaiting = 64 << 20
	// backoff between attempts while the collector fails: doubling from
	// minBackoff to maxBackoff, with jitter.
	minBackoff = 250 * time.Millisecond
	maxBackoff = 5 * time.Second
	// maxResources bounds the resources (one per object) kept between
	// batches; past it they are made anew.
	maxResources = 20000
	// flushLimit bounds how long End sends what waits.
	flushLimit = 5 * time.Second
	// scopeName is the instrumentation scope of every record.
	scopeName = "kubectl-deltas"
)

// limits are the queue's and the retries' bounds.
type limits struct {
	linger, minBackoff, maxBackoff time.Duration
	maxWaiting                     int
}

// Exporter sends records to the collector. Queue is called on the
// stream's goroutine; a goroutine of its own (run) sends; Close ends it.
type Exporter struct {
	cfg *Settings
	// errOut takes the warnings; cluster is k8s.cluster.name of records
	// without a context (one cluster); version is service.version.
	errOut  io.Writer
	cluster string
	version string
	logs    sdklog.Exporter
	// limits: the constants of the same names, which tests shorten.
	limits limits

	// The sender's own, used on its goroutine only (and before Start):
	// base holds the resource attributes every record has; loggers, one
	// per resource, emit into captured; positionPath, when set
	// (KeepPosition), is where position, how far the collector has taken
	// the stream, is kept.
	base           []attribute.KeyValue
	loggers        map[string]log.Logger
	captured       *capture
	parser         jsonParser
	positionPath   string
	position       Position
	positionFailed bool

	// trace, when the run waits, is its trace (TraceWait); used from the
	// goroutine that prints only.
	trace *waitTrace

	// mu guards the fields below it: the queue and what is said of it.
	mu sync.Mutex
	// waiting are the records not yet sent, oldest first; waitingBytes
	// their JSON's size.
	waiting      []*item
	waitingBytes int
	// dropped counts the records dropped because the queue was full
	// since it was last said; droppedTotal all of them.
	dropped, droppedTotal int
	// queued numbers the records queued (item.seq); held, once a record
	// was dropped, stops the position at heldAt, the last queued before.
	queued, heldAt int64
	held           bool
	// sent counts the records the collector took.
	sent int
	// failing is when the collector began failing (zero while it takes
	// records), lastErr its last error.
	failing time.Time
	lastErr error
	// fatal, once set, ends the stream: the collector cannot be trusted
	// (its certificate does not verify).
	fatal error
	// closing: Close was called; what waits is sent, then run returns.
	closing bool
	// sdkSaid are the SDK's own errors already said (sdkError).
	sdkSaid map[string]bool

	// wake tells the sender a batch is full or Close was called; stop
	// cancels ctx, a send in flight (Close's deadline); done is closed
	// when the sender returns.
	wake chan struct{}
	stop context.CancelFunc
	ctx  context.Context
	done chan struct{}
}

// New returns an exporter for cfg; Start begins sending. cluster is
// k8s.cluster.name for records that do not name their context (the
// kubeconfig context of a run on one cluster); version is service.version.
func New(cfg *Settings, cluster, version string, errOut io.Writer) (*Exporter, error) {
	opts := []otlploghttp.Option{
		otlploghttp.WithEndpointURL(cfg.LogsURL),
		otlploghttp.WithTimeout(cfg.Timeout),
		// Retries are the Exporter's own: it says so, and Close can end them.
		otlploghttp.WithRetry(otlploghttp.RetryConfig{Enabled: false}),
	}
	if len(cfg.Headers) > 0 {
		opts = append(opts, otlploghttp.WithHeaders(cfg.Headers))
	}
	if cfg.TLS != nil {
		opts = append(opts, otlploghttp.WithTLSClientConfig(cfg.TLS))
	} else {
		opts = append(opts, otlploghttp.WithInsecure())
	}
	if cfg.Gzip {
		opts = append(opts, otlploghttp.WithCompression(otlploghttp.GzipCompression))
	} else {
		opts = append(opts, otlploghttp.WithCompression(otlploghttp.NoCompression))
	}
	logs, err := otlploghttp.New(context.Background(), opts...)
	if err != nil {
		return nil, fmt.Errorf("the OTLP exporter for %s: %w", cfg.Shown, err)
	}
	base := []attribute.KeyValue{attribute.String("service.name", defaultServiceName)}
	for _, kv := range cfg.Resource {
		base = append(base, attribute.String(kv[0], kv[1]))
	}
	if cfg.ServiceName != defaultServiceName {
		base = append(base, attribute.String("service.name", cfg.ServiceName))
	}
	base = append(base, attribute.String("service.version", version))
	ctx, stop := context.WithCancel(context.Background())
	e := &Exporter{
		cfg: cfg, errOut: errOut, cluster: cluster, version: version, logs: logs,
		limits: limits{linger: linger, minBackoff: minBackoff, maxBackoff: maxBackoff, maxWaiting: maxWaiting},
		base:   base, loggers: map[string]log.Logger{}, captured: &capture{},
		wake: make(chan struct{}, 1), ctx: ctx, stop: stop, done: make(chan struct{}),
		sdkSaid: map[string]bool{},
	}
	// What the SDK reports on its own (a span batch it could not send, a
	// variable of its own it cannot read) is a warning of the run's, said
	// once, not a line of the log package's.
	otel.SetErrorHandler(otel.ErrorHandlerFunc(e.sdkError))
	return e, nil
}

// sdkError says err, which the OpenTelemetry SDK reported, once.
func (e *Exporter) sdkError(err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if msg := err.Error(); !e.sdkSaid[msg] {
		e.sdkSaid[msg] = true
		fmt.Fprintf(e.errOut, "warning: OpenTelemetry: %s\n", msg)
	}
}

// Open is New for a run: when it waits (--until, --fail-when), the wait
// is a trace too, from now when live, else from the first record (a
// replay's time is the recording's).
func Open(s *Settings, cluster, version string, errOut io.Writer, waits, live bool) (*Exporter, error) {
	e, err := New(s, cluster, version, errOut)
	if err != nil || !waits {
		return e, err
	}
	var start time.Time
	if live {
		start = time.Now()
	}
	return e, e.TraceWait(start)
}

// TraceWait has the run's wait exported as a trace (--until,
// --fail-when), begun at start (zero: at the first record, as a replay
// does).
func (e *Exporter) TraceWait(start time.Time) error {
	var err error
	e.trace, err = newWaitTrace(e.cfg, e.base, e.cluster, e.version, start)
	return err
}

// KeepPosition has the collector's position kept at path after every
// batch it takes, going on from p when found. When not found, the
// position begins at now and is written at once: what the recording
// already holds was not exported by this means (a backfill sends it:
// --replay --otlp), and what it records from now on is, even if the run
// is killed before the collector takes anything. Call it before Start.
func (e *Exporter) KeepPosition(path string, p Position, found bool, now time.Time) error {
	if !found {
		p = Position{Time: now}
	}
	p.Endpoint = e.cfg.Shown
	e.positionPath, e.position = path, p
	if found {
		return nil
	}
	return writePosition(path, &e.position)
}

// Endpoint is the collector's endpoint as messages name it, and as a
// Position records it.
func (e *Exporter) Endpoint() string { return e.cfg.Shown }

// Start checks that the collector can be reached — a certificate that
// does not verify is an error; a collector that does not answer yet is a
// warning, and records wait for it — and begins sending.
func (e *Exporter) Start(ctx context.Context) error {
	if err := e.probe(ctx); err != nil {
		if untrusted(err) {
			e.stop()
			close(e.done)
			return e.untrustedError(err)
		}
		fmt.Fprintf(e.errOut, "warning: cannot reach the OpenTelemetry collector at %s: %v; records wait for it and are sent once it answers\n", e.cfg.Shown, err)
		e.mu.Lock()
		e.failing, e.lastErr = time.Now(), err
		e.mu.Unlock()
	}
	go e.run()
	return nil
}

// probe connects to the collector once: TCP, and TLS for https.
func (e *Exporter) probe(ctx context.Context) error {
	u, err := url.Parse(e.cfg.LogsURL)
	if err != nil {
		return err
	}
	host := u.Host
	if u.Port() == "" {
		host = net.JoinHostPort(u.Hostname(), map[string]string{"http": "80", "https": "443"}[u.Scheme])
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if e.cfg.TLS == nil {
		conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", host)
		if err == nil {
			_ = conn.Close()
		}
		return err
	}
	cfg := e.cfg.TLS.Clone()
	cfg.ServerName = u.Hostname()
	conn, err := (&tls.Dialer{Config: cfg}).DialContext(ctx, "tcp", host)
	if err == nil {
		_ = conn.Close()
	}
	return err
}

// untrusted reports whether err says the collector's certificate does not
// verify: sending again would not help, and must not happen.
func untrusted(err error) bool {
	var verify *tls.CertificateVerificationError
	var unknown x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	return errors.As(err, &verify) || errors.As(err, &unknown) || errors.As(err, &hostname) || errors.As(err, &invalid)
}

func (e *Exporter) untrustedError(err error) error {
	return fmt.Errorf("the OpenTelemetry collector at %s presents a certificate that does not verify: %w; set OTEL_EXPORTER_OTLP_CERTIFICATE to the CA file that signed it", e.cfg.Shown, err)
}

// Err is the error that ends the stream, once sending cannot go on.
func (e *Exporter) Err() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.fatal
}

// queue adds it to the records waiting, or drops it when the queue is
// full, counting it and saying so once per outage.
//
// With a position kept (--record), the first record dropped fixes the
// position at the records queued before it: the collector may take later
// ones, but a run started again on the recording sends from there, the
// dropped records included. wait, when set, waits for room instead, until
// ctx is done (a replay sending again: it can wait).
func (e *Exporter) queue(ctx context.Context, it *item, wait bool) error {
	e.mu.Lock()
	for wait && e.fatal == nil && e.waitingBytes+len(it.json) > e.limits.maxWaiting {
		e.mu.Unlock()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		e.mu.Lock()
	}
	if e.fatal != nil {
		defer e.mu.Unlock()
		return e.fatal
	}
	if e.waitingBytes+len(it.json) > e.limits.maxWaiting {
		if e.dropped == 0 {
			keeps := "they are counted and said"
			if e.positionPath != "" {
				keeps = "the recording keeps them: a run started again on it sends them"
			}
			fmt.Fprintf(e.errOut, "warning: dropping records for the OpenTelemetry collector at %s: %d records (%d MiB) wait for it already; %s\n",
				e.cfg.Shown, len(e.waiting), e.waitingBytes>>20, keeps)
		}
		if !e.held {
			e.held, e.heldAt = true, e.queued // the position goes no further
		}
		e.dropped++
		e.droppedTotal++
		e.mu.Unlock()
		return nil
	}
	e.queued++
	it.seq = e.queued
	e.waiting = append(e.waiting, it)
	e.waitingBytes += len(it.json)
	full := len(e.waiting) >= maxBatch
	e.mu.Unlock()
	if full {
		e.poke()
	}
	return nil
}

func (e *Exporter) poke() {
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// run sends the records waiting, a batch at a time, each until the
// collector takes it, until Close.
func (e *Exporter) run() {
	defer close(e.done)
	timer := time.NewTimer(e.limits.linger)
	defer timer.Stop()
	// pause waits for a full batch, Close or the linger; false once the
	// exporter is stopped.
	pause := func() bool {
		select {
		case <-e.wake:
		case <-timer.C:
			timer.Reset(e.limits.linger)
		case <-e.ctx.Done():
			return false
		}
		return true
	}
	for {
		batch, closing := e.next()
		if len(batch) == 0 {
			if closing || !pause() {
				return
			}
			continue
		}
		if len(batch) < maxBatch && !closing {
			// Not full: give the stream a moment to add to it.
			if !pause() {
				return
			}
			batch, _ = e.next()
		}
		if !e.send(batch) {
			return
		}
	}
}

// next is the batch at the head of the queue (not removed: send removes
// it once it is sent), and whether Close was called.
func (e *Exporter) next() ([]*item, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	n, size := 0, 0
	for n < len(e.waiting) && n < maxBatch && (n == 0 || size+len(e.waiting[n].json) <= maxBatchBytes) {
		size += len(e.waiting[n].json)
		n++
	}
	return e.waiting[:n:n], e.closing
}

// send sends batch until the collector takes it, backing off between
// attempts, and then removes it from the queue. It returns false when
// sending must stop: the exporter was stopped, or the collector is not
// trusted.
func (e *Exporter) send(batch []*item) bool {
	records := e.records(batch)
	wait := e.limits.minBackoff
	for {
		err := e.logs.Export(e.ctx, records)
		if err == nil {
			e.delivered(batch)
			return true
		}
		if e.ctx.Err() != nil {
			return false
		}
		if untrusted(err) {
			e.mu.Lock()
			e.fatal = e.untrustedError(err)
			e.mu.Unlock()
			return false
		}
		e.failed(err)
		jitter := time.Duration(rand.Int64N(int64(wait)/4 + 1))
		select {
		case <-time.After(wait + jitter):
		case <-e.ctx.Done():
			return false
		}
		wait = min(2*wait, e.limits.maxBackoff)
	}
}

// delivered removes batch, which the collector took, from the queue, and
// says once that the collector is back after failing.
func (e *Exporter) delivered(batch []*item) {
	taken := batch // what moves the position
	e.mu.Lock()
	if e.held {
		for i, it := range batch {
			if it.seq > e.heldAt {
				taken = batch[:i:i]
				break
			}
		}
	}
	e.mu.Unlock()
	if e.positionPath != "" && len(taken) > 0 {
		e.position.advance(taken)
		if err := writePosition(e.positionPath, &e.position); err != nil && !e.positionFailed {
			fmt.Fprintf(e.errOut, "warning: %v; a run started again on the recording may send the collector records it has\n", err)
			e.positionFailed = true
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	size := 0
	for _, it := range batch {
		size += len(it.json)
	}
	clear(e.waiting[:len(batch)])
	e.waiting = e.waiting[len(batch):]
	e.waitingBytes -= size
	e.sent += len(batch)
	if !e.failing.IsZero() {
		msg := fmt.Sprintf("info: the OpenTelemetry collector at %s takes records again after %s", e.cfg.Shown, time.Since(e.failing).Round(100*time.Millisecond))
		if e.dropped > 0 {
			msg += fmt.Sprintf("; %d records were dropped meanwhile (the queue was full)", e.dropped)
			e.dropped = 0
		}
		fmt.Fprintln(e.errOut, msg)
		e.failing, e.lastErr = time.Time{}, nil
	}
}

// failed notes a failed attempt, and says the first of an outage.
func (e *Exporter) failed(err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.failing.IsZero() {
		fmt.Fprintf(e.errOut, "warning: the OpenTelemetry collector at %s does not take records: %v; retrying, %d records wait\n", e.cfg.Shown, err, len(e.waiting))
		e.failing = time.Now()
	}
	e.lastErr = err
}

// records turns batch into the SDK's log records: each emitted through
// the logger of its resource, and captured.
func (e *Exporter) records(batch []*item) []sdklog.Record {
	e.captured.records = e.captured.records[:0]
	now := time.Now()
	for _, it := range batch {
		var r log.Record
		r.SetEventName(eventName(it.kind, it.object.kind))
		r.SetTimestamp(it.time)
		r.SetObservedTimestamp(now)
		body, err := e.parser.bodyOf(it.json)
		if err != nil {
			body = attribute.StringValue(string(it.json)) // never lose it
		}
		sev := it.severity
		if sev == severityInfo && it.subject.kind == "" && it.object.kind == "Event" {
			sev = eventSeverity(body)
		}
		r.SetSeverity(sev)
		r.SetSeverityText(severityText(sev))
		r.SetBody(body)
		if it.id == "" {
			it.id = recordID(it) // here rather than on the stream's goroutine
		}
		r.AddAttributes(logAttributes(it)...)
		ctx := context.Background()
		if it.span.IsValid() {
			ctx = trace.ContextWithSpanContext(ctx, it.span) // the record belongs to that span
		}
		key := resourceKey(it)
		e.loggerFor(key, it).Emit(ctx, r)
		if it.kind == "Deleted" {
			delete(e.loggers, key)
		}
	}
	return e.captured.records
}

// eventSeverity is WARN for the body of an Event record whose object is
// a Warning Event.
func eventSeverity(body attribute.Value) log.Severity {
	for _, kv := range body.AsMap() {
		if kv.Key != "object" || kv.Value.Type() != attribute.MAP {
			continue
		}
		for _, f := range kv.Value.AsMap() {
			if f.Key == "type" && f.Value.AsString() == "Warning" {
				return severityWarn
			}
		}
	}
	return severityInfo
}

// loggerFor is the logger of it's resource, whose resourceKey is key,
// made the first time.
func (e *Exporter) loggerFor(key string, it *item) log.Logger {
	if l, ok := e.loggers[key]; ok {
		return l
	}
	if len(e.loggers) >= maxResources {
		clear(e.loggers)
	}
	attrs := appendObjectResource(append([]attribute.KeyValue(nil), e.base...), it.resourceObject(), e.cluster)
	p := sdklog.NewLoggerProvider(
		sdklog.WithResource(resource.NewSchemaless(attrs...)),
		sdklog.WithProcessor(e.captured),
		sdklog.WithAllowKeyDuplication(), // bodies are JSON objects: their keys are unique
	)
	l := p.Logger(scopeName, log.WithInstrumentationVersion(e.version))
	e.loggers[key] = l
	return l
}

// End is Close with the run's bound: what waits is sent for at most
// flushLimit once the stream has ended.
func (e *Exporter) End() error { return e.Close(flushLimit) }

// Close sends what waits, for at most within, then stops, and says what
// could not be sent. It returns the error that ended sending, if any.
func (e *Exporter) Close(within time.Duration) error {
	began := time.Now()
	defer func() {
		if e.trace == nil {
			return
		}
		if err := e.trace.shutdown(max(within-time.Since(began), time.Second)); err != nil {
			fmt.Fprintf(e.errOut, "warning: the wait's trace was not sent to the OpenTelemetry collector at %s: %v\n", e.cfg.Shown, err)
		}
	}()
	e.mu.Lock()
	e.closing = true
	e.mu.Unlock()
	e.poke()
	select {
	case <-e.done:
	case <-time.After(within):
		e.stop()
		<-e.done
	}
	e.stop()
	_ = e.logs.Shutdown(context.Background())
	e.mu.Lock()
	defer e.mu.Unlock()
	if n := len(e.waiting); n > 0 {
		why := "the collector did not take them"
		if e.lastErr != nil {
			why = e.lastErr.Error()
		}
		fmt.Fprintf(e.errOut, "warning: %d records were not sent to the OpenTelemetry collector at %s before the exit (%s)\n", n, e.cfg.Shown, why)
	}
	if e.droppedTotal > 0 {
		fmt.Fprintf(e.errOut, "warning: dropped %d records for the OpenTelemetry collector at %s (the queue was full while it did not take them)\n", e.droppedTotal, e.cfg.Shown)
	}
	return e.fatal
}

// capture is the Processor of every logger: it keeps what they emit for
// the batch being made. Used on the sender's goroutine only.
type capture struct {
	records []sdklog.Record
}

// OnEmit keeps a copy of r: the SDK's Record is not used after the call.
func (c *capture) OnEmit(_ context.Context, r *sdklog.Record) error {
	c.records = append(c.records, *r)
	return nil
}

// Enabled: every record is kept.
func (c *capture) Enabled(context.Context, sdklog.EnabledParameters) bool { return true }

// Shutdown does nothing: the Exporter's Close ends the export.
func (c *capture) Shutdown(context.Context) error { return nil }

// ForceFlush does nothing: records are sent by the Exporter.
func (c *capture) ForceFlush(context.Context) error { return nil }
