// Command rawclient is client (a) of `make bench`: the wire limit. It sends
// one unpaginated list request (or, with -watch, one watch request) for a
// collection with a bearer token and copies the response body to stdout as
// it arrives, decoding nothing.
//
// With -limit it lists in pages of that many objects, following the
// continue token as client-go's pager does, and copies every page. With
// -watch and -rv it watches from that resourceVersion (no initial events):
// the plain HTTP watch of the scale benchmark's churn.
//
// It is a separate process so that the harness measures it like every other
// client: wall time until the last object reached its stdout, CPU time and
// peak RSS from rusage.
package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"syscall"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
		os.Exit(1)
	}
}

func run() error {
	server := flag.String("server", "", "API server URL, https://127.0.0.1:PORT")
	path := flag.String("path", "/api/v1/namespaces/bench/configmaps", "collection path")
	watch := flag.Bool("watch", false, "watch instead of list (without a resourceVersion: the existing objects come first as ADDED events)")
	rv := flag.String("rv", "", "with -watch: the resourceVersion to watch from (no initial events)")
	limit := flag.Int("limit", 0, "list in pages of this many objects (0 = one unpaginated request)")
	gzip := flag.Bool("gzip", false, "ask for a gzip-compressed response, as client-go does")
	flag.Parse()
	token := os.Getenv("BENCH_TOKEN")
	if *server == "" || token == "" {
		return errors.New("-server and $BENCH_TOKEN are required")
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	client := &http.Client{Transport: &http.Transport{
		// The local control plane's serving certificate is self-signed;
		// this client only ever talks to 127.0.0.1.
		TLSClientConfig:    &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // loopback benchmark server
		DisableCompression: !*gzip,
		ForceAttemptHTTP2:  true,
	}}
	q := url.Values{}
	switch {
	case *watch:
		q.Set("watch", "true")
		if *rv != "" {
			q.Set("resourceVersion", *rv)
		}
	case *limit > 0:
		q.Set("limit", strconv.Itoa(*limit))
	}
	for {
		cont, err := get(ctx, client, *server+*path, q, token, *limit > 0 && !*watch)
		if err != nil || cont == "" {
			return err
		}
		q.Set("continue", cont)
	}
}

// get sends one request and copies its body to stdout; with paged, it
// returns the list's continue token (read from the list's metadata, which
// the server writes before the items).
func get(ctx context.Context, client *http.Client, base string, q url.Values, token string, paged bool) (string, error) {
	u := base
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return "", fmt.Errorf("request %s: %w", u, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return "", fmt.Errorf("request %s: %s: %s (check the token and -path)", u, resp.Status, body)
	}
	cont := ""
	if paged {
		head, err := readHead(resp.Body)
		if err != nil {
			return "", fmt.Errorf("read %s: %w", u, err)
		}
		cont = continueToken(head)
		if _, err := os.Stdout.Write(head); err != nil {
			return "", fmt.Errorf("write stdout: %w", err)
		}
	}
	if _, err := io.Copy(os.Stdout, resp.Body); err != nil && ctx.Err() == nil {
		return "", fmt.Errorf("read %s: %w", u, err)
	}
	return cont, nil
}

// readHead reads a list's beginning up to its "items" key (or 64 KiB).
func readHead(r io.Reader) ([]byte, error) {
	var head []byte
	buf := make([]byte, 4096)
	for len(head) < 64<<10 {
		n, err := r.Read(buf)
		head = append(head, buf[:n]...)
		if bytes.Contains(head, []byte(`"items"`)) || errors.Is(err, io.EOF) {
			return head, nil
		}
		if err != nil {
			return nil, err
		}
	}
	return head, nil
}

// continueToken extracts metadata.continue from a list's head.
func continueToken(head []byte) string {
	if end := bytes.Index(head, []byte(`"items"`)); end >= 0 {
		head = head[:end]
	}
	i := bytes.Index(head, []byte(`"continue":`))
	if i < 0 {
		return ""
	}
	dec := json.NewDecoder(bytes.NewReader(head[i+len(`"continue":`):]))
	var s string
	if err := dec.Decode(&s); err != nil {
		return ""
	}
	return s
}
