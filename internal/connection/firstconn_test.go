package connection

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

// gateServer is an HTTP/2 server over TLS that counts the connections
// made to it.
func gateServer(t *testing.T) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{}`))
	}))
	srv.EnableHTTP2 = true
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv, &conns
}

// entered counts the requests that reached the client's transport, in
// front of the gate.
type entered struct {
	next  http.RoundTripper
	count *atomic.Int32
	// n is how many are awaited; all is closed when n have come.
	n   int32
	all chan struct{}
}

func (e *entered) RoundTrip(req *http.Request) (*http.Response, error) {
	if e.count.Add(1) == e.n {
		close(e.all)
	}
	return e.next.RoundTrip(req)
}

// gatedConfig is a REST config of srv behind a fresh gate. Its dials wait
// until every one of n requests has reached the transport, so that
// without the gate each would dial a connection of its own; failFirst
// makes the first dial fail.
func gatedConfig(srv *httptest.Server, n int32, failFirst bool) (*rest.Config, *atomic.Int32) {
	var in, dials atomic.Int32
	all := make(chan struct{})
	config := &rest.Config{Host: srv.URL, TLSClientConfig: rest.TLSClientConfig{Insecure: true}}
	dialer := &net.Dialer{}
	config.Dial = func(ctx context.Context, network, address string) (net.Conn, error) {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-all:
		}
		if dials.Add(1) == 1 && failFirst {
			return nil, errors.New("connection refused")
		}
		return dialer.DialContext(ctx, network, address)
	}
	config = newFirstConn().Wrap(config)
	config.Wrap(func(rt http.RoundTripper) http.RoundTripper { return &entered{next: rt, count: &in, n: n, all: all} })
	return config, &dials
}

// getAll sends n GETs at once through config and returns their errors.
func getAll(t *testing.T, config *rest.Config, n int) []error {
	t.Helper()
	client, err := rest.HTTPClientFor(config)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, config.Host+"/api", nil)
			if err == nil {
				var resp *http.Response
				if resp, err = client.Do(req); err == nil {
					err = resp.Body.Close()
				}
			}
			errs[i] = err
		})
	}
	wg.Wait()
	return errs
}

func TestFirstConnSharesOneConnection(t *testing.T) {
	srv, conns := gateServer(t)
	const n = 8
	config, dials := gatedConfig(srv, n, false)
	for i, err := range getAll(t, config, n) {
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
	}
	if got := conns.Load(); got != 1 {
		t.Errorf("%d requests sent at once opened %d connections (%d dials), want 1", n, got, dials.Load())
	}
}

func TestFirstConnOpensWhenTheFirstFails(t *testing.T) {
	srv, _ := gateServer(t)
	const n = 4
	config, dials := gatedConfig(srv, n, true)
	failed := 0
	for _, err := range getAll(t, config, n) {
		if err != nil {
			failed++
		}
	}
	// A plain HTTP client retries nothing on a dial error: the first
	// request fails, the others, let through, dial again.
	if failed != 1 {
		t.Errorf("%d of %d requests failed, want 1 (the first, whose dial failed)", failed, n)
	}
	if dials.Load() < 2 {
		t.Errorf("%d dials, want the failed one and at least one more", dials.Load())
	}
}

func TestFirstConnWaiterLeavesWithItsContext(t *testing.T) {
	gate := newFirstConn()
	gate.started.Store(true) // a first request is on its way and never gets a connection
	transport := &firstConnTransport{next: http.DefaultTransport, gate: gate}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://127.0.0.1:1/", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := transport.RoundTrip(req); !errors.Is(err, context.Canceled) {
		t.Errorf("a request waiting for the first connection, its context cancelled, got %v, want context.Canceled", err)
	}
}
