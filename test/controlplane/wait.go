package controlplane

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

const (
	pollInterval   = 100 * time.Millisecond
	requestTimeout = 5 * time.Second
)

// probe is one readiness check; it returns nil once satisfied.
type probe struct {
	what  string
	check func(ctx context.Context) error
}

// watched is a process a wait gives up on when it exits, with the log
// whose tail explains why.
type watched struct {
	p   *process
	log string
}

// waitReady runs the probes in order, polling each until it passes, until
// cp.readyTimeout has passed, ctx is done or p exits.
func (cp *ControlPlane) waitReady(ctx context.Context, p *process, logName, readyWord string, probes []probe) error {
	return cp.waitAll(ctx, p.name, readyWord, []watched{{p, logName}}, probes)
}

// waitAll runs the probes in order, polling each until it passes. It gives
// up when cp.readyTimeout has passed (the error carries the last probe
// error and the log tails of procs), when ctx is done, or when one of procs
// exits. subject and readyWord only shape the messages ("kube-apiserver
// did not become ready").
func (cp *ControlPlane) waitAll(ctx context.Context, subject, readyWord string, procs []watched, probes []probe) error {
	waitCtx, cancel := context.WithTimeout(ctx, cp.readyTimeout)
	defer cancel()
	exited := make(chan watched, len(procs))
	for _, w := range procs {
		go func() {
			select {
			case <-w.p.done:
				exited <- w
			case <-waitCtx.Done():
			}
		}()
	}
	var lastErr error
	for _, pr := range probes {
		for {
			reqCtx, reqCancel := context.WithTimeout(waitCtx, requestTimeout)
			err := pr.check(reqCtx)
			reqCancel()
			if err == nil {
				break
			}
			if waitCtx.Err() == nil || lastErr == nil {
				// Keep the last error from before the deadline rather than
				// the deadline itself.
				lastErr = fmt.Errorf("%s: %w", pr.what, err)
			}

			select {
			case w := <-exited:
				_, waitErr := w.p.exited()
				if waitErr == nil {
					waitErr = errors.New("exit status 0")
				}
				what := subject
				if what == w.p.name {
					what = "it"
				}
				return fmt.Errorf("%s exited before %s became %s: %w (log tail: %s)", w.p.name, what, readyWord, waitErr, cp.logTail(w.log))
			case <-waitCtx.Done():
				if ctx.Err() != nil {
					return fmt.Errorf("waiting for %s to become %s: %w (last error: %v)", subject, readyWord, ctx.Err(), lastErr)
				}
				var tails strings.Builder
				for _, w := range procs {
					fmt.Fprintf(&tails, " (%s log tail: %s)", w.p.name, cp.logTail(w.log))
				}
				return fmt.Errorf("%s did not become %s within %s: %w%s", subject, readyWord, formatDuration(cp.readyTimeout), lastErr, tails.String())
			case <-time.After(pollInterval):
			}
		}
	}
	return nil
}

func (cp *ControlPlane) waitEtcd(ctx context.Context, p *process) error {
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	return cp.waitReady(ctx, p, etcdLog, "healthy", []probe{{
		what: "GET /health",
		check: func(ctx context.Context) error {
			status, body, err := do(ctx, client, http.MethodGet, cp.EtcdURL()+"/health", "", "")
			if err != nil {
				return err
			}
			if status != http.StatusOK || !strings.Contains(body, `"health":"true"`) {
				return fmt.Errorf("status %d: %s", status, truncate(body))
			}
			return nil
		},
	}})
}

func (cp *ControlPlane) waitAPIServer(ctx context.Context, p *process) error {
	return cp.waitAPIServerAt(ctx, p, cp.Server(), apiserverLog)
}

// waitAPIServerAt waits until the kube-apiserver p serves at base
// (https://127.0.0.1:PORT); logName is its log.
func (cp *ControlPlane) waitAPIServerAt(ctx context.Context, p *process, base, logName string) error {
	client := newAPIClient()
	defer client.CloseIdleConnections()
	expect := func(method, path, body string, want ...int) func(ctx context.Context) error {
		return func(ctx context.Context) error {
			status, respBody, err := do(ctx, client, method, base+path, cp.adminToken, body)
			if err != nil {
				return err
			}
			for _, w := range want {
				if status == w {
					return nil
				}
			}
			return fmt.Errorf("status %d: %s", status, truncate(respBody))
		}
	}
	const probeConfigMap = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"generateName":"controlplane-probe-"}}`
	return cp.waitReady(ctx, p, logName, "ready", []probe{
		{what: "GET /readyz", check: expect(http.MethodGet, "/readyz", "", http.StatusOK)},
		// The first requests after /readyz can still race the bootstrap of the
		// default namespace and of admission's informers.
		{what: "GET /api/v1/namespaces/default", check: expect(http.MethodGet, "/api/v1/namespaces/default", "", http.StatusOK)},
		{
			what:  "dry-run create of a ConfigMap in default",
			check: expect(http.MethodPost, "/api/v1/namespaces/default/configmaps?dryRun=All", probeConfigMap, http.StatusCreated, http.StatusOK),
		},
	})
}

// newAPIClient returns an HTTP client for the local API server, whose
// self-signed serving certificate is not verified.
func newAPIClient() *http.Client {
	return &http.Client{Transport: &http.Transport{
		TLSClientConfig:   &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // local test server with a self-signed certificate
		DisableKeepAlives: true,
	}}
}

// do sends one request and returns the status and (at most 64 KiB of) the
// body.
func do(ctx context.Context, client *http.Client, method, url, token, body string) (int, string, error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return 0, "", err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return resp.StatusCode, string(data), fmt.Errorf("read response: %w", err)
	}
	return resp.StatusCode, string(data), nil
}

func truncate(s string) string {
	s = strings.TrimSpace(s)
	const maxLen = 300
	if len(s) > maxLen {
		return s[:maxLen] + "…"
	}
	return s
}

// formatDuration prints whole seconds as "60s" rather than "1m0s".
func formatDuration(d time.Duration) string {
	if d%time.Second == 0 {
		return fmt.Sprintf("%ds", int64(d/time.Second))
	}
	return d.String()
}
