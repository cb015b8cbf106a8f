package e2e

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kubectl-deltas/kubectl-deltas/test/controlplane"
)

// collector is a real OpenTelemetry Collector (bin/otelcol, built by
// "make otelcol" from hack/otelcol) run with hack/otelcol/collector.yaml: an
// OTLP/HTTP receiver on a free 127.0.0.1 port and file exporters that write
// what it receives, as OTLP JSON, to files of the test's temporary
// directory. The files are opened in append mode, so what arrived before a
// Stop and Start is kept.
type collector struct {
	t          *testing.T
	bin        string
	config     string
	endpoint   string // 127.0.0.1:PORT
	logsFile   string
	tracesFile string
	outFile    string // the collector's stdout and stderr, every run
	run        *collectorRun
}

// collectorRun is one run of the collector process.
type collectorRun struct {
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
	err  error         // cmd.Wait's, set before done is closed
}

// startCollector starts a collector for the test; it is killed when the
// test ends, however it ends.
func startCollector(t *testing.T) *collector {
	t.Helper()
	return startCollectorAt(t, "")
}

// startCollectorAt is startCollector on endpoint (HOST:PORT; "" for a
// free loopback port): the docs' recipes post to the default port.
func startCollectorAt(t *testing.T, endpoint string) *collector {
	t.Helper()
	root, err := controlplane.FindRepoRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	c := &collector{
		t:      t,
		bin:    filepath.Join(root, "bin", "otelcol"),
		config: filepath.Join(root, "hack", "otelcol", "collector.yaml"),
	}
	if _, err := os.Stat(c.bin); err != nil {
		t.Fatalf("the OpenTelemetry Collector is not built (%v): run \"make otelcol\" first", err)
	}
	// TempDir before Cleanup: cleanups run last-in first-out, so the
	// collector is gone before its directory is removed.
	dir := t.TempDir()
	c.logsFile = filepath.Join(dir, "logs.json")
	c.tracesFile = filepath.Join(dir, "traces.json")
	c.outFile = filepath.Join(dir, "otelcol.log")
	c.endpoint = endpoint
	if endpoint == "" {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		c.endpoint = l.Addr().String()
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(c.kill)
	c.Start()
	return c
}

// URL is the base URL of the OTLP/HTTP receiver: http://127.0.0.1:PORT.
func (c *collector) URL() string { return "http://" + c.endpoint }

// Start starts the collector, again after a Stop, on the same port and
// files, and waits until its receiver accepts requests.
func (c *collector) Start() {
	c.t.Helper()
	if c.run != nil {
		c.t.Fatal("collector: Start while it runs")
	}
	out, err := os.OpenFile(c.outFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		c.t.Fatal(err)
	}
	defer out.Close() // the child has its own copy
	cmd := exec.Command(c.bin, "--config="+c.config)
	cmd.Env = append(os.Environ(),
		"OTLP_HTTP_ENDPOINT="+c.endpoint,
		"OTLP_LOGS_FILE="+c.logsFile,
		"OTLP_TRACES_FILE="+c.tracesFile,
	)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		c.t.Fatalf("starting %s: %v", c.bin, err)
	}
	run := &collectorRun{cmd: cmd, done: make(chan struct{})}
	go func() {
		run.err = cmd.Wait()
		close(run.done)
	}()
	c.run = run
	c.waitReady(30 * time.Second)
}

// waitReady polls the receiver with an empty logs request, which it
// answers without passing anything on, until it answers 200.
func (c *collector) waitReady(within time.Duration) {
	c.t.Helper()
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(within)
	var last error
	for {
		select {
		case <-c.run.done:
			err := c.run.err
			c.run = nil
			c.t.Fatalf("collector exited before it was ready (%v):\n%s", err, c.output())
		default:
		}
		resp, err := client.Post(c.URL()+"/v1/logs", "application/json", strings.NewReader("{}"))
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
			err = fmt.Errorf("status %s", resp.Status)
		}
		last = err
		if time.Now().After(deadline) {
			c.t.Fatalf("collector not ready on %s after %v (%v):\n%s", c.endpoint, within, last, c.output())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Stop stops the collector, which flushes what it holds to the files, and
// waits for it to exit: its port then refuses connections. It is killed if
// it takes more than 10 seconds.
func (c *collector) Stop() {
	c.t.Helper()
	if c.run == nil {
		return
	}
	_ = syscall.Kill(-c.run.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-c.run.done:
		c.run = nil
	case <-time.After(10 * time.Second):
		c.kill()
		c.t.Fatalf("collector did not stop within 10s of SIGTERM:\n%s", c.output())
	}
}

// kill kills the collector and its process group, if it runs, and waits.
func (c *collector) kill() {
	if c.run == nil {
		return
	}
	_ = syscall.Kill(-c.run.cmd.Process.Pid, syscall.SIGKILL)
	<-c.run.done
	c.run = nil
}

// output is what the collector printed, for failure messages.
func (c *collector) output() string {
	data, err := os.ReadFile(c.outFile)
	if err != nil {
		return err.Error()
	}
	return string(data)
}

// exportedLog is one log record the collector received, decoded from its
// logs file. Values (Body, Attributes, Resource) are plain Go values: an
// OTLP kvlist is a map[string]any, an array a []any, a string a string, an
// int an int64, a double a float64, a bool a bool, bytes a []byte and an
// empty value nil.
type exportedLog struct {
	EventName            string
	TimeUnixNano         int64
	ObservedTimeUnixNano int64
	SeverityNumber       int
	SeverityText         string
	Body                 any
	Attributes           map[string]any
	Resource             map[string]any
	Scope                string // the instrumentation scope's name
	TraceID              string // hex, "" when unset
	SpanID               string
}

// exportedSpan is one span the collector received, decoded from its traces
// file, its values as exportedLog's.
type exportedSpan struct {
	Name              string
	TraceID           string
	SpanID            string
	ParentSpanID      string
	Kind              int
	StartTimeUnixNano int64
	EndTimeUnixNano   int64
	StatusCode        int // 0 unset, 1 ok, 2 error
	StatusMessage     string
	Attributes        map[string]any
	Resource          map[string]any
	Scope             string
	Events            []exportedSpanEvent
}

type exportedSpanEvent struct {
	Name         string
	TimeUnixNano int64
	Attributes   map[string]any
}

// The OTLP JSON the file exporter writes, one object per line (per batch).
// Integers of 64 bits are strings there; json.Number takes both forms.
type (
	otlpLogsLine struct {
		ResourceLogs []struct {
			Resource  otlpResource `json:"resource"`
			ScopeLogs []struct {
				Scope      otlpScope       `json:"scope"`
				LogRecords []otlpLogRecord `json:"logRecords"`
			} `json:"scopeLogs"`
		} `json:"resourceLogs"`
	}
	otlpTracesLine struct {
		ResourceSpans []struct {
			Resource   otlpResource `json:"resource"`
			ScopeSpans []struct {
				Scope otlpScope  `json:"scope"`
				Spans []otlpSpan `json:"spans"`
			} `json:"scopeSpans"`
		} `json:"resourceSpans"`
	}
	otlpResource struct {
		Attributes []otlpKeyValue `json:"attributes"`
	}
	otlpScope struct {
		Name string `json:"name"`
	}
	otlpLogRecord struct {
		EventName            string         `json:"eventName"`
		TimeUnixNano         json.Number    `json:"timeUnixNano"`
		ObservedTimeUnixNano json.Number    `json:"observedTimeUnixNano"`
		SeverityNumber       int            `json:"severityNumber"`
		SeverityText         string         `json:"severityText"`
		Body                 otlpAnyValue   `json:"body"`
		Attributes           []otlpKeyValue `json:"attributes"`
		TraceID              string         `json:"traceId"`
		SpanID               string         `json:"spanId"`
	}
	otlpSpan struct {
		TraceID           string         `json:"traceId"`
		SpanID            string         `json:"spanId"`
		ParentSpanID      string         `json:"parentSpanId"`
		Name              string         `json:"name"`
		Kind              int            `json:"kind"`
		StartTimeUnixNano json.Number    `json:"startTimeUnixNano"`
		EndTimeUnixNano   json.Number    `json:"endTimeUnixNano"`
		Attributes        []otlpKeyValue `json:"attributes"`
		Events            []struct {
			TimeUnixNano json.Number    `json:"timeUnixNano"`
			Name         string         `json:"name"`
			Attributes   []otlpKeyValue `json:"attributes"`
		} `json:"events"`
		Status struct {
			Message string `json:"message"`
			Code    int    `json:"code"`
		} `json:"status"`
	}
	otlpKeyValue struct {
		Key   string       `json:"key"`
		Value otlpAnyValue `json:"value"`
	}
	otlpAnyValue struct {
		StringValue *string         `json:"stringValue"`
		BoolValue   *bool           `json:"boolValue"`
		IntValue    *json.Number    `json:"intValue"`
		DoubleValue json.RawMessage `json:"doubleValue"` // a number, or "NaN", "Infinity"…
		BytesValue  *string         `json:"bytesValue"`  // base64
		ArrayValue  *struct {
			Values []otlpAnyValue `json:"values"`
		} `json:"arrayValue"`
		KvlistValue *struct {
			Values []otlpKeyValue `json:"values"`
		} `json:"kvlistValue"`
	}
)

// value decodes an OTLP AnyValue into a plain Go value.
func (v otlpAnyValue) value() (any, error) {
	switch {
	case v.StringValue != nil:
		return *v.StringValue, nil
	case v.BoolValue != nil:
		return *v.BoolValue, nil
	case v.IntValue != nil:
		return v.IntValue.Int64()
	case v.DoubleValue != nil:
		return strconv.ParseFloat(strings.Trim(string(v.DoubleValue), `"`), 64)
	case v.BytesValue != nil:
		return base64.StdEncoding.DecodeString(*v.BytesValue)
	case v.ArrayValue != nil:
		out := make([]any, 0, len(v.ArrayValue.Values))
		for _, e := range v.ArrayValue.Values {
			ev, err := e.value()
			if err != nil {
				return nil, err
			}
			out = append(out, ev)
		}
		return out, nil
	case v.KvlistValue != nil:
		m, err := otlpMap(v.KvlistValue.Values)
		if m == nil && err == nil {
			m = map[string]any{} // an empty kvlist is still a map
		}
		return m, err
	}
	return nil, nil
}

// otlpMap decodes attributes (or a kvlist) into a map, nil when empty.
func otlpMap(kvs []otlpKeyValue) (map[string]any, error) {
	if len(kvs) == 0 {
		return nil, nil
	}
	m := make(map[string]any, len(kvs))
	for _, kv := range kvs {
		v, err := kv.Value.value()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", kv.Key, err)
		}
		m[kv.Key] = v
	}
	return m, nil
}

// otlpNanos parses a timestamp in nanoseconds, 0 when absent.
func otlpNanos(n json.Number) (int64, error) {
	if n == "" {
		return 0, nil
	}
	return n.Int64()
}

// completeLines reads the whole lines of path, one JSON object a line: a
// last line the collector is still writing (no newline yet) is left out,
// and a file not written yet has none.
func completeLines(t *testing.T, path string) [][]byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	data = data[:bytes.LastIndexByte(data, '\n')+1]
	var lines [][]byte
	for _, line := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(line)) > 0 {
			lines = append(lines, line)
		}
	}
	return lines
}

// Logs returns every log record the collector has written so far, in the
// order received.
func (c *collector) Logs(t *testing.T) []exportedLog {
	t.Helper()
	var out []exportedLog
	for i, line := range completeLines(t, c.logsFile) {
		var doc otlpLogsLine
		if err := json.Unmarshal(line, &doc); err != nil {
			t.Fatalf("logs file line %d: %v\n%s", i+1, err, line)
		}
		for _, rl := range doc.ResourceLogs {
			resource, err := otlpMap(rl.Resource.Attributes)
			if err != nil {
				t.Fatalf("logs file line %d: resource: %v", i+1, err)
			}
			for _, sl := range rl.ScopeLogs {
				for _, r := range sl.LogRecords {
					l, err := decodeLogRecord(r)
					if err != nil {
						t.Fatalf("logs file line %d: %v\n%s", i+1, err, line)
					}
					l.Resource, l.Scope = resource, sl.Scope.Name
					out = append(out, l)
				}
			}
		}
	}
	return out
}

func decodeLogRecord(r otlpLogRecord) (exportedLog, error) {
	l := exportedLog{
		EventName:      r.EventName,
		SeverityNumber: r.SeverityNumber,
		SeverityText:   r.SeverityText,
		TraceID:        r.TraceID,
		SpanID:         r.SpanID,
	}
	var err error
	if l.TimeUnixNano, err = otlpNanos(r.TimeUnixNano); err != nil {
		return l, fmt.Errorf("timeUnixNano: %w", err)
	}
	if l.ObservedTimeUnixNano, err = otlpNanos(r.ObservedTimeUnixNano); err != nil {
		return l, fmt.Errorf("observedTimeUnixNano: %w", err)
	}
	if l.Body, err = r.Body.value(); err != nil {
		return l, fmt.Errorf("body: %w", err)
	}
	if l.Attributes, err = otlpMap(r.Attributes); err != nil {
		return l, fmt.Errorf("attributes: %w", err)
	}
	return l, nil
}

// Spans returns every span the collector has written so far, in the order
// received.
func (c *collector) Spans(t *testing.T) []exportedSpan {
	t.Helper()
	var out []exportedSpan
	for i, line := range completeLines(t, c.tracesFile) {
		var doc otlpTracesLine
		if err := json.Unmarshal(line, &doc); err != nil {
			t.Fatalf("traces file line %d: %v\n%s", i+1, err, line)
		}
		for _, rs := range doc.ResourceSpans {
			resource, err := otlpMap(rs.Resource.Attributes)
			if err != nil {
				t.Fatalf("traces file line %d: resource: %v", i+1, err)
			}
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					span, err := decodeSpan(s)
					if err != nil {
						t.Fatalf("traces file line %d: span %q: %v\n%s", i+1, s.Name, err, line)
					}
					span.Resource, span.Scope = resource, ss.Scope.Name
					out = append(out, span)
				}
			}
		}
	}
	return out
}

func decodeSpan(s otlpSpan) (exportedSpan, error) {
	span := exportedSpan{
		Name:          s.Name,
		TraceID:       s.TraceID,
		SpanID:        s.SpanID,
		ParentSpanID:  s.ParentSpanID,
		Kind:          s.Kind,
		StatusCode:    s.Status.Code,
		StatusMessage: s.Status.Message,
	}
	var err error
	if span.StartTimeUnixNano, err = otlpNanos(s.StartTimeUnixNano); err != nil {
		return span, fmt.Errorf("startTimeUnixNano: %w", err)
	}
	if span.EndTimeUnixNano, err = otlpNanos(s.EndTimeUnixNano); err != nil {
		return span, fmt.Errorf("endTimeUnixNano: %w", err)
	}
	if span.Attributes, err = otlpMap(s.Attributes); err != nil {
		return span, fmt.Errorf("attributes: %w", err)
	}
	for _, e := range s.Events {
		ev := exportedSpanEvent{Name: e.Name}
		if ev.TimeUnixNano, err = otlpNanos(e.TimeUnixNano); err != nil {
			return span, fmt.Errorf("event %q: timeUnixNano: %w", e.Name, err)
		}
		if ev.Attributes, err = otlpMap(e.Attributes); err != nil {
			return span, fmt.Errorf("event %q: attributes: %w", e.Name, err)
		}
		span.Events = append(span.Events, ev)
	}
	return span, nil
}

// waitLogs polls the logs file until at least n log records arrived, and
// returns them all; the test fails if they do not within the time given.
func (c *collector) waitLogs(t *testing.T, n int, within time.Duration) []exportedLog {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		logs := c.Logs(t)
		if len(logs) >= n {
			return logs
		}
		if time.Now().After(deadline) {
			t.Fatalf("collector: %d log records after %v, want at least %d: %+v\n%s", len(logs), within, n, logs, c.output())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitSpans is waitLogs for spans.
func (c *collector) waitSpans(t *testing.T, n int, within time.Duration) []exportedSpan {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		spans := c.Spans(t)
		if len(spans) >= n {
			return spans
		}
		if time.Now().After(deadline) {
			t.Fatalf("collector: %d spans after %v, want at least %d: %+v\n%s", len(spans), within, n, spans, c.output())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// postOTLP sends one OTLP/HTTP JSON request to the receiver's path
// (/v1/logs, /v1/traces) and returns the error of the round trip; any
// status but 200 fails the test.
func postOTLP(t *testing.T, baseURL, path, body string) error {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, baseURL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: %s: %s", path, resp.Status, answer)
	}
	return nil
}

// The records of TestCollectorReceivesOTLP, in OTLP/HTTP JSON.
const (
	testLogsRequest = `{"resourceLogs":[{
	"resource":{"attributes":[
		{"key":"service.name","value":{"stringValue":"kubectl-deltas"}},
		{"key":"k8s.cluster.uid","value":{"intValue":"-7"}}]},
	"scopeLogs":[{"scope":{"name":"kubectl-deltas/e2e","version":"1"},"logRecords":[{
		"timeUnixNano":"1767225600123456789",
		"observedTimeUnixNano":"1767225601987654321",
		"severityNumber":13,"severityText":"WARN",
		"eventName":"k8s.object.modified",
		"traceId":"5b8efff798038103d269b633813fc60c","spanId":"eee19b7ec3c1b174",
		"body":{"kvlistValue":{"values":[
			{"key":"object","value":{"kvlistValue":{"values":[
				{"key":"metadata","value":{"kvlistValue":{"values":[{"key":"name","value":{"stringValue":"web"}}]}}},
				{"key":"empty","value":{"kvlistValue":{}}}]}}},
			{"key":"generation","value":{"intValue":"9007199254740993"}},
			{"key":"type","value":{"stringValue":"MODIFIED"}},
			{"key":"ratio","value":{"doubleValue":0.25}},
			{"key":"ready","value":{"boolValue":false}},
			{"key":"list","value":{"arrayValue":{"values":[{"stringValue":"a"},{"intValue":"2"},{}]}}},
			{"key":"raw","value":{"bytesValue":"aGk="}},
			{"key":"none","value":{}}]}},
		"attributes":[
			{"key":"k8s.resource.name","value":{"stringValue":"deployments"}},
			{"key":"k8s.deltas.count","value":{"intValue":"3"}}]}]}]}]}`
	testTracesRequest = `{"resourceSpans":[{
	"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"kubectl-deltas"}}]},
	"scopeSpans":[{"scope":{"name":"kubectl-deltas/e2e"},"spans":[
		{"traceId":"5b8efff798038103d269b633813fc60c","spanId":"1111111111111111",
		 "name":"watch","kind":1,
		 "startTimeUnixNano":"1767225600000000000","endTimeUnixNano":"1767225660000000000",
		 "attributes":[{"key":"k8s.namespace.name","value":{"stringValue":"default"}}],
		 "status":{"code":1}},
		{"traceId":"5b8efff798038103d269b633813fc60c","spanId":"2222222222222222",
		 "parentSpanId":"1111111111111111","name":"relist","kind":3,
		 "startTimeUnixNano":"1767225610000000000","endTimeUnixNano":"1767225610500000000",
		 "attributes":[{"key":"http.response.status_code","value":{"intValue":"410"}}],
		 "events":[{"timeUnixNano":"1767225610250000000","name":"gone",
		   "attributes":[{"key":"resourceVersion","value":{"stringValue":"42"}}]}],
		 "status":{"code":2,"message":"410 Gone"}}]}]}]}`
	testSecondLogRequest = `{"resourceLogs":[{"scopeLogs":[{"logRecords":[
		{"eventName":"after.restart","timeUnixNano":"1767225700000000000","body":{"stringValue":"again"}}]}]}]}`
)

// TestCollectorReceivesOTLP checks the test collector and the decoding of
// what it writes: a log record and two spans, every field, sent as
// OTLP/HTTP JSON, then a restart that keeps them and takes one more.
func TestCollectorReceivesOTLP(t *testing.T) {
	c := startCollector(t)
	if err := postOTLP(t, c.URL(), "/v1/logs", testLogsRequest); err != nil {
		t.Fatal(err)
	}
	if err := postOTLP(t, c.URL(), "/v1/traces", testTracesRequest); err != nil {
		t.Fatal(err)
	}

	wantLog := exportedLog{
		EventName:            "k8s.object.modified",
		TimeUnixNano:         1767225600123456789,
		ObservedTimeUnixNano: 1767225601987654321,
		SeverityNumber:       13,
		SeverityText:         "WARN",
		Body: map[string]any{
			"object": map[string]any{
				"metadata": map[string]any{"name": "web"},
				"empty":    map[string]any{},
			},
			"generation": int64(9007199254740993), // not a float64's
			"type":       "MODIFIED",
			"ratio":      0.25,
			"ready":      false,
			"list":       []any{"a", int64(2), nil},
			"raw":        []byte("hi"),
			"none":       nil,
		},
		Attributes: map[string]any{"k8s.resource.name": "deployments", "k8s.deltas.count": int64(3)},
		Resource:   map[string]any{"service.name": "kubectl-deltas", "k8s.cluster.uid": int64(-7)},
		Scope:      "kubectl-deltas/e2e",
		TraceID:    "5b8efff798038103d269b633813fc60c",
		SpanID:     "eee19b7ec3c1b174",
	}
	logs := c.waitLogs(t, 1, 10*time.Second)
	if len(logs) != 1 || !reflect.DeepEqual(logs[0], wantLog) {
		t.Fatalf("logs:\n got %#v\nwant %#v", logs, []exportedLog{wantLog})
	}
	if got := time.Unix(0, logs[0].TimeUnixNano).UTC(); !got.Equal(time.Date(2026, 1, 1, 0, 0, 0, 123456789, time.UTC)) {
		t.Errorf("log time %v", got)
	}

	resource := map[string]any{"service.name": "kubectl-deltas"}
	wantSpans := []exportedSpan{{
		Name: "watch", TraceID: "5b8efff798038103d269b633813fc60c", SpanID: "1111111111111111",
		Kind: 1, StartTimeUnixNano: 1767225600000000000, EndTimeUnixNano: 1767225660000000000,
		StatusCode: 1, Attributes: map[string]any{"k8s.namespace.name": "default"},
		Resource: resource, Scope: "kubectl-deltas/e2e",
	}, {
		Name: "relist", TraceID: "5b8efff798038103d269b633813fc60c", SpanID: "2222222222222222",
		ParentSpanID: "1111111111111111", Kind: 3,
		StartTimeUnixNano: 1767225610000000000, EndTimeUnixNano: 1767225610500000000,
		StatusCode: 2, StatusMessage: "410 Gone",
		Attributes: map[string]any{"http.response.status_code": int64(410)},
		Resource:   resource, Scope: "kubectl-deltas/e2e",
		Events: []exportedSpanEvent{{
			Name: "gone", TimeUnixNano: 1767225610250000000,
			Attributes: map[string]any{"resourceVersion": "42"},
		}},
	}}
	if spans := c.waitSpans(t, 2, 10*time.Second); !reflect.DeepEqual(spans, wantSpans) {
		t.Fatalf("spans:\n got %#v\nwant %#v", spans, wantSpans)
	}

	// Stopped, the collector refuses; started again, it keeps what it had.
	c.Stop()
	err := postOTLP(t, c.URL(), "/v1/logs", testSecondLogRequest)
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("POST to a stopped collector: %v, want connection refused", err)
	}
	c.Start()
	if err := postOTLP(t, c.URL(), "/v1/logs", testSecondLogRequest); err != nil {
		t.Fatal(err)
	}
	logs = c.waitLogs(t, 2, 10*time.Second)
	wantSecond := exportedLog{EventName: "after.restart", TimeUnixNano: 1767225700000000000, Body: "again"}
	if len(logs) != 2 || !reflect.DeepEqual(logs[0], wantLog) || !reflect.DeepEqual(logs[1], wantSecond) {
		t.Fatalf("logs after a restart:\n got %#v\nwant %#v", logs, []exportedLog{wantLog, wantSecond})
	}
	if spans := c.Spans(t); !reflect.DeepEqual(spans, wantSpans) {
		t.Fatalf("spans after a restart:\n got %#v\nwant %#v", spans, wantSpans)
	}
}
