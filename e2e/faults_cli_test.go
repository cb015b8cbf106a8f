//go:build faults

package e2e

import (
	"bytes"
	"context"
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// bgRun is a kubectl deltas run in the background whose output is
// collected whole.
type bgRun struct {
	cmd            *exec.Cmd
	stdout, stderr *syncBuffer
	done           chan struct{}
	err            error
}

func startBG(t *testing.T, kubeconfig string, args ...string) *bgRun {
	t.Helper()
	r := &bgRun{cmd: command(context.Background(), kubeconfig, args...), stdout: &syncBuffer{}, stderr: &syncBuffer{}, done: make(chan struct{})}
	r.cmd.Stdout, r.cmd.Stderr = r.stdout, r.stderr
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { r.err = r.cmd.Wait(); close(r.done) }()
	t.Cleanup(func() {
		select {
		case <-r.done:
		default:
			_ = r.cmd.Process.Kill()
			<-r.done
		}
	})
	return r
}

func (r *bgRun) code() int {
	if exit, ok := r.err.(*exec.ExitError); ok {
		return exit.ExitCode()
	}
	return 0
}

// shell runs a bash script with the environment of `kubectl deltas` (the
// plugin on PATH, KUBECONFIG set) and returns its stdout, stderr and how
// long it took; the script is killed after limit.
func shell(t *testing.T, kubeconfig string, limit time.Duration, script string) (stdout, stderr string, took time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(bg, limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	cmd.Env = command(ctx, kubeconfig).Env
	// The script's processes form their own group, killed as a whole on
	// timeout.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	began := time.Now()
	err := cmd.Run()
	took = time.Since(began)
	if ctx.Err() != nil {
		t.Fatalf("%s\ndid not finish within %s; stdout:\n%s\nstderr:\n%s", script, limit, out.String(), errOut.String())
	}
	if err != nil {
		t.Fatalf("%s: %v; stderr:\n%s", script, err, errOut.String())
	}
	return out.String(), errOut.String(), took
}

// Scenario 7: pipes and signals: a reader that goes away is a normal end
// (exit 0), SIGINT and SIGTERM exit 130 after whole records.
func TestFaultPipesAndSignals(t *testing.T) {
	t.Parallel()
	c := sharedCluster()
	kubeconfig := c.cp.AdminKubeconfig()

	t.Run("head -1 while more output follows", func(t *testing.T) {
		t.Parallel()
		ns := c.namespace(t)
		w := newWriter(c.client, ns)
		must(t, w.create(bg, "busy"))
		// A writer keeps the stream busy, so the plugin writes again after
		// head has gone: EPIPE must end it quietly with 0.
		stop := w.runPaced([]string{"busy"}, 50*time.Millisecond, 1<<30)
		defer stop()
		out, errOut, took := shell(t, kubeconfig, 60*time.Second, fmt.Sprintf(`kubectl deltas configmaps -n %s | head -1; echo "exit ${PIPESTATUS[0]}"`, ns))
		if out != "Replaced: busy\nexit 0\n" {
			t.Errorf("stdout %q, want the first line and exit 0; stderr %q", out, errOut)
		}
		if errOut != "" {
			t.Errorf("stderr should be empty: %q", errOut)
		}
		noStackTrace(t, errOut)
		t.Logf("done in %s", took.Round(100*time.Millisecond))
	})

	t.Run("head -1 on an idle stream", func(t *testing.T) {
		t.Parallel()
		ns := c.namespace(t)
		must(t, newWriter(c.client, ns).create(bg, "only"))
		// Nothing follows the first line: the plugin must notice the
		// reader is gone without writing (exit 0 at once).
		out, errOut, took := shell(t, kubeconfig, 60*time.Second, fmt.Sprintf(`kubectl deltas configmaps -n %s | head -1; echo "exit ${PIPESTATUS[0]}"`, ns))
		if out != "Replaced: only\nexit 0\n" || errOut != "" {
			t.Errorf("stdout %q stderr %q, want the first line, exit 0, no stderr", out, errOut)
		}
		if took > 10*time.Second {
			t.Errorf("the pipeline took %s to end after head exited on an idle stream, want a prompt exit", took)
		}
		t.Logf("done in %s", took.Round(100*time.Millisecond))
	})

	t.Run("head -1 of a large initial list as json", func(t *testing.T) {
		t.Parallel()
		ns := c.namespace(t)
		w := newWriter(c.client, ns)
		w.payload = strings.Repeat("y", 2048)
		for _, n := range names("cm", 150) {
			must(t, w.create(bg, n))
		}
		out, errOut, took := shell(t, kubeconfig, 60*time.Second, fmt.Sprintf(`kubectl deltas configmaps -n %s -o json | head -1 | jq -r .type; echo "exit ${PIPESTATUS[0]}"`, ns))
		if out != "Replaced\nexit 0\n" || errOut != "" {
			t.Errorf("stdout %q stderr %q", out, errOut)
		}
		noStackTrace(t, errOut)
		t.Logf("done in %s", took.Round(100*time.Millisecond))
	})

	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String()+" while idle", func(t *testing.T) {
			t.Parallel()
			ns := c.namespace(t)
			w := newWriter(c.client, ns)
			for _, n := range names("cm", 3) {
				must(t, w.create(bg, n))
			}
			d := startJSON(t, kubeconfig, "configmaps", "-n", ns)
			d.waitKeys(3, 30*time.Second)
			d.signal(sig)
			if code := d.wait(10 * time.Second); code != 130 {
				t.Errorf("exit code after %s = %d, want 130", sig, code)
			}
			if s := d.stderr.String(); s != "" {
				t.Errorf("stderr after %s: %q", sig, s)
			}
			d.checkRules()
		})
	}

	t.Run("SIGTERM during a burst, slow reader", func(t *testing.T) {
		t.Parallel()
		ns := c.namespace(t)
		d := startJSON(t, kubeconfig, "configmaps", "-n", ns)
		d.waitWatchingJSON(c, ns, 60*time.Second)
		d.readDelay.Store(int64(20 * time.Millisecond))
		w := newWriter(c.client, ns)
		w.payload = strings.Repeat("z", 1024)
		for _, n := range names("cm", 300) {
			must(t, w.create(bg, n))
		}
		before := d.led.count()
		d.waitFor("some of the burst", 30*time.Second, func() bool { return d.led.count() >= before+20 })
		d.signal(syscall.SIGTERM)
		signalled := time.Now()
		// Read the rest at full speed: what was popped is flushed, whole
		// records only, then exit 130.
		d.readDelay.Store(0)
		if code := d.wait(15 * time.Second); code != 130 {
			t.Errorf("exit code after SIGTERM = %d, want 130", code)
		}
		t.Logf("exited %s after SIGTERM; %d records", time.Since(signalled).Round(10*time.Millisecond), d.led.count())
		d.checkRules()
		noStackTrace(t, d.stderr.String())
		if s := d.stderr.String(); s != "" {
			t.Errorf("stderr after SIGTERM: %q", s)
		}
	})

	t.Run("--count and --timeout exit 0", func(t *testing.T) {
		t.Parallel()
		ns := c.namespace(t)
		w := newWriter(c.client, ns)
		for _, n := range names("cm", 5) {
			must(t, w.create(bg, n))
		}
		r := runAs(t, kubeconfig, time.Minute, "configmaps", "-n", ns, "--count=2", "-o", "name")
		if r.code != 0 || r.stdout != "configmap/cm-0\nconfigmap/cm-1\n" || r.stderr != "" {
			t.Errorf("--count=2: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
		}
		began := time.Now()
		r = runAs(t, kubeconfig, time.Minute, "configmaps", "-n", ns, "--timeout=2s", "-o", "name")
		took := time.Since(began)
		if r.code != 0 || strings.Count(r.stdout, "\n") != 5 || r.stderr != "" || took < 2*time.Second || took > 20*time.Second {
			t.Errorf("--timeout=2s: exit %d after %s, stdout %q, stderr %q", r.code, took, r.stdout, r.stderr)
		}
		// --count reached by watched changes.
		b := startBG(t, kubeconfig, "configmaps", "-n", ns, "--watch-only", "--count=1", "-o", "name")
		deadline := time.Now().Add(60 * time.Second)
		for i := 0; ; i++ {
			select {
			case <-b.done:
			case <-time.After(time.Second):
				if time.Now().After(deadline) {
					t.Fatalf("--watch-only --count=1 never exited; stderr %q", b.stderr.String())
				}
				must(t, w.update(bg, "cm-0"))
				continue
			}
			break
		}
		if b.code() != 0 || b.stdout.String() != "configmap/cm-0\n" {
			t.Errorf("--watch-only --count=1: exit %d, stdout %q, stderr %q", b.code(), b.stdout.String(), b.stderr.String())
		}
	})
}

// Scenario 8: bad input. Each case exits 1 with an "error: " message
// that says what is wrong, prints nothing on stdout and no credential;
// flag mistakes are found before any request (the proxy in front of the
// server sees none).
func TestFaultBadInput(t *testing.T) {
	t.Parallel()
	c := sharedCluster()
	ns := c.namespace(t)
	p := newFaultProxy(t, c.cp.Server())
	viaProxy := p.kubeconfig(c.cp.AdminToken())
	dir := t.TempDir()
	garbled := filepath.Join(dir, "garbled.kubeconfig")
	if err := os.WriteFile(garbled, []byte("{this is: [not a kubeconfig\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A loopback port nobody listens on, and nobody can take while the
	// test runs.
	closedPort := refusingAddr(t, 0)
	// A server that accepts connections and never answers.
	hole := newFaultProxy(t, c.cp.Server())
	hole.blackHole()
	// A server that went away after kubectl cached its discovery: the
	// resource types resolve from the cache, the list and watch cannot
	// reach it.
	gone := newFaultProxy(t, c.cp.Server())
	goneKubeconfig := gone.kubeconfig(c.cp.AdminToken())
	cacheDir := filepath.Join(dir, "cache")
	if r := runAs(t, goneKubeconfig, time.Minute, "cm", "-n", ns, "--until-synced", "--cache-dir", cacheDir); r.code != 0 {
		t.Fatalf("warming the discovery cache: exit %d, %s", r.code, r.stderr)
	}
	gone.close()
	refusingAddr(t, gone.ln.Addr().(*net.TCPAddr).Port)

	// alice may list and get ConfigMaps in ns, not watch them.
	listOnly := c.namespace(t)
	grantAlice(t, c.client, listOnly, "list-only", "get", "list")
	must(t, newWriter(c.client, listOnly).create(bg, "visible"))
	must(t, newWriter(c.client, ns).create(bg, "visible"))

	// A service-account token that expired an hour ago, signed with the
	// server's own key, and the same token still valid: the control case
	// proves that the expired one is refused for its expiry alone (the valid
	// one authenticates: Forbidden, not Unauthorized).
	sa, err := c.client.CoreV1().ServiceAccounts(ns).Create(bg, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "robot"}}, metav1.CreateOptions{})
	must(t, err)
	keyFile := filepath.Join(c.cp.Dir(), "sa.key")
	expired := serviceAccountToken(t, keyFile, c.cp.Server(), sa, time.Now().Add(-time.Hour))
	valid := serviceAccountToken(t, keyFile, c.cp.Server(), sa, time.Now().Add(time.Hour))

	cases := []struct {
		name       string
		kubeconfig string
		args       []string
		// want are substrings of stderr; stderr must start with "error: ".
		want []string
		// noRequest: the mistake is found before anything is sent.
		noRequest bool
		// within bounds the run, process start-up included (seconds on a
		// loaded 2-core machine): it tells a bounded failure from a hang.
		within time.Duration
	}{
		{name: "unknown type", args: []string{"foos"}, want: []string{`error: the server doesn't have a resource type "foos"`}},
		{name: "bad selector", args: []string{"cm", "-l", "a=(b"}, want: []string{`--selector "a=(b"`}, noRequest: true},
		{name: "bad field selector syntax", args: []string{"cm", "--field-selector", "foo"}, want: []string{`--field-selector "foo"`}, noRequest: true},
		{name: "field selector the server rejects", args: []string{"cm", "-n", ns, "--field-selector=foo=bar"}, want: []string{`"foo"`, "field selector"}},
		{name: "bad duration", args: []string{"cm", "--timeout=5x"}, want: []string{`"5x"`, "--timeout"}, noRequest: true},
		{name: "bad resync", args: []string{"cm", "--resync=abc"}, want: []string{`"abc"`, "--resync"}, noRequest: true},
		{name: "negative count", args: []string{"cm", "--count=-1"}, want: []string{"--count"}, noRequest: true},
		{name: "bad output format", args: []string{"cm", "-o", "foo"}, want: []string{`output format "foo"`}, noRequest: true},
		{name: "bad jsonpath", args: []string{"cm", "-o", "jsonpath={.type"}, want: []string{"jsonpath"}, noRequest: true},
		{name: "bad watch-list", args: []string{"cm", "--watch-list=maybe"}, want: []string{`--watch-list value "maybe"`}, noRequest: true},
		{name: "until-synced with watch-only", args: []string{"cm", "--until-synced", "--watch-only"}, want: []string{"--until-synced", "--watch-only"}, noRequest: true},
		{name: "name with -A", args: []string{"cm/x", "-A"}, want: []string{"-A"}, noRequest: true},
		{name: "ignore-path without diff", args: []string{"cm", "--ignore-path=/data"}, want: []string{"--ignore-path", "--diff"}, noRequest: true},
		{name: "unknown flag", args: []string{"cm", "--no-such-flag"}, want: []string{"unknown flag: --no-such-flag"}, noRequest: true},
		{name: "missing kubeconfig", args: []string{"cm", "--kubeconfig", filepath.Join(dir, "missing")}, want: []string{filepath.Join(dir, "missing")}},
		{name: "garbled kubeconfig", kubeconfig: garbled, args: []string{"cm"}, want: []string{garbled}},
		{name: "unknown context", args: []string{"cm", "--context=nope"}, want: []string{"context", "nope"}, noRequest: true},
		// A fresh --cache-dir: no discovery cached for the port.
		{name: "unreachable server (closed port)", kubeconfig: c.cp.AdminKubeconfig(), args: []string{"cm", "--server=https://" + closedPort, "--cache-dir", filepath.Join(dir, "fresh-cache")}, want: []string{"https://" + closedPort}, within: 30 * time.Second},
		{name: "unreachable server (closed port), discovery cached", kubeconfig: goneKubeconfig, args: []string{"cm", "-n", ns, "--cache-dir", cacheDir}, want: []string{gone.URL()}, within: 35 * time.Second},
		{name: "unreachable server (no answer), --request-timeout", kubeconfig: hole.kubeconfig(c.cp.AdminToken()), args: []string{"cm", "--request-timeout=3s"}, want: []string{hole.URL(), "3s"}, within: 25 * time.Second},
		{name: "invalid token", args: []string{"cm", "-n", ns, "--token=not-a-valid-token"}, want: []string{"Unauthorized"}},
		{name: "expired token", args: []string{"cm", "-n", ns, "--token=" + expired}, want: []string{"Unauthorized"}},
		{name: "the expired token, still valid (control)", args: []string{"cm", "-n", ns, "--token=" + valid}, want: []string{`cannot list resource "configmaps"`, ns}},
		{name: "forbidden list", kubeconfig: c.cp.UserKubeconfig(), args: []string{"cm", "-n", ns}, want: []string{`cannot list resource "configmaps"`, ns}},
		{name: "forbidden watch, list allowed", kubeconfig: c.cp.UserKubeconfig(), args: []string{"cm", "-n", listOnly}, want: []string{`cannot watch resource "configmaps"`, listOnly}},
		{name: "namespace does not exist", args: []string{"cm", "-n", "no-such-namespace"}, want: []string{`"no-such-namespace"`, "not found"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			kubeconfig := tc.kubeconfig
			if kubeconfig == "" {
				kubeconfig = viaProxy
			}
			limit := tc.within
			if limit == 0 {
				limit = time.Minute
			}
			logMark := len(p.log())
			began := time.Now()
			r := runAs(t, kubeconfig, limit+30*time.Second, tc.args...)
			took := time.Since(began)
			if r.code != 1 || r.stdout != "" || !strings.HasPrefix(r.stderr, "error: ") {
				t.Errorf("kubectl deltas %s: exit %d, stdout %q, stderr %q; want exit 1, nothing on stdout, an \"error: \" message", strings.Join(tc.args, " "), r.code, r.stdout, r.stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr %q does not mention %q", r.stderr, w)
				}
			}
			if took > limit {
				t.Errorf("took %s, want within %s", took.Round(100*time.Millisecond), limit)
			}
			if tc.noRequest {
				if reqs := p.log()[logMark:]; len(reqs) > 0 {
					t.Errorf("a flag mistake must be reported before any request, the server got:\n%s", renderRequests(reqs))
				}
			}
			for _, secret := range []string{c.cp.AdminToken(), c.cp.UserToken(), expired, valid} {
				if strings.Contains(r.stderr, secret) {
					t.Errorf("stderr shows a token")
				}
			}
			noStackTrace(t, r.stderr)
			t.Logf("%s → %s", took.Round(100*time.Millisecond), strings.SplitN(strings.TrimSpace(r.stderr), "\n", 2)[0])
		})
	}
}

// Scenario 9: Secret values — data, stringData (which the server stores in
// data) and the last-applied-configuration annotation that kubectl apply
// writes — are redacted in every output format, diffs included, unless
// --show-secret-data.
func TestFaultSecretsRedacted(t *testing.T) {
	t.Parallel()
	c := sharedCluster()
	ns := c.namespace(t)
	suffix := fmt.Sprintf("%d%d", os.Getpid(), time.Now().UnixNano()%100000)
	values := map[string]string{
		"data1": "dataValueOne" + suffix, "string1": "stringValueOne" + suffix,
		"data2": "dataValueTwo" + suffix, "string2": "stringValueTwo" + suffix,
	}
	manifest := func(data, stringData string) string {
		return fmt.Sprintf(`apiVersion: v1
kind: Secret
metadata:
  name: creds
  namespace: %s
type: Opaque
data:
  password: %s
stringData:
  token: %s
`, ns, base64.StdEncoding.EncodeToString([]byte(data)), stringData)
	}
	apply := func(content string) {
		t.Helper()
		path := filepath.Join(t.TempDir(), "secret.yaml")
		must(t, os.WriteFile(path, []byte(content), 0o600))
		out, err := exec.Command(testEnv.kubectl, "--kubeconfig", c.cp.AdminKubeconfig(), "apply", "-f", path).CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl apply: %v\n%s", err, out)
		}
	}
	apply(manifest(values["data1"], values["string1"]))

	formats := [][]string{
		{},
		{"-o", "json"},
		{"-o", "yaml"},
		{"-o", "wide"},
		{"-o", "name"},
		{"-o", `jsonpath={.name} {.object.data} {.object.metadata.annotations} {.changes}{"\n"}`},
		{"-o", `jsonpath-as-json={.object}`},
		{"-o", `go-template={{.name}} {{.object.data}} {{.object.metadata.annotations}} {{.changes}}{{"\n"}}`},
		{"-o", "custom-columns=NAME:.name,DATA:.object.data,ANNOTATIONS:.object.metadata.annotations,CHANGES:.changes"},
	}
	type job struct {
		args []string
		run  *bgRun
	}
	var jobs []job
	for _, f := range formats {
		for _, diff := range []bool{false, true} {
			args := append([]string{"secrets", "-n", ns, "--count=2"}, f...)
			if diff {
				args = append(args, "--diff")
			}
			jobs = append(jobs, job{args: args, run: startBG(t, c.cp.AdminKubeconfig(), args...)})
		}
	}
	// Each run prints the initial Replaced, then the update.
	deadline := time.Now().Add(60 * time.Second)
	for _, j := range jobs {
		for !strings.Contains(j.run.stdout.String(), "creds") {
			select {
			case <-j.run.done:
				t.Fatalf("kubectl deltas %s exited: stdout %q stderr %q", strings.Join(j.args, " "), j.run.stdout.String(), j.run.stderr.String())
			case <-time.After(50 * time.Millisecond):
			}
			if time.Now().After(deadline) {
				t.Fatalf("kubectl deltas %s printed no initial record: %q %q", strings.Join(j.args, " "), j.run.stdout.String(), j.run.stderr.String())
			}
		}
	}
	apply(manifest(values["data2"], values["string2"]))
	var forbidden []string
	for _, v := range values {
		forbidden = append(forbidden, v, base64.StdEncoding.EncodeToString([]byte(v)))
	}
	for _, j := range jobs {
		select {
		case <-j.run.done:
		case <-time.After(60 * time.Second):
			t.Fatalf("kubectl deltas %s did not print the update: %q %q", strings.Join(j.args, " "), j.run.stdout.String(), j.run.stderr.String())
		}
		out := j.run.stdout.String()
		if j.run.code() != 0 || j.run.stderr.String() != "" {
			t.Errorf("kubectl deltas %s: exit %d, stderr %q", strings.Join(j.args, " "), j.run.code(), j.run.stderr.String())
		}
		for _, s := range forbidden {
			if strings.Contains(out, s) {
				t.Errorf("kubectl deltas %s shows a Secret value (%q):\n%s", strings.Join(j.args, " "), s, out)
			}
		}
	}

	// --show-secret-data shows them.
	r := runAs(t, c.cp.AdminKubeconfig(), time.Minute, "secrets", "-n", ns, "--until-synced", "-o", "json", "--show-secret-data")
	for _, s := range []string{base64.StdEncoding.EncodeToString([]byte(values["data2"])), base64.StdEncoding.EncodeToString([]byte(values["string2"])), values["string2"]} {
		if !strings.Contains(r.stdout, s) {
			t.Errorf("--show-secret-data does not show %q:\n%s", s, r.stdout)
		}
	}
	if r.code != 0 {
		t.Errorf("--show-secret-data: exit %d, stderr %q", r.code, r.stderr)
	}
}

// serviceAccountToken signs a bound service-account token for sa (RS256,
// the claims kube-apiserver's TokenRequest puts in one) with the
// control plane's signing key, expiring at exp: a real token the server
// verifies, which TokenRequest cannot make already expired.
func serviceAccountToken(t *testing.T, keyFile, issuer string, sa *corev1.ServiceAccount, exp time.Time) string {
	t.Helper()
	pemBytes, err := os.ReadFile(keyFile)
	must(t, err)
	block, _ := pem.Decode(pemBytes)
	if block == nil {
		t.Fatalf("%s holds no PEM block", keyFile)
	}
	parsed, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	must(t, err)
	key, ok := parsed.(*rsa.PrivateKey)
	if !ok {
		t.Fatalf("%s holds a %T, want an RSA key", keyFile, parsed)
	}
	issued := exp.Add(-2 * time.Hour)
	claims := map[string]any{
		"iss": issuer,
		"aud": []string{issuer}, // --api-audiences defaults to the issuer
		"sub": "system:serviceaccount:" + sa.Namespace + ":" + sa.Name,
		"iat": issued.Unix(),
		"nbf": issued.Unix(),
		"exp": exp.Unix(),
		"kubernetes.io": map[string]any{
			"namespace":      sa.Namespace,
			"serviceaccount": map[string]string{"name": sa.Name, "uid": string(sa.UID)},
		},
	}
	segment := func(v any) string {
		b, err := json.Marshal(v)
		must(t, err)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	signed := segment(map[string]string{"alg": "RS256", "typ": "JWT"}) + "." + segment(claims)
	digest := sha256.Sum256([]byte(signed))
	sig, err := rsa.SignPKCS1v15(nil, key, crypto.SHA256, digest[:])
	must(t, err)
	return signed + "." + base64.RawURLEncoding.EncodeToString(sig)
}
