package otlp

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	"google.golang.org/protobuf/proto"

	"github.com/kubectl-deltas/kubectl-deltas/internal/printer"
)

// received is one log record as a fake collector decoded it.
type received struct {
	eventName, severityText string
	severity                int32
	time, observed          time.Time
	body                    any
	attrs, resource         map[string]any
}

// fakeCollector is an OTLP/HTTP logs endpoint that decodes what it is
// sent; fail says, for each request in turn, the status to answer with
// (200 once they run out).
type fakeCollector struct {
	mu       sync.Mutex
	fail     []int
	requests int
	got      []received
}

func (c *fakeCollector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil || r.URL.Path != "/v1/logs" || r.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.requests++
	if len(c.fail) > 0 {
		status := c.fail[0]
		c.fail = c.fail[1:]
		if status != http.StatusOK {
			http.Error(w, "failing on purpose", status)
			return
		}
	}
	var req collogspb.ExportLogsServiceRequest
	if err := proto.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	for _, rl := range req.ResourceLogs {
		res := kvsToGo(rl.GetResource().GetAttributes())
		for _, sl := range rl.ScopeLogs {
			for _, lr := range sl.LogRecords {
				c.got = append(c.got, received{
					eventName: lr.EventName, severityText: lr.SeverityText, severity: int32(lr.SeverityNumber),
					time: time.Unix(0, int64(lr.TimeUnixNano)).UTC(), observed: time.Unix(0, int64(lr.ObservedTimeUnixNano)).UTC(),
					body: anyToGo(lr.Body), attrs: kvsToGo(lr.Attributes), resource: res,
				})
			}
		}
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
	out, _ := proto.Marshal(&collogspb.ExportLogsServiceResponse{})
	_, _ = w.Write(out)
}

func (c *fakeCollector) records() []received {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]received(nil), c.got...)
}

func kvsToGo(kvs []*commonpb.KeyValue) map[string]any {
	m := map[string]any{}
	for _, kv := range kvs {
		m[kv.Key] = anyToGo(kv.Value)
	}
	return m
}

// anyToGo decodes an AnyValue as encoding/json decodes JSON into any,
// but for integers, which stay int64.
func anyToGo(v *commonpb.AnyValue) any {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_BoolValue:
		return x.BoolValue
	case *commonpb.AnyValue_IntValue:
		return x.IntValue
	case *commonpb.AnyValue_DoubleValue:
		return x.DoubleValue
	case *commonpb.AnyValue_ArrayValue:
		out := []any{}
		for _, e := range x.ArrayValue.Values {
			out = append(out, anyToGo(e))
		}
		return out
	case *commonpb.AnyValue_KvlistValue:
		return kvsToGo(x.KvlistValue.Values)
	}
	return nil
}

// jsonToGo decodes js with integers as int64, as anyToGo does.
func jsonToGo(t *testing.T, js []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	return numbers(v)
}

func numbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return n
		}
		f, _ := x.Float64()
		return f
	case []any:
		for i := range x {
			x[i] = numbers(x[i])
		}
	case map[string]any:
		for k := range x {
			x[k] = numbers(x[k])
		}
	}
	return v
}

// newTestExporter is an exporter for the fake collector at url, with
// short waits, and what it says.
func newTestExporter(t *testing.T, url string, getenv func(string) string) (*Exporter, *syncBuffer) {
	t.Helper()
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	cfg, err := (&Flags{Endpoint: url}).Config(getenv)
	if err != nil {
		t.Fatal(err)
	}
	var said syncBuffer
	e, err := New(cfg, "kind-test", "v9.9.9", &said)
	if err != nil {
		t.Fatal(err)
	}
	e.limits = limits{linger: time.Millisecond, minBackoff: time.Millisecond, maxBackoff: 5 * time.Millisecond, maxWaiting: maxWaiting}
	return e, &said
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func sampleRecords(t0 time.Time) []*printer.Record {
	return []*printer.Record{
		{Type: "Updated", Time: t0, APIVersion: "v1", Kind: "Pod", Resource: "pods", Namespace: "demo", Name: "web-1", UID: "u-1", ResourceVersion: "42",
			Health: &printer.Health{Status: "Failed", Reason: "CrashLoopBackOff", Message: "back-off 5m"},
			Object: json.RawMessage(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web-1","labels":{"a":"b"}},"spec":{"priority":0,"ratio":0.5,"list":[1,"two",null,true,{}],"empty":[]},"note":"é \"q\" \u003c"}`)},
		{Type: "Added", Time: t0.Add(time.Second), Initial: true, APIVersion: "events.k8s.io/v1", Kind: "Event", Resource: "events", Namespace: "demo", Name: "web-1.abc", UID: "e-1", ResourceVersion: "43",
			Event:  &printer.Event{APIVersion: "v1", Kind: "Pod", Namespace: "demo", Name: "web-1", UID: "u-1", Type: "Warning", Reason: "BackOff", Message: "Back-off restarting", Count: 3},
			Object: json.RawMessage(`{"kind":"Event","type":"Warning","reason":"BackOff"}`)},
		{Type: "Sync", Time: t0.Add(2 * time.Second), APIVersion: "apps/v1", Kind: "Deployment", Resource: "deployments", Namespace: "demo", Name: "web", UID: "d-1", ResourceVersion: "44", Object: json.RawMessage(`{"kind":"Deployment"}`)},
	}
}

// TestExportsEveryRecordAsItsJSON: each record arrives once, its body the
// JSON -o json prints, with its EventName, time, severity, attributes and
// resource; a Verdict too.
func TestExportsEveryRecordAsItsJSON(t *testing.T) {
	fc := &fakeCollector{}
	srv := httptest.NewServer(fc)
	defer srv.Close()
	e, said := newTestExporter(t, srv.URL, nil)
	if err := e.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 11, 29, 10, 0, 0, 123456789, time.UTC)
	p := e.Feed()
	recs := sampleRecords(t0)
	var want [][]byte
	for _, r := range recs {
		if err := p.Print(nil, r); err != nil {
			t.Fatal(err)
		}
		want = append(want, printer.AppendJSON(nil, r))
	}
	v := &printer.Verdict{Time: t0.Add(3 * time.Second), Outcome: "Failed", Condition: "--fail-when=status=Failed",
		Objects: []printer.VerdictObject{{APIVersion: "v1", Kind: "Pod", Namespace: "demo", Name: "web-1", UID: "u-1"}}}
	if err := p.PrintVerdict(nil, v); err != nil {
		t.Fatal(err)
	}
	want = append(want, printer.AppendVerdictJSON(nil, v))
	if err := e.Close(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	got := fc.records()
	if len(got) != len(want) {
		t.Fatalf("the collector got %d records, want %d; said %q", len(got), len(want), said.String())
	}
	// A request groups its records by resource, in no set order: the
	// records' times, all different here, tell them apart.
	slices.SortFunc(got, func(a, b received) int { return a.time.Compare(b.time) })
	type expect struct {
		event, severity string
		resource        map[string]any
	}
	base := map[string]any{"service.name": "kubectl-deltas", "service.version": "v9.9.9", "k8s.cluster.name": "kind-test"}
	with := func(kv ...string) map[string]any {
		m := map[string]any{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	pod := []string{"k8s.namespace.name", "demo", "k8s.pod.name", "web-1", "k8s.pod.uid", "u-1",
		"k8s.object.api_version", "v1", "k8s.object.kind", "Pod", "k8s.object.name", "web-1", "k8s.object.uid", "u-1"}
	expects := []expect{
		{"k8s.object.updated", "ERROR", with(pod...)},
		{"k8s.event.added", "WARN", with(pod...)}, // beside its subject
		{"k8s.object.sync", "INFO", with("k8s.namespace.name", "demo", "k8s.deployment.name", "web", "k8s.deployment.uid", "d-1",
			"k8s.object.api_version", "apps/v1", "k8s.object.kind", "Deployment", "k8s.object.name", "web", "k8s.object.uid", "d-1")},
		{"k8s.wait.verdict", "ERROR", base},
	}
	times := []time.Time{t0, t0.Add(time.Second), t0.Add(2 * time.Second), t0.Add(3 * time.Second)}
	for i, g := range got {
		if !reflect.DeepEqual(g.body, jsonToGo(t, want[i])) {
			t.Errorf("record %d: body\n%#v\nwant the JSON\n%s", i, g.body, want[i])
		}
		if g.eventName != expects[i].event || g.severityText != expects[i].severity || !g.time.Equal(times[i]) {
			t.Errorf("record %d: %s %s at %s, want %s %s at %s", i, g.eventName, g.severityText, g.time, expects[i].event, expects[i].severity, times[i])
		}
		if !reflect.DeepEqual(g.resource, expects[i].resource) {
			t.Errorf("record %d: resource %v, want %v", i, g.resource, expects[i].resource)
		}
		if id, _ := g.attrs["deltas.record.id"].(string); len(id) != 32 {
			t.Errorf("record %d: id %q", i, id)
		}
		if g.observed.Before(g.time) {
			t.Errorf("record %d: observed %s before its time %s", i, g.observed, g.time)
		}
	}
	if a := got[1].attrs; a["k8s.event.reason"] != "BackOff" || a["k8s.event.name"] != "web-1.abc" || a["k8s.resource.name"] != "events" {
		t.Errorf("the Event's attributes: %v", a)
	}
	if a := got[0].attrs; a["k8s.object.resource_version"] != "42" || a["deltas.record.type"] != "Updated" {
		t.Errorf("the update's attributes: %v", a)
	}
	if said.String() != "" {
		t.Errorf("said %q, want nothing", said.String())
	}
}

// TestRecordIDIsStable: the same record has the same id, another record
// of the object another; a Sync's time is part of it.
func TestRecordIDIsStable(t *testing.T) {
	t0 := time.Unix(1e9, 0)
	a := &item{kind: "Updated", time: t0, object: objectRef{apiVersion: "v1", kind: "Pod", name: "p", uid: "u"}, resource: "pods", resourceVersion: "5"}
	b := *a
	b.time = t0.Add(time.Hour) // sent again later: the same record
	if recordID(a) != recordID(&b) {
		t.Error("the same update has two ids")
	}
	c := *a
	c.resourceVersion = "6"
	d := *a
	d.kind = "Deleted"
	if recordID(a) == recordID(&c) || recordID(a) == recordID(&d) {
		t.Error("different records share an id")
	}
	s1 := *a
	s1.kind, s1.sync = "Sync", true
	s2 := s1
	s2.time = t0.Add(time.Minute)
	if recordID(&s1) == recordID(&s2) {
		t.Error("two resyncs of one state share an id")
	}
}

// TestRetriesUntilTheCollectorTakes: a collector failing its first
// requests gets every record once; the outage is said once, and its end.
func TestRetriesUntilTheCollectorTakes(t *testing.T) {
	fc := &fakeCollector{fail: []int{503, 503, 502, 429}}
	srv := httptest.NewServer(fc)
	defer srv.Close()
	e, said := newTestExporter(t, srv.URL, nil)
	if err := e.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	p := e.Feed()
	const n = 1500
	for i := range n {
		r := sampleRecords(time.Unix(int64(i), 0))[2]
		r.ResourceVersion = string(rune('a'+i%26)) + strings.Repeat("x", i%7) + time.Unix(int64(i), 0).Format("150405")
		r.Type = "Updated"
		if err := p.Print(nil, r); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Close(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	got := fc.records()
	ids := map[string]int{}
	for _, g := range got {
		ids[g.attrs["deltas.record.id"].(string)]++
	}
	if len(got) != n || len(ids) != n {
		t.Fatalf("the collector got %d records, %d distinct, want %d once each", len(got), len(ids), n)
	}
	s := said.String()
	if strings.Count(s, "warning: the OpenTelemetry collector at "+srv.URL+" does not take records") != 1 || strings.Count(s, "takes records again after") != 1 {
		t.Errorf("said %q, want one warning and one recovery", s)
	}
}

// TestUnreachableAtStart: a collector that does not answer is a warning,
// not an error; what could not be sent by the exit is said.
func TestUnreachableAtStart(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	e, said := newTestExporter(t, "http://"+addr, nil)
	if err := e.Start(context.Background()); err != nil {
		t.Fatalf("an unreachable collector ended the run: %v", err)
	}
	for _, r := range sampleRecords(time.Unix(0, 0)) {
		if err := e.Feed().Print(nil, r); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Close(50 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	s := said.String()
	for _, want := range []string{"warning: cannot reach the OpenTelemetry collector at http://" + addr, "warning: 3 records were not sent to the OpenTelemetry collector"} {
		if !strings.Contains(s, want) {
			t.Errorf("said %q, want %q", s, want)
		}
	}
}

// TestFullQueueDropsAndSays: past the queue's bound, records are dropped,
// counted and said — never silently.
func TestFullQueueDropsAndSays(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	e, said := newTestExporter(t, "http://"+addr, nil)
	e.limits.maxWaiting = 1000
	if err := e.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		r := sampleRecords(time.Unix(int64(i), 0))[2]
		if err := e.Feed().Print(nil, r); err != nil {
			t.Fatal(err)
		}
	}
	_ = e.Close(20 * time.Millisecond)
	s := said.String()
	kept := 1000 / len(printer.AppendJSON(nil, sampleRecords(time.Unix(0, 0))[2]))
	if !strings.Contains(s, "warning: dropping records for the OpenTelemetry collector") ||
		!strings.Contains(s, "warning: dropped "+strconv.Itoa(50-kept)+" records for the OpenTelemetry collector") {
		t.Errorf("said %q, want the drops said and counted (%d)", s, 50-kept)
	}
}

// TestCertificateThatDoesNotVerify: an https collector whose certificate
// does not verify is an error at start; with its CA in
// OTEL_EXPORTER_OTLP_CERTIFICATE records go through.
func TestCertificateThatDoesNotVerify(t *testing.T) {
	fc := &fakeCollector{}
	srv := httptest.NewUnstartedServer(fc)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshake it refuses is the test
	srv.StartTLS()
	defer srv.Close()
	e, _ := newTestExporter(t, srv.URL, nil)
	err := e.Start(context.Background())
	if err == nil || !strings.Contains(err.Error(), "does not verify") || !strings.Contains(err.Error(), "OTEL_EXPORTER_OTLP_CERTIFICATE") {
		t.Fatalf("Start: %v, want an error saying the certificate does not verify", err)
	}
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	e, said := newTestExporter(t, srv.URL, func(k string) string {
		if k == "OTEL_EXPORTER_OTLP_CERTIFICATE" {
			return ca
		}
		return ""
	})
	if err := e.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := e.Feed().Print(nil, sampleRecords(time.Unix(0, 0))[0]); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	if n := len(fc.records()); n != 1 {
		t.Errorf("the collector got %d records, want 1; said %q", n, said.String())
	}
}

// TestSDKErrorsAreWarnings: what the SDK reports on its own is a warning
// of the run's, said once.
func TestSDKErrorsAreWarnings(t *testing.T) {
	_, said := newTestExporter(t, "http://127.0.0.1:1", nil)
	for range 3 {
		otel.Handle(errors.New("traces export: connection refused"))
	}
	if s := said.String(); s != "warning: OpenTelemetry: traces export: connection refused\n" {
		t.Errorf("said %q, want the error once, as a warning", s)
	}
}
