// Package listwatch lists and watches one Kubernetes resource over the REST
// API and hands the reflector objects that keep the server's JSON
// (internal/rawobj): only the metadata the cache needs is decoded, so the
// JSON output is mostly a byte copy and the Store holds about the objects'
// JSON size in memory.
package listwatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/kubectl-deltas/kubectl-deltas/internal/cache"
	"github.com/kubectl-deltas/kubectl-deltas/internal/rawobj"
)

// Request names what one ListerWatcher lists and watches.
type Request struct {
	// GroupVersionResource of the collection.
	Resource schema.GroupVersionResource
	// Namespace, or "" for cluster-scoped resources and all namespaces.
	Namespace string
	// LabelSelector and FieldSelector are sent with every list and watch.
	LabelSelector string
	FieldSelector string
	// Parse controls how much of each object is kept.
	Parse rawobj.ParseOptions
	// MetadataOnly asks for PartialObjectMetadata: the server sends each
	// object's metadata only. A server or resource that cannot (some
	// aggregated APIs) sends full objects instead; FullObjects, if set, is
	// then called, once.
	MetadataOnly bool
	FullObjects  func()
	// Table asks for the server's Table rendering (the columns kubectl get
	// shows), with each row's whole object (includeObject=Object): list
	// items and watched objects carry their row's Cells and the Columns.
	// A server that cannot render the type sends plain objects instead;
	// NoTable, if set, is then called, once. Ignored with MetadataOnly.
	Table   bool
	NoTable func()
}

// The Accept headers of metadata-only lists and watches, with full JSON
// objects as the fallback the server picks when it cannot serve metadata
// only.
const (
	acceptMetadataList = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"
	acceptMetadata     = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"
	// metadataListKind is the kind of a list of metadata.
	metadataListKind = "PartialObjectMetadataList"
	// acceptTable asks for a Table, plain JSON as the fallback (as
	// kubectl get does).
	acceptTable = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
)

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

// ListerWatcher lists and watches a Request with raw JSON requests.
type ListerWatcher struct {
	client rest.Interface
	target Request
	// retryDelay is the pause between attempts of a list request whose
	// connection failed before a response came.
	retryDelay time.Duration
	// builtIn: the target is one of kube-apiserver's own types (its group
	// version is in client-go's scheme).
	builtIn bool
	// fullObjects guards the one call of target.FullObjects, noTable that
	// of target.NoTable.
	fullObjects sync.Once
	noTable     sync.Once
}

var (
	_ cache.ListerWatcher = (*ListerWatcher)(nil)
	_ cache.ListStreamer  = (*ListerWatcher)(nil)
)

// NewListerWatcher returns a ListerWatcher of t through client.
func NewListerWatcher(client rest.Interface, t Request) *ListerWatcher {
	return &ListerWatcher{client: client, target: t, retryDelay: time.Second, builtIn: BuiltIn(t.Resource.GroupVersion())}
}

// BuiltIn reports whether gv is one of kube-apiserver's own group
// versions (client-go's scheme knows it): never served by an aggregated
// API, never converted by a webhook.
func BuiltIn(gv schema.GroupVersion) bool { return scheme.Scheme.IsVersionRegistered(gv) }

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

// request is a GET of the collection with the reflector's options plus
// the target's selectors, encoded by apimachinery's parameter codec. The
// reflector's options are taken as they are: resourceVersion, limit,
// timeout and bookmarks must reach the server.
func (lw *ListerWatcher) request(opts metav1.ListOptions) *rest.Request {
	opts.LabelSelector = lw.target.LabelSelector
	opts.FieldSelector = lw.target.FieldSelector
	req := lw.client.Get().AbsPath(lw.collectionPath()).
		SpecificallyVersionedParams(&opts, metav1.ParameterCodec, metav1.Unversioned)
	switch {
	case lw.target.MetadataOnly && opts.Watch:
		req = req.SetHeader("Accept", acceptMetadata)
	case lw.target.MetadataOnly:
		req = req.SetHeader("Accept", acceptMetadataList)
	case lw.target.Table:
		req = req.SetHeader("Accept", acceptTable).Param("includeObject", "Object")
	}
	return req
}

// tables reports whether the target asks for Tables.
func (lw *ListerWatcher) tables() bool { return lw.target.Table && !lw.target.MetadataOnly }

// checkMetadataOnly reports, once, a list of full objects where metadata
// only was asked for.
func (lw *ListerWatcher) checkMetadataOnly(list *rawobj.List) {
	if lw.tables() && lw.target.NoTable != nil && list.Kind != "Table" {
		lw.noTable.Do(lw.target.NoTable)
	}
	if lw.target.MetadataOnly && lw.target.FullObjects != nil && list.Kind != metadataListKind {
		lw.fullObjects.Do(lw.target.FullObjects)
	}
}

// List performs one list request and returns a *rawobj.List. The body is
// parsed as it arrives (rawobj.ParseListFrom): items are copied out of a
// small buffer, the body is never held whole.
func (lw *ListerWatcher) List(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	probe := lw.startProbe(ctx, opts)
	defer probe.stop()
	list, err := lw.parseList(ctx, opts, lw.parseAll)
	if err != nil {
		return nil, err
	}
	if probe != nil && len(list.Items) == 0 {
		return lw.confirmEmpty(opts, probe, func(consistent metav1.ListOptions) (*rawobj.List, error) {
			return lw.parseList(ctx, consistent, lw.parseAll)
		})
	}
	return list, nil
}

// parseAll reads a whole list.
func (lw *ListerWatcher) parseAll(r io.Reader) (*rawobj.List, error) {
	return rawobj.ParseListFrom(r, lw.target.Parse)
}

// ListEach is List handing each item to each as soon as it has been read
// (rawobj.ParseListEach): the list it returns has no items. It implements
// cache.ListStreamer. An error of each ends the list and is returned.
func (lw *ListerWatcher) ListEach(ctx context.Context, opts metav1.ListOptions, each func(runtime.Object) error) (runtime.Object, error) {
	probe := lw.startProbe(ctx, opts)
	defer probe.stop()
	items := 0
	counted := func(o runtime.Object) error {
		items++
		return each(o)
	}
	list, err := lw.listEach(ctx, opts, counted)
	if err != nil {
		return nil, err
	}
	if probe != nil && items == 0 {
		return lw.confirmEmpty(opts, probe, func(consistent metav1.ListOptions) (*rawobj.List, error) {
			return lw.listEach(ctx, consistent, each)
		})
	}
	return list, nil
}

// listEach is one list request whose items are handed to each.
func (lw *ListerWatcher) listEach(ctx context.Context, opts metav1.ListOptions, each func(runtime.Object) error) (*rawobj.List, error) {
	var eachErr error
	list, err := lw.parseList(ctx, opts, func(r io.Reader) (*rawobj.List, error) {
		list, err := rawobj.ParseListEach(r, lw.target.Parse, func(o *rawobj.Object) error {
			eachErr = each(o)
			return eachErr
		})
		if errors.Is(err, rawobj.ErrNotStreamable) {
			err = fmt.Errorf("%w: %w", cache.ErrListNotStreamable, err)
		}
		return list, err
	})
	if eachErr != nil {
		return nil, eachErr
	}
	if err != nil {
		return nil, err
	}
	return list, nil
}

// probe is a consistent read of at most one object of the collection,
// sent beside a list served from the watch cache (startProbe): if that
// list is empty, the probe says whether it can be trusted (confirmEmpty).
type probe struct {
	done   chan struct{}
	cancel context.CancelFunc
	// list and err are the probe's answer, set before done is closed.
	list *rawobj.List
	err  error
}

// startProbe sends the probe of a list with opts when the watch cache
// serves it as it is (the first page at resourceVersion "0") and may be
// stuck, nil otherwise. It runs beside the list, so that an empty list
// costs no second round trip. The watch cache of kube-apiserver's own
// types (client-go's scheme) needs no conversion webhook to be kept up
// to date: their lists are not probed.
func (lw *ListerWatcher) startProbe(ctx context.Context, opts metav1.ListOptions) *probe {
	if opts.ResourceVersion != "0" || opts.Continue != "" || lw.builtIn {
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	p := &probe{done: make(chan struct{}), cancel: cancel}
	consistent := consistentOptions(opts)
	consistent.Limit = 1
	go func() {
		defer close(p.done)
		p.list, p.err = lw.parseList(ctx, consistent, lw.parseAll)
	}()
	return p
}

// stop ends the probe, answered or not, and waits for it.
func (p *probe) stop() {
	if p == nil {
		return
	}
	p.cancel()
	<-p.done
}

// consistentOptions are opts for a consistent read (resourceVersion "").
func consistentOptions(opts metav1.ListOptions) metav1.ListOptions {
	opts.ResourceVersion, opts.ResourceVersionMatch = "", ""
	return opts
}

// confirmEmpty judges an empty list served from the watch cache by the
// probe's consistent read. The watch cache of a type it cannot read (a
// CRD version whose conversion webhook fails, say) stops where it was and
// answers lists with what it had — nothing, with 200 — and watches with
// silence, where kubectl get, which reads consistently, gets the error.
// An error of the read is the list's, so the reflector says so and
// retries; an object found means the cache is behind, and the list is
// made again consistently with full (whole pages, handing out what it
// lists); nothing found is the empty list, at a resourceVersion the cache
// may be behind.
func (lw *ListerWatcher) confirmEmpty(opts metav1.ListOptions, p *probe, full func(metav1.ListOptions) (*rawobj.List, error)) (*rawobj.List, error) {
	<-p.done
	switch {
	case p.err != nil:
		return nil, fmt.Errorf("the server's watch cache lists no %s but reading them from storage fails, so the cache is not kept up to date: %w",
			lw.target.Resource.GroupResource(), p.err)
	case len(p.list.Items) == 0:
		return p.list, nil
	}
	return full(consistentOptions(opts))
}

// parseList sends a list request and parses the body of its response with
// parse as it arrives.
func (lw *ListerWatcher) parseList(ctx context.Context, opts metav1.ListOptions, parse func(io.Reader) (*rawobj.List, error)) (*rawobj.List, error) {
	opts.Watch = false
	body, err := lw.stream(ctx, opts)
	if err != nil {
		return nil, err
	}
	defer body.Close()
	r := &errRecorder{r: body}
	list, err := parse(r)
	if err != nil {
		return nil, lw.listError(r, err)
	}
	lw.checkMetadataOnly(list)
	return list, nil
}

// listError describes err, which ended the parse of a list read through r:
// a broken connection or a body that does not parse.
func (lw *ListerWatcher) listError(r *errRecorder, err error) error {
	if r.err != nil && errors.Is(err, r.err) {
		return fmt.Errorf("unable to read the list of %s: %w", lw.target.Resource.Resource, err)
	}
	return fmt.Errorf("unable to decode the list of %s: %w", lw.target.Resource.Resource, err)
}

// listRetries is how many times a list request that failed before a
// response came is retried, as rest.Request.Do retries a GET (Stream does
// not retry errors).
const listRetries = 10

// stream sends a request and returns the body of a 2xx response.
// rest.Request.Stream decodes the Status body of any other response into an
// API error (apierrors.IsNotFound, IsForbidden, IsResourceExpired… and the
// server's message), as Do does, and retries responses with Retry-After;
// stream also retries a connection that was reset or closed before the
// response came, like Do, for up to listRetries times lw.retryDelay
// apart.
func (lw *ListerWatcher) stream(ctx context.Context, opts metav1.ListOptions) (io.ReadCloser, error) {
	for attempt := 0; ; attempt++ {
		body, err := lw.request(opts).Stream(ctx)
		if err == nil {
			return body, nil
		}
		if attempt == listRetries || !retryable(err) || ctx.Err() != nil {
			return nil, err
		}
		t := time.NewTimer(lw.retryDelay)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, err
		case <-t.C:
		}
	}
}

// retryable reports the transport errors rest.Request.Do retries for a GET.
func retryable(err error) bool {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return false // a response came
	}
	return utilnet.IsConnectionReset(err) || utilnet.IsProbableEOF(err) || utilnet.IsHTTP2ConnectionLost(err)
}

// errRecorder remembers the error of a reader, other than io.EOF, to tell a
// broken connection from a body that does not parse.
type errRecorder struct {
	r   io.Reader
	err error
}

func (e *errRecorder) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF {
		e.err = err
	}
	return n, err
}

// Watch opens a watch and decodes its events as they arrive.
func (lw *ListerWatcher) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	opts.Watch = true
	body, err := lw.request(opts).Stream(ctx)
	if err != nil {
		return nil, err
	}
	return newStreamWatcher(body, lw.target.Parse, lw.tables(), resultBuffer), nil
}

// resultBuffer is the capacity of a watch's result channel: the decoding
// goroutine runs ahead of the reflector by up to that many events instead
// of handing over each one (a wake-up of the other goroutine per event).
const resultBuffer = 128

// streamWatcher turns a JSON watch stream into watch events. Its goroutine
// is the only one to send on result and closes it when it returns, which
// it does when the stream ends, fails, or Stop is called (Stop closes the
// body, which ends a blocked read, and done, which ends a blocked send).
// Once Stop has returned, the goroutine sends no event but the one it may
// have been sending at that moment.
type streamWatcher struct {
	body  io.ReadCloser
	parse rawobj.ParseOptions
	// tables: the events' objects are one-row Tables (NextTableEvent).
	tables bool
	result chan watch.Event
	// done is closed by Stop; stopOnce guards it.
	done     chan struct{}
	stopOnce sync.Once
}

func newStreamWatcher(body io.ReadCloser, parse rawobj.ParseOptions, tables bool, buffer int) *streamWatcher {
	sw := &streamWatcher{
		body:   body,
		parse:  parse,
		tables: tables,
		result: make(chan watch.Event, buffer),
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
	next := dec.NextEvent
	if sw.tables {
		next = dec.NextTableEvent
	}
	for {
		eventType, obj, status, err := next(sw.parse)
		if err != nil {
			var ee *rawobj.EventError
			switch {
			case errors.As(err, &ee):
				sw.send(errorEvent(decodeError(ee)))
			case sw.stopped() || errors.Is(err, io.EOF) || utilnet.IsProbableEOF(err):
			case isStreamCorrupt(err):
				sw.send(errorEvent(fmt.Errorf("unable to read the watch stream: %w", err)))
			default:
				// The connection broke (http2: client connection lost, a
				// timeout, …) but what came was fine: end the watch, as
				// client-go does for a probable EOF, and the reflector
				// watches again from the last resourceVersion it saw.
			}
			return
		}
		event, err := toEvent(eventType, obj, status)
		if err != nil {
			sw.send(errorEvent(err))
			return
		}
		if !sw.send(event) {
			return
		}
	}
}

// send delivers e unless the watcher was stopped: with room in result,
// both cases of the select may be ready, so done is checked first.
func (sw *streamWatcher) send(e watch.Event) bool {
	if sw.stopped() {
		return false
	}
	select {
	case sw.result <- e:
		return true
	case <-sw.done:
		return false
	}
}

// isStreamCorrupt reports whether err says the bytes of the stream are
// wrong (not JSON, or a value too large), as opposed to the connection.
func isStreamCorrupt(err error) bool {
	var syntax *rawobj.SyntaxError
	return errors.As(err, &syntax) || errors.Is(err, rawobj.ErrValueTooLarge)
}

// decodeError describes an event of the stream that does not parse.
func decodeError(ee *rawobj.EventError) error {
	switch watch.EventType(ee.Type) {
	case watch.Added, watch.Modified, watch.Deleted, watch.Bookmark, watch.Error:
		return fmt.Errorf("unable to decode a %s event from the watch stream: %w", ee.Type, ee.Err)
	}
	return fmt.Errorf("unable to decode an event from the watch stream: %w", ee.Err)
}

// toEvent makes the watch event of a parsed one: an ERROR's Status is
// decoded here.
func toEvent(eventType string, obj *rawobj.Object, status []byte) (watch.Event, error) {
	if t := watch.EventType(eventType); t == watch.Error {
		st := &metav1.Status{}
		if err := json.Unmarshal(status, st); err != nil {
			return watch.Event{}, fmt.Errorf("unable to decode an error event from the watch stream: %w", err)
		}
		return watch.Event{Type: t, Object: st}, nil
	}
	return watch.Event{Type: watch.EventType(eventType), Object: obj}, nil
}

// errorEvent reports a stream failure as client-go does: an internal
// error, which makes the reflector relist.
func errorEvent(err error) watch.Event {
	status := apierrors.NewInternalError(err).Status()
	return watch.Event{Type: watch.Error, Object: &status}
}
