package cache

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"sort"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	clocktesting "k8s.io/utils/clock/testing"
)

func expiredErr() error { return apierrors.NewResourceExpired("too old resource version: 1 (5)") }
func tooManyErr() error { return apierrors.NewTooManyRequests("too many requests", 1) }
func connRefusedErr() error {
	return fmt.Errorf(`Get "https://127.0.0.1:1/api": dial tcp 127.0.0.1:1: connect: %w`, syscall.ECONNREFUSED)
}

// timeoutErr is a net.Error that timed out (TLS handshake timeout).
type timeoutErr struct{}

func (timeoutErr) Error() string   { return "net/http: TLS handshake timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

// statusEvent is the watch.Error event a server sends for err.
func statusEvent(err error) watch.Event {
	status := err.(apierrors.APIStatus).Status()
	return watch.Event{Type: watch.Error, Object: &status}
}

func bookmark(rv string, initialEnd string) watch.Event {
	o := mkObj("", 0)
	o.ResourceVersion = rv
	if initialEnd != "" {
		o.Annotations = map[string]string{metav1.InitialEventsAnnotationKey: initialEnd}
	}
	return watch.Event{Type: watch.Bookmark, Object: o}
}

func added(o *testObj) watch.Event    { return watch.Event{Type: watch.Added, Object: o} }
func modified(o *testObj) watch.Event { return watch.Event{Type: watch.Modified, Object: o} }
func deleted(o *testObj) watch.Event  { return watch.Event{Type: watch.Deleted, Object: o} }

// TestWatchEndedByStopIsNoError: a watch whose result channel closes
// because the run stopped (its request's context is the run's) is a stop,
// not a very short watch to report, whichever of the two the handler
// sees first.
func TestWatchEndedByStopIsNoError(t *testing.T) {
	for range 100 {
		r, fx := newFixture(newScriptedLW(nil, nil), ReflectorOptions{})
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		w := closedWatch()
		if _, err := r.handleAnyWatch(ctx, fx.clock.Now(), w, newStore(MetaNamespaceKeyFunc), "1", false, r.setLastSyncResourceVersion, nil); !errors.Is(err, errorStopRequested) {
			t.Fatalf("handleAnyWatch after the stop: %v, want errorStopRequested", err)
		}
	}
}

// ★ TestReflectorWatchHandler: events of the wrong type are skipped, the
// others applied, and the last event's resourceVersion wins.
func TestReflectorWatchHandler(t *testing.T) {
	store := newStore(MetaNamespaceKeyFunc)
	r, fx := newFixture(newScriptedLW(nil, nil), ReflectorOptions{})
	must(t, store.Add(mkObj("foo", 1)))
	must(t, store.Add(mkObj("bar", 2)))
	w := closedWatch(
		watch.Event{Type: watch.Added, Object: &metav1.Status{}},
		deleted(mkObj("foo", 3)),
		modified(mkObj("bar", 55)),
		added(mkObj("baz", 32)),
	)
	_, err := r.handleAnyWatch(context.Background(), fx.clock.Now(), w, store, "1", false, r.setLastSyncResourceVersion, nil)
	if err != nil {
		t.Fatalf("handleAnyWatch: %v", err)
	}
	if got, want := keysOf(t, store.List()), []string{"bar@55", "baz@32"}; !reflect.DeepEqual(got, want) {
		t.Errorf("store = %v, want %v", got, want)
	}
	if got := r.LastSyncResourceVersion(); got != "32" {
		t.Errorf("LastSyncResourceVersion = %q, want 32 (the last event wins)", got)
	}
	if n := fx.errs.matching(func(err error) bool { return err != nil }); n != 1 {
		t.Errorf("%d errors reported, want 1 for the rejected event", n)
	}
}

// A watch opened at "" or "0" does not take resourceVersions from its
// synthetic Added events, only from the first other event on.
func TestReflectorUntrustedAddedEvents(t *testing.T) {
	for _, opened := range []string{"", "0"} {
		r, _ := newFixture(newScriptedLW(nil, nil), ReflectorOptions{})
		store := newStore(MetaNamespaceKeyFunc)
		r.setLastSyncResourceVersion("5")
		w := closedWatch(added(mkObj("a", 9)), added(mkObj("b", 3)))
		if _, err := r.handleAnyWatch(context.Background(), time.Now(), w, store, opened, false, r.setLastSyncResourceVersion, nil); err != nil {
			t.Fatal(err)
		}
		if got := r.LastSyncResourceVersion(); got != "5" {
			t.Errorf("opened at %q: Added-only events moved the RV to %q", opened, got)
		}
		w = closedWatch(added(mkObj("a", 9)), modified(mkObj("b", 11)), added(mkObj("c", 12)))
		if _, err := r.handleAnyWatch(context.Background(), time.Now(), w, store, opened, false, r.setLastSyncResourceVersion, nil); err != nil {
			t.Fatal(err)
		}
		if got := r.LastSyncResourceVersion(); got != "12" {
			t.Errorf("opened at %q: RV %q after a Modified, want 12", opened, got)
		}
	}
}

func TestReflectorListAndWatch(t *testing.T) {
	lw := newScriptedLW(
		[]listResult{{list: mkList("1", "")}},
		[]watchResult{{w: closedWatch(
			added(mkObj("foo", 2)), added(mkObj("bar", 3)), added(mkObj("baz", 4)),
			added(mkObj("qux", 5)), added(mkObj("zoo", 6)),
		)}},
	)
	healthy := 0
	r, fx := newFixture(lw, ReflectorOptions{HealthyHandler: func() { healthy++ }})
	runUntilExhausted(t, r, lw)

	if got := lw.listOpts; len(got) != 1 || got[0].ResourceVersion != "0" || got[0].Limit != 500 {
		t.Errorf("list options = %+v, want one list at RV 0 with limit 500", got)
	}
	if got, want := lw.watchRVs(), []string{"1", "6"}; !reflect.DeepEqual(got, want) {
		t.Errorf("watch RVs = %v, want %v (re-watch from the last event, no relist)", got, want)
	}
	for _, o := range lw.watchOpts {
		if !o.AllowWatchBookmarks || o.TimeoutSeconds == nil || *o.TimeoutSeconds < 300 || *o.TimeoutSeconds >= 600 {
			t.Errorf("watch options %+v: want bookmarks and a timeout in [300, 600)", o)
		}
		if o.SendInitialEvents != nil {
			t.Errorf("plain watch asked for initial events")
		}
	}
	want := []string{"[Added foo@2]", "[Added bar@3]", "[Added baz@4]", "[Added qux@5]", "[Added zoo@6]"}
	if got := fx.drain(t); !reflect.DeepEqual(got, want) {
		t.Errorf("pops = %v, want %v", got, want)
	}
	if healthy != 1 {
		t.Errorf("healthy reported %d times, want 1: the first watch delivered events; the list does not count, nor the second watch, open for no time on the fake clock", healthy)
	}
	if !fx.fifo.HasSynced() {
		t.Error("FIFO not synced after an empty initial list")
	}
}

// A relist after a 410 replaces the store: Replaced for objects still
// there, tombstones for the ones that vanished while the watch was down.
func TestReflectorRelistAfterExpiredMakesTombstones(t *testing.T) {
	lw := newScriptedLW(
		[]listResult{
			{list: mkList("10", "", mkObj("a", 1), mkObj("b", 2), mkObj("c", 3))},
			{list: mkList("20", "", mkObj("a", 15), mkObj("c", 3), mkObj("d", 16))},
		},
		[]watchResult{{w: closedWatch(modified(mkObj("a", 11)), statusEvent(expiredErr()))}},
	)
	r, fx := newFixture(lw, ReflectorOptions{})
	ctx := context.Background()
	must(t, r.list(ctx))
	if got, want := fx.drain(t), []string{"[Replaced a@1]", "[Replaced b@2]", "[Replaced c@3]"}; !reflect.DeepEqual(got, want) {
		t.Errorf("initial list pops = %v, want %v", got, want)
	}
	// The watch ends with 410: watch returns nil, asking for a relist.
	if err := r.watch(ctx, nil, nil); err != nil {
		t.Fatalf("watch: %v", err)
	}
	if got := fx.drain(t); !reflect.DeepEqual(got, []string{"[Updated a@11]"}) {
		t.Errorf("watch pops = %v", got)
	}
	if n := fx.errs.matching(IsExpired); n != 1 {
		t.Errorf("expired reported %d times, want 1", n)
	}
	must(t, r.list(ctx))
	if got, want := lw.listRVs(), []string{"0", "11"}; !reflect.DeepEqual(got, want) {
		t.Errorf("list RVs = %v, want %v (relist from the last RV seen)", got, want)
	}
	want := []string{"[Replaced a@15]", "[Replaced c@3]", "[Replaced d@16]", "[Deleted DFSU{b, b@2}]"}
	if got := fx.drain(t); !reflect.DeepEqual(got, want) {
		t.Errorf("relist pops = %v, want %v", got, want)
	}
	if got := r.LastSyncResourceVersion(); got != "20" {
		t.Errorf("LastSyncResourceVersion = %q, want 20", got)
	}
}

// ★ TestNoRelistOnTooManyRequests: 429 on the watch request backs off and
// re-watches; it never relists.
func TestReflectorNoRelistOnTooManyRequests(t *testing.T) {
	lw := newScriptedLW(
		[]listResult{{list: mkList("1", "")}},
		[]watchResult{{err: tooManyErr()}, {err: tooManyErr()}, {err: tooManyErr()}, {err: tooManyErr()}},
	)
	r, fx := newFixture(lw, ReflectorOptions{})
	runUntilExhausted(t, r, lw)
	if n := len(lw.listOpts); n != 1 {
		t.Errorf("%d lists, want 1", n)
	}
	if got, want := lw.watchRVs(), []string{"1", "1", "1", "1", "1"}; !reflect.DeepEqual(got, want) {
		t.Errorf("watch RVs = %v, want %v", got, want)
	}
	if n := fx.backoff.count(); n != 4 {
		t.Errorf("%d backoffs, want 4", n)
	}
}

// TestBackoffOnTooManyRequests: a 429 on the request and a 429 inside the
// stream both back off, without relisting.
func TestReflectorBackoffOnTooManyRequests(t *testing.T) {
	lw := newScriptedLW(
		[]listResult{{list: mkList("1", "")}},
		[]watchResult{{err: tooManyErr()}, {w: closedWatch(added(mkObj("a", 2)), statusEvent(tooManyErr()))}},
	)
	r, fx := newFixture(lw, ReflectorOptions{})
	runUntilExhausted(t, r, lw)
	if n := fx.backoff.count(); n != 2 {
		t.Errorf("%d backoffs, want 2", n)
	}
	if n := len(lw.listOpts); n != 1 {
		t.Errorf("%d lists, want 1", n)
	}
	if got, want := lw.watchRVs(), []string{"1", "1", "2"}; !reflect.DeepEqual(got, want) {
		t.Errorf("watch RVs = %v, want %v", got, want)
	}
}

// A watch answered "Too large resource version" (504, cause
// ResourceVersionTooLarge) is not retried at the same resourceVersion: the
// reflector relists from it, then, if the list gets the same answer, with
// a consistent list (resourceVersion "").
func TestReflectorTooLargeResourceVersionOnWatchRelists(t *testing.T) {
	lw := newScriptedLW(
		[]listResult{{list: mkList("7", "")}, {err: tooLargeRVErr()}, {list: mkList("9", "")}},
		[]watchResult{{err: tooLargeRVErr()}},
	)
	r, _ := newFixture(lw, ReflectorOptions{})
	runUntilExhausted(t, r, lw)
	if got, want := lw.listRVs(), []string{"0", "7", ""}; !reflect.DeepEqual(got, want) {
		t.Errorf("list RVs = %v, want %v", got, want)
	}
	if got, want := lw.watchRVs(), []string{"7", "9"}; !reflect.DeepEqual(got, want) {
		t.Errorf("watch RVs = %v, want %v (never the same one again)", got, want)
	}
}

// TestReflectorHistoryRewritten: etcd restored without a bump — the watch
// at RV 90 is too large for the server, the relist at 90 too, the
// consistent list comes back at 40: reported once, and the watch goes on
// from 40. A relist that moves forward reports nothing.
func TestReflectorHistoryRewritten(t *testing.T) {
	lw := newScriptedLW(
		[]listResult{{list: mkList("90", "")}, {err: tooLargeRVErr()}, {list: mkList("40", "")}, {list: mkList("95", "")}},
		[]watchResult{{err: tooLargeRVErr()}, {err: apierrors.NewResourceExpired("too old")}},
	)
	r, fx := newFixture(lw, ReflectorOptions{})
	runUntilExhausted(t, r, lw)
	if got, want := lw.watchRVs(), []string{"90", "40", "95"}; !reflect.DeepEqual(got, want) {
		t.Errorf("watch RVs = %v, want %v", got, want)
	}
	var rewritten *HistoryRewrittenError
	if n := fx.errs.matching(func(err error) bool { return errors.As(err, &rewritten) }); n != 1 {
		t.Fatalf("history rewrites reported %d times, want 1", n)
	}
	if rewritten.Before != "90" || rewritten.After != "40" {
		t.Errorf("reported %+v, want from 90 to 40", rewritten)
	}
}

// TestReflectorHistoryRewrittenAfterReconnect: the server was unreachable
// and comes back over an etcd restored without a bump; the re-watch at 90
// is accepted (it would wait silently for a future the server has not
// seen), but the probe after the reconnect finds the server at 40: a
// consistent relist follows, and the rewrite is reported.
func TestReflectorHistoryRewrittenAfterReconnect(t *testing.T) {
	lw := newScriptedLW(
		[]listResult{{list: mkList("90", "")}, {list: mkList("40", "")}, {list: mkList("41", "")}},
		[]watchResult{{err: connRefusedErr()}, {w: watch.NewFake()}},
	)
	r, fx := newFixture(lw, ReflectorOptions{})
	runUntilExhausted(t, r, lw)
	var got []string
	for _, o := range lw.optsOfLists() {
		got = append(got, fmt.Sprintf("rv=%q limit=%d", o.ResourceVersion, o.Limit))
	}
	if want := []string{`rv="0" limit=500`, `rv="" limit=1`, `rv="" limit=500`}; !reflect.DeepEqual(got, want) {
		t.Errorf("lists %v, want %v (the list, the probe, a consistent relist)", got, want)
	}
	if got, want := lw.watchRVs(), []string{"90", "90", "41"}; !reflect.DeepEqual(got, want) {
		t.Errorf("watch RVs = %v, want %v", got, want)
	}
	var rewritten *HistoryRewrittenError
	if n := fx.errs.matching(func(err error) bool { return errors.As(err, &rewritten) }); n != 1 || rewritten.Before != "90" || rewritten.After != "41" {
		t.Errorf("history rewrites reported %d times (%+v), want once, 90 → 41", n, rewritten)
	}
}

// tooLargeRVErr is the server's answer to a request at a resourceVersion
// it has not reached.
func tooLargeRVErr() error {
	err := apierrors.NewTimeoutError("Too large resource version", 1)
	err.ErrStatus.Details.Causes = []metav1.StatusCause{{Type: metav1.CauseTypeResourceVersionTooLarge, Message: "Too large resource version"}}
	return err
}

func TestReflectorRetriableWatchErrorsDoNotRelist(t *testing.T) {
	cases := []struct {
		name string
		err  error
	}{
		{"connection refused", connRefusedErr()},
		{"timeout", fmt.Errorf("Get \"https://127.0.0.1:1/api\": %w", timeoutErr{})},
		{"service unavailable", apierrors.NewServiceUnavailable("starting")},
		{"internal error", apierrors.NewInternalError(fmt.Errorf("etcd"))},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			lw := newScriptedLW(
				[]listResult{{list: mkList("7", "")}},
				[]watchResult{{err: tc.err}, {err: tc.err}},
			)
			r, fx := newFixture(lw, ReflectorOptions{})
			runUntilExhausted(t, r, lw)
			// One list, and after the re-watch one probe of the server's
			// history (a consistent list of one object).
			lists, probes := 0, 0
			for _, o := range lw.optsOfLists() {
				if o.Limit == 1 && o.ResourceVersion == "" {
					probes++
				} else {
					lists++
				}
			}
			if lists != 1 || probes != 1 {
				t.Errorf("%d lists and %d probes, want 1 and 1", lists, probes)
			}
			if got, want := lw.watchRVs(), []string{"7", "7", "7"}; !reflect.DeepEqual(got, want) {
				t.Errorf("watch RVs = %v, want %v", got, want)
			}
			if n := fx.backoff.count(); n != 2 {
				t.Errorf("%d backoffs, want 2", n)
			}
			if n := fx.errs.matching(func(error) bool { return true }); n != 2 {
				t.Errorf("%d errors reported, want 2", n)
			}
		})
	}
}

func TestReflectorOtherWatchRequestErrorRelists(t *testing.T) {
	lw := newScriptedLW(
		[]listResult{{list: mkList("7", "")}, {list: mkList("8", "")}},
		[]watchResult{{err: apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "", fmt.Errorf("no"))}},
	)
	r, fx := newFixture(lw, ReflectorOptions{})
	runUntilExhausted(t, r, lw)
	if got, want := lw.listRVs(), []string{"0", "7"}; !reflect.DeepEqual(got, want) {
		t.Errorf("list RVs = %v, want %v", got, want)
	}
	if n := fx.errs.matching(apierrors.IsForbidden); n != 1 {
		t.Errorf("Forbidden reported %d times, want 1", n)
	}
}

func TestReflectorVeryShortWatchRelists(t *testing.T) {
	lw := newScriptedLW(
		[]listResult{{list: mkList("1", "")}, {list: mkList("2", "")}},
		[]watchResult{{w: closedWatch()}},
	)
	r, fx := newFixture(lw, ReflectorOptions{})
	runUntilExhausted(t, r, lw)
	var short *VeryShortWatchError
	if n := fx.errs.matching(func(err error) bool { return errorsAs(err, &short) }); n != 1 {
		t.Errorf("very short watch reported %d times, want 1", n)
	}
	if got, want := lw.listRVs(), []string{"0", "1"}; !reflect.DeepEqual(got, want) {
		t.Errorf("list RVs = %v, want %v", got, want)
	}
}

// An internal error inside the stream relists (client-go's
// TestReflectorReplacesStoreOnUnsafeDelete).
func TestReflectorInternalErrorInStream(t *testing.T) {
	internal := statusEvent(apierrors.NewInternalError(fmt.Errorf("StoreReadError")))
	t.Run("relists", func(t *testing.T) {
		lw := newScriptedLW(
			[]listResult{{list: mkList("1", "", mkObj("ghost", 1))}, {list: mkList("5", "")}},
			[]watchResult{{w: closedWatch(internal)}},
		)
		r, fx := newFixture(lw, ReflectorOptions{})
		ctx := context.Background()
		must(t, r.list(ctx))
		fx.drain(t)
		if err := r.watch(ctx, nil, nil); err != nil {
			t.Fatal(err)
		}
		must(t, r.list(ctx))
		if got := fx.drain(t); !reflect.DeepEqual(got, []string{"[Deleted DFSU{ghost, ghost@1}]"}) {
			t.Errorf("pops = %v, want the ghost's tombstone", got)
		}
	})
}

func TestReflectorBookmarkAdvancesResourceVersion(t *testing.T) {
	lw := newScriptedLW(
		[]listResult{{list: mkList("1", "")}},
		[]watchResult{{w: closedWatch(bookmark("7", ""), added(mkObj("a", 8)), bookmark("9", ""))}},
	)
	r, fx := newFixture(lw, ReflectorOptions{})
	runUntilExhausted(t, r, lw)
	if got, want := lw.watchRVs(), []string{"1", "9"}; !reflect.DeepEqual(got, want) {
		t.Errorf("watch RVs = %v, want %v", got, want)
	}
	if got := fx.drain(t); !reflect.DeepEqual(got, []string{"[Added a@8]"}) {
		t.Errorf("pops = %v: bookmarks must not reach the store", got)
	}
}

func TestReflectorInitialResourceVersionSkipsList(t *testing.T) {
	lw := newScriptedLW(
		[]listResult{{list: mkList("60", "", mkObj("a", 55))}},
		[]watchResult{{w: closedWatch(modified(mkObj("a", 50)), statusEvent(expiredErr()))}},
	)
	r, fx := newFixture(lw, ReflectorOptions{InitialResourceVersion: "42"})
	runUntilExhausted(t, r, lw)
	if got, want := lw.watchRVs(), []string{"42", "60"}; !reflect.DeepEqual(got, want) {
		t.Errorf("watch RVs = %v, want %v", got, want)
	}
	if got, want := lw.listRVs(), []string{"50"}; !reflect.DeepEqual(got, want) {
		t.Errorf("list RVs = %v, want %v (only the relist after 410)", got, want)
	}
	if got := fx.drain(t); !reflect.DeepEqual(got, []string{"[Updated a@50, Replaced a@55]"}) {
		t.Errorf("pops = %v", got)
	}
}

func TestReflectorPagination(t *testing.T) {
	objs := make([]*testObj, 10)
	for i := range objs {
		objs[i] = mkObj(fmt.Sprintf("o%02d", i), i+1)
	}
	lw := newScriptedLW([]listResult{
		{list: mkList("10", "c1", objs[0:4]...)},
		{list: mkList("", "c2", objs[4:8]...)},
		{list: mkList("", "", objs[8:]...)},
	}, nil)
	r, fx := newFixture(lw, ReflectorOptions{WatchListPageSize: 4})
	must(t, r.list(context.Background()))
	if n := len(lw.listOpts); n != 3 {
		t.Fatalf("%d list calls, want 3", n)
	}
	for i, want := range []metav1.ListOptions{
		{ResourceVersion: "0", Limit: 4},
		{Continue: "c1", Limit: 4},
		{Continue: "c2", Limit: 4},
	} {
		if got := lw.listOpts[i]; !reflect.DeepEqual(got, want) {
			t.Errorf("page %d options = %+v, want %+v", i+1, got, want)
		}
	}
	if got := fx.drain(t); len(got) != 10 || got[9] != "[Replaced o09@10]" {
		t.Errorf("pops = %v", got)
	}
	if got := r.LastSyncResourceVersion(); got != "10" {
		t.Errorf("RV = %q, want the first page's 10", got)
	}
}

func TestReflectorListPageSizes(t *testing.T) {
	// A relist at a specific RV is not paginated (served by the watch
	// cache), unless the first RV=0 list came back paginated.
	t.Run("not paginated at a specific RV", func(t *testing.T) {
		lw := newScriptedLW([]listResult{{list: mkList("11", "")}}, nil)
		r, _ := newFixture(lw, ReflectorOptions{})
		r.setLastSyncResourceVersion("10")
		must(t, r.list(context.Background()))
		if got := lw.listOpts[0]; got.ResourceVersion != "10" || got.Limit != 0 {
			t.Errorf("options = %+v, want RV 10 limit 0", got)
		}
	})
	t.Run("negative page size switches paging off", func(t *testing.T) {
		lw := newScriptedLW([]listResult{{list: mkList("11", "")}}, nil)
		r, _ := newFixture(lw, ReflectorOptions{WatchListPageSize: -1})
		must(t, r.list(context.Background()))
		if got := lw.listOpts[0]; got.ResourceVersion != "0" || got.Limit != 0 {
			t.Errorf("options = %+v, want RV 0 limit 0", got)
		}
	})
	t.Run("paginated first list keeps paging", func(t *testing.T) {
		lw := newScriptedLW([]listResult{
			{list: mkList("10", "c", mkObj("a", 1))},
			{list: mkList("", "", mkObj("b", 1))},
			{list: mkList("12", "")},
		}, nil)
		r, _ := newFixture(lw, ReflectorOptions{})
		must(t, r.list(context.Background()))
		must(t, r.list(context.Background()))
		if got := lw.listOpts[2]; got.ResourceVersion != "10" || got.Limit != 500 {
			t.Errorf("relist options = %+v, want RV 10 limit 500", got)
		}
	})
}

// TestReflectorFullListIfExpired: an expired continue token falls back to
// a full list at the requested RV.
func TestReflectorFullListIfExpired(t *testing.T) {
	lw := newScriptedLW([]listResult{
		{list: mkList("10", "c1", mkObj("a", 1))},
		{err: expiredErr()},
		{list: mkList("10", "", mkObj("a", 1), mkObj("b", 2))},
	}, nil)
	r, fx := newFixture(lw, ReflectorOptions{WatchListPageSize: 1})
	r.setLastSyncResourceVersion("10")
	must(t, r.list(context.Background()))
	if got, want := lw.listRVs(), []string{"10", "", "10"}; !reflect.DeepEqual(got, want) {
		t.Errorf("list RVs = %v, want %v", got, want)
	}
	if got := lw.listOpts[2]; got.Limit != 0 || got.Continue != "" {
		t.Errorf("fallback options = %+v, want a full list", got)
	}
	if got := fx.drain(t); !reflect.DeepEqual(got, []string{"[Replaced a@1]", "[Replaced b@2]"}) {
		t.Errorf("pops = %v", got)
	}
}

// ★ TestReflectorExpiredExactResourceVersion / FullListIfTooLarge: a list
// failing with 410 or "too large RV" is retried at once from "".
func TestReflectorListRetriesFromEmptyRV(t *testing.T) {
	tooLargeCause := apierrors.NewTimeoutError("", 1)
	tooLargeCause.ErrStatus.Details.Causes = []metav1.StatusCause{{Type: metav1.CauseTypeResourceVersionTooLarge}}
	tooLargeCauseMessage := apierrors.NewTimeoutError("", 1)
	tooLargeCauseMessage.ErrStatus.Details.Causes = []metav1.StatusCause{{Message: "Too large resource version"}}
	tooLargeMessage := apierrors.NewTimeoutError("Too large resource version", 1)
	for name, err := range map[string]error{
		"expired":                  expiredErr(),
		"gone":                     apierrors.NewGone("gone"), //nolint:staticcheck // servers before 1.18 sent 410 Gone
		"too large cause":          tooLargeCause,
		"too large cause message":  tooLargeCauseMessage,
		"too large in the message": tooLargeMessage,
	} {
		t.Run(name, func(t *testing.T) {
			lw := newScriptedLW([]listResult{{err: err}, {list: mkList("30", "")}, {list: mkList("31", "")}}, nil)
			r, _ := newFixture(lw, ReflectorOptions{})
			r.setLastSyncResourceVersion("20")
			must(t, r.list(context.Background()))
			must(t, r.list(context.Background()))
			if got, want := lw.listRVs(), []string{"20", "", "30"}; !reflect.DeepEqual(got, want) {
				t.Errorf("list RVs = %v, want %v", got, want)
			}
		})
	}
}

func TestReflectorListErrors(t *testing.T) {
	lw := newScriptedLW([]listResult{{err: apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "", fmt.Errorf("rbac"))}, {list: &metav1.Table{}}, {list: &metav1.Status{}}}, nil)
	r, _ := newFixture(lw, ReflectorOptions{TypeDescription: "configmaps"})
	err := r.list(context.Background())
	if !apierrors.IsForbidden(err) || err.Error()[:len("failed to list configmaps: ")] != "failed to list configmaps: " {
		t.Errorf("list error = %v, want a wrapped Forbidden", err)
	}
	if err := r.list(context.Background()); err == nil {
		t.Error("a Table list was accepted")
	}
	if err := r.list(context.Background()); err == nil {
		t.Error("a non-list was accepted")
	}
}

func TestReflectorWatchTimeout(t *testing.T) {
	cases := []struct {
		min        time.Duration
		rand       float64
		wantSecond int64
	}{
		{0, 0, 300},
		{0, 0.999, 599},
		{30 * time.Minute, 0, 1800},
		{30 * time.Minute, 0.5, 2700},
		{time.Second, 0.5, 1},
	}
	for _, tc := range cases {
		r := NewReflector(newScriptedLW(nil, nil), newStore(MetaNamespaceKeyFunc), ReflectorOptions{MinWatchTimeout: tc.min, Rand: func() float64 { return tc.rand }})
		if got := *r.watchTimeoutSeconds(); got != tc.wantSecond {
			t.Errorf("min %v rand %v: timeout %d, want %d", tc.min, tc.rand, got, tc.wantSecond)
		}
	}
}

func TestReflectorStreamingList(t *testing.T) {
	t.Run("end bookmark syncs and the same watch goes on", func(t *testing.T) {
		lw := newScriptedLW(nil, []watchResult{{w: closedWatch(
			added(mkObj("a", 1)), added(mkObj("b", 2)), bookmark("3", "true"), modified(mkObj("a", 4)),
		)}})
		r, fx := newFixture(lw, ReflectorOptions{UseWatchList: true})
		runUntilExhausted(t, r, lw)
		if n := len(lw.listOpts); n != 0 {
			t.Errorf("%d lists, want none", n)
		}
		first := lw.watchOpts[0]
		if first.ResourceVersion != "" || first.SendInitialEvents == nil || !*first.SendInitialEvents ||
			first.ResourceVersionMatch != metav1.ResourceVersionMatchNotOlderThan || !first.AllowWatchBookmarks {
			t.Errorf("streaming list options = %+v", first)
		}
		if got, want := lw.watchRVs(), []string{"", "4"}; !reflect.DeepEqual(got, want) {
			t.Errorf("watch RVs = %v, want %v", got, want)
		}
		if lw.watchOpts[1].SendInitialEvents != nil {
			t.Error("the re-watch asked for initial events again")
		}
		if got, want := fx.drain(t), []string{"[Replaced a@1, Updated a@4]", "[Replaced b@2]"}; !reflect.DeepEqual(got, want) {
			t.Errorf("pops = %v, want %v", got, want)
		}
	})
	t.Run("closed before the bookmark restarts the stream", func(t *testing.T) {
		lw := newScriptedLW(nil, []watchResult{
			{w: closedWatch(added(mkObj("a", 1)))},
			{w: closedWatch(added(mkObj("a", 1)), deleted(mkObj("a", 2)), added(mkObj("b", 3)), bookmark("3", "true"))},
		})
		r, fx := newFixture(lw, ReflectorOptions{UseWatchList: true})
		runUntilExhausted(t, r, lw)
		if got, want := lw.watchRVs(), []string{"", "", "3"}; !reflect.DeepEqual(got, want) {
			t.Errorf("watch RVs = %v, want %v", got, want)
		}
		if got := fx.drain(t); !reflect.DeepEqual(got, []string{"[Replaced b@3]"}) {
			t.Errorf("pops = %v", got)
		}
	})
	t.Run("an error falls back to list and watch", func(t *testing.T) {
		lw := newScriptedLW(
			[]listResult{{list: mkList("1", "", mkObj("a", 1))}},
			[]watchResult{{err: apierrors.NewBadRequest("sendInitialEvents is forbidden")}},
		)
		r, fx := newFixture(lw, ReflectorOptions{UseWatchList: true})
		runUntilExhausted(t, r, lw)
		var fallback *WatchListFallbackError
		if n := fx.errs.matching(func(err error) bool { return errorsAs(err, &fallback) && apierrors.IsBadRequest(err) }); n != 1 {
			t.Errorf("fallback reported %d times, want 1", n)
		}
		if got, want := lw.listRVs(), []string{"0"}; !reflect.DeepEqual(got, want) {
			t.Errorf("list RVs = %v, want %v", got, want)
		}
		if got, want := lw.watchRVs(), []string{"", "1"}; !reflect.DeepEqual(got, want) {
			t.Errorf("watch RVs = %v, want %v", got, want)
		}
		if got := fx.drain(t); !reflect.DeepEqual(got, []string{"[Replaced a@1]"}) {
			t.Errorf("pops = %v", got)
		}
	})
	t.Run("429 retries the stream", func(t *testing.T) {
		lw := newScriptedLW(nil, []watchResult{{err: tooManyErr()}, {err: tooManyErr()}, {w: closedWatch(added(mkObj("a", 1)), bookmark("2", "true"), added(mkObj("b", 3)))}})
		r, fx := newFixture(lw, ReflectorOptions{UseWatchList: true})
		runUntilExhausted(t, r, lw)
		if got, want := lw.watchRVs(), []string{"", "", "", "3"}; !reflect.DeepEqual(got, want) {
			t.Errorf("watch RVs = %v, want %v", got, want)
		}
		if n := fx.backoff.count(); n != 2 {
			t.Errorf("%d backoffs, want 2", n)
		}
	})
	t.Run("expired forgets the RV", func(t *testing.T) {
		lw := newScriptedLW(nil, []watchResult{{err: expiredErr()}, {w: closedWatch(bookmark("2", "true"), added(mkObj("a", 2)))}})
		r, _ := newFixture(lw, ReflectorOptions{UseWatchList: true})
		r.setLastSyncResourceVersion("1")
		runUntilExhausted(t, r, lw)
		if got, want := lw.watchRVs(), []string{"1", "", "2"}; !reflect.DeepEqual(got, want) {
			t.Errorf("watch RVs = %v, want %v", got, want)
		}
	})
	t.Run("annotation false never syncs", func(t *testing.T) {
		lw := newScriptedLW(nil, []watchResult{{w: closedWatch(added(mkObj("a", 1)), bookmark("2", "false"))}})
		r, fx := newFixture(lw, ReflectorOptions{UseWatchList: true})
		runUntilExhausted(t, r, lw)
		if fx.fifo.HasSynced() || fx.fifo.Len() != 0 {
			t.Errorf("synced=%v len=%d: a false annotation ended the stream", fx.fifo.HasSynced(), fx.fifo.Len())
		}
		if got := r.LastSyncResourceVersion(); got != "" {
			t.Errorf("RV = %q after Added-only events, want empty", got)
		}
	})
}

// resyncStore records Resync calls on a channel and can fail them.
type resyncStore struct {
	Store
	calls chan struct{}
	err   error
}

func (s *resyncStore) Resync() error {
	s.calls <- struct{}{}
	return s.err
}

// TestReflectorHealthyOnlyWhenAWatchHolds: a successful list and a watch
// request that fails do not say the connection is back; a watch that stays
// open for watchHeldFor does, once.
func TestReflectorHealthyOnlyWhenAWatchHolds(t *testing.T) {
	lw := newScriptedLW(
		// The initial list; after the failed watch request, the check for
		// a rewritten history.
		[]listResult{{list: mkList("1", "")}, {list: mkList("1", "")}},
		[]watchResult{{err: connRefusedErr()}},
	)
	var healthy atomic.Int32
	r, fx := newFixture(lw, ReflectorOptions{HealthyHandler: func() { healthy.Add(1) }})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		r.Run(ctx)
		close(done)
	}()
	defer func() {
		cancel()
		<-done
	}()
	select {
	case <-lw.exhausted: // the retried watch is open, and stays open
	case <-time.After(testTimeout):
		t.Fatal("the reflector did not retry the watch")
	}
	waitForTimer(t, fx.clock)
	if n := healthy.Load(); n != 0 {
		t.Fatalf("healthy reported %d times after a list and a failed watch request, want 0", n)
	}
	fx.clock.Step(watchHeldFor - time.Millisecond)
	if n := healthy.Load(); n != 0 {
		t.Fatalf("healthy reported %d times before the watch held for %s", n, watchHeldFor)
	}
	fx.clock.Step(time.Millisecond)
	deadline := time.Now().Add(testTimeout)
	for healthy.Load() != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("healthy reported %d times once the watch held, want 1", healthy.Load())
		}
		runtime.Gosched()
	}
	fx.clock.Step(time.Hour)
	if n := healthy.Load(); n != 1 {
		t.Errorf("healthy reported %d times for one watch, want 1", n)
	}
}

// waitForTimer returns once c has a timer waiting; it yields, not sleeps.
func waitForTimer(t *testing.T, c *clocktesting.FakeClock) {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for !c.HasWaiters() {
		if time.Now().After(deadline) {
			t.Fatal("no timer was started")
		}
		runtime.Gosched()
	}
}

func TestReflectorResync(t *testing.T) {
	t.Run("ticks call Resync", func(t *testing.T) {
		c := clocktesting.NewFakeClock(time.Unix(0, 0))
		store := &resyncStore{Store: newStore(MetaNamespaceKeyFunc), calls: make(chan struct{}, 10)}
		r := NewReflector(newScriptedLW(nil, nil), store, ReflectorOptions{ResyncPeriod: time.Second, Clock: c})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error)
		go func() { done <- r.watchWithResync(ctx, watch.NewFake()) }()
		for i := 0; i < 3; i++ {
			waitForTimer(t, c)
			c.Step(time.Second)
			select {
			case <-store.calls:
			case <-time.After(testTimeout):
				t.Fatalf("resync %d did not happen", i+1)
			}
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("watchWithResync after cancel: %v", err)
		}
	})
	t.Run("a failed Resync ends the watch", func(t *testing.T) {
		c := clocktesting.NewFakeClock(time.Unix(0, 0))
		store := &resyncStore{Store: newStore(MetaNamespaceKeyFunc), calls: make(chan struct{}, 10), err: fmt.Errorf("boom")}
		errs := &errorRecorder{}
		r := NewReflector(newScriptedLW(nil, nil), store, ReflectorOptions{ResyncPeriod: time.Second, Clock: c, ErrorHandler: errs.record})
		done := make(chan error)
		go func() { done <- r.watchWithResync(context.Background(), watch.NewFake()) }()
		waitForTimer(t, c)
		c.Step(time.Second)
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("watchWithResync = %v, want nil (a relist follows)", err)
			}
		case <-time.After(testTimeout):
			t.Fatal("the watch did not end")
		}
		if n := errs.matching(func(err error) bool { return err != nil }); n != 1 {
			t.Errorf("%d errors reported, want the resync failure", n)
		}
	})
}

func TestDefaultBackoff(t *testing.T) {
	c := clocktesting.NewFakeClock(time.Unix(0, 0))
	b := newDelayBackoff(c)
	// Each delay is the un-jittered one plus up to as much again: 800ms
	// doubling, capped at 30s.
	base := backoffInitial
	for i := 0; i < 8; i++ {
		d := b.delay()
		if d < base || d >= 2*base {
			t.Errorf("delay %d = %v, want in [%v, %v)", i, d, base, 2*base)
		}
		base = min(2*base, backoffCap)
	}
	// Two quiet minutes start over.
	c.Step(backoffResetAfter + time.Second)
	if d := b.delay(); d < backoffInitial || d >= 2*backoffInitial {
		t.Errorf("after a quiet spell: %v, want in [%v, %v)", d, backoffInitial, 2*backoffInitial)
	}
	timer := b.Backoff()
	if !c.HasWaiters() {
		t.Error("Backoff did not start a timer on the clock")
	}
	timer.Stop()
}

func TestReflectorRunStopsOnCancel(t *testing.T) {
	lw := newScriptedLW(nil, nil)
	r, _ := newFixture(lw, ReflectorOptions{})
	runUntilExhausted(t, r, lw)
	if n := len(lw.watchOpts); n != 0 {
		t.Errorf("%d watches after a list that never returned", n)
	}
}

func TestReflectorDefaults(t *testing.T) {
	r := NewReflector(newScriptedLW(nil, nil), newStore(MetaNamespaceKeyFunc), ReflectorOptions{ExpectedType: &testObj{}})
	if r.Name() != "*cache.testObj" || r.minWatchTimeout != defaultMinWatchTimeout {
		t.Errorf("defaults: name %q timeout %v", r.Name(), r.minWatchTimeout)
	}
	if _, ok := r.backoff.(*delayBackoff); !ok {
		t.Errorf("default backoff is %T", r.backoff)
	}
	short := &VeryShortWatchError{Name: "x"}
	if short.Error() == "" {
		t.Error("empty error message")
	}
}

// TestReflectorStreamsListIntoFIFO: with a ListStreamer and a DeltaFIFO,
// the objects of a list can be popped while the list is still being read
// (a batch at a time), as part of the initial list, and the queue is
// synced only after the list is complete and drained. The pops are those
// of Replace.
func TestReflectorStreamsListIntoFIFO(t *testing.T) {
	objs := make([]*testObj, replaceBatchSize+2)
	for i := range objs {
		objs[i] = mkObj(fmt.Sprintf("o%03d", i), i+1)
	}
	lw := &streamingLW{scriptedLW: newScriptedLW([]listResult{{list: mkList("10", "", objs...)}}, nil)}
	r, fx := newFixture(lw, ReflectorOptions{})
	var midway []string
	lw.afterItem = func(i int) {
		if i != replaceBatchSize-1 {
			return // the first batch is queued with the object that fills it
		}
		d, err := fx.fifo.Pop(func(d Deltas, initial bool) error {
			if !initial {
				t.Error("an object popped during the initial list is not in the initial list")
			}
			return processOurs(fx.known, d)
		})
		must(t, err)
		midway = append(midway, describeDeltas(d))
		if fx.fifo.HasSynced() {
			t.Error("synced before the list was complete")
		}
		if n := fx.fifo.Len(); n != replaceBatchSize-1 {
			t.Errorf("%d objects queued after the first pop, want the rest of the first batch, %d", n, replaceBatchSize-1)
		}
	}
	must(t, r.list(context.Background()))
	if !reflect.DeepEqual(midway, []string{"[Replaced o000@1]"}) {
		t.Errorf("popped during the list: %v", midway)
	}
	if fx.fifo.HasSynced() {
		t.Error("synced with objects still queued")
	}
	got := fx.drain(t)
	if len(got) != len(objs)-1 || got[len(got)-1] != fmt.Sprintf("[Replaced o%03d@%d]", len(objs)-1, len(objs)) {
		t.Errorf("%d pops after the list, the last %q", len(got), got[len(got)-1])
	}
	if !fx.fifo.HasSynced() || r.LastSyncResourceVersion() != "10" {
		t.Errorf("synced %v, RV %q", fx.fifo.HasSynced(), r.LastSyncResourceVersion())
	}
}

// TestReflectorStreamedListCutOff: a list cut off midway leaves what it
// queued queued; the next list continues the same Replace, so an object
// still queued is handed out once (the newest version), and one that is
// gone from the new list gets a tombstone — whether it was popped already
// or not. Objects of an unfinished batch were never queued.
func TestReflectorStreamedListCutOff(t *testing.T) {
	lost := errors.New("connection lost")
	first := make([]*testObj, replaceBatchSize+1) // a full batch, then one more that is never queued
	for i := range first {
		first[i] = mkObj(fmt.Sprintf("o%03d", i), 1)
	}
	// o000 is popped during the first list, o001 still queued, o002 and
	// o100 (not queued) are relisted, the rest is gone.
	lw := &streamingLW{scriptedLW: newScriptedLW([]listResult{
		{list: mkList("10", "", first...), err: lost},
		{list: mkList("12", "", mkObj("o001", 2), mkObj("o100", 2), mkObj("z", 2))},
	}, nil)}
	r, fx := newFixture(lw, ReflectorOptions{})
	lw.afterItem = func(i int) {
		if i == replaceBatchSize-1 && len(lw.listOpts) == 1 {
			fx.fifo.Pop(func(d Deltas, _ bool) error { return processOurs(fx.known, d) }) //nolint:errcheck // checked by the pops below
		}
	}
	if err := r.list(context.Background()); !errors.Is(err, lost) {
		t.Fatalf("cut-off list: %v", err)
	}
	if fx.fifo.HasSynced() {
		t.Fatal("synced after a cut-off list")
	}
	must(t, r.list(context.Background()))
	got := fx.drain(t)
	want := map[string]bool{
		"[Replaced o001@2]":                             true, // took the place of o001@1
		"[Replaced o100@2]":                             true,
		"[Replaced z@2]":                                true,
		"[Deleted DFSU{o000, o000@1}]":                  true, // popped, then gone
		"[Replaced o002@1, Deleted DFSU{o002, o002@1}]": true, // queued, then gone
	}
	seen := map[string]bool{}
	for _, p := range got {
		seen[p] = true
	}
	for p := range want {
		if !seen[p] {
			t.Errorf("missing pop %s", p)
		}
	}
	if len(got) != replaceBatchSize+2 { // o001…o099 (99), o100, z, o000's tombstone
		t.Errorf("%d pops, want %d: %v", len(got), replaceBatchSize+2, got)
	}
	keys := fx.known.ListKeys()
	sort.Strings(keys)
	if !reflect.DeepEqual(keys, []string{"o001", "o100", "z"}) {
		t.Errorf("known keys %v, want [o001 o100 z]", keys)
	}
	if !fx.fifo.HasSynced() || r.LastSyncResourceVersion() != "12" {
		t.Errorf("synced %v, RV %q", fx.fifo.HasSynced(), r.LastSyncResourceVersion())
	}
}

// TestReflectorStreamedListRestartsOnExpiredContinue: when the continue
// token expires midway, the full list that follows restarts the streamed
// Replace: objects of the earlier pages are not handed out twice, and
// those no longer listed get tombstones.
func TestReflectorStreamedListRestartsOnExpiredContinue(t *testing.T) {
	lw := &streamingLW{scriptedLW: newScriptedLW([]listResult{
		{list: mkList("10", "c1", mkObj("a", 1), mkObj("b", 2))},
		{err: expiredErr()},
		{list: mkList("11", "", mkObj("a", 3), mkObj("c", 4))},
	}, nil)}
	r, fx := newFixture(lw, ReflectorOptions{WatchListPageSize: 2})
	must(t, r.list(context.Background()))
	want := []string{"[Replaced a@3]", "[Replaced b@2, Deleted DFSU{b, b@2}]", "[Replaced c@4]"}
	if got := fx.drain(t); !reflect.DeepEqual(got, want) {
		t.Errorf("pops:\n got  %v\n want %v", got, want)
	}
}

// TestReflectorListNotStreamable: a ListStreamer that says a list cannot
// be streamed makes the reflector list it whole at once, and from then on.
func TestReflectorListNotStreamable(t *testing.T) {
	notStreamable := fmt.Errorf("unable to decode the list of widgets: %w: kind after items", ErrListNotStreamable)
	lw := &streamingLW{scriptedLW: newScriptedLW([]listResult{
		{list: mkList("10", "", mkObj("a", 1)), err: notStreamable},
		{list: mkList("10", "", mkObj("a", 1), mkObj("b", 2))},
		{list: mkList("11", "", mkObj("a", 1), mkObj("c", 3))},
	}, nil)}
	r, fx := newFixture(lw, ReflectorOptions{})
	must(t, r.list(context.Background()))
	if got := fx.drain(t); !reflect.DeepEqual(got, []string{"[Replaced a@1]", "[Replaced b@2]"}) {
		t.Errorf("pops of the first list: %v", got)
	}
	must(t, r.list(context.Background()))
	if got := fx.drain(t); !reflect.DeepEqual(got, []string{"[Replaced a@1]", "[Replaced c@3]", "[Deleted DFSU{b, b@2}]"}) {
		t.Errorf("pops of the relist: %v", got)
	}
	if lw.eachCalls != 1 || len(lw.listOpts) != 3 {
		t.Errorf("%d ListEach calls of %d lists, want 1 of 3", lw.eachCalls, len(lw.listOpts))
	}
}
