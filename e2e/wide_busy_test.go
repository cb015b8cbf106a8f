//go:build faults

package e2e

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestBusyWide: -o wide shows each kind's own columns, the server's Table
// as kubectl get -o wide shows it: Pods' READY, STATUS and NODE, a
// Deployment's READY, UP-TO-DATE and AVAILABLE moving during a roll, and
// both kinds in one stream, each under its header.
func TestBusyWide(t *testing.T) {
	c := busyCluster(t)
	r := &rollout{t: t, c: c, ns: c.namespace(t), minReadySeconds: 1}
	kc := c.cp.AdminKubeconfig()
	r.create(2, "web:v1")
	r.waitRolledOut(90 * time.Second)

	res := runAs(t, kc, time.Minute, "pods", "-n", r.ns, "-o", "wide", "--until-synced")
	lines := strings.Split(strings.TrimSpace(res.stdout), "\n")
	header := regexp.MustCompile(`^TIME +DELTA +NAME +READY +STATUS +RESTARTS +AGE +IP +NODE +NOMINATED NODE +READINESS GATES +HEALTH$`)
	row := regexp.MustCompile(`^\d\d:\d\d:\d\d +Replaced +web-[a-z0-9]+-[a-z0-9]+ +1/1 +Running +0 +\S+ +[0-9.]+ +kwok-node-\d+ +<none> +<none> +Current$`)
	if res.code != 0 || len(lines) != 3 || !header.MatchString(lines[0]) || !row.MatchString(lines[1]) || !row.MatchString(lines[2]) {
		t.Fatalf("pods -o wide: exit %d, stdout:\n%s\nstderr: %s", res.code, res.stdout, res.stderr)
	}

	// Both kinds, each under its own header, the name column naming the
	// kind.
	res = runAs(t, kc, time.Minute, "deploy,pods", "-n", r.ns, "-o", "wide", "--until-synced")
	if res.code != 0 || strings.Count(res.stdout, "\nTIME ")+strings.Count(res.stdout[:min(4, len(res.stdout))], "TIME") != 2 ||
		!regexp.MustCompile(`(?m)^TIME +DELTA +NAME +READY +UP-TO-DATE +AVAILABLE +AGE +CONTAINERS +IMAGES +SELECTOR +HEALTH\n\S+ +Replaced +deployment\.apps/web +2/2 +2 +2 +`).MatchString(res.stdout) ||
		!regexp.MustCompile(`(?m)^TIME +DELTA +NAME +READY +STATUS .*\n\S+ +Replaced +pod/web-[a-z0-9]+-[a-z0-9]+ +1/1 +Running `).MatchString(res.stdout) {
		t.Fatalf("deploy,pods -o wide: exit %d, stdout:\n%s\nstderr: %s", res.code, res.stdout, res.stderr)
	}

	// During a roll, the Deployment's columns move.
	s := startAs(t, kc, "deploy/web", "-n", r.ns, "-o", "wide", "--watch-only")
	waitWatchingDeploy := func() {
		r.patch(`{"metadata":{"annotations":{"deltas.test/probe":"1"}}}`)
		s.waitFor(func(l string) bool { return strings.Contains(l, "Updated") }, 30*time.Second)
	}
	waitWatchingDeploy()
	r.setImage("web:v2")
	deployRow := regexp.MustCompile(`^\S+ +Updated +web +(\d+/\d+) +(\d+) +(\d+) +\S+ +web +web:v2 +app=web +(\S+)$`)
	upToDate := map[string]bool{}
	done := false
	deadline := time.Now().Add(90 * time.Second)
	for !done && time.Now().Before(deadline) {
		m := deployRow.FindStringSubmatch(s.next(time.Until(deadline)))
		if m == nil {
			continue
		}
		upToDate[m[2]] = true
		done = m[1] == "2/2" && m[2] == "2" && m[3] == "2" && m[4] == "Current"
	}
	if !done || len(upToDate) < 2 {
		t.Fatalf("the roll: done %v, UP-TO-DATE values seen %v; lines:\n%s\nstderr: %s", done, upToDate, strings.Join(s.seen, "\n"), s.stderr.String())
	}
	noFailure(t, c)
}

// TestFaultWideRelist: in -o wide (the server's Tables), a relist after
// the plugin was cut off while etcd was compacted prints what JSON mode
// prints: Replaced for the changed object, Deleted for the one that
// vanished unseen, nothing for the unchanged one.
func TestFaultWideRelist(t *testing.T) {
	t.Parallel()
	c := startCluster(t)
	ns := c.namespace(t)
	w := newWriter(c.client, ns)
	for _, n := range []string{"keep", "chg", "del"} {
		if err := w.create(bg, n); err != nil {
			t.Fatal(err)
		}
	}
	p := newFaultProxy(t, c.cp.Server())
	s := startAs(t, p.kubeconfig(c.cp.AdminToken()), "configmaps", "-n", ns, "-o", "wide", "--no-headers")
	for range 3 {
		s.next(30 * time.Second)
	}
	// Watching: an update shows.
	if err := w.update(bg, "keep"); err != nil {
		t.Fatal(err)
	}
	if !s.waitFor(func(l string) bool { return regexp.MustCompile(`^\S+ +Updated +keep `).MatchString(l) }, 30*time.Second) {
		t.Fatalf("no Updated keep; lines:\n%s", strings.Join(s.seen, "\n"))
	}
	p.refuse()
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(s.stderr.String(), "warning: ") {
		if time.Now().After(deadline) {
			t.Fatalf("no warning once cut off; stderr: %s", s.stderr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := w.update(bg, "chg"); err != nil {
		t.Fatal(err)
	}
	if err := w.remove(bg, "del"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.cp.CompactEtcd(bg); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(bg, 2*time.Minute)
	err := c.cp.RestartAPIServer(ctx)
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	mark := len(s.seen)
	p.restore()
	want := map[string]*regexp.Regexp{
		"Replaced chg": regexp.MustCompile(`^\S+ +Replaced +chg +\d+ +\S+ +Current$`),
		"Deleted del":  regexp.MustCompile(`^\S+ +Deleted +del +\d+ +\S+ +NotFound$`),
	}
	got := map[string]bool{}
	deadline = time.Now().Add(90 * time.Second)
	for len(got) < len(want) && time.Now().Before(deadline) {
		line := s.next(time.Until(deadline))
		for name, re := range want {
			if re.MatchString(line) {
				got[name] = true
			}
		}
	}
	s.waitFor(func(string) bool { return false }, 2*time.Second)
	after := s.seen[mark:]
	if len(got) != len(want) || len(after) != 2 {
		t.Fatalf("after the relist, want exactly Replaced chg and Deleted del, got:\n%s\nstderr:\n%s", strings.Join(after, "\n"), s.stderr.String())
	}
}
