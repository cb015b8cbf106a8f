package cache

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/clock"
)

// Reflector tunables.
const (
	// defaultMinWatchTimeout is the shortest TimeoutSeconds asked of the
	// server for a watch; each watch asks for a random duration between it
	// and twice it, so that a fleet of watchers does not reconnect in step.
	defaultMinWatchTimeout = 5 * time.Minute
	// defaultPageSize is the list page size when paging is not forced off.
	defaultPageSize = 500
	// veryShortWatchThreshold: a watch that ends this fast without a single
	// event points at a server problem, and is reported as an error.
	veryShortWatchThreshold = time.Second
	// watchHeldFor is how long a watch must stay open, without an event,
	// to count as a connection that holds (HealthyHandler): a server that
	// accepts a watch and fails it at once has not recovered.
	watchHeldFor = 2 * time.Second
)

// errorStopRequested is returned by the watch handlers when the context was
// cancelled.
var errorStopRequested = errors.New("stop requested")

// ReflectorStore is the subset of a Store a Reflector writes to.
type ReflectorStore interface {
	// Add adds the given object to the accumulator associated with the
	// given object's key.
	Add(obj any) error
	// Update updates the given object in the accumulator associated with
	// the given object's key.
	Update(obj any) error
	// Delete deletes the given object from the accumulator associated with
	// the given object's key.
	Delete(obj any) error
	// Replace will delete the contents of the store, using instead the
	// given list.
	Replace(list []any, resourceVersion string) error
	// Resync is invoked periodically when a resync period is set.
	Resync() error
}

// StreamingReplacer is a ReflectorStore that can take a Replace one object
// at a time (DeltaFIFO is one). With a ListerWatcher that is a
// ListStreamer, the Reflector hands each listed object to the store as it
// arrives, so the consumer sees the first objects of a large list while the
// rest is still on the wire.
type StreamingReplacer interface {
	ReflectorStore
	// StartReplace begins a Replace whose objects are added one at a time.
	StartReplace() Replacement
}

// Replacement is a Replace in progress (see DeltaFIFO.StartReplace).
type Replacement interface {
	// Add adds the next objects of the list.
	Add(objs []any) error
	// Restart starts the list again: the objects added so far are not
	// part of it unless added again.
	Restart()
	// Finish completes the Replace with the list's resourceVersion.
	Finish(resourceVersion string) error
}

// VeryShortWatchError is returned when a watch ended almost at once without
// delivering a single event: something is wrong with the server or the
// connection, and a relist follows after a backoff.
type VeryShortWatchError struct {
	// Name is the reflector's name.
	Name string
}

// Error implements error.
func (e *VeryShortWatchError) Error() string {
	return fmt.Sprintf("very short watch: %s: unexpected watch close - watch lasted less than a second and no items received", e.Name)
}

// WatchListFallbackError reports that a streaming list failed and the
// reflector fell back to list and watch: nothing is lost, it is a note.
type WatchListFallbackError struct {
	Resource string
	Err      error
}

func (e *WatchListFallbackError) Error() string {
	return fmt.Sprintf("streaming list of %s failed, falling back to list and watch: %v", e.Resource, e.Err)
}

func (e *WatchListFallbackError) Unwrap() error { return e.Err }

// HistoryRewrittenError is reported (through the ErrorHandler; the
// Reflector goes on) when a list's resourceVersion is lower than one the
// Reflector had seen: the server's history was rewritten — etcd restored
// from a backup without --bump-revision — and the list, now in the Store,
// is what the server holds.
type HistoryRewrittenError struct {
	Resource      string
	Before, After string
}

func (e *HistoryRewrittenError) Error() string {
	return fmt.Sprintf("the resourceVersion of %s went back from %s to %s: the server's history was rewritten (etcd restored from a backup?); relisted", e.Resource, e.Before, e.After)
}

// checkHistory reports a list at resourceVersion listRV that is older than
// the last one seen. resourceVersions are opaque to clients, but every
// Kubernetes API server serves etcd revisions, which only grow; one that
// does not parse as a number is not compared.
func (r *Reflector) checkHistory(listRV string) {
	before, err := strconv.ParseUint(r.LastSyncResourceVersion(), 10, 64)
	if err != nil {
		return
	}
	after, err := strconv.ParseUint(listRV, 10, 64)
	if err != nil || after >= before {
		return
	}
	r.reportError(&HistoryRewrittenError{Resource: r.typeDescription, Before: r.LastSyncResourceVersion(), After: listRV})
}

// ReflectorOptions configures a Reflector. Only Store and ListerWatcher are
// required.
type ReflectorOptions struct {
	// Name identifies the reflector in errors; defaults to the type
	// description.
	Name string
	// TypeDescription names what is listed and watched ("configmaps"), for
	// errors.
	TypeDescription string
	// ExpectedType is an example of the objects the watch must deliver;
	// events of another Go type are skipped. Nil accepts anything.
	ExpectedType runtime.Object
	// ResyncPeriod, if non-zero, calls the store's Resync that often while
	// watching.
	ResyncPeriod time.Duration
	// MinWatchTimeout is the shortest TimeoutSeconds of a watch request;
	// defaults to 5 minutes, and a smaller value is honoured (client-go
	// enforces 5m as the floor; the fault tests use a shorter one).
	MinWatchTimeout time.Duration
	// WatchListPageSize, if positive, is the list page size used always;
	// negative switches paging off (one request per list).
	WatchListPageSize int64
	// UseWatchList makes the reflector get its initial state with a
	// streaming list (a watch with sendInitialEvents) and fall back to
	// list+watch on any error.
	UseWatchList bool
	// InitialResourceVersion, if set, skips the first list: the reflector
	// starts watching from this resourceVersion. A later relist (after a
	// 410, say) lists as usual.
	InitialResourceVersion string
	// ErrorHandler is called with every failure: failed lists, failed watch
	// requests (also those retried after a backoff without a relist), and
	// watches that ended with an error. Defaults to doing nothing.
	ErrorHandler func(err error)
	// HealthyHandler is called once per watch that holds: that delivers an
	// event, or stays open for watchHeldFor. A successful list, or a watch
	// request answered and then failed, does not count: a caller told an
	// outage has ended is not told so again by every attempt.
	HealthyHandler func()
	// Clock allows tests to manipulate time. Defaults to the real clock.
	Clock clock.Clock
	// Backoff hands out the delays between attempts. Defaults to 800ms
	// doubling to 30s, jittered, reset after 2 minutes of calm.
	Backoff BackoffManager
	// Rand returns floats in [0, 1) for the watch timeout jitter; tests pin
	// it. Defaults to math/rand/v2.
	Rand func() float64
}

// Reflector watches a specified resource and causes all changes to be
// reflected in the given store.
//
// It lists (or stream-lists) the resource into the store with Replace, then
// watches from the list's resourceVersion and applies each event with
// Add/Update/Delete, advancing its resourceVersion with every event and
// bookmark. A watch the server ends normally is re-opened from the last
// resourceVersion without a relist; a 410 Gone (the resourceVersion was
// compacted away) relists; connection-refused, 429 and 5xx responses to a
// watch request back off and re-watch without relisting.
type Reflector struct {
	// name identifies this reflector in errors.
	name string
	// typeDescription names what is being reflected ("configmaps").
	typeDescription string
	// expectedType is the Go type of the objects the watch must deliver;
	// nil accepts any.
	expectedType reflect.Type
	// store is the destination of the list and watch.
	store ReflectorStore
	// listerWatcher is used to perform lists and watches.
	listerWatcher ListerWatcher
	// backoff manages the delays between ListAndWatch attempts and watch
	// retries.
	backoff BackoffManager
	// resyncPeriod: 0 disables resync.
	resyncPeriod time.Duration
	// clock allows tests to manipulate time.
	clock clock.Clock
	// rand returns floats in [0, 1) for the watch timeout jitter.
	rand func() float64
	// minWatchTimeout is the shortest TimeoutSeconds of a watch.
	minWatchTimeout time.Duration
	// watchListPageSize forces the list page size when non-zero.
	watchListPageSize int64
	// useWatchList tries a streaming list before list+watch.
	useWatchList   bool
	errorHandler   func(error)
	healthyHandler func()

	// paginatedResult records that a list at resourceVersion "0" came back
	// paginated: the server (watch cache disabled, probably) honours
	// paging, so later lists page too. Only touched by the Run goroutine.
	paginatedResult bool
	// replacement is the streamed Replace of a list that failed before it
	// was complete; the next list continues it (restarted), so that objects
	// it queued and that are still queued are not handed out twice. Only
	// the goroutine of ListAndWatch touches it.
	replacement Replacement
	// listNotStreamable: a ListEach said the lists of this resource must be
	// read whole (ErrListNotStreamable). Only the ListAndWatch goroutine
	// touches it.
	listNotStreamable bool

	// lastSyncResourceVersionMutex guards lastSyncResourceVersion,
	// isLastSyncResourceVersionUnavailable and initialResourceVersion.
	lastSyncResourceVersionMutex sync.RWMutex
	// lastSyncResourceVersion is the resource version token last observed
	// when doing a sync with the underlying store. It is thread safe, but
	// not synchronized with the underlying store.
	lastSyncResourceVersion string
	// isLastSyncResourceVersionUnavailable is true if the previous list or
	// watch request with lastSyncResourceVersion failed with an "expired"
	// or "too large resource version" error.
	isLastSyncResourceVersionUnavailable bool
	// initialResourceVersion, while set, replaces the next list: the next
	// ListAndWatch watches from it directly. Cleared when used.
	initialResourceVersion string
}

// NewReflector returns a Reflector that keeps store up to date with the
// resources lw lists and watches.
func NewReflector(lw ListerWatcher, store ReflectorStore, opts ReflectorOptions) *Reflector {
	c := opts.Clock
	if c == nil {
		c = clock.RealClock{}
	}
	r := &Reflector{
		name:                   opts.Name,
		typeDescription:        opts.TypeDescription,
		store:                  store,
		listerWatcher:          lw,
		backoff:                opts.Backoff,
		resyncPeriod:           opts.ResyncPeriod,
		clock:                  c,
		rand:                   opts.Rand,
		minWatchTimeout:        opts.MinWatchTimeout,
		watchListPageSize:      opts.WatchListPageSize,
		useWatchList:           opts.UseWatchList,
		errorHandler:           opts.ErrorHandler,
		healthyHandler:         opts.HealthyHandler,
		initialResourceVersion: opts.InitialResourceVersion,
	}
	if r.backoff == nil {
		r.backoff = newDelayBackoff(c)
	}
	if r.rand == nil {
		r.rand = rand.Float64
	}
	if r.minWatchTimeout <= 0 {
		r.minWatchTimeout = defaultMinWatchTimeout
	}
	if r.typeDescription == "" {
		r.typeDescription = "objects"
		if opts.ExpectedType != nil {
			r.typeDescription = reflect.TypeOf(opts.ExpectedType).String()
		}
	}
	if r.name == "" {
		r.name = r.typeDescription
	}
	if opts.ExpectedType != nil {
		r.expectedType = reflect.TypeOf(opts.ExpectedType)
	}
	return r
}

// Name returns the reflector's name.
func (r *Reflector) Name() string {
	return r.name
}

// Run repeatedly uses the reflector's ListAndWatch to fetch all the objects
// and subsequent deltas. Run will exit when ctx is cancelled. Between two
// ListAndWatch calls it waits out a backoff.
func (r *Reflector) Run(ctx context.Context) {
	for ctx.Err() == nil {
		if err := r.ListAndWatch(ctx); err != nil {
			r.reportError(err)
		}
		if ctx.Err() != nil {
			return
		}
		t := r.backoff.Backoff()
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C():
		}
	}
}

func (r *Reflector) reportError(err error) {
	if r.errorHandler != nil && err != nil {
		r.errorHandler(err)
	}
}

func (r *Reflector) reportHealthy() {
	if r.healthyHandler != nil {
		r.healthyHandler()
	}
}

// waitBackoff waits out one backoff; false means ctx was cancelled.
func (r *Reflector) waitBackoff(ctx context.Context) bool {
	t := r.backoff.Backoff()
	select {
	case <-ctx.Done():
		t.Stop()
		return false
	case <-t.C():
		return true
	}
}

// ListAndWatch first lists all items and get the resource version at the
// moment of call, and then use the resource version to watch. It returns
// error if ListAndWatch didn't even try to initialize watch.
func (r *Reflector) ListAndWatch(ctx context.Context) error {
	if rv := r.takeInitialResourceVersion(); rv != "" {
		r.setLastSyncResourceVersion(rv)
		return r.watchWithResync(ctx, nil)
	}

	var w watch.Interface
	fallbackToList := !r.useWatchList
	if r.useWatchList {
		var err error
		w, err = r.watchList(ctx)
		if w == nil && err == nil {
			// ctx was cancelled.
			return nil
		}
		if err != nil {
			// Making progress is better than deadlocking: any error of the
			// streaming list falls back to the standard list and watch.
			r.reportError(&WatchListFallbackError{Resource: r.typeDescription, Err: err})
			fallbackToList = true
			// ensure that we won't accidentally pass some garbage down the
			// watch.
			w = nil
		}
	}
	if fallbackToList {
		if err := r.list(ctx); err != nil {
			return err
		}
	}
	return r.watchWithResync(ctx, w)
}

func (r *Reflector) takeInitialResourceVersion() string {
	r.lastSyncResourceVersionMutex.Lock()
	defer r.lastSyncResourceVersionMutex.Unlock()
	rv := r.initialResourceVersion
	r.initialResourceVersion = ""
	return rv
}

// watchWithResync runs the watch loop while a resync goroutine feeds
// Resync calls into the store.
func (r *Reflector) watchWithResync(ctx context.Context, w watch.Interface) error {
	resyncErrCh := make(chan error, 1)
	resyncCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	wg.Go(func() { r.startResync(resyncCtx, resyncErrCh) })
	defer wg.Wait()
	return r.watch(ctx, w, resyncErrCh)
}

// startResync periodically calls r.store.Resync() until ctx is done. A
// Resync error is sent on resyncErrCh, which ends the watch.
func (r *Reflector) startResync(ctx context.Context, resyncErrCh chan<- error) {
	if r.resyncPeriod <= 0 {
		return
	}
	for {
		t := r.clock.NewTimer(r.resyncPeriod)
		select {
		case <-t.C():
		case <-ctx.Done():
			t.Stop()
			return
		}
		if err := r.store.Resync(); err != nil {
			select {
			case resyncErrCh <- fmt.Errorf("resync of %s failed: %w", r.typeDescription, err):
			default:
			}
			return
		}
	}
}

// watch simply starts a watch request with the server, and handles the
// events until the watch ends. It re-opens normally closed watches from the
// last resourceVersion, and returns (nil) when a relist is needed; it
// returns an error only when the watch request itself failed.
//
// w, if not nil, is a watch already open (from a streaming list); watch
// owns it and stops every watch it ends with. It runs on the ListAndWatch
// goroutine and holds no lock itself: the resourceVersion is read and
// advanced through the accessors that take lastSyncResourceVersionMutex.
func (r *Reflector) watch(ctx context.Context, w watch.Interface, resyncErrCh chan error) error {
	defer func() {
		if w != nil {
			w.Stop()
		}
	}()

	// openedRV is the resourceVersion the current watch started from.
	openedRV := r.LastSyncResourceVersion()
	// reconnecting: a watch request failed (the server was down or
	// unreachable); the next one that succeeds checks the server's history.
	reconnecting := false
	for {
		// Give a cancelled ctx a chance to stop the loop, also after the
		// continue statements below.
		if ctx.Err() != nil {
			return nil
		}

		start := r.clock.Now()
		if w == nil {
			openedRV = r.LastSyncResourceVersion()
			var watchErr error
			w, watchErr = r.listerWatcher.Watch(ctx, r.watchOptions(openedRV))
			if watchErr != nil {
				retry, err := r.watchRequestFailed(ctx, watchErr)
				if !retry {
					return err
				}
				// A throttling server was there all along; any other
				// failure may be a restart, over a restored etcd.
				reconnecting = reconnecting || !apierrors.IsTooManyRequests(watchErr)
				continue
			}
			if reconnecting {
				reconnecting = false
				if r.historyRewritten(ctx) {
					// Relist with a consistent list; list() reports it.
					w.Stop()
					w = nil
					r.setIsLastSyncResourceVersionUnavailable(true)
					return nil
				}
			}
		}

		_, err := r.handleAnyWatch(ctx, start, w, r.store, openedRV, false, r.setLastSyncResourceVersion, resyncErrCh)
		// The watcher is done with: stop it and forget it so that the next
		// loop opens a new one.
		w.Stop()
		w = nil
		if err == nil {
			// The server closed the watch normally: re-watch.
			continue
		}
		if !r.rewatchAfterError(ctx, err) {
			return nil
		}
	}
}

// watchOptions returns the options of a watch request from resourceVersion.
// Each call draws a new random timeout (watchTimeoutSeconds), so it is
// called once per request.
func (r *Reflector) watchOptions(resourceVersion string) metav1.ListOptions {
	return metav1.ListOptions{
		ResourceVersion: resourceVersion,
		// We want to avoid situations of hanging watchers. Stop any
		// watchers that do not receive any events within the timeout
		// window.
		TimeoutSeconds: r.watchTimeoutSeconds(),
		// To reduce load on kube-apiserver on watch restarts, you may
		// enable watch bookmarks. Reflector doesn't assume bookmarks
		// are returned at all (if the server do not support watch
		// bookmarks, it will ignore this field).
		AllowWatchBookmarks: true,
	}
}

// watchRequestFailed decides what follows a watch request that failed with
// err. retry means the request is made again from the same resourceVersion,
// without a relist, and the backoff before it has been waited out;
// otherwise watch returns the returned error, which is nil when a relist is
// needed or ctx was cancelled. Errors that lead to a retry or a relist are
// reported through the ErrorHandler first. It holds no lock.
func (r *Reflector) watchRequestFailed(ctx context.Context, err error) (retry bool, _ error) {
	if ctx.Err() != nil {
		// Stopped while the request was under way.
		return false, nil
	}
	if isTooLargeResourceVersionError(err) {
		// The server (a lagging watch cache, a new apiserver
		// behind a balancer) has not reached this
		// resourceVersion: retrying the watch at it could go on
		// forever. Relist, as client-go does: from the last
		// resourceVersion, and if that is too large as well,
		// with a consistent list.
		r.reportError(fmt.Errorf("watch of %s at a resourceVersion the server has not reached, relisting: %w", r.typeDescription, err))
		return false, nil
	}
	if isWatchErrorRetriable(err) {
		// The server is down, overloaded or starting: retry the
		// watch from the same resourceVersion after a backoff;
		// a relist would only add load.
		r.reportError(fmt.Errorf("failed to watch %s: %w", r.typeDescription, err))
		return r.waitBackoff(ctx), nil
	}
	return false, fmt.Errorf("failed to watch %s: %w", r.typeDescription, err)
}

// rewatchAfterError decides what follows a watch that ended with err (not
// nil; the watch is already stopped). true means a new watch is opened from
// the last resourceVersion, after a backoff that has been waited out; false
// means watch returns nil: a relist follows, or ctx was cancelled. Every
// error but errorStopRequested is reported through the ErrorHandler. It
// holds no lock, and leaves isLastSyncResourceVersionUnavailable alone.
func (r *Reflector) rewatchAfterError(ctx context.Context, err error) bool {
	if errors.Is(err, errorStopRequested) {
		return false
	}
	switch {
	case IsExpired(err):
		// Don't set LastSyncResourceVersionUnavailable - LIST call with
		// ResourceVersion=RV already has a semantic that it returns
		// data at least as fresh as provided RV. So first try to LIST
		// with setting RV to resource version of last observed object.
		r.reportError(fmt.Errorf("watch of %s expired, relisting: %w", r.typeDescription, err))
	case apierrors.IsTooManyRequests(err):
		r.reportError(fmt.Errorf("watch of %s: %w", r.typeDescription, err))
		return r.waitBackoff(ctx)
	default:
		r.reportError(fmt.Errorf("watch of %s ended with: %w", r.typeDescription, err))
	}
	return false
}

// historyRewritten asks the server, after it was unreachable, for its
// current resourceVersion (a consistent list of at most one object):
// lower than the last one seen means its history was rewritten (etcd
// restored without --bump-revision). A watch from the stream's
// resourceVersion would then be accepted and stay silent until the server
// caught up with a future it has not seen. false when it cannot tell.
func (r *Reflector) historyRewritten(ctx context.Context) bool {
	last, err := strconv.ParseUint(r.LastSyncResourceVersion(), 10, 64)
	if err != nil {
		return false
	}
	list, err := r.listerWatcher.List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		return false
	}
	listMeta, err := meta.ListAccessor(list)
	if err != nil {
		return false
	}
	current, err := strconv.ParseUint(listMeta.GetResourceVersion(), 10, 64)
	return err == nil && current < last
}

// watchTimeoutSeconds returns a random timeout in [min, 2·min).
func (r *Reflector) watchTimeoutSeconds() *int64 {
	t := int64(r.minWatchTimeout.Seconds() * (r.rand() + 1.0))
	return &t
}

// isWatchErrorRetriable reports whether a failed watch request should be
// retried (after a backoff) from the same resourceVersion, without a
// relist: the server is unreachable, overloaded or temporarily failing.
func isWatchErrorRetriable(err error) bool {
	// If this is "connection refused" error, it means that most likely
	// apiserver is not responsive. It doesn't make sense to re-list all
	// objects because most likely we will be able to restart watch where we
	// ended. If that's the case begin exponentially backing off and resend
	// watch request. Do the same for "429" errors.
	switch {
	case utilnet.IsConnectionRefused(err), utilnet.IsConnectionReset(err), utilnet.IsProbableEOF(err), utilnet.IsTimeout(err):
		// Also timeouts: a black-holed connection makes the next request
		// time out (TLS handshake timeout) until the network is back.
		return true
	case apierrors.IsTooManyRequests(err), apierrors.IsServiceUnavailable(err),
		apierrors.IsInternalError(err), apierrors.IsServerTimeout(err), apierrors.IsTimeout(err):
		return true
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		code := status.Status().Code
		return code == 502 || code == 504
	}
	return false
}

// handleAnyWatch applies the events of w to store until w ends, ctx is
// cancelled or an error arrives on errCh (a failed resync). openedRV is the
// resourceVersion the watch was opened at. When exitOnInitialEnd is set (a
// streaming list), it returns initialEnd=true as soon as the end bookmark
// of the initial events arrives. It never stops w.
func (r *Reflector) handleAnyWatch(ctx context.Context, start time.Time, w watch.Interface, store ReflectorStore,
	openedRV string, exitOnInitialEnd bool, setLastSyncResourceVersion func(string), errCh <-chan error) (initialEnd bool, err error) {
	eventCount := 0
	// A watch opened without a resourceVersion (or at "0") starts with
	// synthetic Added events in no particular order; their
	// resourceVersions must not be trusted until the first other event
	// (client-go #136583).
	trustAdded := openedRV != "" && openedRV != "0"
	sawNonAdded := false
	// The watch holds once it delivers an event or stays open for
	// watchHeldFor: then, once, HealthyHandler. Without one, no timer.
	var heldC <-chan time.Time
	reported := r.healthyHandler == nil
	if !reported {
		held := r.clock.NewTimer(watchHeldFor)
		defer held.Stop()
		heldC = held.C()
	}
	holds := func() {
		if !reported {
			reported, heldC = true, nil
			r.reportHealthy()
		}
	}
loop:
	for {
		select {
		case <-ctx.Done():
			return false, errorStopRequested
		case err := <-errCh:
			return false, err
		case <-heldC:
			holds()
		case event, ok := <-w.ResultChan():
			if !ok {
				break loop
			}
			if event.Type == watch.Error {
				return false, apierrors.FromObject(event.Object)
			}
			holds()
			if r.expectedType != nil {
				if e, a := r.expectedType, reflect.TypeOf(event.Object); e != a {
					r.reportError(fmt.Errorf("%s: expected type %v, but watch event object had type %v", r.name, e, a))
					continue
				}
			}
			obj, ok := event.Object.(Object)
			if !ok {
				r.reportError(fmt.Errorf("%s: unable to understand watch event %#v", r.name, event))
				continue
			}
			resourceVersion := obj.GetResourceVersion()
			switch event.Type {
			case watch.Added:
				err = store.Add(event.Object)
			case watch.Modified:
				err = store.Update(event.Object)
			case watch.Deleted:
				// TODO(lavalamp): Will any consumers need access to the "last
				// known state", which is passed in event.Object? If so, may
				// need to change this.
				err = store.Delete(event.Object)
			case watch.Bookmark:
				// A `Bookmark` means watch has synced here, just update the
				// resourceVersion.
				err = nil
			default:
				err = fmt.Errorf("unknown watch event type %q", event.Type)
			}
			if err != nil {
				r.reportError(fmt.Errorf("%s: unable to apply watch event %s %s: %w", r.name, event.Type, ObjectKey(obj), err))
			}
			if event.Type != watch.Added {
				sawNonAdded = true
			}
			if trustAdded || sawNonAdded {
				setLastSyncResourceVersion(resourceVersion)
			}
			eventCount++
			if exitOnInitialEnd && event.Type == watch.Bookmark && hasInitialEventsEndAnnotation(event.Object) {
				return true, nil
			}
		}
	}

	if ctx.Err() != nil {
		// The watch ended because the run did (its request's context is
		// ctx): the select above may see the closed result channel
		// before ctx.Done. Nothing to report.
		return false, errorStopRequested
	}
	watchDuration := r.clock.Since(start)
	if watchDuration < veryShortWatchThreshold && eventCount == 0 {
		return false, &VeryShortWatchError{Name: r.name}
	}
	return false, nil
}

// annotated is the part of metav1.Object the end-bookmark check needs, so
// that light object representations can carry just that annotation.
type annotated interface {
	GetAnnotations() map[string]string
}

func hasInitialEventsEndAnnotation(obj runtime.Object) bool {
	m, ok := obj.(annotated)
	return ok && m.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "true"
}

// list simply lists all items and records a resource version obtained from
// the server at the moment of the call. The resource version can be used
// for further progress notification (aka. watch).
//
// When the ListerWatcher is a ListStreamer and the store a
// StreamingReplacer, the objects go into the store as they arrive, and the
// Replace is finished once the list is complete.
func (r *Reflector) list(ctx context.Context) error {
	options := metav1.ListOptions{ResourceVersion: r.relistResourceVersion()}
	rep := r.replacement
	if _, ok := r.listerWatcher.(ListStreamer); ok && rep == nil && !r.listNotStreamable {
		if sr, ok := r.store.(StreamingReplacer); ok {
			rep = sr.StartReplace()
			r.replacement = rep
		}
	}
	items, listRV, paginated, err := r.listPages(ctx, options, rep)
	if errors.Is(err, ErrListNotStreamable) {
		// Read this list whole from now on. What the replacement queued
		// stays queued; Replace handles it as any queued key.
		r.listNotStreamable = true
		r.replacement, rep = nil, nil
		items, listRV, paginated, err = r.listPages(ctx, options, nil)
	}
	if IsExpired(err) || isTooLargeResourceVersionError(err) {
		// The watch cache of the server is behind (too large) or our RV
		// was compacted away (expired): relist from the most recent
		// state with resourceVersion "".
		r.setIsLastSyncResourceVersionUnavailable(true)
		options.ResourceVersion = r.relistResourceVersion()
		items, listRV, paginated, err = r.listPages(ctx, options, rep)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("failed to list %s: %w", r.typeDescription, err)
	}
	r.setIsLastSyncResourceVersionUnavailable(false)
	// We check if the list was paginated and if so set the paginatedResult
	// based on that. However, we want to do that only for the initial list
	// (which is the only case when we set ResourceVersion="0"). The reasoning
	// behind it is that later, in some situations we may force listing
	// directly from etcd (by setting ResourceVersion="") which will return
	// paginated result, even if watch cache is enabled. However, in that
	// case, we still want to prefer sending requests to watch cache if
	// possible.
	if options.ResourceVersion == "0" && paginated {
		r.paginatedResult = true
	}
	if rep != nil {
		r.replacement = nil
		err = rep.Finish(listRV)
	} else {
		err = r.store.Replace(items, listRV)
	}
	if err != nil {
		return fmt.Errorf("unable to sync list result of %s: %w", r.typeDescription, err)
	}
	r.checkHistory(listRV)
	r.setLastSyncResourceVersion(listRV)
	return nil
}

// replaceBatchSize is how many listed objects the Reflector hands to a
// Replacement at once.
const replaceBatchSize = 100

// listPages lists, in pages of the configured size (or, at resourceVersion
// "0" served from the watch cache, in one response unless the server pages
// anyway), and returns the items, the list's
// resourceVersion and whether more than one page came back. With rep, the
// items go to rep as they arrive (through ListStreamer) and none are
// returned; rep is restarted first, and again when the list starts over.
func (r *Reflector) listPages(ctx context.Context, options metav1.ListOptions, rep Replacement) (items []any, listRV string, paginated bool, err error) {
	listPage := r.listerWatcher.List
	if rep != nil {
		rep.Restart()
		streamer := r.listerWatcher.(ListStreamer)
		// Objects go to the store in batches: one lock and one wake-up
		// of the consumer per batch rather than per object.
		batch := make([]any, 0, replaceBatchSize)
		each := func(obj runtime.Object) error {
			if batch = append(batch, obj); len(batch) < replaceBatchSize {
				return nil
			}
			err := rep.Add(batch)
			batch = batch[:0]
			return err
		}
		listPage = func(ctx context.Context, options metav1.ListOptions) (runtime.Object, error) {
			batch = batch[:0]
			list, err := streamer.ListEach(ctx, options, each)
			if err == nil && len(batch) > 0 {
				err = rep.Add(batch)
			}
			return list, err
		}
	}
	switch {
	case r.watchListPageSize < 0:
		// Paging switched off: one request.
		options.Limit = 0
	case r.watchListPageSize != 0:
		options.Limit = r.watchListPageSize
	case r.paginatedResult:
		// We got a paginated result initially. Assume this resource and
		// server honor paging requests (i.e. watch cache is probably
		// disabled) and leave the default pager size set.
		options.Limit = defaultPageSize
	case options.ResourceVersion != "" && options.ResourceVersion != "0":
		// User didn't explicitly request pagination. With ResourceVersion
		// != "", we have a possibility to list from watch cache, but we do
		// that (for ResourceVersion != "0") only if Limit is unset. To
		// avoid thundering herd on etcd (e.g. on master upgrades), we
		// explicitly set it here.
		options.Limit = 0
	default:
		options.Limit = defaultPageSize
	}
	requestedRV := options.ResourceVersion
	requestedRVMatch := options.ResourceVersionMatch
	first := true
	for {
		if err := ctx.Err(); err != nil {
			return nil, "", paginated, err
		}
		obj, err := listPage(ctx, options)
		if err != nil {
			// The continue token of page 2+ may expire while we page
			// (compaction): fall back to a full list at the requested
			// resourceVersion.
			if !apierrors.IsResourceExpired(err) || options.Continue == "" {
				return nil, "", paginated, err
			}
			options.Limit = 0
			options.Continue = ""
			options.ResourceVersion = requestedRV
			options.ResourceVersionMatch = requestedRVMatch
			if rep != nil {
				rep.Restart()
			}
			obj, err = listPage(ctx, options)
			if err != nil {
				return nil, "", paginated, err
			}
			items, listRV, _, err = extractList(obj, nil)
			return items, listRV, paginated, err
		}
		var cont, rv string
		if first {
			items, rv, cont, err = extractList(obj, nil)
			listRV = rv
		} else {
			items, _, cont, err = extractList(obj, items)
		}
		if err != nil {
			return nil, "", paginated, err
		}
		if cont == "" {
			return items, listRV, paginated, nil
		}
		first = false
		options.Continue = cont
		// Clear the ResourceVersion(Match) on the subsequent List calls to
		// avoid the `specifying resource version is not allowed when using
		// continue` error.
		options.ResourceVersion = ""
		options.ResourceVersionMatch = ""
		paginated = true
	}
}

// itemIterator is implemented by lists that can hand out their items
// without reflection (UnstructuredList has it).
type itemIterator interface {
	EachListItem(func(runtime.Object) error) error
}

// extractList appends the items of list to items and returns its
// resourceVersion and continue token.
func extractList(list runtime.Object, items []any) ([]any, string, string, error) {
	if _, isTable := list.(*metav1.Table); isTable {
		return nil, "", "", fmt.Errorf("unexpected Table list: the reflector needs full objects")
	}
	listMeta, err := meta.ListAccessor(list)
	if err != nil {
		return nil, "", "", fmt.Errorf("unable to understand list result %T: %w", list, err)
	}
	appendItem := func(obj runtime.Object) error {
		items = append(items, obj)
		return nil
	}
	if l, ok := list.(itemIterator); ok {
		// Unstructured lists and the project's own list types iterate
		// without reflection.
		err = l.EachListItem(appendItem)
	} else {
		if items == nil {
			items = make([]any, 0, meta.LenList(list))
		}
		err = meta.EachListItem(list, appendItem)
	}
	if err != nil {
		return nil, "", "", fmt.Errorf("unable to extract items of %T: %w", list, err)
	}
	return items, listMeta.GetResourceVersion(), listMeta.GetContinue(), nil
}

// watchList establishes a stream to get a consistent snapshot of data from
// the server as described in
// https://github.com/kubernetes/enhancements/tree/master/keps/sig-api-machinery/3157-watch-list#proposal
//
// On success it returns the watch, still open, after the initial events
// have been handed to the store with Replace. (nil, nil) means ctx was
// cancelled. Any error makes the caller fall back to list and watch.
func (r *Reflector) watchList(ctx context.Context) (watch.Interface, error) {
	for {
		if ctx.Err() != nil {
			return nil, nil
		}
		// The temporary store keeps the order in which the server sent the
		// objects, so that the Replace deltas come out in list order.
		tmp := newOrderedStore()
		resourceVersion := ""
		options := metav1.ListOptions{
			ResourceVersion:      r.rewatchResourceVersion(),
			AllowWatchBookmarks:  true,
			SendInitialEvents:    new(true),
			ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
			TimeoutSeconds:       r.watchTimeoutSeconds(),
		}
		start := r.clock.Now()
		w, err := r.listerWatcher.Watch(ctx, options)
		if err != nil {
			if ctx.Err() != nil {
				return nil, nil
			}
			if r.watchListRetriable(ctx, err) {
				continue
			}
			return nil, err
		}
		initialEnd, err := r.handleAnyWatch(ctx, start, w, tmp, options.ResourceVersion, true, func(rv string) { resourceVersion = rv }, nil)
		if err != nil {
			w.Stop() // stop and retry with clean state
			if errors.Is(err, errorStopRequested) {
				return nil, nil
			}
			if r.watchListRetriable(ctx, err) {
				continue
			}
			return nil, err
		}
		if !initialEnd {
			// The watch closed before the end bookmark: start over with a
			// new streaming list.
			w.Stop()
			continue
		}
		// We successfully got initial state from watch-list confirmed by the
		// "k8s.io/initial-events-end" bookmark (the watch reported itself
		// healthy on its first event).
		r.setIsLastSyncResourceVersionUnavailable(false)
		if err := r.store.Replace(tmp.list(), resourceVersion); err != nil {
			w.Stop()
			return nil, fmt.Errorf("unable to sync watch-list result of %s: %w", r.typeDescription, err)
		}
		r.checkHistory(resourceVersion)
		r.setLastSyncResourceVersion(resourceVersion)
		return w, nil
	}
}

// watchListRetriable decides whether a failed streaming list is retried
// (as a streaming list), with the side effects that go with it: a backoff
// for overload and unreachable servers, forgetting the resourceVersion for
// expired ones.
func (r *Reflector) watchListRetriable(ctx context.Context, err error) bool {
	if utilnet.IsConnectionRefused(err) || apierrors.IsTooManyRequests(err) {
		r.reportError(fmt.Errorf("streaming list of %s: %w", r.typeDescription, err))
		return r.waitBackoff(ctx)
	}
	if IsExpired(err) || isTooLargeResourceVersionError(err) {
		r.setIsLastSyncResourceVersionUnavailable(true)
		return true
	}
	return false
}

// LastSyncResourceVersion is the resource version observed when last sync
// with the underlying store. The value returned is not synchronized with
// access to the underlying store and is not thread-safe.
func (r *Reflector) LastSyncResourceVersion() string {
	r.lastSyncResourceVersionMutex.RLock()
	defer r.lastSyncResourceVersionMutex.RUnlock()
	return r.lastSyncResourceVersion
}

func (r *Reflector) setLastSyncResourceVersion(v string) {
	r.lastSyncResourceVersionMutex.Lock()
	defer r.lastSyncResourceVersionMutex.Unlock()
	r.lastSyncResourceVersion = v
}

// relistResourceVersion determines the resource version the reflector
// should list or relist from. Returns either the lastSyncResourceVersion so
// that this reflector will relist with a resource versions no older than
// has already been observed in relist results or watch events, or, if the
// last relist resulted in an HTTP 410 (Gone) status code, returns "" so
// that the relist will use the latest resource version available in etcd
// via a quorum read.
func (r *Reflector) relistResourceVersion() string {
	r.lastSyncResourceVersionMutex.RLock()
	defer r.lastSyncResourceVersionMutex.RUnlock()

	if r.isLastSyncResourceVersionUnavailable {
		// Since this reflector makes paginated list requests, and all
		// paginated list requests skip the watch cache if the
		// lastSyncResourceVersion is unavailable, we set ResourceVersion=""
		// and list from etcd.
		return ""
	}
	if r.lastSyncResourceVersion == "" {
		// For performance reasons, initial list performed by reflector uses
		// "0" as resource version to allow it to be served from the watch
		// cache if it is enabled.
		return "0"
	}
	return r.lastSyncResourceVersion
}

// rewatchResourceVersion determines the resource version the reflector
// should start streaming from.
func (r *Reflector) rewatchResourceVersion() string {
	r.lastSyncResourceVersionMutex.RLock()
	defer r.lastSyncResourceVersionMutex.RUnlock()
	if r.isLastSyncResourceVersionUnavailable {
		// initial stream should return data at the most recent resource
		// version. the returned data must be consistent i.e. as if it was
		// served from etcd via a quorum read
		return ""
	}
	return r.lastSyncResourceVersion
}

// setIsLastSyncResourceVersionUnavailable sets if the last list or watch
// request with lastSyncResourceVersion returned "expired" or "too large
// resource version" error.
func (r *Reflector) setIsLastSyncResourceVersionUnavailable(isUnavailable bool) {
	r.lastSyncResourceVersionMutex.Lock()
	defer r.lastSyncResourceVersionMutex.Unlock()
	r.isLastSyncResourceVersionUnavailable = isUnavailable
}

// IsExpired reports whether err says a resourceVersion is too old to list
// or watch from (410 Gone, reason Expired): a relist follows.
func IsExpired(err error) bool {
	// In Kubernetes 1.17 and earlier, the api server returns both
	// apierrors.StatusReasonExpired and apierrors.StatusReasonGone for HTTP
	// 410 (Gone) status code responses. In 1.18 the kube server is more
	// consistent and always returns apierrors.StatusReasonExpired. For
	// backward compatibility we can only remove the apierrors.IsGone check
	// when we fully drop support for Kubernetes 1.17 servers from
	// reflectors.
	return apierrors.IsResourceExpired(err) || apierrors.IsGone(err)
}

func isTooLargeResourceVersionError(err error) bool {
	if apierrors.HasStatusCause(err, metav1.CauseTypeResourceVersionTooLarge) {
		return true
	}
	// In Kubernetes 1.17.0-1.18.5, the api server doesn't set the error
	// status cause to metav1.CauseTypeResourceVersionTooLarge to indicate
	// that the requested minimum resource version is larger than the
	// largest currently available resource version. To ensure backward
	// compatibility with these server versions we also need to detect the
	// error based on the content of the error message field.
	if !apierrors.IsTimeout(err) {
		return false
	}
	var apierr apierrors.APIStatus
	if !errors.As(err, &apierr) || apierr.Status().Details == nil {
		return false
	}
	for _, cause := range apierr.Status().Details.Causes {
		// Matches the message returned by api server 1.17.0-1.18.5 for this
		// error condition
		if cause.Message == "Too large resource version" {
			return true
		}
	}
	// Matches the message returned by api server before 1.17.0
	return strings.Contains(apierr.Status().Message, "Too large resource version")
}
