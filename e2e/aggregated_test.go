//go:build faults

package e2e

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
)

// The aggregated API of the fault tests: fake.example.com/v1 widgets,
// served by a small TLS server of the test and registered with an
// APIService, as metrics-server or OpenShift's APIs are.
const (
	aggGroup      = "fake.example.com"
	aggVersion    = "v1"
	aggResource   = "widgets"
	aggKind       = "Widget"
	aggAPIService = aggVersion + "." + aggGroup
	aggService    = "fake-api"
	// aggEndpointIP is where the Service's EndpointSlice points: an address
	// of TEST-NET-1 (RFC 5737), which EndpointSlices accept and nothing
	// answers. kube-apiserver dials it through the egress proxy of the
	// test, which connects to the server on 127.0.0.1 instead: no test
	// server listens beyond loopback.
	aggEndpointIP = "192.0.2.10"
)

// aggregatedAPI is the test server of fake.example.com/v1 and the egress
// proxy through which kube-apiserver reaches it. It can fail on purpose:
// lists answered 500, junk or never, watches answered junk, or the whole
// server down (connections closed, new ones refused), then up again with
// its objects.
type aggregatedAPI struct {
	t    *testing.T
	cert tls.Certificate
	// egress is the Unix socket of the HTTP CONNECT proxy that
	// kube-apiserver's egress selector dials for the "cluster" network.
	egress    net.Listener
	egressDir string
	// closed ends hanging lists and the proxy at the end of the test.
	closed chan struct{}

	// mu guards everything below.
	mu sync.Mutex
	// backend is the running server; nil while down.
	backend *http.Server
	addr    string
	// tunnels are the proxy's open connections, closed by down.
	tunnels map[net.Conn]struct{}
	// objects are the widgets by namespace/name; rv is the last resource
	// version; history holds every event, for watches that resume.
	objects map[string][]byte
	rv      int64
	history []aggEvent
	// watchers receive the events as they happen.
	watchers map[chan aggEvent]struct{}
	// listFault, if set, answers lists: "500", "junk" or "hang"; release
	// ends the hanging ones when the fault is changed.
	listFault string
	release   chan struct{}
	// watchFault, if set, answers watches: "junk".
	watchFault string
	// requests counts the requests served, by "list" and "watch".
	requests map[string]int
}

// aggEvent is one change of a widget.
type aggEvent struct {
	rv     int64
	typ    string
	object []byte
}

// newAggregatedAPI starts the server and its egress proxy; register makes
// them part of a cluster started with aggregatedAPIServerFlags.
func newAggregatedAPI(t *testing.T) *aggregatedAPI {
	t.Helper()
	cert, err := selfSignedCert()
	if err != nil {
		t.Fatal(err)
	}
	// A short directory: a Unix socket's path has at most 107 bytes.
	dir, err := os.MkdirTemp("", "agg")
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", filepath.Join(dir, "egress.sock"))
	if err != nil {
		t.Fatal(err)
	}
	a := &aggregatedAPI{
		t: t, cert: cert, egress: ln, egressDir: dir, closed: make(chan struct{}),
		tunnels: map[net.Conn]struct{}{}, objects: map[string][]byte{},
		watchers: map[chan aggEvent]struct{}{}, requests: map[string]int{},
		rv: 100, release: make(chan struct{}),
	}
	a.up()
	go a.serveEgress()
	t.Cleanup(a.close)
	return a
}

// apiserverFlags are the kube-apiserver flags that route the aggregated
// API through the test's egress proxy.
func (a *aggregatedAPI) apiserverFlags() []string {
	config := filepath.Join(a.egressDir, "egress.yaml")
	yaml := fmt.Sprintf(`apiVersion: apiserver.k8s.io/v1beta1
kind: EgressSelectorConfiguration
egressSelections:
- name: cluster
  connection:
    proxyProtocol: HTTPConnect
    transport:
      uds:
        udsName: %s
`, filepath.Join(a.egressDir, "egress.sock"))
	if err := os.WriteFile(config, []byte(yaml), 0o600); err != nil {
		a.t.Fatal(err)
	}
	return []string{"--enable-aggregator-routing=true", "--egress-selector-config-file=" + config}
}

// close stops the server and the proxy.
func (a *aggregatedAPI) close() {
	close(a.closed)
	_ = a.egress.Close()
	a.down()
	_ = os.RemoveAll(a.egressDir)
}

// up starts the server on a new loopback port.
func (a *aggregatedAPI) up() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.backend != nil {
		return
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		a.t.Fatal(err)
	}
	srv := &http.Server{
		Handler:   http.HandlerFunc(a.serveHTTP),
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{a.cert}, NextProtos: []string{"h2", "http/1.1"}},
		ErrorLog:  log.New(io.Discard, "", 0),
	}
	go func() { _ = srv.ServeTLS(ln, "", "") }()
	a.backend, a.addr = srv, ln.Addr().String()
}

// down stops the server as a Pod that restarts: every connection closed,
// new ones refused by the proxy. The objects stay.
func (a *aggregatedAPI) down() {
	a.mu.Lock()
	srv := a.backend
	a.backend, a.addr = nil, ""
	tunnels := a.tunnels
	a.tunnels = map[net.Conn]struct{}{}
	for w := range a.watchers {
		close(w)
	}
	a.watchers = map[chan aggEvent]struct{}{}
	a.mu.Unlock()
	for c := range tunnels {
		_ = c.Close()
	}
	if srv != nil {
		_ = srv.Close()
	}
}

// setListFault makes lists answer 500, junk or hang ("" for none).
func (a *aggregatedAPI) setListFault(f string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.listFault = f
	close(a.release)
	a.release = make(chan struct{})
}

// setWatchFault makes watches answer junk ("" for none).
func (a *aggregatedAPI) setWatchFault(f string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.watchFault = f
}

// served returns how many lists or watches ("list", "watch") were served.
func (a *aggregatedAPI) served(what string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.requests[what]
}

// put creates or updates widget namespace/name with spec.size.
func (a *aggregatedAPI) put(namespace, name string, size int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	key := namespace + "/" + name
	typ := "MODIFIED"
	uid := ""
	if old, ok := a.objects[key]; ok {
		var m struct {
			Metadata struct {
				UID string `json:"uid"`
			} `json:"metadata"`
		}
		_ = json.Unmarshal(old, &m)
		uid = m.Metadata.UID
	} else {
		typ = "ADDED"
		uid = fmt.Sprintf("00000000-0000-4000-8000-%012d", a.rv+1)
	}
	a.rv++
	obj, err := json.Marshal(map[string]any{
		"apiVersion": aggGroup + "/" + aggVersion,
		"kind":       aggKind,
		"metadata": map[string]any{
			"name": name, "namespace": namespace, "uid": uid,
			"resourceVersion":   strconv.FormatInt(a.rv, 10),
			"creationTimestamp": "2026-11-25T00:00:00Z",
		},
		"spec": map[string]any{"size": size},
	})
	if err != nil {
		a.t.Fatal(err)
	}
	a.objects[key] = obj
	a.emit(aggEvent{rv: a.rv, typ: typ, object: obj})
}

// remove deletes widget namespace/name.
func (a *aggregatedAPI) remove(namespace, name string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	key := namespace + "/" + name
	obj, ok := a.objects[key]
	if !ok {
		return
	}
	delete(a.objects, key)
	a.rv++
	a.emit(aggEvent{rv: a.rv, typ: "DELETED", object: obj})
}

// emit records e and hands it to the watchers. Called with mu held.
func (a *aggregatedAPI) emit(e aggEvent) {
	a.history = append(a.history, e)
	for w := range a.watchers {
		select {
		case w <- e:
		default:
			// A watcher that does not keep up is ended, as the API server
			// ends it; it resumes from its last resource version.
			close(w)
			delete(a.watchers, w)
		}
	}
}

// serveEgress accepts kube-apiserver's CONNECT requests and tunnels each to
// the server, whatever address it names; while the server is down it
// answers 503, as a proxy to a Pod that is not running would.
func (a *aggregatedAPI) serveEgress() {
	for {
		conn, err := a.egress.Accept()
		if err != nil {
			return
		}
		go a.tunnel(conn)
	}
}

func (a *aggregatedAPI) tunnel(conn net.Conn) {
	br := bufio.NewReader(conn)
	req, err := http.ReadRequest(br)
	if err != nil || req.Method != http.MethodConnect {
		_ = conn.Close()
		return
	}
	a.mu.Lock()
	addr := a.addr
	a.mu.Unlock()
	if addr == "" {
		_, _ = io.WriteString(conn, "HTTP/1.1 503 Service Unavailable\r\n\r\n")
		_ = conn.Close()
		return
	}
	upstream, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		_, _ = io.WriteString(conn, "HTTP/1.1 502 Bad Gateway\r\n\r\n")
		_ = conn.Close()
		return
	}
	a.mu.Lock()
	if a.addr != addr {
		a.mu.Unlock()
		_ = upstream.Close()
		_ = conn.Close()
		return
	}
	a.tunnels[conn] = struct{}{}
	a.tunnels[upstream] = struct{}{}
	a.mu.Unlock()
	if _, err := io.WriteString(conn, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		_ = conn.Close()
		_ = upstream.Close()
		return
	}
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(upstream, br); done <- struct{}{} }()
	go func() { _, _ = io.Copy(conn, upstream); done <- struct{}{} }()
	<-done
	_ = conn.Close()
	_ = upstream.Close()
	a.mu.Lock()
	delete(a.tunnels, conn)
	delete(a.tunnels, upstream)
	a.mu.Unlock()
}

// serveHTTP is the API: discovery, and lists, watches and gets of widgets.
func (a *aggregatedAPI) serveHTTP(w http.ResponseWriter, r *http.Request) {
	prefix := "/apis/" + aggGroup + "/" + aggVersion
	switch {
	case r.URL.Path == "/apis":
		writeJSON(w, http.StatusOK, map[string]any{"kind": "APIGroupList", "apiVersion": "v1", "groups": []any{aggAPIGroup()}})
	case r.URL.Path == "/apis/"+aggGroup:
		writeJSON(w, http.StatusOK, aggAPIGroup())
	case r.URL.Path == prefix:
		writeJSON(w, http.StatusOK, map[string]any{
			"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": aggGroup + "/" + aggVersion,
			"resources": []any{map[string]any{
				"name": aggResource, "singularName": "widget", "namespaced": true, "kind": aggKind,
				"verbs": []string{"get", "list", "watch"},
			}},
		})
	case strings.HasPrefix(r.URL.Path, prefix+"/"):
		a.serveWidgets(w, r, strings.TrimPrefix(r.URL.Path, prefix+"/"))
	default:
		writeStatus404(w, r.URL.Path)
	}
}

func aggAPIGroup() map[string]any {
	gv := map[string]any{"groupVersion": aggGroup + "/" + aggVersion, "version": aggVersion}
	return map[string]any{"kind": "APIGroup", "apiVersion": "v1", "name": aggGroup, "versions": []any{gv}, "preferredVersion": gv}
}

// serveWidgets serves widgets, namespaces/NS/widgets and
// namespaces/NS/widgets/NAME.
func (a *aggregatedAPI) serveWidgets(w http.ResponseWriter, r *http.Request, rest string) {
	parts := strings.Split(rest, "/")
	namespace, name := "", ""
	switch {
	case len(parts) == 1 && parts[0] == aggResource:
	case len(parts) == 3 && parts[0] == "namespaces" && parts[2] == aggResource:
		namespace = parts[1]
	case len(parts) == 4 && parts[0] == "namespaces" && parts[2] == aggResource:
		namespace, name = parts[1], parts[3]
	default:
		writeStatus404(w, r.URL.Path)
		return
	}
	if r.Method != http.MethodGet {
		writeJSON(w, http.StatusMethodNotAllowed, map[string]any{"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "MethodNotAllowed", "code": 405})
		return
	}
	if name != "" {
		a.mu.Lock()
		obj, ok := a.objects[namespace+"/"+name]
		a.mu.Unlock()
		if !ok {
			writeStatus404(w, r.URL.Path)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(obj)
		return
	}
	q := r.URL.Query()
	if fs := q.Get("fieldSelector"); fs != "" {
		name = strings.TrimPrefix(fs, "metadata.name=")
	}
	if q.Get("watch") == "true" || q.Get("watch") == "1" {
		a.serveWatch(w, r, namespace, name)
		return
	}
	a.serveList(w, r, namespace, name)
}

func (a *aggregatedAPI) serveList(w http.ResponseWriter, r *http.Request, namespace, name string) {
	a.mu.Lock()
	a.requests["list"]++
	fault, release := a.listFault, a.release
	var items []json.RawMessage
	for key, obj := range a.objects {
		ns, n, _ := strings.Cut(key, "/")
		if (namespace == "" || ns == namespace) && (name == "" || n == name) {
			items = append(items, obj)
		}
	}
	rv := a.rv
	a.mu.Unlock()
	switch fault {
	case "500":
		writeJSON(w, http.StatusInternalServerError, map[string]any{"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": "widgets are broken today", "reason": "InternalError", "code": 500})
		return
	case "junk":
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"kind":"WidgetList","apiVersion":"fake.example.com/v1","items":[{{{{ not json`)
		return
	case "hang":
		select {
		case <-r.Context().Done():
		case <-a.closed:
		case <-release:
		}
		return
	}
	if items == nil {
		items = []json.RawMessage{}
	}
	// Tables are not rendered: the list is the list, whatever Accept asks,
	// as some aggregated APIs do.
	writeJSON(w, http.StatusOK, map[string]any{
		"kind": aggKind + "List", "apiVersion": aggGroup + "/" + aggVersion,
		"metadata": map[string]any{"resourceVersion": strconv.FormatInt(rv, 10)},
		"items":    items,
	})
}

// serveWatch streams the events after the requested resource version (from
// now when none), then the new ones, until the client goes, the server
// goes down or timeoutSeconds pass.
func (a *aggregatedAPI) serveWatch(w http.ResponseWriter, r *http.Request, namespace, name string) {
	a.mu.Lock()
	a.requests["watch"]++
	if a.watchFault == "junk" {
		a.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, "{\"type\":\"ADDED\",\"object\":{{{{ not json\n")
		return
	}
	from := a.rv
	if s := r.URL.Query().Get("resourceVersion"); s != "" && s != "0" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			a.mu.Unlock()
			writeJSON(w, http.StatusBadRequest, map[string]any{"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": "invalid resourceVersion", "reason": "BadRequest", "code": 400})
			return
		}
		from = n
	}
	var backlog []aggEvent
	for _, e := range a.history {
		if e.rv > from {
			backlog = append(backlog, e)
		}
	}
	events := make(chan aggEvent, 1000)
	a.watchers[events] = struct{}{}
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		delete(a.watchers, events)
		a.mu.Unlock()
	}()

	timeout := 30 * time.Minute
	if s := r.URL.Query().Get("timeoutSeconds"); s != "" {
		if n, err := strconv.Atoi(s); err == nil && n > 0 {
			timeout = time.Duration(n) * time.Second
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	send := func(e aggEvent) bool {
		var m struct {
			Metadata struct {
				Name      string `json:"name"`
				Namespace string `json:"namespace"`
			} `json:"metadata"`
		}
		_ = json.Unmarshal(e.object, &m)
		if (namespace != "" && m.Metadata.Namespace != namespace) || (name != "" && m.Metadata.Name != name) {
			return true
		}
		line, _ := json.Marshal(map[string]any{"type": e.typ, "object": json.RawMessage(e.object)})
		if _, err := w.Write(append(line, '\n')); err != nil {
			return false
		}
		if flusher != nil {
			flusher.Flush()
		}
		return true
	}
	for _, e := range backlog {
		if !send(e) {
			return
		}
	}
	if flusher != nil {
		flusher.Flush()
	}
	end := time.NewTimer(timeout)
	defer end.Stop()
	for {
		select {
		case e, ok := <-events:
			if !ok || !send(e) {
				return
			}
		case <-end.C:
			return
		case <-r.Context().Done():
			return
		case <-a.closed:
			return
		}
	}
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func writeStatus404(w http.ResponseWriter, path string) {
	writeJSON(w, http.StatusNotFound, map[string]any{"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": "the server could not find " + path, "reason": "NotFound", "code": 404})
}

// register creates the Service (no selector), its EndpointSlice and the
// APIService of fake.example.com/v1 in the cluster of client.
func (a *aggregatedAPI) register(ctx context.Context, client kubernetes.Interface) error {
	rc := client.Discovery().RESTClient()
	objects := []struct{ path, body string }{
		{"/api/v1/namespaces/default/services", fmt.Sprintf(`{"apiVersion":"v1","kind":"Service","metadata":{"name":%q},"spec":{"ports":[{"name":"https","port":443,"targetPort":443}]}}`, aggService)},
		{"/apis/discovery.k8s.io/v1/namespaces/default/endpointslices", fmt.Sprintf(`{"apiVersion":"discovery.k8s.io/v1","kind":"EndpointSlice","metadata":{"name":%q,"labels":{"kubernetes.io/service-name":%q}},"addressType":"IPv4","endpoints":[{"addresses":[%q],"conditions":{"ready":true}}],"ports":[{"name":"https","port":443,"protocol":"TCP"}]}`, aggService+"-1", aggService, aggEndpointIP)},
		{"/apis/apiregistration.k8s.io/v1/apiservices", fmt.Sprintf(`{"apiVersion":"apiregistration.k8s.io/v1","kind":"APIService","metadata":{"name":%q},"spec":{"group":%q,"version":%q,"service":{"namespace":"default","name":%q,"port":443},"insecureSkipTLSVerify":true,"groupPriorityMinimum":1000,"versionPriority":15}}`, aggAPIService, aggGroup, aggVersion, aggService)},
	}
	for _, o := range objects {
		if err := rc.Post().AbsPath(o.path).SetHeader("Content-Type", "application/json").Body([]byte(o.body)).Do(ctx).Error(); err != nil {
			return fmt.Errorf("creating %s: %w", o.path, err)
		}
	}
	return nil
}

// availability is the APIService's Available condition: status, reason
// and message.
func availability(ctx context.Context, client kubernetes.Interface) (status, reason, message string, err error) {
	raw, err := client.Discovery().RESTClient().Get().AbsPath("/apis/apiregistration.k8s.io/v1/apiservices/" + aggAPIService).DoRaw(ctx)
	if err != nil {
		return "", "", "", err
	}
	var s struct {
		Status struct {
			Conditions []struct {
				Type, Status, Reason, Message string
			} `json:"conditions"`
		} `json:"status"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", "", "", err
	}
	for _, c := range s.Status.Conditions {
		if c.Type == "Available" {
			return c.Status, c.Reason, c.Message, nil
		}
	}
	return "", "", "", nil
}

// touchAPIService changes an annotation of the APIService, so that
// kube-apiserver checks its availability now instead of at its next
// periodic check (30 s).
func touchAPIService(ctx context.Context, client kubernetes.Interface) error {
	patch := fmt.Sprintf(`{"metadata":{"annotations":{"deltas.test/touched":%q}}}`, time.Now().Format(time.RFC3339Nano))
	return client.Discovery().RESTClient().Patch("application/merge-patch+json").AbsPath("/apis/apiregistration.k8s.io/v1/apiservices/" + aggAPIService).Body([]byte(patch)).Do(ctx).Error()
}

// waitAvailable waits until the APIService's Available condition is want
// ("True" or "False"), touching it so that the check is not 30 s away.
func waitAvailable(t *testing.T, client kubernetes.Interface, want string, limit time.Duration) (reason, message string) {
	t.Helper()
	deadline := time.Now().Add(limit)
	var last string
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(bg, 5*time.Second)
		status, reason, message, err := availability(ctx, client)
		if err == nil && status == want {
			cancel()
			return reason, message
		}
		last = fmt.Sprintf("%s %s %s %v", status, reason, message, err)
		_ = touchAPIService(ctx, client)
		cancel()
		time.Sleep(time.Second)
	}
	t.Fatalf("APIService %s not Available=%s within %s; last: %s", aggAPIService, want, limit, last)
	return "", ""
}
