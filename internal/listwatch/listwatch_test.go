package listwatch

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"

	"github.com/kubectl-deltas/kubectl-deltas/internal/cache"
	"github.com/kubectl-deltas/kubectl-deltas/internal/rawobj"
)

// configMap is a ConfigMap as the API server lists it (without apiVersion
// and kind) of about 700 bytes.
func configMap(i int) string {
	return fmt.Sprintf(`{"metadata":{"name":"cm-%05d","namespace":"ns","uid":"u-%d","resourceVersion":"%d","creationTimestamp":"2024-05-01T12:00:00Z","labels":{"app":"demo"},"managedFields":[{"manager":"kubectl","operation":"Update","apiVersion":"v1","time":"2024-05-01T12:00:00Z","fieldsType":"FieldsV1","fieldsV1":{"f:data":{".":{},"f:key":{}}}}]},"data":{"key":"value %d","config.yaml":"server:\n  port: 8080\n  host: 0.0.0.0\n`+strings.Repeat("x", 400)+`"}}`, i, i, 1000+i, i)
}

// listBody is a ConfigMapList of the items from..to-1, with a continue
// token if cont != "".
func listBody(from, to int, cont string, remaining int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"999"`)
	if cont != "" {
		fmt.Fprintf(&b, `,"continue":%q,"remainingItemCount":%d`, cont, remaining)
	}
	b.WriteString(`},"items":[`)
	for i := from; i < to; i++ {
		if i > from {
			b.WriteByte(',')
		}
		b.WriteString(configMap(i))
	}
	b.WriteString("]}\n")
	return b.Bytes()
}

// statusBody is the Status the API server sends with a failed request.
func statusBody(code int, reason metav1.StatusReason, message string) []byte {
	st := metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure, Message: message, Reason: reason, Code: int32(code),
	}
	b, err := json.Marshal(st)
	if err != nil {
		panic(err)
	}
	return b
}

// fakeServer serves a ConfigMap collection of n items at
// /api/v1/namespaces/ns/configmaps: lists (paged with limit and continue)
// and watches (events from the watch function), or fails every request
// with fail.
type fakeServer struct {
	n     int
	watch func(w io.Writer, flush func())
	// fail, if set, answers every request.
	fail func(w http.ResponseWriter, r *http.Request) bool
	// gadgets serves a custom resource (example.com/v1 gadgets) instead of
	// ConfigMaps, with newTestLW's target set to match (gadgetsTarget).
	gadgets bool

	mu       sync.Mutex
	requests []string
	bodies   map[string][]byte // list bodies by request URI
}

func (f *fakeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.requests = append(f.requests, r.URL.RequestURI())
	f.mu.Unlock()
	if f.fail != nil && f.fail(w, r) {
		return
	}
	collection := "/api/v1/namespaces/ns/configmaps"
	if f.gadgets {
		collection = "/apis/example.com/v1/namespaces/ns/gadgets"
	}
	if r.URL.Path != collection {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write(statusBody(404, metav1.StatusReasonNotFound, "the server could not find the requested resource"))
		return
	}
	q := r.URL.Query()
	w.Header().Set("Content-Type", "application/json")
	if q.Get("watch") == "true" {
		w.WriteHeader(http.StatusOK)
		fl := w.(http.Flusher)
		fl.Flush()
		f.watch(w, fl.Flush)
		return
	}
	from := 0
	if c := q.Get("continue"); c != "" {
		from, _ = strconv.Atoi(c)
	}
	to := f.n
	if limit, _ := strconv.Atoi(q.Get("limit")); limit > 0 && from+limit < f.n {
		to = from + limit
	}
	cont := ""
	if to < f.n {
		cont = strconv.Itoa(to)
	}
	w.WriteHeader(http.StatusOK)
	f.mu.Lock()
	body, ok := f.bodies[r.URL.RequestURI()]
	if !ok {
		body = listBody(from, to, cont, f.n-to)
		if f.bodies == nil {
			f.bodies = map[string][]byte{}
		}
		f.bodies[r.URL.RequestURI()] = body
	}
	f.mu.Unlock()
	// Write in pieces, as a server streaming a big list does.
	for len(body) > 0 {
		n := min(len(body), 3000)
		_, _ = w.Write(body[:n])
		body = body[n:]
		w.(http.Flusher).Flush()
	}
}

func (f *fakeServer) requestURIs() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.requests...)
}

func newTestLW(t testing.TB, f *fakeServer, target Request) *ListerWatcher {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	// No client-side rate limit (QPS 5 by default): benchmarks send many
	// requests.
	client, err := NewRESTClient(&rest.Config{Host: srv.URL, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	target.Resource = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	if f.gadgets {
		target.Resource = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "gadgets"}
	}
	target.Namespace = "ns"
	return NewListerWatcher(client, target)
}

func TestList(t *testing.T) {
	f := &fakeServer{n: 500}
	lw := newTestLW(t, f, Request{LabelSelector: "app=demo", FieldSelector: "metadata.name!=x"})
	obj, err := lw.List(context.Background(), metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		t.Fatal(err)
	}
	l := obj.(*rawobj.List)
	if len(l.Items) != 500 || l.ResourceVersion != "999" || l.Continue != "" || l.Kind != "ConfigMapList" {
		t.Fatalf("%d items, meta %q %q %q", len(l.Items), l.ResourceVersion, l.Continue, l.Kind)
	}
	for i, o := range l.Items {
		if o.Name != fmt.Sprintf("cm-%05d", i) || o.Kind != "ConfigMap" || o.APIVersion != "v1" || o.ResourceVersion != strconv.Itoa(1000+i) {
			t.Fatalf("item %d: %s %s %s %s", i, o.APIVersion, o.Kind, o.Name, o.ResourceVersion)
		}
		if bytes.Contains(o.JSON, []byte("managedFields")) || len(o.Managers()) != 1 || o.Managers()[0].Manager != "kubectl" {
			t.Fatalf("item %d: managedFields %s %+v", i, o.JSON, o.Managers())
		}
	}
	// The list, and maybe its probe (sent beside it, cancelled once the
	// list had items).
	got := f.requestURIs()
	slices.Sort(got)
	list := "/api/v1/namespaces/ns/configmaps?fieldSelector=metadata.name%21%3Dx&labelSelector=app%3Ddemo&resourceVersion=0"
	probe := "/api/v1/namespaces/ns/configmaps?fieldSelector=metadata.name%21%3Dx&labelSelector=app%3Ddemo&limit=1"
	if !slices.Equal(got, []string{list}) && !slices.Equal(got, []string{probe, list}) {
		t.Errorf("requests %q", got)
	}
}

// TestListEach checks that ListEach hands out what List returns, item by
// item, that an error of each ends the list, and that a server error is
// the same as List's.
func TestListEach(t *testing.T) {
	f := &fakeServer{n: 500}
	lw := newTestLW(t, f, Request{})
	want, err := lw.List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []*rawobj.Object
	obj, err := lw.ListEach(context.Background(), metav1.ListOptions{}, func(o runtime.Object) error {
		got = append(got, o.(*rawobj.Object))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	l := obj.(*rawobj.List)
	if len(l.Items) != 0 || l.ResourceVersion != "999" || l.Kind != "ConfigMapList" {
		t.Errorf("list %d items, RV %q, kind %q", len(l.Items), l.ResourceVersion, l.Kind)
	}
	if !reflect.DeepEqual(got, want.(*rawobj.List).Items) {
		t.Errorf("ListEach handed out %d items unlike List's %d", len(got), len(want.(*rawobj.List).Items))
	}

	stop := errors.New("stop")
	n := 0
	_, err = lw.ListEach(context.Background(), metav1.ListOptions{}, func(runtime.Object) error {
		if n++; n == 3 {
			return stop
		}
		return nil
	})
	if err != stop || n != 3 {
		t.Errorf("each failing at the third item: %v after %d", err, n)
	}

	// Items without a kind, the list's kind after them: they could not be
	// typed when handed out.
	late := newTestLW(t, &fakeServer{fail: failWith(200, "application/json", []byte(`{"items":[{"metadata":{"name":"a"}}],"apiVersion":"v1","kind":"ConfigMapList","metadata":{}}`))}, Request{})
	if _, err := late.ListEach(context.Background(), metav1.ListOptions{}, func(runtime.Object) error { return nil }); !errors.Is(err, cache.ErrListNotStreamable) {
		t.Errorf("a list typed after its items: %v", err)
	}

	forbidden := newTestLW(t, &fakeServer{fail: failWith(403, "application/json", statusBody(403, metav1.StatusReasonForbidden, "no"))}, Request{})
	if _, err := forbidden.ListEach(context.Background(), metav1.ListOptions{}, func(runtime.Object) error { return nil }); !apierrors.IsForbidden(err) {
		t.Errorf("403: %v", err)
	}
}

func TestListPaginated(t *testing.T) {
	f := &fakeServer{n: 1234}
	lw := newTestLW(t, f, Request{Parse: rawobj.ParseOptions{KeepManagedFields: true}})
	opts := metav1.ListOptions{Limit: 500}
	var names []string
	pages := 0
	for {
		obj, err := lw.List(context.Background(), opts)
		if err != nil {
			t.Fatal(err)
		}
		l := obj.(*rawobj.List)
		pages++
		for _, o := range l.Items {
			names = append(names, o.Name)
			if !bytes.Contains(o.JSON, []byte(`"managedFields"`)) {
				t.Fatal("managedFields stripped")
			}
		}
		if l.Continue == "" {
			if l.RemainingItemCount != nil {
				t.Errorf("last page has remainingItemCount %d", *l.RemainingItemCount)
			}
			break
		}
		if want := int64(1234 - len(names)); l.RemainingItemCount == nil || *l.RemainingItemCount != want {
			t.Errorf("page %d: remainingItemCount %v, want %d", pages, l.RemainingItemCount, want)
		}
		opts.Continue = l.Continue
	}
	if pages != 3 || len(names) != 1234 || names[1233] != "cm-01233" {
		t.Errorf("%d pages, %d items", pages, len(names))
	}
	want := []string{
		"/api/v1/namespaces/ns/configmaps?limit=500",
		"/api/v1/namespaces/ns/configmaps?continue=500&limit=500",
		"/api/v1/namespaces/ns/configmaps?continue=1000&limit=500",
	}
	if got := f.requestURIs(); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("requests %q", got)
	}
}

// oldList is List as it was before it streamed: the whole body with Do,
// then ParseList. Its errors are the reference for List's.
func (lw *ListerWatcher) oldList(ctx context.Context, opts metav1.ListOptions) (*rawobj.List, error) {
	result := lw.request(opts).Do(ctx)
	body, err := result.Raw()
	if err != nil {
		return nil, result.Error()
	}
	return rawobj.ParseList(body, lw.target.Parse)
}

// failWith answers with code, a content type and body.
func failWith(code int, contentType string, body []byte) func(http.ResponseWriter, *http.Request) bool {
	return func(w http.ResponseWriter, r *http.Request) bool {
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(code)
		_, _ = w.Write(body)
		return true
	}
}

func TestListAndWatchErrors(t *testing.T) {
	tests := []struct {
		name  string
		fail  func(http.ResponseWriter, *http.Request) bool
		check func(error) bool
		msg   string
	}{
		{"403", failWith(403, "application/json", statusBody(403, metav1.StatusReasonForbidden, `configmaps is forbidden: User "u" cannot list resource "configmaps"`)),
			apierrors.IsForbidden, `configmaps is forbidden: User "u" cannot list resource "configmaps"`},
		{"410", failWith(410, "application/json", statusBody(410, metav1.StatusReasonExpired, "too old resource version: 1 (2)")),
			func(err error) bool { return apierrors.IsResourceExpired(err) && !apierrors.IsGone(err) }, "too old resource version: 1 (2)"},
		{"410 gone", failWith(410, "application/json", statusBody(410, metav1.StatusReasonGone, "gone")),
			apierrors.IsGone, "gone"},
		{"500", failWith(500, "application/json", statusBody(500, metav1.StatusReasonInternalError, "Internal error occurred: etcd is down")),
			apierrors.IsInternalError, "Internal error occurred: etcd is down"},
		{"500 text", failWith(500, "text/plain", []byte("oops")),
			apierrors.IsInternalError, `an error on the server ("oops") has prevented the request from succeeding`},
		{"404 no body", failWith(404, "application/json", nil),
			apierrors.IsNotFound, "the server could not find the requested resource"},
		{"401", failWith(401, "application/json", statusBody(401, metav1.StatusReasonUnauthorized, "Unauthorized")),
			apierrors.IsUnauthorized, "Unauthorized"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			lw := newTestLW(t, &fakeServer{fail: tc.fail}, Request{})
			ctx := context.Background()
			_, oldErr := lw.oldList(ctx, metav1.ListOptions{})
			_, err := lw.List(ctx, metav1.ListOptions{})
			if err == nil || !tc.check(err) || err.Error() != tc.msg {
				t.Errorf("List: %v (%T)", err, err)
			}
			// As informative as before: the same message and status.
			if oldErr == nil || err == nil || err.Error() != oldErr.Error() || apierrors.ReasonForError(err) != apierrors.ReasonForError(oldErr) {
				t.Errorf("List: %v, with Do it was: %v", err, oldErr)
			}
			_, err = lw.Watch(ctx, metav1.ListOptions{})
			if err == nil || !tc.check(err) || err.Error() != tc.msg {
				t.Errorf("Watch: %v", err)
			}
		})
	}
}

func TestListBadBody(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		fail       func(http.ResponseWriter, *http.Request) bool
	}{
		{"invalid JSON", "unable to decode the list of configmaps: items[1]: invalid JSON at offset 102: unexpected '}'",
			failWith(200, "application/json", []byte(`{"kind":"ConfigMapList","apiVersion":"v1","items":[{"metadata":{"name":"a"}},{"metadata":{"name":"b"},}]}`))},
		{"truncated", "unable to decode the list of configmaps: invalid JSON at offset 7: unexpected end of input",
			failWith(200, "application/json", []byte(`{"items`))},
		{"connection lost", "unable to read the list of configmaps: items[*]: unexpected EOF",
			func(w http.ResponseWriter, r *http.Request) bool {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write(listBody(0, 3, "", 0)[:1000])
				w.(http.Flusher).Flush()
				panic(http.ErrAbortHandler) // closes the connection mid-body
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lw := newTestLW(t, &fakeServer{fail: tc.fail}, Request{})
			_, err := lw.List(context.Background(), metav1.ListOptions{})
			// The index of the item cut depends on the body's size; the
			// rest of the message is exact.
			if err == nil || !matchItemIndex(err.Error(), tc.want) {
				t.Errorf("error %v\nwant %s", err, tc.want)
			}
		})
	}
}

// matchItemIndex reports whether got is want with any item index where
// want has items[*].
func matchItemIndex(got, want string) bool {
	before, after, ok := strings.Cut(want, "items[*]")
	if !ok {
		return got == want
	}
	rest, ok := strings.CutPrefix(got, before+"items[")
	if !ok {
		return false
	}
	digits := strings.TrimLeft(rest, "0123456789")
	return len(digits) < len(rest) && digits == "]"+after
}

// TestListRetriesReset checks that a connection reset before the response
// is retried, as Do retries it.
func TestListRetriesReset(t *testing.T) {
	var resets atomic.Int32
	f := &fakeServer{n: 3}
	f.fail = func(w http.ResponseWriter, r *http.Request) bool {
		if resets.Add(1) > 2 {
			return false
		}
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
		return true
	}
	lw := newTestLW(t, f, Request{})
	lw.retryDelay = 10 * time.Millisecond
	obj, err := lw.List(context.Background(), metav1.ListOptions{})
	if err != nil || len(obj.(*rawobj.List).Items) != 3 || resets.Load() != 3 {
		t.Errorf("after 2 resets: %v, %d requests", err, resets.Load())
	}
	// A cancelled context ends the retries.
	resets.Store(-1000)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	lw.retryDelay = time.Hour
	start := time.Now()
	if _, err := lw.List(ctx, metav1.ListOptions{}); err == nil || time.Since(start) > 10*time.Second {
		t.Errorf("cancelled: %v after %s", err, time.Since(start))
	}
}

// events writes n events: ADDED cm-0…, a BOOKMARK, then an ERROR.
func events(n int) func(w io.Writer, flush func()) {
	return func(w io.Writer, flush func()) {
		bw := bufio.NewWriter(w)
		for i := 0; i < n; i++ {
			fmt.Fprintf(bw, `{"type":"ADDED","object":{"kind":"ConfigMap","apiVersion":"v1",%s}`+"\n", configMap(i)[1:])
		}
		_, _ = bw.WriteString(`{"type":"BOOKMARK","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"resourceVersion":"5000","annotations":{"k8s.io/initial-events-end":"true"}}}}` + "\n")
		_, _ = bw.Write(append(append([]byte(`{"type":"ERROR","object":`), statusBody(410, metav1.StatusReasonExpired, "too old")...), "}\n"...))
		bw.Flush()
		flush()
	}
}

func TestWatch(t *testing.T) {
	f := &fakeServer{watch: events(300)}
	lw := newTestLW(t, f, Request{})
	w, err := lw.Watch(context.Background(), metav1.ListOptions{ResourceVersion: "7", AllowWatchBookmarks: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	i := 0
	for e := range w.ResultChan() {
		switch {
		case i < 300:
			o, ok := e.Object.(*rawobj.Object)
			if e.Type != watch.Added || !ok || o.Name != fmt.Sprintf("cm-%05d", i) || o.Kind != "ConfigMap" {
				t.Fatalf("event %d: %s %#v", i, e.Type, e.Object)
			}
		case i == 300:
			o, ok := e.Object.(*rawobj.Object)
			if e.Type != watch.Bookmark || !ok || o.ResourceVersion != "5000" || !o.InitialEventsEnd {
				t.Fatalf("bookmark: %s %#v", e.Type, e.Object)
			}
		case i == 301:
			st, ok := e.Object.(*metav1.Status)
			if e.Type != watch.Error || !ok || st.Code != 410 || !apierrors.IsResourceExpired(apierrors.FromObject(st)) {
				t.Fatalf("error: %s %#v", e.Type, e.Object)
			}
		default:
			t.Fatalf("event %d: %s %#v", i, e.Type, e.Object)
		}
		i++
	}
	if i != 302 {
		t.Errorf("%d events", i)
	}
	if got := f.requestURIs(); len(got) != 1 || got[0] != "/api/v1/namespaces/ns/configmaps?allowWatchBookmarks=true&resourceVersion=7&watch=true" {
		t.Errorf("requests %q", got)
	}
}

func TestWatchBadStream(t *testing.T) {
	for _, tc := range []struct{ name, stream, want string }{
		{"invalid event", `{"type":"ADDED","object":{"metadata":{"name":1}}}` + "\n",
			"unable to decode a ADDED event from the watch stream: metadata.name at offset 45 is not a string"},
		{"unknown type", `{"type":"NEW","object":{}}` + "\n", `unable to decode an event from the watch stream: unknown watch event type "NEW"`},
		{"invalid JSON", `{"type":"ADDED","object":{"metadata":{"name":"a"}}}` + "\n" + `{"type":"ADDED","object":{"a":]}}` + "\n",
			"unable to decode a ADDED event from the watch stream: invalid JSON at offset 82: unexpected ']'"},
		{"stray bracket", `{"type":"ADDED","object":{"metadata":{"name":"a"}}}` + "\n]",
			"unable to read the watch stream: invalid JSON at offset 52: unexpected ']'"},
		{"bad status", `{"type":"ERROR","object":{"code":"x"}}` + "\n",
			"unable to decode an error event from the watch stream: json: cannot unmarshal string into Go struct field Status.code of type int32"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeServer{watch: func(w io.Writer, flush func()) { _, _ = io.WriteString(w, tc.stream) }}
			lw := newTestLW(t, f, Request{})
			w, err := lw.Watch(context.Background(), metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			var last watch.Event
			for e := range w.ResultChan() {
				last = e
			}
			st, ok := last.Object.(*metav1.Status)
			if last.Type != watch.Error || !ok || st.Reason != metav1.StatusReasonInternalError || !strings.Contains(st.Message, tc.want) {
				t.Errorf("last event %s %#v\nwant %s", last.Type, last.Object, tc.want)
			}
		})
	}
}

// brokenBody yields data, then fails with err as a lost connection does.
type brokenBody struct {
	data []byte
	err  error
}

func (b *brokenBody) Read(p []byte) (int, error) {
	if len(b.data) == 0 {
		return 0, b.err
	}
	n := copy(p, b.data)
	b.data = b.data[n:]
	return n, nil
}

func (b *brokenBody) Close() error { return nil }

// TestWatchConnectionLost checks that a connection that breaks between
// events (an HTTP/2 ping timeout on a black-holed connection, say) ends the
// watch without an ERROR event: the stream was fine, so the reflector must
// watch again from the last resourceVersion rather than treat it as a
// server error.
func TestWatchConnectionLost(t *testing.T) {
	stream := `{"type":"ADDED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","resourceVersion":"7"}}}` + "\n"
	w := newStreamWatcher(&brokenBody{data: []byte(stream), err: errors.New("http2: client connection lost")}, rawobj.ParseOptions{}, false, 0)
	defer w.Stop()
	var events []watch.Event
	for e := range w.ResultChan() {
		events = append(events, e)
	}
	if len(events) != 1 || events[0].Type != watch.Added {
		t.Fatalf("events %+v, want only the ADDED event and then the end of the watch", events)
	}
}

// TestWatchStop checks that Stop ends the watcher's goroutine and closes
// the result channel whether the goroutine is blocked reading or sending,
// and that nothing is sent after Stop returned. Run with -race.
func TestWatchStop(t *testing.T) {
	for _, tc := range []struct {
		name   string
		events int
		read   int
	}{
		{"blocked reading", 5, 5},
		{"blocked sending", 1000, 0},
		{"buffer full", 1000, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The server keeps the stream open until the test ends (before
			// the server is closed: cleanups run last first).
			release := make(chan struct{})
			f := &fakeServer{watch: func(w io.Writer, flush func()) { events(tc.events)(w, flush); <-release }}
			lw := newTestLW(t, f, Request{})
			t.Cleanup(func() { close(release) })
			w, err := lw.Watch(context.Background(), metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < tc.read; i++ {
				<-w.ResultChan()
			}
			time.Sleep(20 * time.Millisecond) // let the goroutine block
			w.Stop()
			w.Stop() // idempotent
			n := 0
			timeout := time.After(10 * time.Second)
			for {
				select {
				case _, ok := <-w.ResultChan():
					if !ok {
						// What was buffered, plus at most the one being sent.
						if n > resultBuffer+1 {
							t.Errorf("%d events after Stop", n)
						}
						return
					}
					n++
				case <-timeout:
					t.Fatal("the result channel was not closed after Stop")
				}
			}
		})
	}
}

// TestStreamWatcherNoLeak checks that the goroutine ends with the stream.
func TestStreamWatcherNoLeak(t *testing.T) {
	for _, buffer := range []int{0, resultBuffer} {
		var stream bytes.Buffer
		events(10)(&stream, func() {})
		sw := newStreamWatcher(io.NopCloser(&stream), rawobj.ParseOptions{}, false, buffer)
		n := 0
		for range sw.ResultChan() {
			n++
		}
		if n != 12 {
			t.Errorf("buffer %d: %d events", buffer, n)
		}
		sw.Stop() // after the end: no effect, no panic
	}
}

// Run with:
//
//	go test -run '^$' -bench . -benchmem ./internal/listwatch/
//
// Besides ns/op, the benchmarks report cpu-ns/op (CPU time of the process,
// less sensitive than wall time to other load on the machine; 0 where
// cpuTime is not implemented) and sched/op: goroutines the scheduler started running (a sampled
// count, from /sched/latencies:seconds), a measure of hand-offs.

// schedEvents returns the number of (sampled) scheduling events so far.
func schedEvents() uint64 {
	s := []metrics.Sample{{Name: "/sched/latencies:seconds"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindFloat64Histogram {
		return 0
	}
	var n uint64
	for _, c := range s[0].Value.Float64Histogram().Counts {
		n += c
	}
	return n
}

// measure runs fn b.N times and reports cpu-ns/op and sched/op.
func measure(b *testing.B, fn func()) {
	b.ReportAllocs()
	cpu, sched := cpuTime(), schedEvents()
	for b.Loop() {
		fn()
	}
	b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(schedEvents()-sched)/float64(b.N), "sched/op")
}

// BenchmarkList10k lists 10,000 ConfigMaps (~7 MB) from an httptest
// server: the former List (Do, Raw, ParseList) against List. The server's
// bodies are made once, so B/op is the client's.
func BenchmarkList10k(b *testing.B) {
	f := &fakeServer{n: 10000}
	lw := newTestLW(b, f, Request{})
	size := len(listBody(0, 10000, "", 0))
	b.Run("Do+Raw+ParseList", func(b *testing.B) {
		b.SetBytes(int64(size))
		measure(b, func() {
			l, err := lw.oldList(context.Background(), metav1.ListOptions{})
			if err != nil || len(l.Items) != 10000 {
				b.Fatal(err)
			}
		})
	})
	b.Run("Stream+ParseListFrom", func(b *testing.B) {
		b.SetBytes(int64(size))
		measure(b, func() {
			obj, err := lw.List(context.Background(), metav1.ListOptions{})
			if err != nil || len(obj.(*rawobj.List).Items) != 10000 {
				b.Fatal(err)
			}
		})
	})
}

// BenchmarkWatch10k streams 10,000 events through a watcher with an
// unbuffered and a buffered result channel, to a consumer as the reflector
// is one: "count" only receives; "fifo" adds each event to the DeltaFIFO
// while another goroutine pops them into a Store, as kubectl deltas does.
// The stream comes from memory (decoding and hand-offs only) or from an
// httptest server in 16 KiB writes.
func BenchmarkWatch10k(b *testing.B) {
	var stream bytes.Buffer
	events(10000)(&stream, func() {})
	data := stream.Bytes()
	const want = 10002
	count := func(b *testing.B, w watch.Interface) {
		n := 0
		for range w.ResultChan() {
			n++
		}
		if n != want {
			b.Fatalf("%d events", n)
		}
	}
	fifo := func(b *testing.B, w watch.Interface) {
		store := cache.NewIndexer(cache.DeletionHandlingMetaNamespaceKeyFunc, cache.Indexers{})
		q := cache.NewDeltaFIFOWithOptions(cache.DeltaFIFOOptions{KnownObjects: store, EmitDeltaTypeReplaced: true})
		popped := make(chan int)
		go func() {
			n := 0
			for {
				_, err := q.Pop(func(deltas cache.Deltas, _ bool) error {
					for _, d := range deltas {
						n++
						if err := store.Add(d.Object); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					popped <- n
					return
				}
			}
		}()
		for e := range w.ResultChan() {
			if o, ok := e.Object.(*rawobj.Object); ok && e.Type == watch.Added {
				if err := q.Update(o); err != nil {
					b.Fatal(err)
				}
			}
		}
		q.Close()
		if n := <-popped; n != want-2 {
			b.Fatalf("%d deltas", n)
		}
	}
	f := &fakeServer{watch: func(w io.Writer, flush func()) {
		for b := data; len(b) > 0; {
			n := min(len(b), 16<<10)
			_, _ = w.Write(b[:n])
			flush()
			b = b[n:]
		}
	}}
	lw := newTestLW(b, f, Request{})
	sources := []struct {
		name string
		open func(b *testing.B) io.ReadCloser
	}{
		{"memory", func(b *testing.B) io.ReadCloser { return io.NopCloser(bytes.NewReader(data)) }},
		{"http", func(b *testing.B) io.ReadCloser {
			body, err := lw.request(metav1.ListOptions{Watch: true}).Stream(context.Background())
			if err != nil {
				b.Fatal(err)
			}
			return body
		}},
	}
	for _, src := range sources {
		for _, consumer := range []struct {
			name    string
			consume func(*testing.B, watch.Interface)
		}{{"count", count}, {"fifo", fifo}} {
			for _, buffer := range []int{0, resultBuffer} {
				b.Run(fmt.Sprintf("%s/%s/buffer=%d", src.name, consumer.name, buffer), func(b *testing.B) {
					b.SetBytes(int64(len(data)))
					measure(b, func() {
						consumer.consume(b, newStreamWatcher(src.open(b), rawobj.ParseOptions{}, false, buffer))
					})
				})
			}
		}
	}
}

func TestMetadataOnly(t *testing.T) {
	for _, serveMetadata := range []bool{true, false} {
		t.Run(fmt.Sprintf("server serves metadata: %v", serveMetadata), func(t *testing.T) {
			var mu sync.Mutex
			var accepts []string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				accepts = append(accepts, r.Header.Get("Accept"))
				mu.Unlock()
				w.Header().Set("Content-Type", "application/json")
				if r.URL.Query().Get("watch") == "true" {
					_, _ = io.WriteString(w, `{"type":"ADDED","object":{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"b","namespace":"ns","resourceVersion":"11"}}}`+"\n")
					return
				}
				if serveMetadata {
					_, _ = io.WriteString(w, `{"kind":"PartialObjectMetadataList","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":"10"},"items":[{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"a","namespace":"ns","resourceVersion":"9"}}]}`)
					return
				}
				_, _ = w.Write(listBody(0, 1, "", 0))
			}))
			defer srv.Close()
			client, err := NewRESTClient(&rest.Config{Host: srv.URL, QPS: -1})
			if err != nil {
				t.Fatal(err)
			}
			fallbacks := 0
			lw := NewListerWatcher(client, Request{
				Resource:     schema.GroupVersionResource{Version: "v1", Resource: "configmaps"},
				Namespace:    "ns",
				MetadataOnly: true,
				FullObjects:  func() { fallbacks++ },
			})
			for range 2 {
				obj, err := lw.List(context.Background(), metav1.ListOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if l := obj.(*rawobj.List); len(l.Items) != 1 {
					t.Fatalf("%d items", len(l.Items))
				}
			}
			w, err := lw.Watch(context.Background(), metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if ev := <-w.ResultChan(); ev.Object.(*rawobj.Object).Name != "b" {
				t.Errorf("watch event %+v", ev)
			}
			w.Stop()
			mu.Lock()
			defer mu.Unlock()
			want := []string{acceptMetadataList, acceptMetadataList, acceptMetadata}
			if !reflect.DeepEqual(accepts, want) {
				t.Errorf("Accept headers %q, want %q", accepts, want)
			}
			if wantFallbacks := map[bool]int{true: 0, false: 1}[serveMetadata]; fallbacks != wantFallbacks {
				t.Errorf("FullObjects called %d times, want %d", fallbacks, wantFallbacks)
			}
		})
	}
}

// TestListEmptyFromWatchCache: an empty list of a custom resource served
// from the watch cache (resourceVersion 0) is checked with a consistent
// read of one object, sent beside it: a cache that cannot be kept up to
// date (a conversion webhook that fails) answers empty while a read from
// storage fails or finds objects. kube-apiserver's own types have no
// conversion webhook: their empty list is taken as it is.
func TestListEmptyFromWatchCache(t *testing.T) {
	emptyCache := func(consistent func(w http.ResponseWriter, r *http.Request) bool) func(w http.ResponseWriter, r *http.Request) bool {
		return func(w http.ResponseWriter, r *http.Request) bool {
			if r.URL.Query().Get("resourceVersion") == "0" {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(`{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"320"},"items":[]}`))
				return true
			}
			return consistent(w, r)
		}
	}
	conversion := "conversion webhook for example.com/v1, Kind=Gadget failed: service \"no-such-service\" not found"
	const gadgets = "/apis/example.com/v1/namespaces/ns/gadgets"
	for _, tc := range []struct {
		name string
		// consistent answers the reads at resourceVersion "" (nil: the
		// fake server's list of n items).
		consistent func(w http.ResponseWriter, r *http.Request) bool
		n          int
		wantErr    string
		wantItems  int
		wantRV     string
		// gadgets lists a custom resource, else ConfigMaps.
		gadgets  bool
		wantURIs []string
	}{{
		name:       "the read from storage fails",
		consistent: failWith(500, "application/json", statusBody(500, metav1.StatusReasonInternalError, conversion)),
		wantErr:    "the server's watch cache lists no gadgets.example.com but reading them from storage fails, so the cache is not kept up to date: " + conversion,
		gadgets:    true,
		wantURIs:   []string{gadgets + "?resourceVersion=0", gadgets + "?limit=1"},
	}, {
		name:       "really empty",
		consistent: failWith(200, "application/json", []byte(`{"kind":"GadgetList","apiVersion":"example.com/v1","metadata":{"resourceVersion":"337"},"items":[]}`)),
		wantRV:     "337",
		gadgets:    true,
		wantURIs:   []string{gadgets + "?resourceVersion=0", gadgets + "?limit=1"},
	}, {
		name:      "the cache is behind",
		n:         3,
		wantItems: 3,
		wantRV:    "999",
		gadgets:   true,
		wantURIs:  []string{gadgets + "?resourceVersion=0", gadgets + "?limit=1", gadgets},
	}, {
		name:     "a built-in type",
		n:        3, // what storage has; the cache is taken at its word
		wantRV:   "320",
		wantURIs: []string{"/api/v1/namespaces/ns/configmaps?resourceVersion=0"},
	}} {
		for _, each := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/each=%v", tc.name, each), func(t *testing.T) {
				consistent := tc.consistent
				if consistent == nil {
					consistent = func(http.ResponseWriter, *http.Request) bool { return false }
				}
				f := &fakeServer{n: tc.n, fail: emptyCache(consistent), gadgets: tc.gadgets}
				lw := newTestLW(t, f, Request{})
				var obj runtime.Object
				var err error
				items := 0
				if each {
					obj, err = lw.ListEach(context.Background(), metav1.ListOptions{ResourceVersion: "0"}, func(runtime.Object) error {
						items++
						return nil
					})
				} else {
					obj, err = lw.List(context.Background(), metav1.ListOptions{ResourceVersion: "0"})
					if err == nil {
						items = len(obj.(*rawobj.List).Items)
					}
				}
				// The probe goes beside the list: in any order.
				got, want := f.requestURIs(), slices.Clone(tc.wantURIs)
				slices.Sort(got)
				slices.Sort(want)
				if !slices.Equal(got, want) {
					t.Errorf("requests %q, want %q", got, want)
				}
				if tc.wantErr != "" {
					if err == nil || err.Error() != tc.wantErr || !apierrors.IsInternalError(err) {
						t.Fatalf("got error %v, want %q (an internal error)", err, tc.wantErr)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if rv := obj.(*rawobj.List).ResourceVersion; items != tc.wantItems || rv != tc.wantRV {
					t.Errorf("got %d items at %q, want %d at %q", items, rv, tc.wantItems, tc.wantRV)
				}
			})
		}
	}
}
