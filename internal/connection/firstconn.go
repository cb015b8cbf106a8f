package connection

import (
	"net/http"
	"net/http/httptrace"
	"sync"
	"sync/atomic"

	"k8s.io/client-go/rest"
)

// firstConn holds the requests to one cluster back until the first of them
// has a connection. Go's HTTP/2 transport opens a connection for each
// request sent while none is open, then keeps one and closes the others:
// the requests start-up sends at once (the namespace, the access reviews,
// the APIServices, a list and its probe) would each pay a TCP and a TLS
// handshake, on both ends, for a connection thrown away. Once the first
// request has its connection, or has failed without one, the gate is open
// for good: later requests share that connection, or dial as they always
// do when it is gone.
//
// One firstConn serves every REST config of a cluster (data, discovery,
// RESTMapper), whose clients share client-go's cached transport.
type firstConn struct {
	// started is set by the request that goes first.
	started atomic.Bool
	// opened is closed, once (by once), when the first request got a
	// connection or ended.
	opened chan struct{}
	once   sync.Once
}

func newFirstConn() *firstConn { return &firstConn{opened: make(chan struct{})} }

// open lets every request through from now on.
func (f *firstConn) open() { f.once.Do(func() { close(f.opened) }) }

// Wrap adds the gate to config's transport, and returns config. It fits
// genericclioptions.ConfigFlags' WrapConfigFn.
func (f *firstConn) Wrap(config *rest.Config) *rest.Config {
	config.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return &firstConnTransport{next: rt, gate: f}
	})
	return config
}

// firstConnTransport is one client's transport behind the cluster's gate.
type firstConnTransport struct {
	next http.RoundTripper
	gate *firstConn
}

// RoundTrip sends the first request at once and learns from it when its
// connection is there; any other waits for that (or for its own context).
func (t *firstConnTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	g := t.gate
	select {
	case <-g.opened:
		return t.next.RoundTrip(req)
	default:
	}
	if g.started.CompareAndSwap(false, true) {
		trace := &httptrace.ClientTrace{GotConn: func(httptrace.GotConnInfo) { g.open() }}
		resp, err := t.next.RoundTrip(req.WithContext(httptrace.WithClientTrace(req.Context(), trace)))
		g.open()
		return resp, err
	}
	select {
	case <-g.opened:
		return t.next.RoundTrip(req)
	case <-req.Context().Done():
		return nil, req.Context().Err()
	}
}

// WrappedRoundTripper returns the transport underneath, as client-go's
// wrappers do (utilnet.RoundTripperWrapper).
func (t *firstConnTransport) WrappedRoundTripper() http.RoundTripper { return t.next }
