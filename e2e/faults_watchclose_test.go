//go:build faults

package e2e

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// Scenario 3: the server closes every watch after a few seconds
// (--min-request-timeout on the server, and the plugin's hidden
// --min-watch-timeout=2s since a client's timeoutSeconds wins) for a minute
// of steady writes. Each close is re-opened from the last resourceVersion
// without a relist and without a word: the output is exactly the writer's
// sequence, each write once, in order per key, and stderr stays empty.
// The plugin goes through a pass-through proxy whose request log shows the
// watches and that no list followed the first.
func TestFaultServerClosesWatches(t *testing.T) {
	t.Parallel()
	c := startCluster(t, "--min-request-timeout=5")
	ns := c.namespace(t)
	p := newFaultProxy(t, c.cp.Server())
	d := startJSON(t, p.kubeconfig(c.cp.AdminToken()), "configmaps", "-n", ns, "--min-watch-timeout=2s", "--max-update-backlog=0")
	d.waitWatchingJSON(c, ns, 60*time.Second)

	w := newWriter(c.client, ns)
	began := time.Now()
	stopWriter := w.runPaced(names("cm", 10), 100*time.Millisecond, 4)
	defer stopWriter()
	d.waitFor("a minute of writes", 90*time.Second, func() bool { return time.Since(began) >= time.Minute })
	steps := stopWriter()
	ok, failed := w.total()

	d.converge(c, ns, 60*time.Second)
	if problems := checkSequence(d.led, w.writes()); len(problems) > 0 {
		t.Errorf("the output is not the writer's sequence:\n%s\n%s", strings.Join(problems, "\n"), d.describe())
	}
	if d.stderr.String() != "" {
		t.Errorf("stderr should stay empty when the server closes watches:\n%s", d.stderr.String())
	}

	reqs := p.requestsTo("configmaps", 0)
	var lists, watches []proxyRequest
	for _, r := range reqs {
		switch {
		case r.isList():
			lists = append(lists, r)
		case r.isWatch():
			watches = append(watches, r)
		}
		// A probe (isProbe) is neither: the list's, or one after an
		// outage.
	}
	if len(lists) != 1 {
		t.Errorf("want exactly one list (the initial one), got %d:\n%s", len(lists), renderRequests(reqs))
	}
	// Watches of 2–4 s for a minute: at least 15 re-opens, each from a
	// resourceVersion at least as new as the previous one.
	if len(watches) < 15 {
		t.Errorf("only %d watch requests in a minute with --min-watch-timeout=2s:\n%s", len(watches), renderRequests(reqs))
	}
	last := uint64(0)
	for _, r := range watches {
		rv, err := strconv.ParseUint(r.query.Get("resourceVersion"), 10, 64)
		if err != nil || rv == 0 || rv < last {
			t.Errorf("watch re-opened from resourceVersion %q after %d:\n%s", r.query.Get("resourceVersion"), last, renderRequests(reqs))
			break
		}
		last = rv
	}
	t.Logf("writer: %d steps, %d acknowledged, %d failed; %d records; %d watch requests, %d list requests", steps, ok, failed, d.led.count(), len(watches), len(lists))
	if code := d.stop(); code != 130 {
		t.Errorf("exit code after SIGINT = %d, want 130", code)
	}
}
