package e2e

import (
	"testing"
	"time"

	"github.com/kubectl-deltas/kubectl-deltas/test/controlplane"
	"github.com/kubectl-deltas/kubectl-deltas/test/otelcol"
)

// collector is the tests' OpenTelemetry Collector (test/otelcol: bin/otelcol
// with hack/otelcol/collector.yaml), its files in the test's temporary
// directory; a test's mistake in using it fails the test.
type collector struct {
	t   *testing.T
	col *otelcol.Collector
}

// startCollector starts a collector on a free loopback port for the test;
// it is killed when the test ends, however it ends.
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
	// TempDir before Cleanup: cleanups run last-in first-out, so the
	// collector is gone before its directory is removed.
	dir := t.TempDir()
	col, err := otelcol.Start(t.Context(), otelcol.Options{Root: root, Dir: dir, Endpoint: endpoint})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(col.Kill)
	return &collector{t: t, col: col}
}

// URL is the base URL of the OTLP/HTTP receiver: http://127.0.0.1:PORT.
func (c *collector) URL() string { return c.col.URL() }

// Start starts the collector again after a Stop, on the same port and
// files.
func (c *collector) Start() {
	c.t.Helper()
	if err := c.col.Start(c.t.Context()); err != nil {
		c.t.Fatal(err)
	}
}

// Stop stops the collector, which flushes what it holds to its files: its
// port then refuses connections.
func (c *collector) Stop() {
	c.t.Helper()
	if err := c.col.Stop(); err != nil {
		c.t.Fatal(err)
	}
}

// output is the end of what the collector printed, for failure messages.
func (c *collector) output() string { return c.col.Output() }

// Logs returns every log record the collector has written so far, in the
// order received.
func (c *collector) Logs(t *testing.T) []otelcol.ReceivedLog {
	t.Helper()
	logs, err := c.col.Logs()
	if err != nil {
		t.Fatal(err)
	}
	return logs
}

// Spans returns every span the collector has written so far, in the order
// received.
func (c *collector) Spans(t *testing.T) []otelcol.ReceivedSpan {
	t.Helper()
	spans, err := c.col.Spans()
	if err != nil {
		t.Fatal(err)
	}
	return spans
}

// waitLogs polls the logs file until at least n log records arrived, and
// returns them all; the test fails if they do not within the time given.
func (c *collector) waitLogs(t *testing.T, n int, within time.Duration) []otelcol.ReceivedLog {
	t.Helper()
	return waitReceived(t, c, "log records", c.col.Logs, n, within)
}

// waitSpans is waitLogs for spans.
func (c *collector) waitSpans(t *testing.T, n int, within time.Duration) []otelcol.ReceivedSpan {
	t.Helper()
	return waitReceived(t, c, "spans", c.col.Spans, n, within)
}

// waitReceived polls read until it returns at least n items (what), or
// fails the test after within.
func waitReceived[T any](t *testing.T, c *collector, what string, read func() ([]T, error), n int, within time.Duration) []T {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		got, err := read()
		if err != nil {
			t.Fatal(err)
		}
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("collector: %d %s after %v, want at least %d: %+v\n%s", len(got), what, within, n, got, c.output())
		}
		time.Sleep(50 * time.Millisecond)
	}
}
