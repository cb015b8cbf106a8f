//go:build faults

package e2e

import (
	"strings"
	"testing"
	"time"
)

// Scenario 4: network and HTTP faults between the plugin and the API
// server, injected by the test proxy while a writer (talking to the server
// directly) makes about 10 changes a second. Every case ends with the
// stream in the server's state and one warning plus one "connection
// restored" line per outage. Where S4 says the watch is resumed without a
// relist (connection refused, 429, 5xx), the proxy's request log must show
// no list after the fault, and the output must be exactly the writer's
// sequence.
func TestFaultNetwork(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		// args are extra plugin flags.
		args []string
		// inject starts the fault and returns what ends it.
		inject func(t *testing.T, p *faultProxy, d *deltasRun) (heal func())
		// noRelist: a broken connection is followed by a re-watch from the
		// last resourceVersion, not a relist.
		noRelist bool
		// outages is the number of warnings expected; -1: at most one.
		outages int
	}{
		{
			// One abrupt reset of every connection: the watch breaks and
			// is re-opened at once.
			name: "reset",
			inject: func(t *testing.T, p *faultProxy, d *deltasRun) func() {
				p.resetConnections()
				return func() {}
			},
			outages: -1,
		},
		{
			// Every connection reset, new ones too, for a while: the
			// server is unreachable.
			name: "refused",
			inject: func(t *testing.T, p *faultProxy, d *deltasRun) func() {
				p.refuse()
				d.waitStderr("warning: ", 60*time.Second)
				return func() {
					p.restore()
					// Backoff (800 ms doubling, jittered): a handful of
					// reconnection attempts in the few seconds of the
					// outage, not a hot loop.
					at := p.refusedConnections()
					var gaps []string
					for i := 1; i < len(at); i++ {
						gaps = append(gaps, at[i].Sub(at[i-1]).Round(10*time.Millisecond).String())
					}
					t.Logf("%d connection attempts refused, gaps between them: %v", len(at), gaps)
					if len(at) == 0 || len(at) > 8 {
						t.Errorf("%d connection attempts during a ~4 s outage: want a few, spaced by the backoff; gaps %v", len(at), gaps)
					}
				}
			},
			noRelist: true,
			outages:  1,
		},
		{
			// Bytes stop flowing, nothing is closed: client-go's HTTP/2
			// health check (30 s read idle + 15 s ping timeout) must notice
			// within about a minute.
			name: "black hole",
			inject: func(t *testing.T, p *faultProxy, d *deltasRun) func() {
				began := time.Now()
				p.blackHole()
				d.waitFor("the black hole noticed", 80*time.Second, func() bool { return len(d.stderrLines("warning: ")) > 0 })
				t.Logf("black hole noticed after %s: %s", time.Since(began).Round(time.Second), d.stderrLines("warning: ")[0])
				return p.restore
			},
			// The broken connection is found by the health check; the
			// watch's resourceVersion is still in the server's window, so
			// The re-watch from the last resourceVersion applies as for a refused
			// connection.
			noRelist: true,
			outages:  1,
		},
		{
			name: "429",
			args: []string{"--min-watch-timeout=2s"},
			inject: func(t *testing.T, p *faultProxy, d *deltasRun) func() {
				p.setWatchFault(&httpFault{code: 429, reason: "TooManyRequests", retryAfter: 1})
				d.waitStderr("warning: ", 60*time.Second)
				return func() { p.setWatchFault(nil) }
			},
			noRelist: true,
			outages:  1,
		},
		{
			name: "500",
			args: []string{"--min-watch-timeout=2s"},
			inject: func(t *testing.T, p *faultProxy, d *deltasRun) func() {
				p.setWatchFault(&httpFault{code: 500, reason: "InternalError"})
				d.waitStderr("warning: ", 60*time.Second)
				return func() { p.setWatchFault(nil) }
			},
			noRelist: true,
			outages:  1,
		},
		{
			name: "503",
			args: []string{"--min-watch-timeout=2s"},
			inject: func(t *testing.T, p *faultProxy, d *deltasRun) func() {
				p.setWatchFault(&httpFault{code: 503, reason: "ServiceUnavailable"})
				d.waitStderr("warning: ", 60*time.Second)
				return func() { p.setWatchFault(nil) }
			},
			noRelist: true,
			outages:  1,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := sharedCluster()
			ns := c.namespace(t)
			pre := newWriter(c.client, ns)
			for _, n := range names("pre", 5) {
				if err := pre.create(bg, n); err != nil {
					t.Fatal(err)
				}
			}
			p := newFaultProxy(t, c.cp.Server())
			d := startJSON(t, p.kubeconfig(c.cp.AdminToken()), append([]string{"configmaps", "-n", ns}, tc.args...)...)
			d.waitKeys(5, 30*time.Second)
			d.waitWatchingJSON(c, ns, 60*time.Second)

			w := newWriter(c.client, ns)
			stopWriter := w.runPaced(names("cm", 6), 100*time.Millisecond, 3)
			defer stopWriter()
			before := d.led.count()
			d.waitFor("changes before the fault", 30*time.Second, func() bool { return d.led.count() >= before+10 })

			logMark := len(p.log())
			began := time.Now()
			heal := tc.inject(t, p, d)
			// The fault lasts a few seconds of writes more.
			time.Sleep(3 * time.Second)
			heal()
			healed := time.Now()
			if tc.outages != 0 && len(d.stderrLines("warning: ")) > 0 {
				d.waitStderr("info: connection restored after ", 90*time.Second)
				t.Logf("fault lasted %s, restored %s after healing", healed.Sub(began).Round(100*time.Millisecond), time.Since(healed).Round(100*time.Millisecond))
			}
			before = d.led.count()
			d.waitFor("changes after the fault", 60*time.Second, func() bool { return d.led.count() >= before+10 })
			stopWriter()

			d.converge(c, ns, 60*time.Second)
			reqs := p.requestsTo("configmaps", logMark)
			lists := len(listsOf(reqs))
			t.Logf("%d records (%d from relists); after the fault %d requests, %d lists; stderr:\n%s", d.led.count(), d.led.relistCount(), len(reqs), lists, d.stderr.String())
			if tc.noRelist {
				if lists > 0 || d.led.relistCount() > 0 {
					t.Errorf("S4: a %s must be retried by re-watching, without a relist; requests after the fault:\n%s\n%s", tc.name, renderRequests(reqs), d.describe())
				}
				if problems := checkSequence(d.led, w.writes()); len(problems) > 0 {
					t.Errorf("the output is not the writer's sequence:\n%s\n%s", strings.Join(problems, "\n"), d.describe())
				}
			} else if d.led.relistCount() == 0 {
				if missing := unprinted(d.led, w.writes()); len(missing) > 0 {
					t.Errorf("writes lost without a relist:\n  %s\n%s", strings.Join(missing, "\n  "), d.describe())
				}
			}
			if tc.outages >= 0 {
				d.checkOutages(tc.outages)
			} else {
				n := len(d.stderrLines("warning: "))
				if n > 1 {
					t.Errorf("one reset is at most one outage, got %d warnings:\n%s", n, d.stderr.String())
				}
				d.checkOutages(n)
			}
			if code := d.stop(); code != 130 {
				t.Errorf("exit code after SIGINT = %d, want 130", code)
			}
		})
	}
}
