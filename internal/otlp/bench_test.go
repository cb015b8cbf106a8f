package otlp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	"go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/sdk/resource"

	"github.com/kubectl-deltas/kubectl-deltas/internal/printer"
)

// benchRecord is a ConfigMap's record as the benchmarks of make bench
// list them: a few keys of data.
func benchRecord(i int) *printer.Record {
	obj := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-%05d","namespace":"bench","uid":"0b7c7e36-6f0e-4d55-9c5e-%012d","resourceVersion":"%d","creationTimestamp":"2026-11-29T10:00:00Z","labels":{"app":"bench","tier":"x"}},"data":{"a":"value-a-%d","b":"value-b","c":"some longer value of the third key"}}`, i, i, 1000+i, i)
	return &printer.Record{Type: "Replaced", Time: time.Unix(1e9, int64(i)), Initial: true, APIVersion: "v1", Kind: "ConfigMap", Resource: "configmaps",
		Namespace: "bench", Name: fmt.Sprintf("cm-%05d", i), UID: fmt.Sprintf("0b7c7e36-6f0e-4d55-9c5e-%012d", i), ResourceVersion: fmt.Sprint(1000 + i),
		Object: json.RawMessage(obj)}
}

// BenchmarkExport is the exporter's cost of one record, queued and sent
// to a collector that takes everything: the CPU --otlp adds to -o json's
// (BenchmarkJSONPrint).
func BenchmarkExport(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
	}))
	defer srv.Close()
	cfg, err := (&Flags{Endpoint: srv.URL}).Config(func(string) string { return "" })
	if err != nil {
		b.Fatal(err)
	}
	e, err := New(cfg, "bench", "v0", io.Discard)
	if err != nil {
		b.Fatal(err)
	}
	if err := e.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	recs := make([]*printer.Record, 10000)
	for i := range recs {
		recs[i] = benchRecord(i)
	}
	f := e.Feed()
	b.ReportAllocs()
	b.ResetTimer()
	cpu := startCPU(b)
	for i := 0; i < b.N; i++ {
		if err := f.Print(nil, recs[i%len(recs)]); err != nil {
			b.Fatal(err)
		}
	}
	if err := e.Close(time.Minute); err != nil {
		b.Fatal(err)
	}
	cpu.report()
}

// BenchmarkJSONPrint is -o json's cost of the same record.
func BenchmarkJSONPrint(b *testing.B) {
	p, err := printer.New(printer.Options{Format: "json"})
	if err != nil {
		b.Fatal(err)
	}
	recs := make([]*printer.Record, 10000)
	for i := range recs {
		recs[i] = benchRecord(i)
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu := startCPU(b)
	for i := 0; i < b.N; i++ {
		if err := p.Print(io.Discard, recs[i%len(recs)]); err != nil {
			b.Fatal(err)
		}
	}
	cpu.report()
}

// BenchmarkSDKFloor is what the OpenTelemetry SDK alone costs a record,
// with nothing of ours: records made by hand, emitted through one
// LoggerProvider whose processor keeps them (as the Exporter's does) and
// exported by otlploghttp in batches of maxBatch to a server that takes
// everything. "empty" has only an EventName and timestamps; "ten-strings"
// a body of ten short string fields. The budget --otlp has (issue 60:
// 1.15x -o json's CPU on a list of 10,000 ConfigMaps, ~102 ms) is ~1.5 µs
// a record; compare cpu-ns/op.
func BenchmarkSDKFloor(b *testing.B) {
	ten := make([]attribute.KeyValue, 10)
	for i := range ten {
		ten[i] = attribute.String(fmt.Sprintf("field%d", i), "value")
	}
	for _, c := range []struct {
		name string
		body attribute.Value
	}{{"empty", attribute.Value{}}, {"ten-strings", attribute.MapValue(ten...)}} {
		b.Run(c.name, func(b *testing.B) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
			}))
			defer srv.Close()
			exp, err := otlploghttp.New(context.Background(), otlploghttp.WithEndpointURL(srv.URL+"/v1/logs"), otlploghttp.WithRetry(otlploghttp.RetryConfig{Enabled: false}))
			if err != nil {
				b.Fatal(err)
			}
			kept := &capture{}
			logger := sdklog.NewLoggerProvider(sdklog.WithResource(resource.NewSchemaless(attribute.String("service.name", "bench"))),
				sdklog.WithProcessor(kept), sdklog.WithAllowKeyDuplication()).Logger(scopeName)
			b.ReportAllocs()
			b.ResetTimer()
			cpu := startCPU(b)
			for i := 0; i < b.N; i++ {
				var r log.Record
				r.SetEventName("k8s.object.updated")
				r.SetTimestamp(time.Unix(0, int64(i)))
				r.SetObservedTimestamp(time.Unix(0, int64(i)))
				if c.body.Type() != attribute.EMPTY {
					r.SetBody(c.body)
				}
				logger.Emit(context.Background(), r)
				if len(kept.records) == maxBatch || i == b.N-1 {
					if err := exp.Export(context.Background(), kept.records); err != nil {
						b.Fatal(err)
					}
					kept.records = kept.records[:0]
				}
			}
			cpu.report()
		})
	}
}

// cpuMeter reports the process's CPU time (user and system, every
// goroutine's: the sender's too) per operation as cpu-ns/op.
type cpuMeter struct {
	b     *testing.B
	start time.Duration
}

func startCPU(b *testing.B) cpuMeter { return cpuMeter{b: b, start: processCPU(b)} }

func (m cpuMeter) report() {
	m.b.ReportMetric(float64(processCPU(m.b)-m.start)/float64(m.b.N), "cpu-ns/op")
}

// processCPU is the CPU time the process has used.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
