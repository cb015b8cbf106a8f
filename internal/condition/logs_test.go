package condition

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kubectl-deltas/kubectl-deltas/internal/cache/cachetest"
	"github.com/kubectl-deltas/kubectl-deltas/internal/health"
	"github.com/kubectl-deltas/kubectl-deltas/internal/listwatch"
	"github.com/kubectl-deltas/kubectl-deltas/internal/printer"
)

// logServer answers a Pod's log with log (or, with status not 200, a
// Status saying message) and an Event list with none; it counts the log
// requests and keeps the last one's query.
type logServer struct {
	status    int
	log       string
	requests  int
	lastQuery map[string]string
}

func (s *logServer) client(t *testing.T) rest.Interface {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if !strings.HasSuffix(r.URL.Path, "/log") {
			_, _ = w.Write([]byte(`{"kind":"EventList","items":[]}`))
			return
		}
		s.requests++
		s.lastQuery = map[string]string{}
		for k, v := range r.URL.Query() {
			s.lastQuery[k] = v[0]
		}
		if s.status != http.StatusOK {
			w.WriteHeader(s.status)
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403,"message":"pods \"web-1\" is forbidden: User \"alice\" cannot get resource \"pods/log\" in API group \"\" in the namespace \"demo\""}`))
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte(s.log))
	}))
	t.Cleanup(srv.Close)
	client, err := listwatch.NewRESTClient(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return client
}

// crashLooping is a Pod whose container app restarted and waits in
// CrashLoopBackOff, judged so.
func crashLooping(t *testing.T) Held {
	t.Helper()
	obj := cachetest.MustParse(t, `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web-1","namespace":"demo","uid":"u1","resourceVersion":"7"},
		"status":{"phase":"Running","containerStatuses":[{"name":"sidecar","restartCount":0,"state":{"running":{}}},
		{"name":"app","restartCount":3,"state":{"waiting":{"reason":"CrashLoopBackOff"}},"lastState":{"terminated":{"exitCode":2}}}]}}`)
	return Held{
		Name: "pod/web-1", Namespace: "demo", UID: "u1", APIVersion: "v1", Kind: "Pod", ObjectName: "web-1",
		Health:  "Failed (ContainerCrashLooping): Containers in CrashLoop state: app",
		Verdict: &health.Health{Status: health.Failed, Container: "app", Reason: "ContainerCrashLooping"}, obj: obj,
	}
}

// TestFailureExplainedWithLogs: a --fail-when on a crash-looping Pod
// reads the last lines of its container's previous instance, one
// request, and says them in the error (escaped) and in the Verdict.
func TestFailureExplainedWithLogs(t *testing.T) {
	srv := &logServer{status: http.StatusOK, log: "starting\nconnecting\n\x1b[31mpanic: DATABASE_URL is not set\x1b[0m\nexit status 2\n"}
	client := srv.client(t)
	var warn bytes.Buffer
	cond, err := Parse("--fail-when", "status=Failed")
	if err != nil {
		t.Fatal(err)
	}
	e := &FailedError{Condition: cond, Held: crashLooping(t), logs: logFetch{lines: 2, warn: &warn}}
	e.Explain(func(string) rest.Interface { return client }, false)

	if srv.requests != 1 {
		t.Fatalf("%d log requests, want 1", srv.requests)
	}
	for k, want := range map[string]string{"container": "app", "previous": "true", "tailLines": "2", "limitBytes": "16384"} {
		if got := srv.lastQuery[k]; got != want {
			t.Errorf("asked %s=%q, want %q", k, got, want)
		}
	}
	msg := e.Error()
	if !strings.Contains(msg, "\n  last 2 lines of the log of container app (its previous instance):\n    \\x1b[31mpanic: DATABASE_URL is not set\\x1b[0m\n    exit status 2") {
		t.Errorf("the error does not end with the log's last lines, escaped:\n%s", msg)
	}
	if strings.Contains(msg, "\x1b") || warn.Len() != 0 {
		t.Errorf("an escape sequence reached the terminal, or a warning was said: %q, %q", msg, warn.String())
	}
	v := string(printer.AppendVerdictJSON(nil, Verdict("Failed", "--fail-when=status=Failed", e.All(), time.Time{})))
	if !strings.Contains(v, `"logs":{"container":"app","previous":true,"lines":["\u001b[31mpanic: DATABASE_URL is not set\u001b[0m","exit status 2"]}}`) {
		t.Errorf("the Verdict lacks the logs: %s", v)
	}
}

// TestLogsUnavailable: without pods/log the verdict stays whole; one info
// line says why, and the record says the logs are unavailable.
func TestLogsUnavailable(t *testing.T) {
	srv := &logServer{status: http.StatusForbidden}
	client := srv.client(t)
	var warn bytes.Buffer
	e := &TimeoutError{Waited: "deployments/web", Held: []Held{crashLooping(t)}, logs: logFetch{lines: DefaultLogLines, warn: &warn}}
	e.Explain(func(string) rest.Interface { return client }, false)

	want := `info: no logs for pod/web-1: pods "web-1" is forbidden: User "alice" cannot get resource "pods/log" in API group "" in the namespace "demo"` + "\n"
	if warn.String() != want {
		t.Errorf("said %q, want %q", warn.String(), want)
	}
	l := e.Held[0].Logs
	if l == nil || l.Container != "app" || len(l.Lines) != 0 || !strings.Contains(l.Unavailable, "cannot get resource \"pods/log\"") {
		t.Errorf("logs %+v, want unavailable with the reason", l)
	}
	if msg := e.Error(); !strings.Contains(msg, "pod/web-1: Failed (ContainerCrashLooping)") || strings.Contains(msg, "log of container") {
		t.Errorf("the timeout's message: %q", msg)
	}
}

// TestWhichContainersLogs: no request with --logs=0, nor for a
// container that never ran; a Pod that failed with no container named
// shows the current instance of the one that ended with an error.
func TestWhichContainersLogs(t *testing.T) {
	pulling := cachetest.MustParse(t, `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web-1","namespace":"demo","uid":"u1"},
		"status":{"containerStatuses":[{"name":"app","restartCount":0,"state":{"waiting":{"reason":"ImagePullBackOff"}}}]}}`)
	failed := cachetest.MustParse(t, `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web-1","namespace":"demo","uid":"u1"},
		"status":{"phase":"Failed","containerStatuses":[{"name":"ok","restartCount":0,"state":{"terminated":{"exitCode":0}}},
		{"name":"job","restartCount":0,"state":{"terminated":{"exitCode":1}}}]}}`)
	for _, tc := range []struct {
		name      string
		lines     int
		edit      func(h *Held)
		container string
		previous  bool
	}{
		{name: "--logs=0", lines: 0},
		{name: "never ran", lines: 5, edit: func(h *Held) { h.obj, h.Verdict.Container = pulling, "app" }},
		{name: "not a Pod", lines: 5, edit: func(h *Held) { h.Kind = "Deployment" }},
		{name: "failed Pod", lines: 5, edit: func(h *Held) { h.obj, h.Verdict.Container = failed, "" }, container: "job"},
		{name: "crash loop", lines: 5, container: "app", previous: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := &logServer{status: http.StatusOK, log: "a line\n"}
			client := srv.client(t)
			h := crashLooping(t)
			if tc.edit != nil {
				tc.edit(&h)
			}
			logFetch{lines: tc.lines}.fetchLogs(context.Background(), client, &h)
			switch {
			case tc.container == "" && (srv.requests != 0 || h.Logs != nil):
				t.Errorf("%d requests, logs %+v; want none", srv.requests, h.Logs)
			case tc.container != "" && (h.Logs == nil || h.Logs.Container != tc.container || h.Logs.Previous != tc.previous || len(h.Logs.Lines) != 1):
				t.Errorf("logs %+v, want container %s previous %v with its line", h.Logs, tc.container, tc.previous)
			}
		})
	}
}

// TestLastLines: a log cut at its start loses its first, partial, line;
// at most n lines are kept; an empty log has none.
func TestLastLines(t *testing.T) {
	for _, tc := range []struct {
		log  string
		n    int
		cut  bool
		want []string
	}{
		{"a\nb\nc\n", 2, false, []string{"b", "c"}},
		{"tial\nb\r\nc", 5, true, []string{"b", "c"}},
		{"", 5, false, []string{}},
	} {
		if got := lastLines(tc.log, tc.n, tc.cut); strings.Join(got, "|") != strings.Join(tc.want, "|") || len(got) != len(tc.want) {
			t.Errorf("lastLines(%q, %d, %v) = %q, want %q", tc.log, tc.n, tc.cut, got, tc.want)
		}
	}
}

// TestLogsFromEachBlockersCluster: with several clusters, each held Pod's
// log is asked of its own cluster's server.
func TestLogsFromEachBlockersCluster(t *testing.T) {
	servers := map[string]*logServer{
		"staging": {status: http.StatusOK, log: "staging says\n"},
		"prod":    {status: http.StatusOK, log: "prod says\n"},
	}
	clients := map[string]rest.Interface{}
	for name, srv := range servers {
		clients[name] = srv.client(t)
	}
	held := []Held{crashLooping(t), crashLooping(t)}
	held[0].Context, held[1].Context = "staging", "prod"
	e := &TimeoutError{Waited: "deployments/web", Held: held, logs: logFetch{lines: 5}}
	e.Explain(func(context string) rest.Interface { return clients[context] }, false)
	for i, want := range []string{"staging says", "prod says"} {
		if l := e.Held[i].Logs; l == nil || len(l.Lines) != 1 || l.Lines[0] != want {
			t.Errorf("%s: logs %+v, want %q", e.Held[i].Context, l, want)
		}
	}
	for name, srv := range servers {
		if srv.requests != 1 {
			t.Errorf("%s was asked %d times, want once", name, srv.requests)
		}
	}
}
