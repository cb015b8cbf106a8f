package connection

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"k8s.io/client-go/rest"
)

// gzipServer answers every request with body, gzip'd when the request
// accepts gzip (cut short by cut bytes), and records the Accept-Encoding
// of each request.
func gzipServer(t *testing.T, body string, cut int) (*httptest.Server, *[]string) {
	t.Helper()
	var accepted []string
	var compressed bytes.Buffer
	zw := gzip.NewWriter(&compressed)
	if _, err := zw.Write([]byte(body)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		accepted = append(accepted, r.Header.Get("Accept-Encoding"))
		if r.Header.Get("Accept-Encoding") != "gzip" {
			_, _ = io.WriteString(w, body)
			return
		}
		w.Header().Set("Content-Encoding", "gzip")
		_, _ = w.Write(compressed.Bytes()[:compressed.Len()-cut])
	}))
	t.Cleanup(srv.Close)
	return srv, &accepted
}

// configOf is a REST config of srv (a TLS server, so that client-go makes
// a transport of its own, which honours DisableCompression).
func configOf(srv *httptest.Server, disableCompression bool) *rest.Config {
	return &rest.Config{Host: srv.URL, TLSClientConfig: rest.TLSClientConfig{Insecure: true}, DisableCompression: disableCompression}
}

// get sends a GET of path through config's transport and returns the
// response and its body.
func get(t *testing.T, config *rest.Config, url string, header http.Header) (*http.Response, []byte, error) {
	t.Helper()
	rt, err := rest.TransportFor(config)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	before := req.Header.Clone()
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if got := req.Header; len(got) != len(before) || got.Get("Accept-Encoding") != before.Get("Accept-Encoding") {
		t.Errorf("the request's header changed: %v, was %v", got, before)
	}
	return resp, data, err
}

func TestGunzipInflatesWhatItAskedFor(t *testing.T) {
	body := strings.Repeat(`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a"}},`, 5000)
	srv, accepted := gzipServer(t, body, 0)
	for _, path := range []string{"/api/v1/configmaps", "/api/v1/configmaps?watch=true", "/api/v1/configmaps?watch=1&resourceVersion=5"} {
		resp, data, err := get(t, withGunzip(configOf(srv, false)), srv.URL+path, nil)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if string(data) != body {
			t.Errorf("%s: read %d bytes, not the %d the server sent", path, len(data), len(body))
		}
		if ce, cl := resp.Header.Get("Content-Encoding"), resp.Header.Get("Content-Length"); ce != "" || cl != "" || resp.ContentLength != -1 || !resp.Uncompressed {
			t.Errorf("%s: the inflated response says Content-Encoding %q, Content-Length %q (%d), Uncompressed %v", path, ce, cl, resp.ContentLength, resp.Uncompressed)
		}
	}
	if want := []string{"gzip", "gzip", "gzip"}; strings.Join(*accepted, ",") != strings.Join(want, ",") {
		t.Errorf("the requests accepted %q, want %q", *accepted, want)
	}
}

func TestGunzipLeavesTheRestAlone(t *testing.T) {
	body := strings.Repeat("x", 1000)
	srv, accepted := gzipServer(t, body, 0)

	// Compression off (--disable-compression): nothing asks for gzip.
	off := withGunzip(configOf(srv, true))
	if _, data, err := get(t, off, srv.URL, nil); err != nil || string(data) != body {
		t.Errorf("with compression off: %d bytes, %v", len(data), err)
	}
	// A request that says what it accepts gets what it asked for, as it came.
	resp, data, err := get(t, withGunzip(configOf(srv, false)), srv.URL, http.Header{"Accept-Encoding": {"gzip"}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Header.Get("Content-Encoding") != "gzip" || bytes.Equal(data, []byte(body)) {
		t.Errorf("a request with its own Accept-Encoding was inflated: %q", resp.Header.Get("Content-Encoding"))
	}
	// A range is of the compressed bytes: not asked for.
	if _, data, err := get(t, withGunzip(configOf(srv, false)), srv.URL, http.Header{"Range": {"bytes=0-10"}}); err != nil || string(data) != body {
		t.Errorf("a range request: %d bytes, %v", len(data), err)
	}
	if want := []string{"", "gzip", ""}; strings.Join(*accepted, ",") != strings.Join(want, ",") {
		t.Errorf("the requests accepted %q, want %q", *accepted, want)
	}
}

func TestGunzipReportsACutBody(t *testing.T) {
	body := strings.Repeat(`{"a":"b"}`, 20000)
	for _, path := range []string{"/list", "/list?watch=true"} {
		srv, _ := gzipServer(t, body, 100)
		_, data, err := get(t, withGunzip(configOf(srv, false)), srv.URL+path, nil)
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("%s: a body cut short read %d bytes and %v, want io.ErrUnexpectedEOF", path, len(data), err)
		}
	}
	// Not gzip at all, though it says so.
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		_, _ = io.WriteString(w, "plain text")
	}))
	defer srv.Close()
	if _, _, err := get(t, withGunzip(configOf(srv, false)), srv.URL, nil); err == nil {
		t.Errorf("a body that is not gzip read without an error")
	}
}
