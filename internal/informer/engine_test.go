package informer_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kubectl-deltas/kubectl-deltas/internal/cache"
	"github.com/kubectl-deltas/kubectl-deltas/internal/cache/cachetest"
	"github.com/kubectl-deltas/kubectl-deltas/internal/informer"
	"github.com/kubectl-deltas/kubectl-deltas/internal/printer"
	"github.com/kubectl-deltas/kubectl-deltas/internal/rawobj"
	"github.com/kubectl-deltas/kubectl-deltas/internal/stage"
)

// These tests run the Engine as the command does, with the record stage
// and the text printer, on fake ListerWatchers: a scripted list, and watches
// whose events the test sends. Nothing sleeps: the tests wait on what the
// engine does (a watch opened, a batch handled) and move a fake clock.

var (
	configMaps = informer.Target{
		Resource:  schema.GroupVersionResource{Version: "v1", Resource: "configmaps"},
		Kind:      schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"},
		Namespace: "ns",
	}
	secrets = informer.Target{
		Resource:  schema.GroupVersionResource{Version: "v1", Resource: "secrets"},
		Kind:      schema.GroupVersionKind{Version: "v1", Kind: "Secret"},
		Namespace: "ns",
	}
)

func object(t *testing.T, kind, name, rv string) *rawobj.Object {
	t.Helper()
	js := fmt.Sprintf(`{"apiVersion":"v1","kind":%q,"metadata":{"name":%q,"namespace":"ns","resourceVersion":%q,"uid":"uid-%s"}}`, kind, name, rv, name)
	o, err := rawobj.Parse([]byte(js), rawobj.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// syncBuffer is an output the test may read while the engine writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
	// err, if set, is returned by every Write (EPIPE for a reader that went
	// away).
	err error
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err != nil {
		return 0, b.err
	}
	return b.buf.Write(p)
}

func (b *syncBuffer) lines() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := strings.TrimSpace(b.buf.String())
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// notifySink passes batches to the record Sink and tells the test after
// each one was handled.
type notifySink struct {
	*stage.RecordSink
	handled chan informer.Batch
}

func (s *notifySink) Handle(b informer.Batch) (bool, error) {
	done, err := s.RecordSink.Handle(b)
	s.handled <- b
	return done, err
}

// harness is one Engine under test with its output.
type harness struct {
	t      *testing.T
	engine *informer.Engine
	lws    map[string]*cachetest.ListerWatcher
	out    *syncBuffer
	errOut *syncBuffer
	sink   *notifySink
	clock  *clocktesting.FakeClock
}

type harnessOptions struct {
	stage stage.Options
	limit int
	multi bool
	// backoff, if set, makes the reflectors' backoffs.
	backoff func() cache.BackoffManager
	// keepListed is the engine's Config.KeepListed.
	keepListed func(informer.Target) bool
	// resume is the engine's Config.Resume.
	resume func(informer.Target) (informer.Resumed, bool)
}

// gatedBackoff makes backoffs whose delays end when gate is closed.
func gatedBackoff(gate <-chan struct{}) func() cache.BackoffManager {
	return func() cache.BackoffManager { return gateBackoff{gate: gate} }
}

type gateBackoff struct{ gate <-chan struct{} }

func (b gateBackoff) Backoff() clock.Timer { return &gateTimer{gate: b.gate} }

// gateTimer fires when its gate is closed.
type gateTimer struct {
	gate <-chan struct{}
	once sync.Once
	c    chan time.Time
}

func (g *gateTimer) C() <-chan time.Time {
	g.once.Do(func() {
		g.c = make(chan time.Time, 1)
		go func() {
			<-g.gate
			g.c <- time.Time{}
		}()
	})
	return g.c
}
func (g *gateTimer) Stop() bool               { return true }
func (g *gateTimer) Reset(time.Duration) bool { return true }

func newHarness(t *testing.T, o harnessOptions, lws map[informer.Target]*cachetest.ListerWatcher) *harness {
	t.Helper()
	h := &harness{
		t:      t,
		lws:    map[string]*cachetest.ListerWatcher{},
		out:    &syncBuffer{},
		errOut: &syncBuffer{},
		clock:  clocktesting.NewFakeClock(time.Unix(1000, 0)),
	}
	for target, lw := range lws {
		h.lws[target.ID()] = lw
	}
	h.engine = informer.New(informer.Config{
		NewListerWatcher: func(t informer.Target) cache.ListerWatcher { return h.lws[t.ID()] },
		Clock:            h.clock,
		NewBackoff:       o.backoff,
		KeepListed:       o.keepListed,
		Resume:           o.resume,
	}, h.errOut)
	st, err := stage.NewStage(o.stage)
	if err != nil {
		t.Fatal(err)
	}
	p, err := printer.New(printer.Options{Format: "text", MultiType: o.multi})
	if err != nil {
		t.Fatal(err)
	}
	h.sink = &notifySink{
		RecordSink: stage.NewRecordSink(st, p, h.out, o.limit, h.clock.Now),
		handled:    make(chan informer.Batch, 1024),
	}
	return h
}

func (h *harness) add(target informer.Target, lw *cachetest.ListerWatcher) {
	h.t.Helper()
	h.lws[target.ID()] = lw
	if _, err := h.engine.Add(target); err != nil {
		h.t.Fatal(err)
	}
}

// run starts Run in the background; the returned channel yields its error.
func (h *harness) run(ctx context.Context, opts informer.RunOptions) <-chan error {
	done := make(chan error, 1)
	go func() { done <- h.engine.Run(ctx, h.sink, opts) }()
	return done
}

// waitBatches waits until n more batches were handled.
func (h *harness) waitBatches(n int) []informer.Batch {
	h.t.Helper()
	var got []informer.Batch
	for len(got) < n {
		select {
		case b := <-h.sink.handled:
			got = append(got, b)
		case <-time.After(cachetest.Timeout):
			h.t.Fatalf("handled %d batches, want %d; output so far: %q", len(got), n, h.out.lines())
		}
	}
	return got
}

// wait returns the error of a Run started with run.
func (h *harness) wait(done <-chan error) error {
	h.t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(cachetest.Timeout):
		h.t.Fatalf("Run did not return; output: %q", h.out.lines())
		return nil
	}
}

func (h *harness) wantLines(want ...string) {
	h.t.Helper()
	got := h.out.lines()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		h.t.Errorf("output:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// checkNoLeak fails if a goroutine of the engine, the reflector or the
// fake watchers is still running. Run and Remove wait for the goroutines
// they own, so no waiting is needed here.
func checkNoLeak(t *testing.T) {
	t.Helper()
	buf := make([]byte, 1<<20)
	stacks := string(buf[:runtime.Stack(buf, true)])
	for _, g := range strings.Split(stacks, "\n\n") {
		if strings.Contains(g, "internal/informer.") && !strings.Contains(g, "_test.go") ||
			strings.Contains(g, "internal/cache.") {
			t.Errorf("goroutine left behind:\n%s", g)
		}
	}
}

func TestRunCount(t *testing.T) {
	lw := cachetest.NewListerWatcher(cachetest.ListOf("10", object(t, "ConfigMap", "a", "1"), object(t, "ConfigMap", "b", "2"), object(t, "ConfigMap", "c", "3")))
	h := newHarness(t, harnessOptions{limit: 2}, map[informer.Target]*cachetest.ListerWatcher{configMaps: lw})
	if _, err := h.engine.Add(configMaps); err != nil {
		t.Fatal(err)
	}
	if err := h.wait(h.run(context.Background(), informer.RunOptions{})); err != nil {
		t.Fatalf("Run: %v", err)
	}
	h.wantLines("Replaced: a", "Replaced: b")
	checkNoLeak(t)
}

func TestRunUntilSynced(t *testing.T) {
	t.Run("objects", func(t *testing.T) {
		lw := cachetest.NewListerWatcher(cachetest.ListOf("10", object(t, "ConfigMap", "a", "1"), object(t, "ConfigMap", "b", "2")))
		h := newHarness(t, harnessOptions{}, map[informer.Target]*cachetest.ListerWatcher{configMaps: lw})
		h.add(configMaps, lw)
		if err := h.wait(h.run(context.Background(), informer.RunOptions{UntilSynced: true})); err != nil {
			t.Fatalf("Run: %v", err)
		}
		h.wantLines("Replaced: a", "Replaced: b")
		checkNoLeak(t)
	})
	t.Run("empty list", func(t *testing.T) {
		lw := cachetest.NewListerWatcher(cachetest.ListOf("10"))
		h := newHarness(t, harnessOptions{}, nil)
		h.add(configMaps, lw)
		if err := h.wait(h.run(context.Background(), informer.RunOptions{UntilSynced: true})); err != nil {
			t.Fatalf("Run: %v", err)
		}
		h.wantLines()
	})
	t.Run("every informer", func(t *testing.T) {
		// The second informer's list fails until the test lets it through:
		// the run must not end when only the first one has synced.
		gate, failed := make(chan struct{}), make(chan struct{})
		var failOnce sync.Once
		slow := cachetest.NewListerWatcher(func() (*rawobj.List, error) {
			select {
			case <-gate:
				return &rawobj.List{ResourceVersion: "5", Items: []*rawobj.Object{object(t, "Secret", "s", "4")}}, nil
			default:
				failOnce.Do(func() { close(failed) })
				return nil, apierrors.NewServiceUnavailable("not yet")
			}
		})
		fast := cachetest.NewListerWatcher(cachetest.ListOf("10", object(t, "ConfigMap", "a", "1")))
		h := newHarness(t, harnessOptions{multi: true, backoff: gatedBackoff(gate)}, nil)
		h.add(configMaps, fast)
		h.add(secrets, slow)
		done := h.run(context.Background(), informer.RunOptions{UntilSynced: true})
		h.waitBatches(1)
		select {
		case <-failed:
		case <-time.After(cachetest.Timeout):
			t.Fatal("the second informer never listed")
		}
		select {
		case err := <-done:
			t.Fatalf("Run returned %v before the second informer synced", err)
		default:
		}
		// The failed list waits out its backoff until the gate opens; then
		// the retry lists.
		close(gate)
		if err := h.wait(done); err != nil {
			t.Fatalf("Run: %v", err)
		}
		h.wantLines("Replaced: configmap a", "Replaced: secret s")
		if !strings.Contains(strings.Join(h.errOut.lines(), "\n"), "warning: failed to list secrets: not yet; retrying") {
			t.Errorf("stderr: %q", h.errOut.lines())
		}
		checkNoLeak(t)
	})
}

func TestRunWatchOnlyAndTypes(t *testing.T) {
	cases := []struct {
		name  string
		stage stage.Options
		want  []string
	}{
		{"watch-only", stage.Options{WatchOnly: true}, []string{"Updated: a", "Deleted: b", "Added: c"}},
		{"types", stage.Options{Types: []cache.DeltaType{cache.Deleted, cache.Added}}, []string{"Deleted: b", "Added: c"}},
		{"all", stage.Options{}, []string{"Replaced: a", "Replaced: b", "Updated: a", "Deleted: b", "Added: c"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			lw := cachetest.NewListerWatcher(cachetest.ListOf("10", object(t, "ConfigMap", "a", "1"), object(t, "ConfigMap", "b", "2")))
			h := newHarness(t, harnessOptions{stage: tc.stage}, nil)
			h.add(configMaps, lw)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := h.run(ctx, informer.RunOptions{})
			w := lw.NextWatch(t)
			h.waitBatches(2)
			w.Modify(object(t, "ConfigMap", "a", "11"))
			w.Delete(object(t, "ConfigMap", "b", "12"))
			w.Add(object(t, "ConfigMap", "c", "13"))
			h.waitBatches(3)
			cancel()
			if err := h.wait(done); !errors.Is(err, informer.ErrInterrupted) {
				t.Fatalf("Run: %v, want ErrInterrupted", err)
			}
			h.wantLines(tc.want...)
			checkNoLeak(t)
		})
	}
}

func TestRunTimeout(t *testing.T) {
	lw := cachetest.NewListerWatcher(cachetest.ListOf("10", object(t, "ConfigMap", "a", "1")))
	h := newHarness(t, harnessOptions{}, nil)
	h.add(configMaps, lw)
	done := h.run(context.Background(), informer.RunOptions{Timeout: 30 * time.Second})
	h.waitBatches(1)
	h.clock.Step(29 * time.Second)
	select {
	case err := <-done:
		t.Fatalf("Run returned %v before its timeout", err)
	default:
	}
	h.clock.Step(time.Second)
	if err := h.wait(done); !errors.Is(err, informer.ErrTimedOut) {
		t.Fatalf("Run: %v, want ErrTimedOut", err)
	}
	h.wantLines("Replaced: a")
	checkNoLeak(t)
}

func TestRunFatalReflectorError(t *testing.T) {
	lw := cachetest.NewListerWatcher(func() (*rawobj.List, error) {
		return nil, apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "", errors.New("no rights"))
	})
	ok := cachetest.NewListerWatcher(cachetest.ListOf("10", object(t, "Secret", "s", "1")))
	h := newHarness(t, harnessOptions{}, nil)
	h.add(secrets, ok)
	h.add(configMaps, lw)
	err := h.wait(h.run(context.Background(), informer.RunOptions{}))
	if err == nil || !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "kubectl auth can-i") {
		t.Fatalf("Run: %v, want the Forbidden error with a hint", err)
	}
	checkNoLeak(t)
}

func TestRunOutputClosed(t *testing.T) {
	t.Run("reader gone while idle", func(t *testing.T) {
		lw := cachetest.NewListerWatcher(cachetest.ListOf("10", object(t, "ConfigMap", "a", "1")))
		h := newHarness(t, harnessOptions{}, nil)
		h.add(configMaps, lw)
		closed := make(chan struct{})
		done := h.run(context.Background(), informer.RunOptions{OutputClosed: closed})
		h.waitBatches(1)
		close(closed)
		if err := h.wait(done); err != nil {
			t.Fatalf("Run: %v", err)
		}
		checkNoLeak(t)
	})
	t.Run("EPIPE on write", func(t *testing.T) {
		lw := cachetest.NewListerWatcher(cachetest.ListOf("10", object(t, "ConfigMap", "a", "1")))
		h := newHarness(t, harnessOptions{}, nil)
		h.out.err = syscall.EPIPE
		h.add(configMaps, lw)
		if err := h.wait(h.run(context.Background(), informer.RunOptions{})); err != nil {
			t.Fatalf("Run: %v, want a normal end", err)
		}
		checkNoLeak(t)
	})
	t.Run("other write error", func(t *testing.T) {
		lw := cachetest.NewListerWatcher(cachetest.ListOf("10", object(t, "ConfigMap", "a", "1")))
		h := newHarness(t, harnessOptions{}, nil)
		h.out.err = syscall.ENOSPC
		h.add(configMaps, lw)
		err := h.wait(h.run(context.Background(), informer.RunOptions{}))
		if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "writing output") {
			t.Fatalf("Run: %v, want a write error", err)
		}
	})
}

func TestRunInterruptFlushesWholeRecords(t *testing.T) {
	lw := cachetest.NewListerWatcher(cachetest.ListOf("10", object(t, "ConfigMap", "a", "1")))
	h := newHarness(t, harnessOptions{}, nil)
	h.add(configMaps, lw)
	ctx, cancel := context.WithCancel(context.Background())
	done := h.run(ctx, informer.RunOptions{})
	w := lw.NextWatch(t)
	h.waitBatches(1)
	w.Add(object(t, "ConfigMap", "b", "11"))
	h.waitBatches(1)
	cancel()
	if err := h.wait(done); !errors.Is(err, informer.ErrInterrupted) {
		t.Fatalf("Run: %v, want ErrInterrupted", err)
	}
	h.wantLines("Replaced: a", "Added: b")
	if !w.IsStopped() {
		t.Error("the watch was not stopped")
	}
	checkNoLeak(t)
}

func TestRunMergesInformers(t *testing.T) {
	cms := cachetest.NewListerWatcher(cachetest.ListOf("10", object(t, "ConfigMap", "a", "1")))
	scs := cachetest.NewListerWatcher(cachetest.ListOf("20", object(t, "Secret", "s", "2")))
	h := newHarness(t, harnessOptions{multi: true}, nil)
	h.add(configMaps, cms)
	h.add(secrets, scs)
	if _, err := h.engine.Add(configMaps); err == nil {
		t.Error("a second informer of the same target was accepted")
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := h.run(ctx, informer.RunOptions{})
	cw, sw := cms.NextWatch(t), scs.NextWatch(t)
	h.waitBatches(2)
	// Events of one informer keep their order; the merge interleaves
	// informers in the order their batches are popped.
	cw.Add(object(t, "ConfigMap", "b", "11"))
	h.waitBatches(1)
	sw.Modify(object(t, "Secret", "s", "21"))
	h.waitBatches(1)
	cw.Delete(object(t, "ConfigMap", "a", "12"))
	h.waitBatches(1)
	cancel()
	if err := h.wait(done); !errors.Is(err, informer.ErrInterrupted) {
		t.Fatalf("Run: %v", err)
	}
	got := h.out.lines()
	if len(got) != 5 {
		t.Fatalf("output %q", got)
	}
	initial := strings.Join(got[:2], "\n")
	if !strings.Contains(initial, "Replaced: configmap a") || !strings.Contains(initial, "Replaced: secret s") {
		t.Errorf("initial lines %q", got[:2])
	}
	if strings.Join(got[2:], "\n") != "Added: configmap b\nUpdated: secret s\nDeleted: configmap a" {
		t.Errorf("watch lines %q", got[2:])
	}
	checkNoLeak(t)
}

func TestAddAndRemoveWhileRunning(t *testing.T) {
	cms := cachetest.NewListerWatcher(cachetest.ListOf("10", object(t, "ConfigMap", "a", "1")))
	h := newHarness(t, harnessOptions{multi: true}, nil)
	h.add(configMaps, cms)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := h.run(ctx, informer.RunOptions{})
	cw := cms.NextWatch(t)
	h.waitBatches(1)

	// An informer added mid-stream lists and watches at once; its initial
	// list is marked initial and joined.
	scs := cachetest.NewListerWatcher(cachetest.ListOf("20", object(t, "Secret", "s", "2")))
	h.add(secrets, scs)
	sw := scs.NextWatch(t)
	if b := h.waitBatches(1)[0]; !b.Initial || !b.Joined || b.Informer.Target() != secrets {
		t.Errorf("batch of the added informer: initial=%v joined=%v target=%v", b.Initial, b.Joined, b.Informer.Target())
	}
	if n := len(h.engine.Informers()); n != 2 {
		t.Errorf("%d informers, want 2", n)
	}

	// Removing one stops its reflector and watch, waits for its
	// goroutines, and leaves the other streaming.
	if !h.engine.Remove(configMaps.ID()) {
		t.Fatal("Remove found no informer")
	}
	if h.engine.Remove(configMaps.ID()) {
		t.Error("a second Remove found the informer again")
	}
	if !cw.IsStopped() {
		t.Error("the removed informer's watch is still open")
	}
	sw.Add(object(t, "Secret", "t", "21"))
	h.waitBatches(1)
	infs := h.engine.Informers()
	if len(infs) != 1 || infs[0].Target() != secrets {
		t.Errorf("informers after Remove: %v", infs)
	}
	// The removed target can be watched again.
	again := cachetest.NewListerWatcher(cachetest.ListOf("30", object(t, "ConfigMap", "a", "3")))
	h.add(configMaps, again)
	again.NextWatch(t)
	h.waitBatches(1)
	cancel()
	if err := h.wait(done); !errors.Is(err, informer.ErrInterrupted) {
		t.Fatalf("Run: %v", err)
	}
	// The lists of informers that joined the running stream are news:
	// Added, not Replaced.
	h.wantLines("Replaced: configmap a", "Added: secret s", "Added: secret t", "Added: configmap a")
	if _, err := h.engine.Add(configMaps); err == nil {
		t.Error("Add after the run ended was accepted")
	}
	checkNoLeak(t)
}

func TestRunTwice(t *testing.T) {
	h := newHarness(t, harnessOptions{}, nil)
	h.add(configMaps, cachetest.NewListerWatcher(cachetest.ListOf("10")))
	if err := h.wait(h.run(context.Background(), informer.RunOptions{UntilSynced: true})); err != nil {
		t.Fatal(err)
	}
	if err := h.engine.Run(context.Background(), h.sink, informer.RunOptions{}); err == nil {
		t.Error("a second Run was accepted")
	}
}

func TestOptionalForbiddenIsDropped(t *testing.T) {
	forbidden := cachetest.NewListerWatcher(func() (*rawobj.List, error) {
		return nil, apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, "", errors.New("no rights"))
	})
	ok := cachetest.NewListerWatcher(cachetest.ListOf("10", object(t, "ConfigMap", "a", "1")))
	h := newHarness(t, harnessOptions{multi: true}, nil)
	h.add(configMaps, ok)
	optional := secrets
	optional.Optional = true
	h.add(optional, forbidden)
	// The run ends once the informers left have synced: the forbidden one
	// is removed, not waited for and not fatal.
	if err := h.wait(h.run(context.Background(), informer.RunOptions{UntilSynced: true})); err != nil {
		t.Fatalf("Run: %v", err)
	}
	h.wantLines("Replaced: configmap a")
	stderr := strings.Join(h.errOut.lines(), "\n")
	if !strings.Contains(stderr, "warning: no longer watching secrets in namespace ns") || !strings.Contains(stderr, "no rights") {
		t.Errorf("stderr: %q", stderr)
	}
	if infs := h.engine.Informers(); len(infs) != 1 || infs[0].Target() != configMaps {
		t.Errorf("informers left: %d", len(infs))
	}
	checkNoLeak(t)
}

func TestRetireTombstonesWhatIsLeft(t *testing.T) {
	cms := cachetest.NewListerWatcher(cachetest.ListOf("10", object(t, "ConfigMap", "a", "1"), object(t, "ConfigMap", "b", "2")))
	h := newHarness(t, harnessOptions{}, nil)
	h.add(configMaps, cms)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := h.run(ctx, informer.RunOptions{})
	w := cms.NextWatch(t)
	h.waitBatches(2)
	// The server sends the deletion of a; b's is missed.
	w.Delete(object(t, "ConfigMap", "a", "11"))
	h.waitBatches(1)
	if !h.engine.Retire(configMaps.ID()) {
		t.Fatal("Retire found no informer")
	}
	if len(h.engine.Informers()) != 0 {
		t.Error("a retired informer is still listed")
	}
	h.waitBatches(1)
	if !w.IsStopped() {
		t.Error("the retired informer's watch is still open")
	}
	cancel()
	if err := h.wait(done); !errors.Is(err, informer.ErrInterrupted) {
		t.Fatalf("Run: %v", err)
	}
	h.wantLines("Replaced: a", "Replaced: b", "Deleted: a", "Deleted: b (final state unknown)")
	checkNoLeak(t)
}

func TestOptionalNotFoundIsGoneQuietly(t *testing.T) {
	gone := make(chan informer.Target, 4)
	notFound := cachetest.NewListerWatcher(func() (*rawobj.List, error) {
		return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "widgets"}, "")
	})
	h := newHarness(t, harnessOptions{}, nil)
	h.engine = informer.New(informer.Config{
		NewListerWatcher: func(informer.Target) cache.ListerWatcher { return notFound },
		Clock:            h.clock,
		Gone:             func(t informer.Target) { gone <- t },
	}, h.errOut)
	optional := configMaps
	optional.Optional = true
	if _, err := h.engine.Add(optional); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := h.run(ctx, informer.RunOptions{})
	select {
	case got := <-gone:
		if got != optional {
			t.Errorf("Gone(%v)", got)
		}
	case <-time.After(cachetest.Timeout):
		t.Fatal("Gone was not called")
	}
	h.engine.Retire(optional.ID())
	cancel()
	if err := h.wait(done); !errors.Is(err, informer.ErrInterrupted) {
		t.Fatalf("Run: %v", err)
	}
	if lines := h.errOut.lines(); len(lines) != 0 {
		t.Errorf("stderr: %q, want nothing", lines)
	}
	checkNoLeak(t)
}

// TestOptionalNotFoundRetiresWithoutFollower: with nobody following
// discovery (no Gone), an optional target whose resource is gone retires:
// a snapshot of the other types ends instead of waiting for it.
func TestOptionalNotFoundRetiresWithoutFollower(t *testing.T) {
	notFound := cachetest.NewListerWatcher(func() (*rawobj.List, error) {
		return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "widgets"}, "")
	})
	fine := cachetest.NewListerWatcher(cachetest.ListOf("10", object(t, "Secret", "s", "1")))
	h := newHarness(t, harnessOptions{}, nil)
	optional := configMaps
	optional.Optional = true
	h.add(optional, notFound)
	h.add(secrets, fine)
	if err := h.wait(h.run(context.Background(), informer.RunOptions{UntilSynced: true})); err != nil {
		t.Fatalf("Run: %v", err)
	}
	h.wantLines("Replaced: s")
	if got, want := h.errOut.lines(), []string{"info: configmaps in namespace ns is no longer served: not watching it"}; strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("stderr %q, want %q", got, want)
	}
	if n := len(h.engine.Informers()); n != 1 {
		t.Errorf("%d informers left, want the secrets' only", n)
	}
	checkNoLeak(t)
}

func TestRunCheck(t *testing.T) {
	lw := cachetest.NewListerWatcher(cachetest.ListOf("10", object(t, "ConfigMap", "a", "1")))
	h := newHarness(t, harnessOptions{}, nil)
	h.add(configMaps, lw)
	boom := errors.New("two records out")
	checks := 0
	done := h.run(context.Background(), informer.RunOptions{Check: func() (bool, error) {
		checks++
		// Called only once the initial list is out, after each batch.
		switch h.sink.Printed() {
		case 0:
			t.Error("Check ran before the initial list was out")
		case 2:
			return true, boom
		}
		return false, nil
	}})
	w := lw.NextWatch(t)
	h.waitBatches(1)
	w.Add(object(t, "ConfigMap", "b", "11"))
	if err := h.wait(done); !errors.Is(err, boom) {
		t.Fatalf("Run: %v, want the Check's error", err)
	}
	// The delta that made the Check stop the run is printed.
	h.wantLines("Replaced: a", "Added: b")
	if checks < 2 {
		t.Errorf("Check ran %d times", checks)
	}
	checkNoLeak(t)
}

// TestRunCheckEvery: with CheckEvery the Check also runs on the clock,
// without deltas, once the initial list is out: each step of the clock is
// followed by a Check that sees it.
func TestRunCheckEvery(t *testing.T) {
	lw := cachetest.NewListerWatcher(cachetest.ListOf("10", object(t, "ConfigMap", "a", "1")))
	h := newHarness(t, harnessOptions{}, nil)
	h.add(configMaps, lw)
	start := h.clock.Now()
	seen := make(chan time.Time, 100)
	done := h.run(context.Background(), informer.RunOptions{CheckEvery: time.Second, Check: func() (bool, error) {
		now := h.clock.Now()
		seen <- now
		return now.Sub(start) >= 3*time.Second, nil
	}})
	h.waitBatches(1)
	for step := 1; step <= 3; step++ {
		deadline := time.Now().Add(cachetest.Timeout)
		for !h.clock.HasWaiters() {
			if time.Now().After(deadline) {
				t.Fatalf("no timer before step %d", step)
			}
			runtime.Gosched()
		}
		h.clock.Step(time.Second)
		for want := start.Add(time.Duration(step) * time.Second); ; {
			select {
			case at := <-seen:
				if at.Before(want) {
					continue // an earlier Check (the initial list, the sync)
				}
			case <-time.After(cachetest.Timeout):
				t.Fatalf("no Check after step %d", step)
			}
			break
		}
	}
	if err := h.wait(done); err != nil {
		t.Fatalf("Run: %v", err)
	}
	checkNoLeak(t)
}

// TestRunSyncTimeout: a --until-synced run whose timeout runs out before
// every initial list is out is not a snapshot: SyncTimeout names the type
// that did not sync and its last error, not the one that did.
func TestRunSyncTimeout(t *testing.T) {
	failing := cachetest.NewListerWatcher(func() (*rawobj.List, error) {
		return nil, apierrors.NewServiceUnavailable("the server is currently unable to handle the request")
	})
	ok := cachetest.NewListerWatcher(cachetest.ListOf("10", object(t, "Secret", "s", "1")))
	h := newHarness(t, harnessOptions{}, nil)
	h.add(configMaps, failing)
	h.add(secrets, ok)
	done := h.run(context.Background(), informer.RunOptions{UntilSynced: true, Timeout: 10 * time.Second})
	h.waitBatches(1)
	deadline := time.Now().Add(cachetest.Timeout)
	for len(h.errOut.lines()) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the failed list was not reported")
		}
		runtime.Gosched()
	}
	h.clock.Step(10 * time.Second)
	if err := h.wait(done); !errors.Is(err, informer.ErrTimedOut) {
		t.Fatalf("Run: %v, want ErrTimedOut", err)
	}
	err := h.engine.SyncTimeout()
	var st *informer.SyncTimeoutError
	if !errors.As(err, &st) || len(st.Unsynced) != 1 || st.Unsynced[0].Target.ID() != configMaps.ID() || !apierrors.IsServiceUnavailable(st.Unsynced[0].Err) {
		t.Fatalf("SyncTimeout: %v", err)
	}
	want := "timed out waiting for the initial list of configmaps in namespace ns: failed to list configmaps: the server is currently unable to handle the request; the snapshot is incomplete (a longer --timeout, or check that type's API)"
	if err.Error() != want {
		t.Errorf("message\n%s\nwant\n%s", err, want)
	}
	h.wantLines("Replaced: s")
	checkNoLeak(t)
}

func TestListed(t *testing.T) {
	lw := cachetest.NewListerWatcher(cachetest.ListOf("10", object(t, "ConfigMap", "a", "1"), object(t, "ConfigMap", "b", "2")))
	other := cachetest.NewListerWatcher(cachetest.ListOf("10", object(t, "Secret", "s", "3")))
	h := newHarness(t, harnessOptions{keepListed: func(t informer.Target) bool { return t.Resource.Resource == "configmaps" }},
		map[informer.Target]*cachetest.ListerWatcher{configMaps: lw, secrets: other})
	cms, err := h.engine.Add(configMaps)
	if err != nil {
		t.Fatal(err)
	}
	secs, err := h.engine.Add(secrets)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := h.run(ctx, informer.RunOptions{})
	h.waitBatches(3)
	lw.NextWatch(t).Add(object(t, "ConfigMap", "c", "11"))
	h.waitBatches(1)
	for _, tc := range []struct {
		name string
		inf  *informer.Informer
		uid  string
		want bool
	}{
		{"listed", cms, "uid-a", true},
		{"listed too", cms, "uid-b", true},
		{"came by the watch", cms, "uid-c", false},
		{"never seen", cms, "uid-x", false},
		{"an informer that does not keep them", secs, "uid-s", false},
	} {
		if got := tc.inf.Listed(tc.uid); got != tc.want {
			t.Errorf("%s: Listed(%s) = %v, want %v", tc.name, tc.uid, got, tc.want)
		}
	}
	cms.ForgetListed()
	if cms.Listed("uid-a") {
		t.Errorf("Listed(uid-a) after ForgetListed = true, want false")
	}
	cancel()
	if err := h.wait(done); !errors.Is(err, informer.ErrInterrupted) {
		t.Fatalf("Run: %v, want ErrInterrupted", err)
	}
	checkNoLeak(t)
}

// TestResumeFromARecording: a target that resumes a recorded stream starts
// with the recorded state in its Store and watches from the recorded
// resourceVersion: no initial list, nothing initial; when that
// resourceVersion is gone, one note says so and the relist says what
// changed meanwhile — a changed object Replaced, a deleted one Deleted
// with its final state unknown, an unchanged one nothing.
func TestResumeFromARecording(t *testing.T) {
	cms := cachetest.NewListerWatcher(cachetest.ListOf("20", object(t, "ConfigMap", "a", "8"), object(t, "ConfigMap", "c", "10")))
	resume := func(informer.Target) (informer.Resumed, bool) {
		return informer.Resumed{ResourceVersion: "7", Objects: []*rawobj.Object{object(t, "ConfigMap", "a", "5"), object(t, "ConfigMap", "b", "6")}}, true
	}
	open := make(chan struct{})
	close(open)
	h := newHarness(t, harnessOptions{resume: resume, backoff: gatedBackoff(open)}, nil)
	h.add(configMaps, cms)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := h.run(ctx, informer.RunOptions{})
	w := cms.NextWatch(t) // a watch first: no list
	w.Error(&apierrors.NewResourceExpired("too old resource version: 7 (15)").ErrStatus)
	relist := h.waitBatches(3)
	for _, b := range relist {
		if b.Initial {
			t.Errorf("the relist after a resume is an initial list: %+v", b)
		}
	}
	cms.NextWatch(t).Modify(object(t, "ConfigMap", "c", "11"))
	if b := h.waitBatches(1)[0]; b.Initial {
		t.Error("a change after the relist is part of an initial list")
	}
	cancel()
	if err := h.wait(done); !errors.Is(err, informer.ErrInterrupted) {
		t.Fatalf("Run: %v", err)
	}
	h.wantLines("Replaced: a", "Replaced: c", "Deleted: b (final state unknown)", "Updated: c")
	if got := h.errOut.lines(); len(got) != 1 || !strings.Contains(got[0], "info: configmaps in namespace ns: the server no longer has resourceVersion 7, where the recording stopped") {
		t.Errorf("stderr %q, want one note of the gap", got)
	}
	checkNoLeak(t)
}

// TestResumeDropsWhatTheRecordingHas: a target resumed from a recording's
// position gets, from its watch, the changes recorded past that position
// again; those are dropped (a key's change at or before the
// resourceVersion recorded last for it, deletions included), the others
// handed out — marked caught up while they are not past where the server
// stood as the informer resumed (a list of one item, at 12).
func TestResumeDropsWhatTheRecordingHas(t *testing.T) {
	cms := cachetest.NewListerWatcher(cachetest.ListOf("12"))
	resume := func(informer.Target) (informer.Resumed, bool) {
		return informer.Resumed{
			ResourceVersion: "7",
			Objects:         []*rawobj.Object{object(t, "ConfigMap", "a", "9")},
			Seen:            map[string]string{"ns/a": "9", "ns/b": "8"},
		}, true
	}
	h := newHarness(t, harnessOptions{resume: resume}, nil)
	h.add(configMaps, cms)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := h.run(ctx, informer.RunOptions{})
	w := cms.NextWatch(t)
	w.Add(object(t, "ConfigMap", "b", "6"))    // recorded: b was deleted at 8
	w.Modify(object(t, "ConfigMap", "a", "8")) // recorded
	w.Delete(object(t, "ConfigMap", "b", "8")) // recorded
	w.Modify(object(t, "ConfigMap", "a", "9")) // recorded
	w.Modify(object(t, "ConfigMap", "a", "11"))
	w.Add(object(t, "ConfigMap", "c", "13"))
	got := h.waitBatches(2)
	cancel()
	if err := h.wait(done); !errors.Is(err, informer.ErrInterrupted) {
		t.Fatalf("Run: %v", err)
	}
	h.wantLines("Updated: a", "Added: c")
	if len(got[0].Items) != 1 || !got[0].Items[0].CaughtUp || got[0].Items[0].Old.ResourceVersion != "9" {
		t.Errorf("a's update at 11, before the server's 12: %+v, want caught up, from the recorded 9", got[0].Items)
	}
	if len(got[1].Items) != 1 || got[1].Items[0].CaughtUp {
		t.Errorf("c's creation at 13, past the server's 12, is caught up: %+v", got[1].Items)
	}
	checkNoLeak(t)
}

// TestResumeWithoutAPositionRelists: a target resumed with the recorded
// state and no position lists, and the list says what changed since the
// state: nothing initial, an unchanged object unchanged.
func TestResumeWithoutAPositionRelists(t *testing.T) {
	cms := cachetest.NewListerWatcher(cachetest.ListOf("20", object(t, "ConfigMap", "a", "5"), object(t, "ConfigMap", "c", "10")))
	resume := func(informer.Target) (informer.Resumed, bool) {
		return informer.Resumed{Objects: []*rawobj.Object{object(t, "ConfigMap", "a", "5"), object(t, "ConfigMap", "b", "6")}}, true
	}
	h := newHarness(t, harnessOptions{resume: resume}, nil)
	h.add(configMaps, cms)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := h.run(ctx, informer.RunOptions{})
	got := h.waitBatches(3)
	cancel()
	if err := h.wait(done); !errors.Is(err, informer.ErrInterrupted) {
		t.Fatalf("Run: %v", err)
	}
	for _, b := range got {
		if b.Initial || len(b.Items) != 1 {
			t.Errorf("a batch of the relist: %+v, want one delta, not initial", b)
			continue
		}
		it := b.Items[0]
		if want := it.Key != "ns/a"; it.CaughtUp != want || it.Unchanged == want {
			t.Errorf("%s %s: caught up %v, unchanged %v", it.Type, it.Key, it.CaughtUp, it.Unchanged)
		}
	}
	h.wantLines("Replaced: c", "Deleted: b (final state unknown)")
	checkNoLeak(t)
}

// TestPositions: a collection's position is the resourceVersion its
// reflector last saw once the Sink has every change up to it — never past
// what the Sink has, none while a change is on its way — and after Run,
// where the stream ended.
func TestPositions(t *testing.T) {
	cms := cachetest.NewListerWatcher(cachetest.ListOf("10", object(t, "ConfigMap", "a", "4")))
	h := newHarness(t, harnessOptions{}, nil)
	h.add(configMaps, cms)
	var seen []string // written by Check, on Run's goroutine
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := h.run(ctx, informer.RunOptions{
		Check: func() (bool, error) {
			for _, p := range h.engine.Positions() {
				if p.Target.ID() != configMaps.ID() || informer.NewerResourceVersion(p.ResourceVersion, "16") {
					t.Errorf("position %+v", p)
				}
				seen = append(seen, p.ResourceVersion)
			}
			return false, nil
		},
	})
	h.waitBatches(1)
	w := cms.NextWatch(t)
	w.Modify(object(t, "ConfigMap", "a", "15"))
	h.waitBatches(1)
	w.Modify(object(t, "ConfigMap", "a", "16"))
	h.waitBatches(1)
	cancel()
	if err := h.wait(done); !errors.Is(err, informer.ErrInterrupted) {
		t.Fatalf("Run: %v", err)
	}
	for i := 1; i < len(seen); i++ {
		if informer.NewerResourceVersion(seen[i-1], seen[i]) {
			t.Errorf("positions went back: %q", seen)
		}
	}
	if ps := h.engine.Positions(); len(ps) != 1 || ps[0].ResourceVersion != "16" {
		t.Errorf("positions after Run: %+v, want 16", ps)
	}
}

// gcSink notes the garbage collector's target as it is handed batches.
type gcSink struct{ percents []int }

func (s *gcSink) Handle(informer.Batch) (bool, error) {
	s.percents = append(s.percents, gcPercent())
	return false, nil
}

func (s *gcSink) Flush() error { return nil }

// gcPercent is the garbage collector's target (GOGC) now.
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// TestRunGCPercent: Config.GCPercent is the collector's target while Run
// runs, and the one before is set back when it returns.
func TestRunGCPercent(t *testing.T) {
	before := gcPercent()
	for _, percent := range []int{0, 50} {
		lw := cachetest.NewListerWatcher(cachetest.ListOf("10", object(t, "ConfigMap", "a", "1")))
		e := informer.New(informer.Config{
			NewListerWatcher: func(informer.Target) cache.ListerWatcher { return lw },
			GCPercent:        percent,
		}, nil)
		if _, err := e.Add(configMaps); err != nil {
			t.Fatal(err)
		}
		s := &gcSink{}
		if err := e.Run(context.Background(), s, informer.RunOptions{UntilSynced: true}); err != nil {
			t.Fatalf("Run: %v", err)
		}
		want := percent
		if want == 0 {
			want = before
		}
		if len(s.percents) == 0 || s.percents[0] != want {
			t.Errorf("GCPercent %d: the target while running was %v, want %d", percent, s.percents, want)
		}
		if got := gcPercent(); got != before {
			t.Errorf("GCPercent %d: the target after Run is %d, want %d", percent, got, before)
		}
	}
	checkNoLeak(t)
}
