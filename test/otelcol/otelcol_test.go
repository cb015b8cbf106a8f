package otelcol_test

import (
	"errors"
	"io"
	"net/http"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kubectl-deltas/kubectl-deltas/test/controlplane"
	"github.com/kubectl-deltas/kubectl-deltas/test/otelcol"
)

// start starts the collector for the test, killed when it ends.
func start(t *testing.T) *otelcol.Collector {
	t.Helper()
	root, err := controlplane.FindRepoRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	c, err := otelcol.Start(t.Context(), otelcol.Options{Root: root, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Kill)
	return c
}

// waitFor polls read until it returns at least n items, for at most 10
// seconds, and returns what it read last.
func waitFor[T any](t *testing.T, read func() ([]T, error), n int) []T {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, err := read()
		if err != nil {
			t.Fatal(err)
		}
		if len(got) >= n || time.Now().After(deadline) {
			return got
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

// TestCollectorReceivesOTLP checks the collector and the decoding of
// what it writes: a log record and two spans, every field, sent as
// OTLP/HTTP JSON, then a restart that keeps them and takes one more.
func TestCollectorReceivesOTLP(t *testing.T) {
	c := start(t)
	if err := postOTLP(t, c.URL(), "/v1/logs", testLogsRequest); err != nil {
		t.Fatal(err)
	}
	if err := postOTLP(t, c.URL(), "/v1/traces", testTracesRequest); err != nil {
		t.Fatal(err)
	}

	wantLog := otelcol.ReceivedLog{
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
	logs := waitFor(t, c.Logs, 1)
	if len(logs) != 1 || !reflect.DeepEqual(logs[0], wantLog) {
		t.Fatalf("logs:\n got %#v\nwant %#v", logs, []otelcol.ReceivedLog{wantLog})
	}
	if got := time.Unix(0, logs[0].TimeUnixNano).UTC(); !got.Equal(time.Date(2026, 1, 1, 0, 0, 0, 123456789, time.UTC)) {
		t.Errorf("log time %v", got)
	}

	resource := map[string]any{"service.name": "kubectl-deltas"}
	wantSpans := []otelcol.ReceivedSpan{{
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
		Events: []otelcol.SpanEvent{{
			Name: "gone", TimeUnixNano: 1767225610250000000,
			Attributes: map[string]any{"resourceVersion": "42"},
		}},
	}}
	if spans := waitFor(t, c.Spans, 2); !reflect.DeepEqual(spans, wantSpans) {
		t.Fatalf("spans:\n got %#v\nwant %#v", spans, wantSpans)
	}

	// Stopped, the collector refuses; started again, it keeps what it had.
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	err := postOTLP(t, c.URL(), "/v1/logs", testSecondLogRequest)
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("POST to a stopped collector: %v, want connection refused", err)
	}
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := postOTLP(t, c.URL(), "/v1/logs", testSecondLogRequest); err != nil {
		t.Fatal(err)
	}
	logs = waitFor(t, c.Logs, 2)
	wantSecond := otelcol.ReceivedLog{EventName: "after.restart", TimeUnixNano: 1767225700000000000, Body: "again"}
	if len(logs) != 2 || !reflect.DeepEqual(logs[0], wantLog) || !reflect.DeepEqual(logs[1], wantSecond) {
		t.Fatalf("logs after a restart:\n got %#v\nwant %#v", logs, []otelcol.ReceivedLog{wantLog, wantSecond})
	}
	if n, err := otelcol.CountLogs(c.LogsFile); err != nil || n != 2 {
		t.Errorf("CountLogs: %d (%v), want 2", n, err)
	}
	if spans, err := c.Spans(); err != nil || !reflect.DeepEqual(spans, wantSpans) {
		t.Fatalf("spans after a restart (%v):\n got %#v\nwant %#v", err, spans, wantSpans)
	}
}
