//go:build faults

package e2e

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

// Scenario 2: etcd compacted while the plugin is cut off. The plugin
// reaches the API server through the test proxy; the proxy refuses it
// (connection reset) while the admin client, going direct, changes some
// objects, deletes others, creates new ones and creates-then-deletes a few;
// then etcd is compacted and kube-apiserver restarted so that its watch
// cache forgets too. When the proxy lets the plugin through again, its
// re-watch from the old resourceVersion gets 410 Gone, it relists, and the
// relist prints exactly: Replaced for the changed and the new objects,
// Deleted (finalStateUnknown) for the deleted ones, nothing for the
// unchanged ones nor for the objects that came and went unseen.
func TestFaultCompactedWhileCutOff(t *testing.T) {
	t.Parallel()
	c := startCluster(t)
	ns := c.namespace(t)
	w := newWriter(c.client, ns)
	for _, n := range slices.Concat(names("keep", 5), names("chg", 5), names("del", 5)) {
		if err := w.create(bg, n); err != nil {
			t.Fatal(err)
		}
	}
	p := newFaultProxy(t, c.cp.Server())
	d := startJSON(t, p.kubeconfig(c.cp.AdminToken()), "configmaps", "-n", ns)
	d.waitKeys(15, 30*time.Second)
	d.waitWatchingJSON(c, ns, 60*time.Second)

	mark := d.led.count()
	p.refuse()
	d.waitStderr("warning: ", 60*time.Second)

	for _, n := range names("chg", 5) {
		for range 3 {
			if err := w.update(bg, n); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, n := range names("del", 5) {
		if err := w.remove(bg, n); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range names("new", 3) {
		if err := w.create(bg, n); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range names("tmp", 3) {
		if err := w.create(bg, n); err != nil {
			t.Fatal(err)
		}
		if err := w.remove(bg, n); err != nil {
			t.Fatal(err)
		}
	}
	rev, err := c.cp.CompactEtcd(bg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(bg, 2*time.Minute)
	err = c.cp.RestartAPIServer(ctx)
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("etcd compacted at revision %d, kube-apiserver restarted", rev)

	logMark := len(p.log())
	p.restore()
	d.converge(c, ns, 90*time.Second)
	d.waitStderr("info: connection restored after ", 30*time.Second)

	var got []string
	for _, r := range d.led.recordsFrom(mark) {
		s := r.Type + " " + r.Name
		if r.FinalStateUnknown {
			s += " (final state unknown)"
		}
		got = append(got, s)
	}
	var want []string
	for _, n := range slices.Concat(names("chg", 5), names("new", 3)) {
		want = append(want, "Replaced "+n)
	}
	for _, n := range names("del", 5) {
		want = append(want, "Deleted "+n+" (final state unknown)")
	}
	sort.Strings(got)
	sort.Strings(want)
	if !slices.Equal(got, want) {
		t.Errorf("after the relist, got records:\n  %s\nwant (any order):\n  %s\n%s", strings.Join(got, "\n  "), strings.Join(want, "\n  "), d.describe())
	}
	// The relist really was one: a list (or streaming list) after the proxy
	// let the plugin through.
	if len(listsOf(p.requestsTo("configmaps", logMark))) == 0 {
		t.Errorf("no list request after the cut; requests:\n%s", renderRequests(p.requestsTo("configmaps", logMark)))
	}
	d.checkOutages(1)
	if code := d.stop(); code != 130 {
		t.Errorf("exit code after SIGINT = %d, want 130", code)
	}
}

// Scenario 6: repeated forced relists, with objects created just before
// each relist and objects created and deleted inside the list→watch window.
// Two plugins run side by side on one control plane without a watch cache
// (so that an etcd compaction makes every older resourceVersion answer
// 410), one with list+watch and one with the streaming list, both behind
// their own proxy whose gate holds watch requests. Each cycle:
//
//  1. the gate holds the plugins' next watch (the server ends each one
//     after 2–4 s, --min-watch-timeout=2s);
//  2. writes the plugins cannot see yet: an object created ("pre"), one
//     updated, one created and deleted ("gone"); then etcd is compacted;
//  3. the held watch goes through with its old resourceVersion, gets 410,
//     and the plugin relists (the list is not held) — the watch that
//     follows the list is held again;
//  4. inside that list→watch window an object is created and deleted
//     ("win"), another created ("keep");
//  5. the gate opens.
//
// The relist prints pre as Replaced, the window's objects come as Added and
// Deleted, gone never shows, and after every cycle the stream's state is the
// server's: no phantom survives, every delete is printed. The relist
// backoff doubles with every relist (800 ms up to 30 s, as client-go), so
// one plugin cannot go through ten relists in the time of a test: the two
// plugins make 5 cycles each, 10 relists in all.
func TestFaultRelistCycles(t *testing.T) {
	t.Parallel()
	const cycles = 5
	c := startCluster(t, "--watch-cache=false")
	type run struct {
		name string
		ns   string
		p    *faultProxy
		d    *deltasRun
		w    *writer
	}
	var runs []*run
	for _, mode := range []string{"false", "true"} {
		r := &run{name: "--watch-list=" + mode, ns: c.namespace(t)}
		r.w = newWriter(c.client, r.ns)
		for _, n := range names("base", 4) {
			if err := r.w.create(bg, n); err != nil {
				t.Fatal(err)
			}
		}
		r.p = newFaultProxy(t, c.cp.Server())
		r.d = startJSON(t, r.p.kubeconfig(c.cp.AdminToken()), "configmaps", "-n", r.ns, "--min-watch-timeout=2s", "--watch-list="+mode)
		runs = append(runs, r)
	}
	for _, r := range runs {
		r.d.waitKeys(4, 30*time.Second)
		r.d.waitWatchingJSON(c, r.ns, 60*time.Second)
	}
	began := time.Now()
	for i := 1; i <= cycles; i++ {
		cycleBegan := time.Now()
		for _, r := range runs {
			r.p.holdWatches()
		}
		for _, r := range runs {
			r.d.waitFor("a held watch", 30*time.Second, func() bool { return r.p.heldWatches() > 0 })
		}
		for _, r := range runs {
			must(t, r.w.create(bg, fmt.Sprintf("pre-%d", i)))
			must(t, r.w.update(bg, fmt.Sprintf("base-%d", i%4)))
			must(t, r.w.create(bg, fmt.Sprintf("gone-%d", i)))
			must(t, r.w.remove(bg, fmt.Sprintf("gone-%d", i)))
		}
		if _, err := c.cp.CompactEtcd(bg); err != nil {
			t.Fatal(err)
		}
		marks := map[*run]int{}
		for _, r := range runs {
			marks[r] = len(r.p.log())
			r.p.releaseHeld()
		}
		for _, r := range runs {
			pre := r.ns + "/" + fmt.Sprintf("pre-%d", i)
			r.d.waitRecord(fmt.Sprintf("cycle %d: the relist (Replaced %s)", i, pre), 90*time.Second, func(rec *deltaRecord) bool {
				return rec.key() == pre && rec.Type == "Replaced" && !rec.Initial
			})
			r.d.waitFor(fmt.Sprintf("cycle %d: the watch after the relist, held", i), 30*time.Second, func() bool { return r.p.heldWatches() > 0 })
			if len(listsOf(r.p.requestsTo("configmaps", marks[r]))) == 0 {
				t.Errorf("%s cycle %d: no list request after the 410:\n%s", r.name, i, renderRequests(r.p.requestsTo("configmaps", marks[r])))
			}
		}
		// The list→watch window.
		for _, r := range runs {
			must(t, r.w.create(bg, fmt.Sprintf("win-%d", i)))
			must(t, r.w.remove(bg, fmt.Sprintf("win-%d", i)))
			must(t, r.w.create(bg, fmt.Sprintf("keep-%d", i)))
			r.p.openGate()
		}
		for _, r := range runs {
			win, keep := r.ns+"/"+fmt.Sprintf("win-%d", i), r.ns+"/"+fmt.Sprintf("keep-%d", i)
			r.d.waitRecord(fmt.Sprintf("cycle %d: Deleted %s", i, win), 60*time.Second, func(rec *deltaRecord) bool {
				return rec.key() == win && rec.Type == "Deleted" && !rec.FinalStateUnknown
			})
			r.d.waitRecord(fmt.Sprintf("cycle %d: Added %s", i, keep), 60*time.Second, func(rec *deltaRecord) bool {
				return rec.key() == keep && rec.Type == "Added"
			})
			r.d.converge(c, r.ns, 60*time.Second)
		}
		t.Logf("cycle %d done in %s", i, time.Since(cycleBegan).Round(100*time.Millisecond))
	}
	for _, r := range runs {
		r.d.converge(c, r.ns, 60*time.Second)
		// Per object: what the stream must have said.
		per := map[string][]string{}
		for _, rec := range r.d.led.recordsFrom(0) {
			s := rec.Type
			if rec.FinalStateUnknown {
				s += "(fsu)"
			}
			if rec.Initial {
				s += "(initial)"
			}
			per[rec.Name] = append(per[rec.Name], s)
		}
		for i := 1; i <= cycles; i++ {
			expect := map[string]string{
				fmt.Sprintf("pre-%d", i):  "Replaced",
				fmt.Sprintf("win-%d", i):  "Added Deleted",
				fmt.Sprintf("keep-%d", i): "Added",
				fmt.Sprintf("gone-%d", i): "",
			}
			for name, want := range expect {
				if got := strings.Join(per[name], " "); got != want {
					t.Errorf("%s: %s printed as %q, want %q\n%s", r.name, name, got, want, r.d.describe())
				}
			}
		}
		if relists := r.d.led.relistCount(); relists < cycles {
			t.Errorf("%s: %d relist records for %d cycles", r.name, relists, cycles)
		}
		if s := r.d.stderr.String(); s != "" {
			t.Errorf("%s: a relist after 410 is silent, stderr:\n%s", r.name, s)
		}
		t.Logf("%s: %d records, %d from relists", r.name, r.d.led.count(), r.d.led.relistCount())
	}
	t.Logf("%d cycles × %d plugins in %s", cycles, len(runs), time.Since(began).Round(time.Second))
}
