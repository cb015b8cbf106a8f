package e2e

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-deltas/kubectl-deltas/test/controlplane"
	"github.com/kubectl-deltas/kubectl-deltas/test/otelcol"
)

// exportKey identifies a record of the stream: its type, object and
// resourceVersion, and its time (a record repeats none of them all).
func exportKey(rec map[string]any) string {
	return fmt.Sprint(rec["type"], "|", rec["uid"], "|", rec["resourceVersion"], "|", rec["time"])
}

// decodeNumbers decodes a JSON line as the collector's file holds values:
// integers as int64, other numbers as float64.
func decodeNumbers(t *testing.T, line string) map[string]any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(line))
	dec.UseNumber()
	var v map[string]any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%q: %v", line, err)
	}
	return toInt64s(v).(map[string]any)
}

func toInt64s(v any) any {
	switch x := v.(type) {
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return n
		}
		f, _ := x.Float64()
		return f
	case []any:
		for i := range x {
			x[i] = toInt64s(x[i])
		}
	case map[string]any:
		for k := range x {
			x[k] = toInt64s(x[k])
		}
	}
	return v
}

// checkExported requires that the collector holds each of the stream's
// JSON lines exactly once and nothing else: its body the line, its
// EventName and severity by the record's type, its timestamp the record's
// time, its resource naming the cluster and the object.
func checkExported(t *testing.T, lines []string, logs []otelcol.ReceivedLog, cluster string) {
	t.Helper()
	byKey := map[string][]otelcol.ReceivedLog{}
	for _, l := range logs {
		body, ok := l.Body.(map[string]any)
		if !ok {
			t.Fatalf("a log record's body is %T, want a map: %#v", l.Body, l.Body)
		}
		byKey[exportKey(body)] = append(byKey[exportKey(body)], l)
	}
	ids := map[any]bool{}
	for _, line := range lines {
		rec := decodeNumbers(t, line)
		got := byKey[exportKey(rec)]
		if len(got) != 1 {
			t.Errorf("the collector holds %d log records of %s, want 1", len(got), line)
			continue
		}
		l := got[0]
		if !reflect.DeepEqual(l.Body, rec) {
			t.Errorf("body %#v\nwant the printed record %s", l.Body, line)
		}
		typ, _ := rec["type"].(string)
		wantEvent := "k8s.object." + strings.ToLower(typ)
		if typ == "Verdict" {
			wantEvent = "k8s.wait.verdict"
		}
		if l.EventName != wantEvent || l.SeverityText != "INFO" || l.SeverityNumber != 9 {
			t.Errorf("%s: EventName %q severity %q/%d, want %q INFO/9", line, l.EventName, l.SeverityText, l.SeverityNumber, wantEvent)
		}
		at, _ := time.Parse(time.RFC3339Nano, rec["time"].(string))
		if l.TimeUnixNano != at.UnixNano() {
			t.Errorf("%s: timestamp %s, want the record's time", line, time.Unix(0, l.TimeUnixNano).UTC().Format(time.RFC3339Nano))
		}
		name, named := l.Resource["k8s.cluster.name"]
		if named != (cluster != "") || (named && name != cluster) || l.Resource["service.name"] != "kubectl-deltas" {
			t.Errorf("%s: resource %v, want k8s.cluster.name=%s and service.name=kubectl-deltas", line, l.Resource, cluster)
		}
		if typ != "Verdict" && (l.Resource["k8s.namespace.name"] != rec["namespace"] || l.Resource["k8s.object.name"] != rec["name"] ||
			l.Resource["k8s.object.uid"] != rec["uid"] || l.Attributes["k8s.object.resource_version"] != rec["resourceVersion"]) {
			t.Errorf("%s: resource %v, attributes %v: want the object's namespace, name, uid and resourceVersion", line, l.Resource, l.Attributes)
		}
		id := l.Attributes["deltas.record.id"]
		if s, _ := id.(string); s == "" || ids[id] {
			t.Errorf("%s: record id %v missing or not unique", line, id)
		}
		ids[id] = true
	}
	if len(logs) != len(lines) {
		t.Errorf("the collector holds %d log records, the stream printed %d", len(logs), len(lines))
	}
}

// currentContext is the admin kubeconfig's current context: the
// k8s.cluster.name of what a run on it exports.
func currentContext(t *testing.T) string {
	t.Helper()
	config, err := clientcmd.LoadFromFile(testEnv.cp.AdminKubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	return config.CurrentContext
}

// nextLines reads the next n lines of s.
func nextLines(s *stream, n int) []string {
	s.t.Helper()
	var lines []string
	for range n {
		lines = append(lines, s.next(30*time.Second))
	}
	return lines
}

// TestOTLPExportsEveryRecordOnce: a live stream exported to a real
// collector, which is stopped for seconds while changes go on and started
// again: every record the stream printed arrives once, with its body,
// EventName, timestamp and attributes; the outage is said once, and its
// end.
func TestOTLPExportsEveryRecordOnce(t *testing.T) {
	t.Parallel()
	c := startCollector(t)
	ns := newNamespace(t)
	for i := range 3 {
		createCM(t, ns, fmt.Sprintf("cm-%d", i), nil, map[string]string{"k": "v", "n": "1"})
	}
	s := start(t, "cm", "-n", ns, "-o", "json", "--otlp="+c.URL())
	lines := nextLines(s, 3)
	for i := range 5 {
		updateCM(t, ns, "cm-0", "k", fmt.Sprint("live-", i))
	}
	lines = append(lines, nextLines(s, 5)...)
	c.waitLogs(t, len(lines), 30*time.Second)

	c.Stop()
	for i := range 10 {
		updateCM(t, ns, "cm-1", "k", fmt.Sprint("while-down-", i))
	}
	createCM(t, ns, "born-while-down", nil, nil)
	deleteCM(t, ns, "cm-2")
	lines = append(lines, nextLines(s, 12)...)
	waitStderrOf(t, s, "warning: the OpenTelemetry collector at "+c.URL()+" does not take records", 30*time.Second)
	c.Start()
	waitStderrOf(t, s, "info: the OpenTelemetry collector at "+c.URL()+" takes records again after", 30*time.Second)
	updateCM(t, ns, "cm-0", "k", "after")
	lines = append(lines, nextLines(s, 1)...)
	if code := s.stop(); code != 130 {
		t.Errorf("exit %d after an interrupt, want 130", code)
	}
	c.waitLogs(t, len(lines), 30*time.Second)
	time.Sleep(300 * time.Millisecond) // the file exporter flushes every 100 ms: a duplicate would show by now
	logs := c.Logs(t)
	checkExported(t, lines, logs, currentContext(t))
	stderr := s.stderr.String()
	if strings.Count(stderr, "does not take records") != 1 || strings.Count(stderr, "takes records again") != 1 || strings.Contains(stderr, "not sent") {
		t.Errorf("stderr %q: want one warning, one recovery, nothing left unsent", stderr)
	}
	t.Logf("%d records exported; stderr:\n%s", len(logs), stderr)
}

// TestOTLPQuietWaitAndBackfill: -q --otlp prints nothing and exports the
// stream with its Verdict; a recording exported afterwards (--replay
// --otlp) arrives with the records' own times, as -o json replays it.
func TestOTLPQuietWaitAndBackfill(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	createCM(t, ns, "ready", nil, map[string]string{"k": "v"})
	rec := filepath.Join(t.TempDir(), "r.jsonl")

	c := startCollector(t)
	r := run(t, time.Minute, "cm/ready", "-n", ns, "-q", "--until=status=Current", "--otlp="+c.URL(), "--record="+rec)
	if r.code != 0 || r.stdout != "" {
		t.Fatalf("-q --until --otlp: exit %d, stdout %q, stderr %q; want exit 0 and no output", r.code, r.stdout, r.stderr)
	}
	logs := c.waitLogs(t, 2, 30*time.Second)
	// Records of different resources share a request in no set order.
	slices.SortStableFunc(logs, func(a, b otelcol.ReceivedLog) int { return cmp.Compare(a.TimeUnixNano, b.TimeUnixNano) })
	var types []string
	for _, l := range logs {
		types = append(types, l.EventName)
	}
	if !reflect.DeepEqual(types, []string{"k8s.object.replaced", "k8s.wait.verdict"}) {
		t.Errorf("exported %v, want the initial list's record and the Verdict", types)
	}
	if len(logs) == 2 {
		if v, _ := logs[1].Body.(map[string]any); v["outcome"] != "Met" {
			t.Errorf("the Verdict's body %v, want outcome Met", logs[1].Body)
		}
	}

	updateCM(t, ns, "ready", "k", "v2") // not recorded: the recorder has exited
	replayed := run(t, time.Minute, "--replay="+rec, "-o", "json")
	if replayed.code != 0 {
		t.Fatalf("replay: exit %d: %s", replayed.code, replayed.stderr)
	}
	want := strings.Split(strings.TrimSpace(replayed.stdout), "\n")
	backfill := startCollector(t)
	r = run(t, time.Minute, "--replay="+rec, "-q", "--otlp="+backfill.URL())
	if r.code != 0 || r.stdout != "" {
		t.Fatalf("--replay -q --otlp: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	backfill.waitLogs(t, len(want), 30*time.Second)
	time.Sleep(300 * time.Millisecond)
	// The recording's header names the recorded run's context: the
	// backfill's records sit under the same cluster as the live ones.
	checkExported(t, want, backfill.Logs(t), currentContext(t))
	for _, l := range logs {
		if l.Resource["k8s.cluster.name"] != currentContext(t) {
			t.Errorf("live: %s under resource %v, want k8s.cluster.name=%s", l.EventName, l.Resource, currentContext(t))
		}
	}
}

// TestOTLPBadInput: a malformed endpoint or variable is an error before
// any request; a collector that does not answer at start is a warning,
// and what could not be sent is said at the exit.
func TestOTLPBadInput(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	createCM(t, ns, "one", nil, nil)
	for _, tc := range []struct {
		args []string
		env  []string
		want string
	}{
		{args: []string{"--otlp=notaurl"}, want: `--otlp "notaurl" is not an OTLP/HTTP endpoint`},
		{args: []string{"--otlp=grpc://127.0.0.1:4317"}, want: "gRPC is not built in"},
		{args: []string{"--otlp=http://127.0.0.1:99999"}, want: "bad port"},
		{args: []string{"--otlp"}, env: []string{"OTEL_EXPORTER_OTLP_ENDPOINT=ftp://x"}, want: "OTEL_EXPORTER_OTLP_ENDPOINT"},
		{args: []string{"--otlp=http://127.0.0.1:4318"}, env: []string{"OTEL_EXPORTER_OTLP_HEADERS=novalue"}, want: "OTEL_EXPORTER_OTLP_HEADERS"},
		{args: []string{"--otlp=http://127.0.0.1:4318"}, env: []string{"OTEL_RESOURCE_ATTRIBUTES=a=%zz"}, want: "OTEL_RESOURCE_ATTRIBUTES"},
		{args: []string{"--otlp=https://127.0.0.1:4318"}, env: []string{"OTEL_EXPORTER_OTLP_CERTIFICATE=/no/such/ca.pem"}, want: "OTEL_EXPORTER_OTLP_CERTIFICATE"},
	} {
		r := runEnv(t, tc.env, append([]string{"cm", "-n", ns}, tc.args...)...)
		if r.code != 1 || r.stdout != "" || !strings.HasPrefix(r.stderr, "error: ") || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v %v: exit %d, stdout %q, stderr %q; want exit 1 and an error naming %q", tc.env, tc.args, r.code, r.stdout, r.stderr, tc.want)
		}
	}

	// A collector whose certificate nothing here vouches for: an error,
	// nothing printed.
	untrusted := httptest.NewUnstartedServer(http.NotFoundHandler())
	untrusted.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshake it refuses is the test
	untrusted.StartTLS()
	defer untrusted.Close()
	r := run(t, time.Minute, "cm", "-n", ns, "--until-synced", "-o", "name", "--otlp="+untrusted.URL)
	if r.code != 1 || r.stdout != "" || !strings.HasPrefix(r.stderr, "error: the OpenTelemetry collector at "+untrusted.URL+" presents a certificate that does not verify") ||
		!strings.Contains(r.stderr, "OTEL_EXPORTER_OTLP_CERTIFICATE") {
		t.Errorf("an untrusted collector: exit %d, stdout %q, stderr %q; want exit 1 and an error saying its certificate does not verify", r.code, r.stdout, r.stderr)
	}

	closed := refusingAddr(t, 0)
	r = run(t, time.Minute, "cm", "-n", ns, "--until-synced", "-o", "name", "--otlp=http://"+closed)
	if r.code != 0 || r.stdout != "configmap/one\n" {
		t.Fatalf("an unreachable collector: exit %d, stdout %q, stderr %q; want the stream, exit 0", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{
		"warning: cannot reach the OpenTelemetry collector at http://" + closed,
		"warning: 1 records were not sent to the OpenTelemetry collector at http://" + closed,
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr %q, want %q", r.stderr, want)
		}
	}
}

// runEnv runs kubectl deltas with env added to its environment.
func runEnv(t *testing.T, env []string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := command(ctx, testEnv.cp.AdminKubeconfig(), args...)
	cmd.Env = append(cmd.Env, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if exit, ok := err.(*exec.ExitError); ok {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{stdout: stdout.String(), stderr: stderr.String(), code: code}
}

// refusingAddr returns a loopback address on port (0: any free one) that
// refuses connections for the whole test: a TCP socket bound to it and never
// listening holds the port, so no server started meanwhile (another test's
// apiserver, a proxy on an ephemeral port) can take it, and a connection to
// it is refused at once. A port listened on and closed again is free for the
// next bind, which made "connection refused" a race between parallel tests.
func refusingAddr(t *testing.T, port int) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("a socket to hold a closed port: %v", err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatalf("binding a socket to hold a closed port (%d): %v", port, err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatalf("the held port: %v", err)
	}
	return net.JoinHostPort("127.0.0.1", fmt.Sprint(sa.(*syscall.SockaddrInet4).Port))
}

// TestOTLPDocsShowTheTestsCollector: the collector configuration
// docs/otlp.md shows is the one the tests run.
func TestOTLPDocsShowTheTestsCollector(t *testing.T) {
	root, err := controlplane.FindRepoRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	config, err := os.ReadFile(filepath.Join(root, "hack", "otelcol", "collector.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(root, "docs", "otlp.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(page), "```yaml\n"+string(config)+"```\n") {
		t.Error("docs/otlp.md does not show hack/otelcol/collector.yaml as it is: copy it into the page's yaml block")
	}
}

// TestOTLPResendsAfterSIGKILL: with --record beside it, the recording is
// the exporter's log. A run SIGKILLed while the collector is down, its
// records printed but not taken, and started again on the same
// recording: the collector gets every record both runs printed exactly
// once — what the first run had sent is not sent again, what it had not
// is — and a third run with nothing new sends nothing again.
func TestOTLPResendsAfterSIGKILL(t *testing.T) {
	t.Parallel()
	for _, rec := range []string{"r.jsonl.zst", "dir/"} {
		t.Run(rec, func(t *testing.T) {
			t.Parallel()
			c := startCollector(t)
			ns := newNamespace(t)
			path := filepath.Join(t.TempDir(), rec)
			args := []string{"cm", "-n", ns, "-o", "json", "--record=" + path, "--otlp=" + c.URL()}
			createCM(t, ns, "a", nil, map[string]string{"k": "0"})
			first := start(t, args...)
			lines := nextLines(first, 1)
			for i := range 3 {
				updateCM(t, ns, "a", "k", fmt.Sprint("sent-", i))
			}
			lines = append(lines, nextLines(first, 3)...)
			c.waitLogs(t, len(lines), 30*time.Second)

			c.Stop()
			for i := range 4 {
				updateCM(t, ns, "a", "k", fmt.Sprint("not-sent-", i))
			}
			createCM(t, ns, "b", nil, nil)
			lines = append(lines, nextLines(first, 5)...)
			time.Sleep(2 * time.Second) // recorded: the recorder ends a piece at least once a second
			must(t, first.cmd.Process.Kill())
			<-first.done

			c.Start()
			updateCM(t, ns, "a", "k", "while-nothing-ran")
			second := start(t, args...)
			// The update made while nothing ran, caught up after the gap.
			lines = append(lines, nextLines(second, 1)...)
			deleteCM(t, ns, "b")
			lines = append(lines, nextLines(second, 1)...)
			c.waitLogs(t, len(lines), 30*time.Second)
			if code := second.stop(); code != 130 {
				t.Errorf("second run: exit %d, want 130", code)
			}
			third := start(t, args...)
			third.quiet(2 * time.Second)
			if code := third.stop(); code != 130 {
				t.Errorf("third run: exit %d, want 130", code)
			}
			time.Sleep(500 * time.Millisecond)
			checkExported(t, lines, c.Logs(t), currentContext(t))
			for _, s := range []*stream{second, third} {
				if strings.Contains(s.stderr.String(), "could not send") {
					t.Errorf("stderr: %s", s.stderr.String())
				}
			}
		})
	}
}

// TestOTLPHandlerCallsAndReconciles: with --handler --queue every record
// the stream prints — handler calls, reconciles, the QueueSummary —
// arrives once, its body the printed line, its EventName its type's.
func TestOTLPHandlerCallsAndReconciles(t *testing.T) {
	t.Parallel()
	c := startCollector(t)
	ns := newNamespace(t)
	createCM(t, ns, "hot", nil, map[string]string{"k": "0"})
	s := start(t, "cm", "-n", ns, "--handler", "--queue", "--reconcile-time=10ms", "-o", "json", "--timeout=8s", "--otlp="+c.URL())
	if !s.waitFor(func(l string) bool { return strings.Contains(l, `"type":"Reconcile"`) }, 30*time.Second) {
		t.Fatalf("no Reconcile of the initial list; lines:\n%s", strings.Join(s.seen, "\n"))
	}
	for i := range 5 {
		updateCM(t, ns, "hot", "k", fmt.Sprint(i+1))
	}
	for line := range s.lines {
		s.seen = append(s.seen, line)
	}
	if code := s.stop(); code != 0 {
		t.Fatalf("exit %d after --timeout, want 0; stderr %s", code, s.stderr.String())
	}
	names := map[string]string{"OnAdd": "k8s.handler.on_add", "OnUpdate": "k8s.handler.on_update", "Reconcile": "k8s.controller.reconcile", "QueueSummary": "k8s.controller.queue_summary"}
	logs := c.waitLogs(t, len(s.seen), 30*time.Second)
	seen := map[string]int{}
	for _, line := range s.seen {
		rec := decodeNumbers(t, line)
		found := 0
		for _, l := range logs {
			if reflect.DeepEqual(l.Body, rec) {
				found++
				if want := names[rec["type"].(string)]; l.EventName != want {
					t.Errorf("%s: EventName %q, want %q", line, l.EventName, want)
				}
			}
		}
		if found != 1 {
			t.Errorf("the collector holds %d log records of %s, want 1", found, line)
		}
		seen[rec["type"].(string)]++
	}
	if len(logs) != len(s.seen) || seen["OnUpdate"] == 0 || seen["Reconcile"] == 0 || seen["QueueSummary"] != 1 {
		t.Errorf("the collector holds %d records, the stream printed %d: %v", len(logs), len(s.seen), seen)
	}
}
