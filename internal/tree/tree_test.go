package tree

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kubectl-deltas/kubectl-deltas/internal/cache"
	"github.com/kubectl-deltas/kubectl-deltas/internal/cache/cachetest"
	"github.com/kubectl-deltas/kubectl-deltas/internal/informer"
	"github.com/kubectl-deltas/kubectl-deltas/internal/rawobj"
)

// These tests run a Tree in a real informer.Engine whose ListerWatchers are
// a fake server: per resource, the current objects and a log of events
// with resourceVersions, so that an informer started late (a promotion)
// lists the current state and watches from there, as against an API
// server. Nothing sleeps: the tests wait for the records they expect.

func kind(group, version, k, resource string) informer.Target {
	return informer.Target{
		Resource: schema.GroupVersionResource{Group: group, Version: version, Resource: resource},
		Kind:     schema.GroupVersionKind{Group: group, Version: version, Kind: k},
	}
}

var (
	deployments = kind("apps", "v1", "Deployment", "deployments")
	replicaSets = kind("apps", "v1", "ReplicaSet", "replicasets")
	pods        = kind("", "v1", "Pod", "pods")
	jobs        = kind("batch", "v1", "Job", "jobs")
	configMaps  = kind("", "v1", "ConfigMap", "configmaps")
)

// owner is an ownerReference in a test object: the owner's target and
// name; its UID is "uid-"+name.
type owner struct {
	t    informer.Target
	name string
}

// event is one change of the fake server, at resourceVersion rv.
type event struct {
	resource string
	typ      watch.EventType
	obj      *rawobj.Object
	rv       int
}

// server is a fake API server: its objects, its event log and its open
// watches.
type server struct {
	t  *testing.T
	mu sync.Mutex
	rv int
	// objects holds each resource's objects by name.
	objects  map[string]map[string]*rawobj.Object
	log      []event
	watchers map[*fakeWatch]bool
	// gates hold back the lists of the targets they name (by Target ID)
	// until closed; listing, if set, is told the Target ID of each list
	// asked for, before its gate; watching of each watch opened.
	gates             map[string]chan struct{}
	listing, watching chan string
}

func newServer(t *testing.T) *server {
	return &server{t: t, objects: map[string]map[string]*rawobj.Object{}, watchers: map[*fakeWatch]bool{}}
}

// object builds an object of target in namespace ns.
func (s *server) object(target informer.Target, name string, rv int, labels string, owners ...owner) *rawobj.Object {
	s.t.Helper()
	refs := make([]string, 0, len(owners))
	for i, o := range owners {
		refs = append(refs, fmt.Sprintf(`{"apiVersion":%q,"kind":%q,"name":%q,"uid":"uid-%s","controller":%v}`,
			o.t.Kind.GroupVersion().String(), o.t.Kind.Kind, o.name, o.name, i == 0))
	}
	js := fmt.Sprintf(`{"apiVersion":%q,"kind":%q,"metadata":{"name":%q,"namespace":"ns","uid":"uid-%s","resourceVersion":"%d","labels":{"v":%q},"ownerReferences":[%s]}}`,
		target.Kind.GroupVersion().String(), target.Kind.Kind, name, name, rv, labels, strings.Join(refs, ","))
	obj, err := rawobj.Parse([]byte(js), rawobj.ParseOptions{})
	if err != nil {
		s.t.Fatal(err)
	}
	return obj
}

// apply changes an object (labels stands for its content) and tells the
// watches of its resource.
func (s *server) apply(typ watch.EventType, target informer.Target, name, labels string, owners ...owner) {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rv++
	obj := s.object(target, name, s.rv, labels, owners...)
	resource := target.Resource.Resource
	if s.objects[resource] == nil {
		s.objects[resource] = map[string]*rawobj.Object{}
	}
	if typ == watch.Deleted {
		delete(s.objects[resource], name)
	} else {
		s.objects[resource][name] = obj
	}
	e := event{resource: resource, typ: typ, obj: obj, rv: s.rv}
	s.log = append(s.log, e)
	for w := range s.watchers {
		w.send(e)
	}
}

// lw is the engine's NewListerWatcher.
func (s *server) lw(t informer.Target) cache.ListerWatcher {
	return &serverLW{s: s, target: t}
}

type serverLW struct {
	s      *server
	target informer.Target
}

func (f *serverLW) matches(resource string, obj *rawobj.Object) bool {
	return resource == f.target.Resource.Resource && (f.target.Name == "" || obj.Name == f.target.Name)
}

func (f *serverLW) List(ctx context.Context, _ metav1.ListOptions) (k8sruntime.Object, error) {
	f.s.mu.Lock()
	gate, listing := f.s.gates[f.target.ID()], f.s.listing
	f.s.mu.Unlock()
	if listing != nil {
		listing <- f.target.ID()
	}
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	f.s.mu.Lock()
	defer f.s.mu.Unlock()
	list := &rawobj.List{ResourceVersion: strconv.Itoa(f.s.rv)}
	for _, obj := range f.s.objects[f.target.Resource.Resource] {
		if f.matches(f.target.Resource.Resource, obj) {
			list.Items = append(list.Items, obj)
		}
	}
	slices.SortFunc(list.Items, func(a, b *rawobj.Object) int { return strings.Compare(a.Name, b.Name) })
	return list, nil
}

func (f *serverLW) Watch(_ context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	from, err := strconv.Atoi(opts.ResourceVersion)
	if err != nil {
		return nil, fmt.Errorf("watch without a resourceVersion: %q", opts.ResourceVersion)
	}
	f.s.mu.Lock()
	defer f.s.mu.Unlock()
	w := &fakeWatch{lw: f, ch: make(chan watch.Event, 1024), stopped: make(chan struct{})}
	for _, e := range f.s.log {
		if e.rv > from {
			w.send(e)
		}
	}
	f.s.watchers[w] = true
	if f.s.watching != nil {
		select { // never blocks: the server's lock is held
		case f.s.watching <- f.target.ID():
		default:
		}
	}
	return w, nil
}

// fakeWatch is an open watch; the server's lock guards sending and
// stopping.
type fakeWatch struct {
	lw      *serverLW
	ch      chan watch.Event
	stopped chan struct{}
	once    sync.Once
}

func (w *fakeWatch) send(e event) {
	if !w.lw.matches(e.resource, e.obj) {
		return
	}
	select {
	case w.ch <- watch.Event{Type: e.typ, Object: e.obj}:
	case <-w.stopped:
	}
}

func (w *fakeWatch) Stop() {
	w.once.Do(func() {
		close(w.stopped)
		w.lw.s.mu.Lock()
		delete(w.lw.s.watchers, w)
		w.lw.s.mu.Unlock()
	})
}

func (w *fakeWatch) ResultChan() <-chan watch.Event { return w.ch }

// recorder is the Sink behind the Tree: it writes each delta as a line,
// "Type Kind name [(owner path)] [initial]", and tells the test.
type recorder struct {
	mu    sync.Mutex
	lines []string
	added chan struct{}
}

func (r *recorder) Handle(b informer.Batch) (bool, error) {
	r.mu.Lock()
	for _, it := range b.Items {
		obj := it.Object
		if obj == nil {
			obj = it.Old
		}
		line := fmt.Sprintf("%s %s %s", it.Type, b.Informer.Target().Kind.Kind, obj.Name)
		if c := b.Informer.Target().Context; c != "" {
			line = c + " " + line
		}
		if len(it.Owners) > 0 {
			path := make([]string, len(it.Owners))
			for i, o := range it.Owners {
				path[i] = o.Kind + " " + o.Name
			}
			line += " (" + strings.Join(path, " → ") + ")"
		}
		if it.Initial {
			line += " initial"
		}
		if it.Unchanged {
			line += " unchanged"
		}
		if it.Tombstone {
			line += " tombstone"
		}
		if it.CaughtUp {
			line += " caught up"
		}
		r.lines = append(r.lines, line)
	}
	r.mu.Unlock()
	select {
	case r.added <- struct{}{}:
	default:
	}
	return false, nil
}

func (r *recorder) Flush() error { return nil }

// run is a Tree in a running Engine.
type run struct {
	t      *testing.T
	srv    *server
	engine *informer.Engine
	tree   *Tree
	rec    *recorder
	cancel context.CancelFunc
	done   chan error
	// initial is closed once every informer's initial list is out.
	initial chan struct{}
	// seen is how many lines the test has taken.
	seen int
}

// start runs roots and a scout of each of types.
func start(t *testing.T, srv *server, roots []informer.Target, types ...informer.Target) *run {
	t.Helper()
	return startResumed(t, srv, nil, roots, types...)
}

// startResumed is start of a run going on with a recording whose roots
// owned the objects resumed (New's resumed), of the types of their kinds.
func startResumed(t *testing.T, srv *server, resumed []*rawobj.Object, roots []informer.Target, types ...informer.Target) *run {
	t.Helper()
	engine := informer.New(informer.Config{
		NewListerWatcher: srv.lw,
		Indexers:         Indexers(),
		KeepListed:       KeepListed,
		Selects:          selectsByNamespaceAndName,
		Clock:            clocktesting.NewFakeClock(time.Now()),
	}, nil)
	for _, r := range roots {
		r.Namespace = "ns"
		if _, err := engine.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	for _, typ := range types {
		if _, err := engine.Add(ScoutTarget(typ, "ns")); err != nil {
			t.Fatal(err)
		}
	}
	rec := &recorder{added: make(chan struct{}, 1)}
	var members []Member
	for _, obj := range resumed {
		for _, typ := range types {
			if typ.Kind.Kind == obj.Kind {
				owned := typ
				owned.Namespace, owned.Role = "ns", informer.RoleOwned
				members = append(members, Member{Target: owned, Object: obj})
			}
		}
	}
	r := &run{t: t, srv: srv, engine: engine, rec: rec, tree: New(engine, rec, members...), done: make(chan error, 1), initial: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	var once sync.Once
	check := func() (bool, error) {
		once.Do(func() { close(r.initial) })
		return false, nil
	}
	go func() { r.done <- engine.Run(ctx, r.tree, informer.RunOptions{Check: check}) }()
	t.Cleanup(r.stop)
	return r
}

// stop ends the run and waits for it.
func (r *run) stop() {
	r.cancel()
	if err := <-r.done; err != nil && !errors.Is(err, informer.ErrInterrupted) {
		r.t.Errorf("Run: %v", err)
	}
	r.done <- nil
}

// next waits for the next n lines.
func (r *run) next(n int) []string {
	r.t.Helper()
	deadline := time.After(cachetest.Timeout)
	for {
		r.rec.mu.Lock()
		if len(r.rec.lines) >= r.seen+n {
			lines := append([]string(nil), r.rec.lines[r.seen:r.seen+n]...)
			r.seen += n
			r.rec.mu.Unlock()
			return lines
		}
		got := append([]string(nil), r.rec.lines[r.seen:]...)
		r.rec.mu.Unlock()
		select {
		case <-r.rec.added:
		case <-deadline:
			r.t.Fatalf("waited for %d lines, got %d: %q", n, len(got), got)
		}
	}
}

// expect waits for the lines want, in order.
func (r *run) expect(want ...string) {
	r.t.Helper()
	if got := r.next(len(want)); !slices.Equal(got, want) {
		r.t.Fatalf("got\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// expectSet waits for the lines want, in any order (the initial lists of
// several informers interleave).
func (r *run) expectSet(want ...string) {
	r.t.Helper()
	got := r.next(len(want))
	slices.Sort(got)
	want = slices.Clone(want)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		r.t.Fatalf("got\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// synced waits until every informer's initial list is out: what happens
// from now on is news.
func (r *run) synced() {
	r.t.Helper()
	select {
	case <-r.initial:
	case <-time.After(cachetest.Timeout):
		r.t.Fatal("the initial lists never came out")
	}
}

// settle makes sure nothing is printed for what happened so far: a marker
// ConfigMap owned by the root is created and must be the next line.
func (r *run) settle(root owner, marker string) {
	r.t.Helper()
	r.srv.apply(watch.Added, configMaps, marker, "", root)
	r.expect("Added ConfigMap " + marker + " (" + root.t.Kind.Kind + " " + root.name + ")")
}

// members is the number of objects in the tree, read on Run's goroutine's
// terms: the run must be stopped.
func (r *run) members() int {
	r.stop()
	return len(r.tree.members)
}

func TestTreeFollowsARollout(t *testing.T) {
	srv := newServer(t)
	web := owner{deployments, "web"}
	rs1, rs2 := owner{replicaSets, "web-1"}, owner{replicaSets, "web-2"}
	srv.apply(watch.Added, deployments, "web", "1")
	srv.apply(watch.Added, deployments, "other", "1")
	srv.apply(watch.Added, replicaSets, "web-1", "1", web)
	srv.apply(watch.Added, pods, "web-1-a", "1", rs1)
	srv.apply(watch.Added, pods, "web-1-b", "1", rs1)
	srv.apply(watch.Added, pods, "loner", "1")
	srv.apply(watch.Added, configMaps, "settings", "1")

	root := deployments
	root.Name = "web"
	r := start(t, srv, []informer.Target{root}, deployments, replicaSets, pods, configMaps)
	r.expectSet(
		"Replaced Deployment web initial",
		"Replaced ReplicaSet web-1 (Deployment web) initial",
		"Replaced Pod web-1-a (Deployment web → ReplicaSet web-1) initial",
		"Replaced Pod web-1-b (Deployment web → ReplicaSet web-1) initial",
	)
	r.synced()

	// A rollout: a new ReplicaSet and its Pod join, the old Pods go.
	srv.apply(watch.Modified, deployments, "web", "2")
	r.expect("Updated Deployment web")
	srv.apply(watch.Added, replicaSets, "web-2", "1", web)
	r.expect("Added ReplicaSet web-2 (Deployment web)")
	srv.apply(watch.Added, pods, "web-2-a", "1", rs2)
	r.expect("Added Pod web-2-a (Deployment web → ReplicaSet web-2)")
	srv.apply(watch.Modified, pods, "loner", "2")
	srv.apply(watch.Modified, deployments, "other", "2")
	srv.apply(watch.Deleted, pods, "web-1-a", "1", rs1)
	r.expect("Deleted Pod web-1-a (Deployment web → ReplicaSet web-1)")

	// A Pod orphaned leaves with the change that orphaned it.
	srv.apply(watch.Modified, pods, "web-1-b", "2")
	r.expect("Updated Pod web-1-b (Deployment web → ReplicaSet web-1)")
	srv.apply(watch.Modified, pods, "web-1-b", "3")
	r.settle(web, "marker-1")

	// The Deployment deleted: the garbage collector's deletions follow.
	srv.apply(watch.Deleted, deployments, "web", "2")
	r.expect("Deleted Deployment web")
	srv.apply(watch.Deleted, replicaSets, "web-2", "1", web)
	r.expect("Deleted ReplicaSet web-2 (Deployment web)")
	srv.apply(watch.Modified, pods, "web-2-a", "2", rs2)
	r.expect("Updated Pod web-2-a (Deployment web → ReplicaSet web-2)")
	srv.apply(watch.Deleted, pods, "web-2-a", "2", rs2)
	r.expect("Deleted Pod web-2-a (Deployment web → ReplicaSet web-2)")
	srv.apply(watch.Deleted, replicaSets, "web-1", "1", web)
	r.expect("Deleted ReplicaSet web-1 (Deployment web)")
	srv.apply(watch.Deleted, configMaps, "marker-1", "", web)
	r.expect("Deleted ConfigMap marker-1 (Deployment web)")

	// Everything is gone: nothing of the tree is kept.
	if n := r.members(); n != 0 {
		t.Errorf("%d members left after every object was deleted: %v", n, r.tree.members)
	}
}

func TestTreeOwnerAfterItsDependents(t *testing.T) {
	srv := newServer(t)
	web := owner{deployments, "web"}
	srv.apply(watch.Added, deployments, "web", "1")
	srv.apply(watch.Added, replicaSets, "web-1", "1", web)
	srv.apply(watch.Added, pods, "web-1-a", "1", owner{replicaSets, "web-1"})

	root := deployments
	root.Name = "web"
	r := start(t, srv, []informer.Target{root}, replicaSets, pods, configMaps)
	r.expectSet(
		"Replaced Deployment web initial",
		"Replaced ReplicaSet web-1 (Deployment web) initial",
		"Replaced Pod web-1-a (Deployment web → ReplicaSet web-1) initial",
	)
	r.synced()
	// A Pod whose owner the stream has not seen yet is held back, and
	// printed when its owner joins, after it.
	rs9 := owner{replicaSets, "web-9"}
	srv.apply(watch.Added, pods, "web-9-a", "1", rs9)
	r.settle(web, "marker-1")
	srv.apply(watch.Added, replicaSets, "web-9", "1", web)
	r.expect(
		"Added ReplicaSet web-9 (Deployment web)",
		"Added Pod web-9-a (Deployment web → ReplicaSet web-9)",
	)
	srv.apply(watch.Modified, pods, "web-9-a", "2", rs9)
	r.expect("Updated Pod web-9-a (Deployment web → ReplicaSet web-9)")
}

func TestTreeTypePromotedLater(t *testing.T) {
	srv := newServer(t)
	srv.apply(watch.Added, jobs, "backup", "1")
	srv.apply(watch.Added, pods, "unrelated", "1")

	root := jobs
	root.Name = "backup"
	r := start(t, srv, []informer.Target{root}, pods, configMaps)
	r.expect("Replaced Job backup initial")
	r.synced()
	// No Pod of the Job yet; the first one promotes pods to whole objects,
	// listed while the stream runs: news, not initial.
	backup := owner{jobs, "backup"}
	r.settle(backup, "marker-1")
	srv.apply(watch.Added, pods, "backup-a", "1", backup)
	r.expect("Added Pod backup-a (Job backup)")
	srv.apply(watch.Modified, pods, "backup-a", "2", backup)
	r.expect("Updated Pod backup-a (Job backup)")
	srv.apply(watch.Modified, pods, "unrelated", "2")
	srv.apply(watch.Deleted, pods, "backup-a", "2", backup)
	r.expect("Deleted Pod backup-a (Job backup)")
	for _, inf := range r.engine.Informers() {
		if inf.Target().Resource == pods.Resource && inf.Target().Role == informer.RoleScout {
			t.Errorf("the scout of pods is still running after the promotion")
		}
	}
}

// TestTreeResumed: a run going on with a recording finds its members
// again as a relist says what it knew — unchanged, or Replaced — and,
// once their types are listed, says gone those it did not find: deleted
// or out of the tree while nothing recorded. What changed is caught up.
func TestTreeResumed(t *testing.T) {
	srv := newServer(t)
	backup := owner{jobs, "backup"}
	srv.apply(watch.Added, jobs, "backup", "1")
	srv.apply(watch.Added, pods, "kept", "1", backup)
	srv.apply(watch.Added, pods, "changed", "2", backup)
	srv.apply(watch.Added, pods, "left", "1")
	srv.apply(watch.Added, pods, "new", "1", backup)
	kept := srv.object(pods, "kept", 2, "1", backup) // the resourceVersion it has
	resumed := []*rawobj.Object{
		kept,
		srv.object(pods, "changed", 1, "1", backup), // older than the server's
		srv.object(pods, "left", 1, "1", backup),    // owned no more
		srv.object(pods, "gone", 1, "1", backup),    // deleted
	}
	root := jobs
	root.Name = "backup"
	r := startResumed(t, srv, resumed, []informer.Target{root}, pods, configMaps)
	r.expectSet(
		"Replaced Job backup initial",
		"Replaced Pod kept (Job backup) unchanged",
		"Replaced Pod changed (Job backup) caught up",
		"Replaced Pod new (Job backup) initial",
	)
	// As the recording last showed them, with their owners then.
	r.expectSet("Deleted Pod gone (Job backup) tombstone caught up", "Deleted Pod left (Job backup) tombstone caught up")
	r.synced()
	r.settle(backup, "marker")
	srv.apply(watch.Deleted, pods, "kept", "1", backup)
	r.expect("Deleted Pod kept (Job backup)")
}

func TestTreeSelectedRootsAndCycles(t *testing.T) {
	srv := newServer(t)
	a, b := owner{configMaps, "a"}, owner{configMaps, "b"}
	// Two roots; b is also owned by a; c and d own each other and a.
	srv.apply(watch.Added, jobs, "j", "1")
	srv.apply(watch.Added, configMaps, "a", "1")
	srv.apply(watch.Added, configMaps, "b", "1", a)
	srv.apply(watch.Added, configMaps, "c", "1", owner{configMaps, "d"}, b)
	srv.apply(watch.Added, configMaps, "d", "1", owner{configMaps, "c"})

	rootA, rootB := configMaps, configMaps
	rootA.Name, rootB.Name = "a", "b"
	r := start(t, srv, []informer.Target{rootA, rootB}, configMaps)
	// b, both a root and a's, once: with its owner when a's list came
	// first (the two roots list at once).
	got := r.next(4)
	slices.Sort(got)
	want := []string{
		"Replaced ConfigMap a initial",
		"Replaced ConfigMap b (ConfigMap a) initial",
		"Replaced ConfigMap c (ConfigMap b) initial",
		"Replaced ConfigMap d (ConfigMap b → ConfigMap c) initial",
	}
	if got[1] == "Replaced ConfigMap b initial" {
		got[1] = want[1]
	}
	if !slices.Equal(got, want) {
		t.Fatalf("got\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	r.synced()
	srv.apply(watch.Modified, configMaps, "d", "2", owner{configMaps, "c"})
	r.expect("Updated ConfigMap d (ConfigMap b → ConfigMap c)")
	srv.apply(watch.Modified, configMaps, "b", "2", a)
	r.expect("Updated ConfigMap b (ConfigMap a)") // a root owned by a root: printed once, with its owner
}

// startIn runs the roots and scouts of each context of contexts, as a run
// of several clusters does.
func startIn(t *testing.T, srv *server, contexts []string, root informer.Target, types ...informer.Target) *run {
	t.Helper()
	var roots, scouts []informer.Target
	for _, c := range contexts {
		r := root
		r.Context = c
		roots = append(roots, r)
		for _, typ := range types {
			typ.Context = c
			scouts = append(scouts, typ)
		}
	}
	return start(t, srv, roots, scouts...)
}

func TestTreeSeveralContexts(t *testing.T) {
	// Two contexts of one server: the same objects, the same UIDs, and
	// each cluster's tree whole, whichever context comes first.
	for _, contexts := range [][]string{{"staging", "prod"}, {"prod", "staging"}} {
		t.Run(strings.Join(contexts, ","), func(t *testing.T) {
			srv := newServer(t)
			web := owner{deployments, "web"}
			srv.apply(watch.Added, deployments, "web", "1")
			srv.apply(watch.Added, replicaSets, "web-1", "1", web)
			srv.apply(watch.Added, pods, "web-1-a", "1", owner{replicaSets, "web-1"})
			root := deployments
			root.Name = "web"
			r := startIn(t, srv, contexts, root, replicaSets, pods)
			var want []string
			for _, c := range contexts {
				want = append(want,
					c+" Replaced Deployment web initial",
					c+" Replaced ReplicaSet web-1 (Deployment web) initial",
					c+" Replaced Pod web-1-a (Deployment web → ReplicaSet web-1) initial",
				)
			}
			r.expectSet(want...)
			r.synced()
			srv.apply(watch.Added, replicaSets, "web-2", "1", web)
			srv.apply(watch.Added, pods, "web-2-a", "1", owner{replicaSets, "web-2"})
			want = want[:0]
			for _, c := range contexts {
				want = append(want,
					c+" Added ReplicaSet web-2 (Deployment web)",
					c+" Added Pod web-2-a (Deployment web → ReplicaSet web-2)",
				)
			}
			r.expectSet(want...)
		})
	}
}

// TestTreeInitialStateWhateverTheOrder is the race of --tree --watch-only
// during a rollout: whatever order the roots', scouts' and promoted
// types' lists come in, every object that existed before the stream
// started is shown as Replaced and initial, never as Added, and a Pod
// created after is Added. The lists are held back and released in a
// random order, many times, with the scheduler given a random number of
// turns between two releases, so that a rule that depends on timing shows.
func TestTreeInitialStateWhateverTheOrder(t *testing.T) {
	rounds := 60
	if testing.Short() {
		rounds = 15
	}
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 0))
	for round := range rounds {
		if !t.Run(strconv.Itoa(round), func(t *testing.T) { initialStateRound(t, rng) }) {
			break
		}
	}
}

func initialStateRound(t *testing.T, rng *rand.Rand) {
	srv := newServer(t)
	web := owner{deployments, "web"}
	srv.apply(watch.Added, deployments, "web", "2")
	// Old ReplicaSets scaled to nothing, then the current one, last in
	// list order, with the Pods.
	want := []string{"Replaced Deployment web initial"}
	for _, rs := range []string{"web-a", "web-b", "web-c", "web-z"} {
		srv.apply(watch.Added, replicaSets, rs, "1", web)
		want = append(want, "Replaced ReplicaSet "+rs+" (Deployment web) initial")
	}
	for _, p := range []string{"web-z-1", "web-z-2", "web-z-3"} {
		srv.apply(watch.Added, pods, p, "1", owner{replicaSets, "web-z"})
		want = append(want, "Replaced Pod "+p+" (Deployment web → ReplicaSet web-z) initial")
	}

	root := deployments
	root.Name, root.Namespace = "web", "ns"
	gated := []informer.Target{root}
	for _, typ := range []informer.Target{replicaSets, pods} {
		scout := ScoutTarget(typ, "ns")
		owned := scout
		owned.Role = informer.RoleOwned
		gated = append(gated, scout, owned)
	}
	gates := make([]chan struct{}, len(gated))
	srv.gates = map[string]chan struct{}{}
	for i, g := range gated {
		gates[i] = make(chan struct{})
		srv.gates[g.ID()] = gates[i]
	}
	r := start(t, srv, []informer.Target{{
		Resource: deployments.Resource, Kind: deployments.Kind, Name: "web",
	}}, replicaSets, pods)
	order := rng.Perm(len(gates))
	for _, i := range order {
		t.Logf("release %s", gated[i].ID())
	}
	go func() {
		for _, i := range order {
			for range rng.IntN(200) {
				runtime.Gosched()
			}
			close(gates[i])
		}
	}()
	r.expectSet(want...)
	r.synced()
	srv.apply(watch.Added, pods, "web-z-4", "1", owner{replicaSets, "web-z"})
	r.expect("Added Pod web-z-4 (Deployment web → ReplicaSet web-z)")
}

// TestTreeHeldThenInitial: a Pod handed out by its owned informer's
// initial list before its ReplicaSet was known, then changed, then its
// ReplicaSet joins: the Pod was in the tree when the stream started, so it
// comes out as the list had it, Replaced and initial, then its change as
// Updated.
func TestTreeHeldThenInitial(t *testing.T) {
	srv := newServer(t)
	web := owner{deployments, "web"}
	srv.apply(watch.Added, deployments, "web", "1")
	srv.apply(watch.Added, replicaSets, "web-1", "1", web)
	srv.apply(watch.Added, pods, "web-1-a", "1", owner{replicaSets, "web-1"})
	// A Pod the Deployment owns itself promotes pods at once.
	srv.apply(watch.Added, pods, "direct", "1", web)
	// The ReplicaSets' scout lists only once the Pods are out.
	gate := make(chan struct{})
	srv.gates = map[string]chan struct{}{ScoutTarget(replicaSets, "ns").ID(): gate}

	root := deployments
	root.Name = "web"
	r := start(t, srv, []informer.Target{root}, replicaSets, pods, configMaps)
	r.expectSet(
		"Replaced Deployment web initial",
		"Replaced Pod direct (Deployment web) initial",
	)
	srv.apply(watch.Modified, pods, "web-1-a", "2", owner{replicaSets, "web-1"})
	r.settle(web, "marker-1")
	close(gate)
	// The Pod joins when the scout finds its ReplicaSet, which its own
	// informer prints when its list comes: the Pod's two lines in order,
	// the ReplicaSet's anywhere.
	got := r.next(3)
	rs := slices.Index(got, "Replaced ReplicaSet web-1 (Deployment web) initial")
	if rs < 0 || !slices.Equal(slices.Delete(slices.Clone(got), rs, rs+1), []string{
		"Replaced Pod web-1-a (Deployment web → ReplicaSet web-1) initial",
		"Updated Pod web-1-a (Deployment web → ReplicaSet web-1)",
	}) {
		t.Fatalf("got\n  %s\nwant the Pod as listed, then its change, and its ReplicaSet", strings.Join(got, "\n  "))
	}
}

// TestTreeMemberDeletedBeforeItsTypeListed: a scout finds an object the
// root owns and promotes its type; the object is deleted before the owned
// informer lists (its list is held back until then), so no list nor watch
// ever shows it. It is printed all the same, as it entered the tree, then
// Deleted with its final state unknown: a deletion is never lost.
func TestTreeMemberDeletedBeforeItsTypeListed(t *testing.T) {
	srv := newServer(t)
	backup := owner{jobs, "backup"}
	srv.apply(watch.Added, jobs, "backup", "1")
	srv.apply(watch.Added, pods, "backup-a", "1", backup)
	srv.apply(watch.Added, pods, "backup-b", "1", backup)
	owned := ScoutTarget(pods, "ns")
	owned.Role = informer.RoleOwned
	gate := make(chan struct{})
	srv.gates = map[string]chan struct{}{owned.ID(): gate}
	srv.listing = make(chan string, 16)

	root := jobs
	root.Name = "backup"
	r := start(t, srv, []informer.Target{root}, pods, configMaps)
	r.expect("Replaced Job backup initial")
	// The owned informer of pods asks for its list: the scout has gone.
	awaitTarget(t, srv.listing, owned.ID(), "the pods were never promoted")
	srv.apply(watch.Deleted, pods, "backup-a", "1", backup)
	close(gate)
	r.expectSet(
		"Replaced Pod backup-b (Job backup) initial",
		"Replaced Pod backup-a (Job backup) initial",
		"Deleted Pod backup-a (Job backup) tombstone",
	)
	r.synced() // the ConfigMaps' scout too: the marker is news
	r.settle(backup, "marker-1")
	r.rec.mu.Lock()
	got := slices.Clone(r.rec.lines)
	r.rec.mu.Unlock()
	if !slices.Contains(got, "Deleted Pod backup-a (Job backup) tombstone") ||
		slices.Index(got, "Replaced Pod backup-a (Job backup) initial") > slices.Index(got, "Deleted Pod backup-a (Job backup) tombstone") {
		t.Errorf("backup-a: %q, want it entered, then deleted", got)
	}
}

// TestTreeRootAlsoMemberOnce: an object both named (pods, a root type)
// and owned (a Job's Pod) is printed once per change, by its root's
// informer, with its owners — also when its owned informer hands it out
// before the root's has it (a Pod made a moment ago: the root's Store is
// behind), which the root's list and watch select (Informer.Selects).
func TestTreeRootAlsoMemberOnce(t *testing.T) {
	for _, selects := range []bool{true, false} {
		t.Run(fmt.Sprintf("selection known %v", selects), func(t *testing.T) {
			srv := newServer(t)
			cfg := informer.Config{NewListerWatcher: srv.lw, Indexers: Indexers(), KeepListed: KeepListed}
			if selects {
				cfg.Selects = func(t informer.Target, obj *rawobj.Object) (bool, bool) { return t.Namespace == obj.Namespace, true }
			}
			engine := informer.New(cfg, nil)
			add := func(target informer.Target) *informer.Informer {
				t.Helper()
				target.Namespace = "ns"
				inf, err := engine.Add(target)
				if err != nil {
					t.Fatal(err)
				}
				return inf
			}
			job := jobs
			job.Name = "backup"
			jobRoot, podRoot := add(job), add(pods)
			owned := pods
			owned.Role = informer.RoleOwned
			podOwned := add(owned)
			rec := &recorder{added: make(chan struct{}, 1)}
			tr := New(engine, rec)
			// The (empty) initial lists run out; then the batches are
			// handed in, in the order the test says.
			ctx, cancel := context.WithTimeout(context.Background(), cachetest.Timeout)
			defer cancel()
			if err := engine.Run(ctx, tr, informer.RunOptions{UntilSynced: true}); err != nil {
				t.Fatal(err)
			}
			hand := func(inf *informer.Informer, typ cache.DeltaType, obj *rawobj.Object) {
				t.Helper()
				if _, err := tr.Handle(informer.Batch{Informer: inf, Items: []informer.Item{{Delta: cache.Delta{Type: typ, Object: obj}, Type: typ, Object: obj}}}); err != nil {
					t.Fatal(err)
				}
			}
			backup := srv.object(jobs, "backup", 1, "")
			pod := srv.object(pods, "backup-x", 2, "", owner{jobs, "backup"})
			hand(jobRoot, cache.Added, backup)
			hand(podOwned, cache.Added, pod) // before the root's informer has it
			hand(podRoot, cache.Added, pod)
			want := []string{"Added Job backup", "Added Pod backup-x (Job backup)"}
			if !selects {
				// Without the selection known, the owned informer's Pod
				// is a member until its root's Store has it.
				want = []string{"Added Job backup", "Added Pod backup-x (Job backup)", "Added Pod backup-x (Job backup)"}
			}
			if !slices.Equal(rec.lines, want) {
				t.Errorf("got\n  %s\nwant\n  %s", strings.Join(rec.lines, "\n  "), strings.Join(want, "\n  "))
			}
		})
	}
}

// selectsByNamespaceAndName is the engine's Config.Selects of the tests'
// runs, as ListWatchFlags.Config's without selectors: a target selects
// the objects of its namespace and name.
func selectsByNamespaceAndName(t informer.Target, obj *rawobj.Object) (bool, bool) {
	return (t.Namespace == "" || t.Namespace == obj.Namespace) && (t.Name == "" || t.Name == obj.Name), true
}

// TestTreeRootAlsoMemberListedOnce: an object both named (pods/backup-x)
// and owned (the Job's), which its owned informer lists — promoted by
// another Pod of the Job — while its root's list is held back: neither
// the scout nor the owned informer places or prints it, nor its change —
// the root's list is to come — and the root's list prints it once,
// initial, with its owner.
func TestTreeRootAlsoMemberListedOnce(t *testing.T) {
	srv := newServer(t)
	backup := owner{jobs, "backup"}
	srv.apply(watch.Added, jobs, "backup", "1")
	srv.apply(watch.Added, pods, "backup-x", "1", backup)
	srv.apply(watch.Added, pods, "backup-y", "1", backup)
	podRoot := pods
	podRoot.Namespace, podRoot.Name = "ns", "backup-x"
	owned := ScoutTarget(pods, "ns")
	owned.Role = informer.RoleOwned
	gate := make(chan struct{})
	srv.gates = map[string]chan struct{}{podRoot.ID(): gate}
	srv.watching = make(chan string, 64)

	job := jobs
	job.Name = "backup"
	podRoot.Namespace = ""
	r := start(t, srv, []informer.Target{job, podRoot}, pods, configMaps)
	r.expectSet("Replaced Job backup initial", "Replaced Pod backup-y (Job backup) initial")
	// The owned informer of pods has listed (it watches after its list).
	awaitTarget(t, srv.watching, owned.ID(), "the pods were never promoted")
	srv.apply(watch.Modified, pods, "backup-x", "1", backup)
	close(gate)
	r.expect("Replaced Pod backup-x (Job backup) initial")
	r.synced()
	r.settle(backup, "marker-1")
}

// awaitTarget reads the Target IDs of ch (the server's listing or
// watching) until id comes; the test fails with why when it does not.
func awaitTarget(t *testing.T, ch <-chan string, id, why string) {
	t.Helper()
	for got := ""; got != id; {
		select {
		case got = <-ch:
		case <-time.After(cachetest.Timeout):
			t.Fatal(why)
		}
	}
}
