// Package clientcert keeps a stream authenticated when its client
// certificate and key are files that are rotated on disk (cert-manager's
// csi-driver, a node's kubelet-client-current.pem, a short-lived
// certificate renewed by a sidecar).
//
// client-go reads such files when it opens a TLS connection (at most once a
// second) and checks them again only every 5 minutes; meanwhile a kept-alive
// HTTP/2 connection goes on presenting the certificate it was opened with,
// and once that expires every new request on it, a re-watch or a relist, is
// answered 401 Unauthorized. A Renewer sees such a 401: if the files changed
// since the connections were opened, it closes them all and retries the
// request once on a new connection, which presents the new certificate. A
// 401 with unchanged files is the server's verdict and is returned as it
// is, so a revoked or expired certificate still ends the stream with a
// clear error rather than a retry loop.
package clientcert

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"k8s.io/client-go/rest"
)

const (
	// reloadPause is how long a retry waits after the connections were
	// closed: client-go caches the files it read for one second, and the
	// new connection must read them again.
	reloadPause = 1100 * time.Millisecond
	// renewalWindow is how long after a renewal a 401 is still put down to
	// it: connections dialed during the pause may have presented the
	// certificate client-go had cached.
	renewalWindow = 3 * time.Second
)

// Renewer closes a client's connections when its certificate files change
// and a request is refused for it. One Renewer serves every REST config of
// one cluster (data, discovery, RESTMapper): it closes all their
// connections at once. The zero value is not usable; use New.
type Renewer struct {
	dial func(ctx context.Context, network, address string) (net.Conn, error)
	now  func() time.Time

	// mu guards every field below.
	mu sync.Mutex
	// certFile and keyFile are the files of the first config wrapped.
	certFile, keyFile string
	// renewedFor is the files' content the open connections were made
	// after; nil until read.
	renewedFor []byte
	// renewedAt is the time of the last renewal (zero: none yet).
	renewedAt time.Time
	// conns are the open connections dialed through the Renewer.
	conns map[*trackedConn]struct{}
}

// New returns a Renewer.
func New() *Renewer {
	d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	return &Renewer{
		dial:  d.DialContext,
		now:   time.Now,
		conns: map[*trackedConn]struct{}{},
	}
}

// sleepContext waits d or until ctx is done; false when ctx ended first.
func sleepContext(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// Wrap sets config up for renewal when its client certificate and key are
// files only (client-go reloads nothing else), and returns it; any other
// config is returned untouched. It fits genericclioptions.ConfigFlags'
// WrapConfigFn. A config that already has a Dial function keeps it,
// underneath.
func (r *Renewer) Wrap(config *rest.Config) *rest.Config {
	files := config.TLSClientConfig
	if files.CertFile == "" || files.KeyFile == "" || len(files.CertData) > 0 || len(files.KeyData) > 0 {
		return config
	}
	r.mu.Lock()
	if r.certFile == "" {
		r.certFile, r.keyFile = files.CertFile, files.KeyFile
	}
	same := r.certFile == files.CertFile && r.keyFile == files.KeyFile
	r.mu.Unlock()
	if !same {
		return config
	}
	dial := r.dial
	if config.Dial != nil {
		dial = config.Dial
	}
	config.Dial = func(ctx context.Context, network, address string) (net.Conn, error) {
		return r.track(ctx, dial, network, address)
	}
	config.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return &retryTransport{next: rt, r: r}
	})
	return config
}

// track dials and remembers the connection until it is closed. The first
// dial records the files' content the connections start from.
func (r *Renewer) track(ctx context.Context, dial func(context.Context, string, string) (net.Conn, error), network, address string) (net.Conn, error) {
	conn, err := dial(ctx, network, address)
	if err != nil {
		return nil, err
	}
	tc := &trackedConn{Conn: conn, r: r}
	r.mu.Lock()
	if r.renewedFor == nil {
		r.renewedFor = r.readFilesLocked()
	}
	r.conns[tc] = struct{}{}
	r.mu.Unlock()
	return tc, nil
}

// readFilesLocked returns the certificate and key files' content; an
// unreadable file reads as empty (a rotation under way). r.mu is held.
func (r *Renewer) readFilesLocked() []byte {
	cert, _ := os.ReadFile(r.certFile)
	key, _ := os.ReadFile(r.keyFile)
	return append(append(cert, 0), key...)
}

// renew is called on a 401. It reports whether the request is worth one
// retry: the files changed since the connections were made (they are all
// closed now), or a renewal just happened.
func (r *Renewer) renew() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	current := r.readFilesLocked()
	if bytes.Equal(current, r.renewedFor) {
		return !r.renewedAt.IsZero() && now.Sub(r.renewedAt) < renewalWindow
	}
	r.renewedFor = current
	r.renewedAt = now
	for c := range r.conns {
		_ = c.Conn.Close()
		delete(r.conns, c)
	}
	return true
}

// trackedConn is a connection the Renewer can close; closing it forgets it.
type trackedConn struct {
	net.Conn
	r    *Renewer
	once sync.Once
}

func (c *trackedConn) Close() error {
	c.once.Do(func() {
		c.r.mu.Lock()
		delete(c.r.conns, c)
		c.r.mu.Unlock()
	})
	return c.Conn.Close()
}

// retryTransport retries, once, a request answered 401 after the Renewer
// renewed the connections. Only requests without a body, or whose body can
// be had again, are retried.
type retryTransport struct {
	next http.RoundTripper
	r    *Renewer
}

func (t *retryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil || resp.StatusCode != http.StatusUnauthorized {
		return resp, err
	}
	if req.Body != nil && req.Body != http.NoBody && req.GetBody == nil {
		return resp, nil
	}
	if !t.r.renew() {
		return resp, nil
	}
	// The refused response is dropped for the retry's.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	if !sleepContext(req.Context(), reloadPause) {
		return nil, req.Context().Err()
	}
	// client-go's own rotation check runs in the first handshake that
	// reads the new files and closes every connection of its dialer, the
	// one being opened included: that attempt fails with net.ErrClosed, and
	// the next one, on a connection opened after it, is the real retry.
	for attempt := 0; ; attempt++ {
		retry := req.Clone(req.Context())
		if req.GetBody != nil {
			body, err := req.GetBody()
			if err != nil {
				return nil, err
			}
			retry.Body = body
		}
		resp, err = t.next.RoundTrip(retry)
		if err == nil || attempt == 1 || !errors.Is(err, net.ErrClosed) {
			return resp, err
		}
	}
}

// WrappedRoundTripper lets client-go's debugging wrappers see through.
func (t *retryTransport) WrappedRoundTripper() http.RoundTripper { return t.next }
