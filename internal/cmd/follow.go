package cmd

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	authorizationv1client "k8s.io/client-go/kubernetes/typed/authorization/v1"

	"github.com/kubectl-deltas/kubectl-deltas/internal/informer"
)

const (
	// followSettle is how long the follower waits after a change of the
	// served types before it reads discovery, so that a burst of changes
	// (a CRD created, then established) costs one read.
	followSettle = time.Second
	// followPoll is how often discovery is read when the user may not
	// watch CustomResourceDefinitions and APIServices.
	followPoll = 30 * time.Second
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

// follower keeps the targets of --all-types and of categories in step with
// the types the server serves while the stream runs: an engine of its own
// watches CRDs and APIServices, each change leads (after followSettle) to a
// fresh read of discovery, types that appeared join the stream and types
// that went away are retired once their objects' deletions are out. Types
// the user named are never touched.
type follower struct {
	o *DeltasOptions
	// context is the cluster's context in a multi-cluster run ("" for
	// one): the targets it adds carry it.
	context string
	mapper  meta.RESTMapper
	stream  *informer.Engine
	reviews authorizationv1client.SelfSubjectAccessReviewInterface
	// categories to expand again; none with --all-types.
	categories []string
	errOut     io.Writer

	// changed is poked when the served types may have changed.
	changed chan struct{}
	// skipped holds the IDs of types left out for access, so that the note
	// is printed once. Only the follower's goroutine touches it.
	skipped map[string]bool
}

// poke says the served types may have changed. Safe for concurrent use;
// never blocks.
func (f *follower) poke() {
	select {
	case f.changed <- struct{}{}:
	default:
	}
}

// run follows discovery until ctx ends: with a watch of CRDs and
// APIServices when the user may watch them, else by reading discovery
// every followPoll.
func (f *follower) run(ctx context.Context, cfg informer.Config) {
	var wg sync.WaitGroup
	defer wg.Wait()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	var poll <-chan time.Time
	var watchable []informer.Target
	for _, t := range servedTypeTargets() {
		if deniedVerb(ctx, f.reviews, t) == nil {
			watchable = append(watchable, t)
		}
	}
	if len(watchable) > 0 {
		cfg.Gone = nil
		served := informer.New(cfg, io.Discard)
		for _, t := range watchable {
			if _, err := served.Add(t); err != nil {
				fmt.Fprintf(f.errOut, "warning: %snot following new types: %v\n", f.o.contextPrefix(), err)
				return
			}
		}
		wg.Go(func() { _ = served.Run(ctx, changeSink{f.poke}, informer.RunOptions{}) })
	} else {
		ticker := time.NewTicker(followPoll)
		defer ticker.Stop()
		poll = ticker.C
	}
	var settle <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-f.changed:
			if settle == nil {
				settle = time.After(followSettle)
			}
		case <-poll:
			f.sync(ctx)
		case <-settle:
			settle = nil
			f.sync(ctx)
		}
	}
}

// sync reads discovery and brings the stream's optional targets in line.
func (f *follower) sync(ctx context.Context) {
	e, err := f.o.newExpansion(f.mapper, true)
	if err != nil {
		// The next change or poll tries again; the stream goes on.
		return
	}
	var desired []informer.Target
	if len(f.categories) == 0 {
		desired = e.allTypes()
	}
	for _, c := range f.categories {
		members, _ := e.category(c)
		desired = append(desired, members...)
	}
	want := map[string]informer.Target{}
	for i := range desired {
		desired[i].Context = f.context
		want[desired[i].ID()] = desired[i]
	}
	for _, inf := range f.stream.Informers() {
		t := inf.Target()
		if t.Context != f.context {
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
		if f.stream.Retire(t.ID()) {
			fmt.Fprintf(f.errOut, "info: %s%s is no longer served: stopped watching it\n", f.o.contextPrefix(), t.Resource.GroupResource())
		}
	}
	for _, t := range desired {
		if _, ok := want[t.ID()]; !ok {
			continue
		}
		delete(want, t.ID())
		if err := deniedVerb(ctx, f.reviews, t); err != nil {
			if !f.skipped[t.ID()] {
				f.skipped[t.ID()] = true
				fmt.Fprintf(f.errOut, "info: %sskipping new type %s: you may not list and watch it\n", f.o.contextPrefix(), t.Resource.GroupResource())
			}
			continue
		}
		if _, err := f.stream.Add(t); err == nil {
			fmt.Fprintf(f.errOut, "info: %swatching new type %s\n", f.o.contextPrefix(), t.Resource.GroupResource())
		}
	}
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
