package otelcol

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// ReceivedLog is one log record the collector received, decoded from its
// logs file. Values (Body, Attributes, Resource) are plain Go values: an
// OTLP kvlist is a map[string]any, an array a []any, a string a string, an
// int an int64, a double a float64, a bool a bool, bytes a []byte and an
// empty value nil.
type ReceivedLog struct {
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

// ReceivedSpan is one span the collector received, decoded from its traces
// file, its values as ReceivedLog's.
type ReceivedSpan struct {
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
	Events            []SpanEvent
}

// SpanEvent is an event of a ReceivedSpan.
type SpanEvent struct {
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
func completeLines(path string) ([][]byte, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	data = data[:bytes.LastIndexByte(data, '\n')+1]
	var lines [][]byte
	for _, line := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(line)) > 0 {
			lines = append(lines, line)
		}
	}
	return lines, nil
}

// ReadLogs returns every log record of a logs file (Collector.LogsFile)
// written so far, in the order received.
func ReadLogs(path string) ([]ReceivedLog, error) {
	lines, err := completeLines(path)
	if err != nil {
		return nil, err
	}
	var out []ReceivedLog
	for i, line := range lines {
		var doc otlpLogsLine
		if err := json.Unmarshal(line, &doc); err != nil {
			return nil, fmt.Errorf("%s, line %d: %w", path, i+1, err)
		}
		for _, rl := range doc.ResourceLogs {
			resource, err := otlpMap(rl.Resource.Attributes)
			if err != nil {
				return nil, fmt.Errorf("%s, line %d: resource: %w", path, i+1, err)
			}
			for _, sl := range rl.ScopeLogs {
				for _, r := range sl.LogRecords {
					l, err := decodeLogRecord(r)
					if err != nil {
						return nil, fmt.Errorf("%s, line %d: %w", path, i+1, err)
					}
					l.Resource, l.Scope = resource, sl.Scope.Name
					out = append(out, l)
				}
			}
		}
	}
	return out, nil
}

func decodeLogRecord(r otlpLogRecord) (ReceivedLog, error) {
	l := ReceivedLog{
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

// ReadSpans returns every span of a traces file (Collector.TracesFile)
// written so far, in the order received.
func ReadSpans(path string) ([]ReceivedSpan, error) {
	lines, err := completeLines(path)
	if err != nil {
		return nil, err
	}
	var out []ReceivedSpan
	for i, line := range lines {
		var doc otlpTracesLine
		if err := json.Unmarshal(line, &doc); err != nil {
			return nil, fmt.Errorf("%s, line %d: %w", path, i+1, err)
		}
		for _, rs := range doc.ResourceSpans {
			resource, err := otlpMap(rs.Resource.Attributes)
			if err != nil {
				return nil, fmt.Errorf("%s, line %d: resource: %w", path, i+1, err)
			}
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					span, err := decodeSpan(s)
					if err != nil {
						return nil, fmt.Errorf("%s, line %d: span %q: %w", path, i+1, s.Name, err)
					}
					span.Resource, span.Scope = resource, ss.Scope.Name
					out = append(out, span)
				}
			}
		}
	}
	return out, nil
}

func decodeSpan(s otlpSpan) (ReceivedSpan, error) {
	span := ReceivedSpan{
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
		ev := SpanEvent{Name: e.Name}
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

// Logs is ReadLogs of the collector's logs file.
func (c *Collector) Logs() ([]ReceivedLog, error) { return ReadLogs(c.LogsFile) }

// Spans is ReadSpans of the collector's traces file.
func (c *Collector) Spans() ([]ReceivedSpan, error) { return ReadSpans(c.TracesFile) }

// otlpLogsCount is a line of a logs file as CountLogs reads it: the log
// records left undecoded.
type otlpLogsCount struct {
	ResourceLogs []struct {
		ScopeLogs []struct {
			LogRecords []json.RawMessage `json:"logRecords"`
		} `json:"scopeLogs"`
	} `json:"resourceLogs"`
}

// CountLogs counts the log records of the whole lines of a logs file
// without decoding them (a last line still being written is left out);
// none when the collector has not written it yet.
func CountLogs(path string) (int, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	n := 0
	for {
		line, err := r.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			return n, nil // no newline: not whole yet
		}
		if err != nil {
			return 0, err
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var batch otlpLogsCount
		if err := json.Unmarshal(line, &batch); err != nil {
			return 0, fmt.Errorf("%s: %w", path, err)
		}
		for _, rl := range batch.ResourceLogs {
			for _, sl := range rl.ScopeLogs {
				n += len(sl.LogRecords)
			}
		}
	}
}
