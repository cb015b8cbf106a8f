// Command rawclient is client (a) of `make bench`: the wire limit. It sends
// one unpaginated list request (or, with -watch, one watch request) for a
// collection with a bearer token and copies the response body to stdout as
// it arrives, decoding nothing.
//
// It is a separate process so that the harness measures it like every other
// client: wall time until the last object reached its stdout, CPU time and
// peak RSS from rusage.
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
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
	gzip := flag.Bool("gzip", false, "ask for a gzip-compressed response, as client-go does")
	flag.Parse()
	token := os.Getenv("BENCH_TOKEN")
	if *server == "" || token == "" {
		return errors.New("-server and $BENCH_TOKEN are required")
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	url := *server + *path
	if *watch {
		url += "?watch=true"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "application/json")
	client := &http.Client{Transport: &http.Transport{
		// The local control plane's serving certificate is self-signed;
		// this client only ever talks to 127.0.0.1.
		TLSClientConfig:    &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // loopback benchmark server
		DisableCompression: !*gzip,
		ForceAttemptHTTP2:  true,
	}}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("request %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return fmt.Errorf("request %s: %s: %s", url, resp.Status, body)
	}
	if _, err := io.Copy(os.Stdout, resp.Body); err != nil && ctx.Err() == nil {
		return fmt.Errorf("read %s: %w", url, err)
	}
	return nil
}
