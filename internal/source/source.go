// Package source lists and watches one Kubernetes resource over the REST
// API and hands the reflector objects that keep the server's JSON
// (internal/rawobj): only the metadata the cache needs is decoded, so the
// JSON output is mostly a byte copy and the Store holds about the objects'
// JSON size in memory.
package source

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path"
	"strconv"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"

	"github.com/kubectl-deltas/kubectl-deltas/internal/cache"
	"github.com/kubectl-deltas/kubectl-deltas/internal/rawobj"
)

// Target names what one ListerWatcher lists and watches.
type Target struct {
	// GroupVersionResource of the collection.
	Resource schema.GroupVersionResource
	// Namespace, or "" for cluster-scoped resources and all namespaces.
	Namespace string
	// LabelSelector and FieldSelector are sent with every list and watch.
	LabelSelector string
	FieldSelector string
	// Parse controls how much of each object is kept.
	Parse rawobj.ParseOptions
}

// NewRESTClient returns a client for raw list and watch requests against
// any group and version: JSON only (the scanner reads JSON), Status bodies
// of failed requests decoded into API errors.
func NewRESTClient(config *rest.Config) (*rest.RESTClient, error) {
	cfg := rest.CopyConfig(config)
	cfg.APIPath = "/"
	cfg.GroupVersion = &schema.GroupVersion{}
	cfg.AcceptContentTypes = "application/json"
	cfg.ContentType = "application/json"
	scheme := runtime.NewScheme()
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Version: "v1"})
	cfg.NegotiatedSerializer = serializer.NewCodecFactory(scheme).WithoutConversion()
	if cfg.UserAgent == "" {
		cfg.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	client, err := rest.UnversionedRESTClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("failed to construct a REST client: %w", err)
	}
	return client, nil
}

// ListerWatcher lists and watches a Target with raw JSON requests.
type ListerWatcher struct {
	client rest.Interface
	target Target
}

var _ cache.ListerWatcher = (*ListerWatcher)(nil)

// NewListerWatcher returns a ListerWatcher of t through client.
func NewListerWatcher(client rest.Interface, t Target) *ListerWatcher {
	return &ListerWatcher{client: client, target: t}
}

// collectionPath is /api/v1/namespaces/NS/RESOURCE or
// /apis/GROUP/VERSION/RESOURCE and so on.
func (lw *ListerWatcher) collectionPath() string {
	gvr := lw.target.Resource
	parts := []string{"/api", gvr.Version}
	if gvr.Group != "" {
		parts = []string{"/apis", gvr.Group, gvr.Version}
	}
	if lw.target.Namespace != "" {
		parts = append(parts, "namespaces", lw.target.Namespace)
	}
	parts = append(parts, gvr.Resource)
	return path.Join(parts...)
}

// query encodes the reflector's options plus the target's selectors. The
// reflector's options are taken as they are: resourceVersion, limit,
// timeout and bookmarks must reach the server.
func (lw *ListerWatcher) query(opts metav1.ListOptions) url.Values {
	q := url.Values{}
	if lw.target.LabelSelector != "" {
		q.Set("labelSelector", lw.target.LabelSelector)
	}
	if lw.target.FieldSelector != "" {
		q.Set("fieldSelector", lw.target.FieldSelector)
	}
	if opts.Watch {
		q.Set("watch", "true")
	}
	if opts.AllowWatchBookmarks {
		q.Set("allowWatchBookmarks", "true")
	}
	if opts.ResourceVersion != "" {
		q.Set("resourceVersion", opts.ResourceVersion)
	}
	if opts.ResourceVersionMatch != "" {
		q.Set("resourceVersionMatch", string(opts.ResourceVersionMatch))
	}
	if opts.TimeoutSeconds != nil {
		q.Set("timeoutSeconds", strconv.FormatInt(*opts.TimeoutSeconds, 10))
	}
	if opts.Limit > 0 {
		q.Set("limit", strconv.FormatInt(opts.Limit, 10))
	}
	if opts.Continue != "" {
		q.Set("continue", opts.Continue)
	}
	if opts.SendInitialEvents != nil {
		q.Set("sendInitialEvents", strconv.FormatBool(*opts.SendInitialEvents))
	}
	return q
}

func (lw *ListerWatcher) request(opts metav1.ListOptions) *rest.Request {
	req := lw.client.Get().AbsPath(lw.collectionPath())
	for k, vs := range lw.query(opts) {
		for _, v := range vs {
			req = req.Param(k, v)
		}
	}
	return req
}

// List performs one list request and returns a *rawobj.List.
func (lw *ListerWatcher) List(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	opts.Watch = false
	result := lw.request(opts).Do(ctx)
	body, err := result.Raw()
	if err != nil {
		// Error() decodes the server's Status (message, reason, causes);
		// Raw's error only knows the HTTP code.
		return nil, result.Error()
	}
	list, err := rawobj.ParseList(body, lw.target.Parse)
	if err != nil {
		return nil, fmt.Errorf("unable to decode the list of %s: %w", lw.target.Resource.Resource, err)
	}
	return list, nil
}

// Watch opens a watch and decodes its events as they arrive.
func (lw *ListerWatcher) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	opts.Watch = true
	body, err := lw.request(opts).Stream(ctx)
	if err != nil {
		return nil, err
	}
	return newStreamWatcher(body, lw.target.Parse), nil
}

// streamWatcher turns a JSON watch stream into watch events. Its goroutine
// ends when the stream ends, fails, or Stop is called; result is then
// closed.
type streamWatcher struct {
	body   io.ReadCloser
	parse  rawobj.ParseOptions
	result chan watch.Event
	// done is closed by Stop; stopOnce guards it.
	done     chan struct{}
	stopOnce sync.Once
}

func newStreamWatcher(body io.ReadCloser, parse rawobj.ParseOptions) *streamWatcher {
	sw := &streamWatcher{
		body:   body,
		parse:  parse,
		result: make(chan watch.Event),
		done:   make(chan struct{}),
	}
	go sw.receive()
	return sw
}

// ResultChan implements watch.Interface.
func (sw *streamWatcher) ResultChan() <-chan watch.Event {
	return sw.result
}

// Stop implements watch.Interface. It closes the body, which ends the
// goroutine's read.
func (sw *streamWatcher) Stop() {
	sw.stopOnce.Do(func() {
		close(sw.done)
		sw.body.Close()
	})
}

func (sw *streamWatcher) stopped() bool {
	select {
	case <-sw.done:
		return true
	default:
		return false
	}
}

// receive reads events until the stream ends.
func (sw *streamWatcher) receive() {
	defer close(sw.result)
	defer sw.Stop()
	dec := rawobj.NewDecoder(sw.body)
	for {
		frame, err := dec.Next()
		if err != nil {
			if sw.stopped() || errors.Is(err, io.EOF) || utilnet.IsProbableEOF(err) {
				return
			}
			sw.send(errorEvent(fmt.Errorf("unable to read the watch stream: %w", err)))
			return
		}
		event, err := sw.decode(frame)
		if err != nil {
			sw.send(errorEvent(err))
			return
		}
		if !sw.send(event) {
			return
		}
	}
}

// send delivers e unless the watcher was stopped.
func (sw *streamWatcher) send(e watch.Event) bool {
	select {
	case sw.result <- e:
		return true
	case <-sw.done:
		return false
	}
}

// decode turns one frame of the stream into an event.
func (sw *streamWatcher) decode(frame []byte) (watch.Event, error) {
	eventType, object, err := rawobj.ParseEvent(frame, sw.parse)
	if err != nil {
		return watch.Event{}, fmt.Errorf("unable to decode an event from the watch stream: %w", err)
	}
	switch t := watch.EventType(eventType); t {
	case watch.Error:
		status := &metav1.Status{}
		if err := json.Unmarshal(object, status); err != nil {
			return watch.Event{}, fmt.Errorf("unable to decode an error event from the watch stream: %w", err)
		}
		return watch.Event{Type: t, Object: status}, nil
	case watch.Added, watch.Modified, watch.Deleted, watch.Bookmark:
		opts := sw.parse
		// A bookmark's object carries only a resourceVersion (and maybe
		// the initial-events-end annotation), no name.
		opts.AllowMissingName = t == watch.Bookmark
		obj, err := rawobj.Parse(object, opts)
		if err != nil {
			return watch.Event{}, fmt.Errorf("unable to decode a %s event from the watch stream: %w", t, err)
		}
		return watch.Event{Type: t, Object: obj}, nil
	default:
		return watch.Event{}, fmt.Errorf("unknown watch event type %q", eventType)
	}
}

// errorEvent reports a stream failure as client-go does: an internal
// error, which makes the reflector relist.
func errorEvent(err error) watch.Event {
	status := apierrors.NewInternalError(err).Status()
	return watch.Event{Type: watch.Error, Object: &status}
}
