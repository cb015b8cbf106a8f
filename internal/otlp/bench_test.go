package otlp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

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
	for i := 0; i < b.N; i++ {
		if err := f.Print(nil, recs[i%len(recs)]); err != nil {
			b.Fatal(err)
		}
	}
	if err := e.Close(time.Minute); err != nil {
		b.Fatal(err)
	}
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
	for i := 0; i < b.N; i++ {
		if err := p.Print(io.Discard, recs[i%len(recs)]); err != nil {
			b.Fatal(err)
		}
	}
}
