package connection

import (
	"io"
	"net/http"
	"strings"

	"github.com/klauspost/compress/gzip"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"
)

// withGunzip has config's responses inflated by klauspost/compress rather
// than by Go's transport, and returns config.
//
// kube-apiserver compresses a response of over 128 KiB (every page of a
// large list, aggregated discovery) when the request accepts gzip. Go's
// transport asks for gzip by default and inflates with compress/flate: on
// a list of 10,000 ConfigMaps that was 15% of the whole run's
// instructions. klauspost/compress (already the recordings' codec)
// inflates the same stream in about four fifths of the CPU (a page of 500
// ConfigMaps: 0.97 vs 1.20 ms), as it comes, so that the page is parsed
// while the server still sends it. The bytes on the wire and the bodies
// read are the same.
//
// A config whose compression is off (--disable-compression, or the
// kubeconfig's disable-compression) is left as it is: nothing asks for
// gzip.
func withGunzip(config *rest.Config) *rest.Config {
	if config.DisableCompression {
		return config
	}
	// Go's transport then neither asks for gzip nor inflates:
	// gunzipTransport does both.
	config.DisableCompression = true
	config.Wrap(func(rt http.RoundTripper) http.RoundTripper { return &gunzipTransport{next: rt} })
	return config
}

// gunzipTransport asks for gzip as Go's transport does when compression is
// on (a request without Accept-Encoding or Range) and inflates a gzip
// response, which it hands on as Go's transport does an inflated one:
// without Content-Encoding and Content-Length, Uncompressed set.
type gunzipTransport struct {
	next http.RoundTripper
}

// RoundTrip sends req, asking for gzip unless req says what it accepts or
// asks for a range (whose bytes would be of the compressed body).
func (t *gunzipTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Header.Get("Accept-Encoding") != "" || req.Header.Get("Range") != "" || req.Method == http.MethodHead {
		return t.next.RoundTrip(req)
	}
	// A RoundTripper must not change the request it is given.
	req = utilnet.CloneRequest(req)
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := t.next.RoundTrip(req)
	if err != nil || !strings.EqualFold(resp.Header.Get("Content-Encoding"), "gzip") {
		return resp, err
	}
	resp.Body = &gunzipBody{body: resp.Body}
	resp.Header.Del("Content-Encoding")
	resp.Header.Del("Content-Length")
	resp.ContentLength = -1
	resp.Uncompressed = true
	return resp, nil
}

// WrappedRoundTripper returns the transport underneath, as client-go's
// wrappers do (utilnet.RoundTripperWrapper).
func (t *gunzipTransport) WrappedRoundTripper() http.RoundTripper { return t.next }

// gunzipBody inflates a gzip response body as it is read. Its gzip header
// is read on the first Read, not when the response arrives, as Go's
// transport does: the header's bytes may come later than the response's.
// Read is called by one goroutine at a time; Close may be called by
// another to abort it (a watch stopped), and only closes the body, which
// then fails the Read.
type gunzipBody struct {
	body io.ReadCloser
	// zr inflates body once its header has been read; err is the error
	// reading the header gave, returned by every Read after it.
	zr  *gzip.Reader
	err error
}

// Read reads inflated bytes. Errors are the body's, or gzip's for a body
// that is not gzip, unwrapped, as Go's transport returns them: a cut
// connection is io.ErrUnexpectedEOF or the transport's error.
func (b *gunzipBody) Read(p []byte) (int, error) {
	if b.zr == nil {
		if b.err != nil {
			return 0, b.err
		}
		if b.zr, b.err = gzip.NewReader(b.body); b.err != nil {
			b.zr = nil
			return 0, b.err
		}
	}
	return b.zr.Read(p)
}

// Close closes the body.
func (b *gunzipBody) Close() error { return b.body.Close() }
