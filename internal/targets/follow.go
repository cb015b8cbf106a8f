package targets

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	authorizationv1client "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/client-go/rest"

	"github.com/kubectl-deltas/kubectl-deltas/internal/cache"
	"github.com/kubectl-deltas/kubectl-deltas/internal/informer"
	"github.com/kubectl-deltas/kubectl-deltas/internal/listwatch"
	"github.com/kubectl-deltas/kubectl-deltas/internal/textsafe"
)

const (
	// followSettle is how long the follower waits after a change of the
	// served types before it reads discovery, so that a burst of changes
	// (a CRD created, then established) costs one read.
	followSettle = time.Second
	// followPoll is how often discovery is read when the user may not
	// watch CustomResourceDefinitions and APIServices.
	followPoll = 30 * time.Second
	// followDownRetry is how soon discovery is read again while a group
	// version is down; it doubles up to followPoll.
	followDownRetry = 2 * time.Second
	// followReadLimit bounds the follower's read of the APIServices.
	followReadLimit = 10 * time.Second
)

// servedTypeTargets are what changes the set of served types: CRDs and
// APIServices, whose changes the follower watches.
func servedTypeTargets() []informer.Target {
	return []informer.Target{
		{
			Resource: schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"},
			Kind:     schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"},
			Optional: true,
		},
		{
			Resource: schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"},
			Kind:     schema.GroupVersionKind{Group: "apiregistration.k8s.io", Version: "v1", Kind: "APIService"},
			Optional: true,
		},
	}
}

// Engine is what the follower needs of the engine of the stream: add a
// target, retire one, and the targets it runs (*informer.Engine).
type Engine interface {
	Add(informer.Target) (*informer.Informer, error)
	Retire(id string) bool
	Informers() []*informer.Informer
}

// FollowerConfig is the cluster a Follower follows and what it resolved.
type FollowerConfig struct {
	// Cluster is the cluster's discovery; Request what was resolved there
	// (namespace, -A, --exclude) and Categories the arguments that were
	// categories, expanded again on every change (none with --all-types).
	Cluster    Discovery
	Request    Query
	Categories []string
	// Context is the cluster's context in a run over several ("" for one):
	// the targets the follower adds carry it, its messages name it.
	Context string
	// Client lists and watches CRDs and APIServices; Reviews checks access
	// to the new types.
	Client  rest.Interface
	Reviews authorizationv1client.SelfSubjectAccessReviewInterface
	// ErrOut receives one info line per type added, retired or skipped.
	ErrOut io.Writer
	// Down says that a group version was down at the start: discovery is
	// read again soon, until it is back.
	Down bool
}

// Follower keeps the targets of --all-types and of categories in step with
// the types the server serves while the stream runs: an engine of its own
// watches CRDs and APIServices, each change leads (after followSettle) to a
// fresh read of discovery, types that appeared join the stream and types
// that went away are retired once their objects' deletions are out. Types
// the user named are never touched.
type Follower struct {
	cfg    FollowerConfig
	mapper meta.RESTMapper

	// changed is poked when the served types may have changed.
	changed chan struct{}
	// skipped holds the IDs of types left out for access, so that the note
	// is printed once. Only Run's goroutine touches it.
	skipped map[string]bool
}

// NewFollower returns the follower of one cluster's served types.
func NewFollower(cfg FollowerConfig) (*Follower, error) {
	mapper, err := cfg.Cluster.RESTMapper()
	if err != nil {
		return nil, err
	}
	return &Follower{cfg: cfg, mapper: mapper, changed: make(chan struct{}, 1), skipped: map[string]bool{}}, nil
}

// Context is the context of the cluster f follows.
func (f *Follower) Context() string { return f.cfg.Context }

// Poke says the served types may have changed (an informer of the stream
// found its type gone). Safe for concurrent use; never blocks.
func (f *Follower) Poke() {
	select {
	case f.changed <- struct{}{}:
	default:
	}
}

// Run follows discovery into stream until ctx ends: with a watch of CRDs
// and APIServices when the user may watch them, else by reading discovery
// every followPoll.
func (f *Follower) Run(ctx context.Context, stream Engine) {
	var wg sync.WaitGroup
	defer wg.Wait()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	var poll <-chan time.Time
	var watchable []informer.Target
	for _, t := range servedTypeTargets() {
		if deniedVerb(ctx, f.cfg.Reviews, t) == nil {
			watchable = append(watchable, t)
		}
	}
	if len(watchable) > 0 {
		served := informer.New(f.servedTypesConfig(), io.Discard)
		for _, t := range watchable {
			if _, err := served.Add(t); err != nil {
				fmt.Fprintf(f.cfg.ErrOut, "warning: %snot following new types: %v\n", textsafe.ContextPrefix(f.cfg.Context), err)
				return
			}
		}
		wg.Go(func() { _ = served.Run(ctx, changeSink{f.Poke}, informer.RunOptions{}) })
	} else {
		ticker := time.NewTicker(followPoll)
		defer ticker.Stop()
		poll = ticker.C
	}
	// While a group version is down, discovery is read again after
	// downRetry (doubling up to followPoll): an aggregated API that comes
	// back turns available first and is listed in discovery only later,
	// with no change to watch in between.
	var settle, retry <-chan time.Time
	downRetry := followDownRetry
	if f.cfg.Down {
		retry = time.After(downRetry)
	}
	resync := func() {
		if f.sync(ctx, stream) {
			retry = time.After(downRetry)
			downRetry = min(2*downRetry, followPoll)
			return
		}
		retry, downRetry = nil, followDownRetry
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-f.changed:
			if settle == nil {
				settle = time.After(followSettle)
			}
		case <-poll:
			resync()
		case <-settle:
			settle = nil
			resync()
		case <-retry:
			resync()
		}
	}
}

// servedTypesConfig is the configuration of the follower's engine: plain
// lists and watches of CRDs and APIServices, whatever the user's flags.
func (f *Follower) servedTypesConfig() informer.Config {
	return informer.Config{
		NewListerWatcher: func(t informer.Target) cache.ListerWatcher {
			return listwatch.NewListerWatcher(f.cfg.Client, listwatch.Request{Resource: t.Resource})
		},
	}
}

// sync reads discovery and brings the stream's optional targets in line;
// it says whether a group version is down (or discovery could not be
// read), to be read again soon.
func (f *Follower) sync(ctx context.Context, stream Engine) (down bool) {
	e, err := newExpansion(f.cfg.Cluster, f.mapper, f.cfg.Request, true)
	if err != nil {
		// The next change, poll or retry tries again; the stream goes on.
		return true
	}
	var desired []informer.Target
	if len(f.cfg.Categories) == 0 {
		desired = e.allTypes()
	}
	for _, c := range f.cfg.Categories {
		members, _ := e.category(c)
		desired = append(desired, members...)
	}
	downGVs, services := f.down(ctx, e)
	services.Mark(desired)
	want := map[string]informer.Target{}
	for i := range desired {
		desired[i].Context = f.cfg.Context
		want[desired[i].ID()] = desired[i]
	}
	for _, inf := range stream.Informers() {
		t := inf.Target()
		if t.Context != f.cfg.Context {
			continue
		}
		if !t.Optional {
			delete(want, t.ID())
			continue
		}
		if _, ok := want[t.ID()]; ok {
			delete(want, t.ID())
			continue
		}
		if downGVs[t.Resource.GroupVersion()] {
			continue
		}
		if stream.Retire(t.ID()) {
			fmt.Fprintf(f.cfg.ErrOut, "info: %s%s is no longer served: stopped watching it\n", textsafe.ContextPrefix(f.cfg.Context), t.Resource.GroupResource())
		}
	}
	for _, t := range desired {
		if _, ok := want[t.ID()]; !ok {
			continue
		}
		delete(want, t.ID())
		if err := deniedVerb(ctx, f.cfg.Reviews, t); err != nil {
			if !f.skipped[t.ID()] {
				f.skipped[t.ID()] = true
				fmt.Fprintf(f.cfg.ErrOut, "info: %sskipping new type %s: you may not list and watch it\n", textsafe.ContextPrefix(f.cfg.Context), t.Resource.GroupResource())
			}
			continue
		}
		if _, err := stream.Add(t); err == nil {
			fmt.Fprintf(f.cfg.ErrOut, "info: %swatching new type %s\n", textsafe.ContextPrefix(f.cfg.Context), t.Resource.GroupResource())
		}
	}
	return len(downGVs) > 0
}

// down are the group versions that are down, not gone: discovery lists
// them but cannot read them (stale), or their aggregated APIService is
// unavailable. Their informers keep their objects and retry.
func (f *Follower) down(ctx context.Context, e *expansion) (map[schema.GroupVersion]bool, APIServices) {
	down := map[schema.GroupVersion]bool{}
	for _, gv := range e.types.failedGroups {
		if parsed, err := schema.ParseGroupVersion(gv); err == nil {
			down[parsed] = true
		}
	}
	services := ReadAPIServices(ctx, f.cfg.Client, followReadLimit)
	for _, s := range services.Unavailable() {
		down[s.GroupVersion] = true
	}
	return down, services
}

// changeSink pokes on every delta after the initial lists: a CRD or an
// APIService was created, changed (established, available) or deleted.
type changeSink struct{ poke func() }

func (s changeSink) Handle(b informer.Batch) (bool, error) {
	if !b.Initial {
		s.poke()
	}
	return false, nil
}

func (changeSink) Flush() error { return nil }
