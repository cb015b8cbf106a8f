package events

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kubectl-deltas/kubectl-deltas/internal/listwatch"
)

// serve answers the one request LatestWarning makes with body, and records
// its path and query.
func serve(t *testing.T, body string, status int) (rest.Interface, *http.Request) {
	t.Helper()
	seen := &http.Request{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		*seen = *r
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	client, err := listwatch.NewRESTClient(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return client, seen
}

func TestLatestWarning(t *testing.T) {
	client, req := serve(t, `{"kind":"EventList","items":[
		{"reason":"BackOff","message":"old","count":1,"lastTimestamp":"2026-11-25T06:00:00Z"},
		{"reason":"FailedScheduling","message":"0/3 nodes are available: \u001b[31mnone\u001b[0m","eventTime":"2026-11-25T06:00:05.123456Z","series":{"count":4,"lastObservedTime":"2026-11-25T06:01:00.000001Z"}},
		{"reason":"Failed","message":"in between","count":2,"firstTimestamp":"2026-11-25T06:00:01Z","lastTimestamp":"2026-11-25T06:00:30Z"}]}`, http.StatusOK)
	w, found, err := LatestWarning(context.Background(), client, "demo", "uid-1")
	if err != nil || !found {
		t.Fatalf("found %v, %v", found, err)
	}
	if req.URL.Path != "/api/v1/namespaces/demo/events" || req.URL.Query().Get("fieldSelector") != "involvedObject.uid=uid-1,type=Warning" {
		t.Errorf("asked %s?%s", req.URL.Path, req.URL.RawQuery)
	}
	if w.Reason != "FailedScheduling" || w.Count != 4 || !w.Last.Equal(time.Date(2026, 11, 25, 6, 1, 0, 1000, time.UTC)) {
		t.Errorf("latest %+v", w)
	}
	if got, want := w.String(), `Warning FailedScheduling: 0/3 nodes are available: \x1b[31mnone\x1b[0m (4 times)`; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

func TestLatestWarningNone(t *testing.T) {
	client, req := serve(t, `{"kind":"EventList","items":[]}`, http.StatusOK)
	if _, found, err := LatestWarning(context.Background(), client, "", "uid-2"); found || err != nil {
		t.Errorf("found %v, %v", found, err)
	}
	if req.URL.Path != "/api/v1/events" {
		t.Errorf("a cluster-scoped object's events asked at %s", req.URL.Path)
	}
	client, _ = serve(t, `{"kind":"Status","status":"Failure","reason":"Forbidden","code":403}`, http.StatusForbidden)
	if _, found, err := LatestWarning(context.Background(), client, "demo", "uid-3"); found || err == nil {
		t.Errorf("forbidden: found %v, %v", found, err)
	}
}
