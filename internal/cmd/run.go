package cmd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	authorizationv1client "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/client-go/rest"

	"github.com/kubectl-deltas/kubectl-deltas/internal/cache"
	"github.com/kubectl-deltas/kubectl-deltas/internal/informer"
	"github.com/kubectl-deltas/kubectl-deltas/internal/printer"
	"github.com/kubectl-deltas/kubectl-deltas/internal/rawobj"
	"github.com/kubectl-deltas/kubectl-deltas/internal/record"
	"github.com/kubectl-deltas/kubectl-deltas/internal/source"
	"github.com/kubectl-deltas/kubectl-deltas/internal/tree"
)

const (
	// startupTimeout bounds discovery when --request-timeout is not set,
	// so that an unreachable server is reported instead of hanging.
	startupTimeout = 30 * time.Second
	// clientQPS and clientBurst lift client-go's default rate limit of 5
	// requests/s, which would throttle paging through a large list.
	clientQPS   = 100
	clientBurst = 200
)

// Run resolves the resources, then runs one informer per target until a
// stop condition, a signal or a fatal error. With several contexts, each
// cluster is resolved and checked on its own, and one engine runs the
// informers of all of them: one stream, in pop order.
func (o *DeltasOptions) Run(ctx context.Context) error {
	if ctx == nil {
		ctx = context.Background()
	}
	sigCtx, stopSignals := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stopSignals()

	if err := o.checkConfigPresent(); err != nil {
		return err
	}
	var clusters []*cluster
	for _, p := range o.prepareClusters(sigCtx) {
		c, cl, err := p.o, p.cl, p.err
		if _, werr := o.ErrOut.Write(p.stderr); werr != nil {
			return werr
		}
		switch {
		case err != nil && sigCtx.Err() != nil && ctx.Err() == nil:
			return &ExitError{Code: exitInterrupted}
		case err != nil && c.context == "":
			return err
		case err != nil && o.skipUnavailable:
			fmt.Fprintf(o.ErrOut, "warning: skipping context %q: %s\n", c.context, oneLine(err))
			continue
		case err != nil:
			return fmt.Errorf("context %q: %w (--skip-unavailable watches the other clusters)", c.context, err)
		}
		clusters = append(clusters, cl)
	}
	if len(clusters) == 0 {
		return fmt.Errorf("none of the %d contexts could be watched", len(o.clusters))
	}
	if m, ok := o.printer.(printer.MultiTyper); ok {
		multi := o.tree
		for _, cl := range clusters {
			multi = multi || cl.res.expanded || distinctResources(cl.targets) > 1
		}
		m.SetMultiType(multi)
	}

	byContext := map[string]*cluster{}
	for _, cl := range clusters {
		byContext[cl.o.context] = cl
	}
	cfg := o.engineConfig(func(context string) rest.Interface { return byContext[context].client })
	if o.tree {
		cfg.Indexers = tree.Indexers()
	}
	var follows []*follower
	for _, cl := range clusters {
		if cl.res.expanded && !o.untilSynced && !o.tree {
			// Types appear and go away while the stream runs: follow them.
			f, err := cl.follower()
			if err != nil {
				return err
			}
			follows = append(follows, f)
		}
	}
	if len(follows) > 0 {
		cfg.Gone = func(t informer.Target) {
			for _, f := range follows {
				if f.context == t.Context {
					f.poke()
				}
			}
		}
	}
	engine := informer.New(cfg, o.ErrOut)
	for _, cl := range clusters {
		for _, t := range cl.targets {
			if _, err := engine.Add(t); err != nil {
				return err
			}
		}
	}
	runCtx, stopFollowing := context.WithCancel(sigCtx)
	var following sync.WaitGroup
	for _, f := range follows {
		f.stream = engine
		following.Go(func() { f.run(runCtx, servedTypesConfig(byContext[f.context].client)) })
	}
	stdoutClosed, stopWatching := watchStdoutClosed(o.Out)
	defer stopWatching()
	out := o.Out
	if o.quiet {
		out = io.Discard
	}
	sink := record.NewSink(o.stage, o.printer, out, o.count, nil)
	runOpts := informer.RunOptions{
		Timeout:      o.timeout,
		UntilSynced:  o.untilSynced,
		OutputClosed: stdoutClosed,
	}
	var runSink informer.Sink = sink
	if o.waiter.active() {
		o.waiter.engine = engine
		runOpts.Check = o.waiter.check
		runSink = o.waiter.sink(sink)
	}
	if o.tree {
		// The tree decides what is printed; the waiter sees what is.
		runSink = tree.New(engine, runSink)
	}
	err := engine.Run(sigCtx, runSink, runOpts)
	stopFollowing()
	following.Wait()
	switch {
	case errors.Is(err, informer.ErrInterrupted):
		return &ExitError{Code: exitInterrupted}
	case errors.Is(err, informer.ErrTimedOut) && o.waiter.active():
		return o.waiter.timedOut()
	case errors.Is(err, informer.ErrTimedOut):
		return nil
	}
	return err
}

// cluster is one cluster of a run, resolved and checked: its options (for
// its context), its client and what to watch there.
type cluster struct {
	o       *DeltasOptions
	client  rest.Interface
	reviews authorizationv1client.SelfSubjectAccessReviewInterface
	res     *resolution
	targets []informer.Target
}

// clusterOptions returns the options of each cluster of the run: o itself
// for one cluster; for several contexts, a copy per context with that
// context's connection flags, its own caches and its default namespace.
func (o *DeltasOptions) clusterOptions() []*DeltasOptions {
	if len(o.clusters) == 0 {
		return []*DeltasOptions{o}
	}
	out := make([]*DeltasOptions, 0, len(o.clusters))
	for _, name := range o.clusters {
		c := *o
		c.configFlags = forContext(o.configFlags, name, o.IOStreams)
		c.cachedConfig = nil
		c.context = name
		out = append(out, &c)
	}
	return out
}

// preparedCluster is the outcome of one cluster's preparation, and what it
// wrote to stderr meanwhile.
type preparedCluster struct {
	o      *DeltasOptions
	cl     *cluster
	err    error
	stderr []byte
}

// prepareClusters prepares every cluster of the run at once: discovery and
// the access checks are round trips, so several clusters (an unreachable
// one among them) take as long as the slowest, not the sum. What each
// writes to stderr is held and handed back, for Run to write in the order
// of the contexts; every cluster's options write to the run's stderr again
// afterwards.
func (o *DeltasOptions) prepareClusters(ctx context.Context) []preparedCluster {
	opts := o.clusterOptions()
	if len(opts) == 1 {
		cl, err := opts[0].prepare(ctx)
		return []preparedCluster{{o: opts[0], cl: cl, err: err}}
	}
	out := make([]preparedCluster, len(opts))
	held := make([]bytes.Buffer, len(opts))
	var wg sync.WaitGroup
	for i, c := range opts {
		c.ErrOut = &held[i]
		wg.Go(func() {
			cl, err := c.prepare(ctx)
			out[i] = preparedCluster{o: c, cl: cl, err: err}
		})
	}
	wg.Wait()
	for i, c := range opts {
		c.ErrOut = o.ErrOut
		out[i].stderr = held[i].Bytes()
	}
	return out
}

// prepare resolves the arguments against the cluster's discovery and
// checks access: the cluster's targets, tagged with its context.
func (o *DeltasOptions) prepare(ctx context.Context) (*cluster, error) {
	var err error
	o.namespace, o.explicitNamespace, err = o.configFlags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return nil, kubeconfigError(err)
	}
	res, err := o.resolve(ctx)
	if err != nil {
		return nil, err
	}
	if len(res.failedGroups) > 0 {
		fmt.Fprintf(o.ErrOut, "warning: %snot watching the API groups discovery could not read: %s\n", o.contextPrefix(), strings.Join(res.failedGroups, ", "))
	}
	config, err := o.restConfig()
	if err != nil {
		return nil, err
	}
	client, err := source.NewRESTClient(config)
	if err != nil {
		return nil, err
	}
	authz, err := authorizationv1client.NewForConfig(config)
	if err != nil {
		return nil, fmt.Errorf("failed to construct an authorization client: %w", err)
	}
	reviews := authz.SelfSubjectAccessReviews()
	// The roots' access is checked as always; the scouts of --tree are
	// optional: a type the user may not list is skipped with a note.
	targets, err := o.preflight(ctx, reviews, client, append(res.targets, res.scouts...))
	if err != nil {
		return nil, err
	}
	for i := range targets {
		targets[i].Context = o.context
	}
	return &cluster{o: o, client: client, reviews: reviews, res: res, targets: targets}, nil
}

// follower returns the follower of the cluster's served types.
func (cl *cluster) follower() (*follower, error) {
	mapper, err := cl.o.configFlags.ToRESTMapper()
	if err != nil {
		return nil, kubeconfigError(err)
	}
	return &follower{
		o: cl.o, context: cl.o.context, mapper: mapper, reviews: cl.reviews, categories: cl.res.categories, errOut: cl.o.ErrOut,
		changed: make(chan struct{}, 1), skipped: map[string]bool{},
	}, nil
}

// contextPrefix names the cluster in messages of a multi-cluster run.
func (o *DeltasOptions) contextPrefix() string {
	if o.context == "" {
		return ""
	}
	return fmt.Sprintf("context %q: ", o.context)
}

// engineConfig is what every informer of the run shares: the flags that
// shape lists and watches, and raw JSON list/watch requests through client.
func (o *DeltasOptions) engineConfig(clientOf func(context string) rest.Interface) informer.Config {
	pageSize := int64(0)
	if o.chunkSizeSet {
		pageSize = o.chunkSize
		if pageSize == 0 {
			pageSize = -1
		}
	}
	parse := rawobj.ParseOptions{KeepManagedFields: o.showManagedFields}
	return informer.Config{
		NewListerWatcher: func(t informer.Target) cache.ListerWatcher {
			target := source.Target{
				Resource:      t.Resource,
				Namespace:     t.Namespace,
				LabelSelector: o.labelSelector,
				FieldSelector: withName(o.fieldSelector, t.Name),
				Parse:         parse,
				MetadataOnly:  o.metadataOnly || t.MetadataOnly,
			}
			if t.Unfiltered {
				target.LabelSelector, target.FieldSelector = "", withName("", t.Name)
			}
			if target.MetadataOnly && !t.MetadataOnly {
				target.FullObjects = func() {
					fmt.Fprintf(o.ErrOut, "info: %s cannot be listed as metadata only: watching whole objects\n", t.Resource.GroupResource())
				}
			}
			return source.NewListerWatcher(clientOf(t.Context), target)
		},
		ResyncPeriod:    o.resync,
		PageSize:        pageSize,
		MinWatchTimeout: o.minWatchTimeout,
		// auto lists: the watch cache serves a list at resourceVersion 0
		// from memory in one response, at about half the client and a
		// third of the server CPU of streaming 10,000 events
		// (bench/RESULTS.md).
		WatchList:         o.watchList == "true",
		ResumeFrom:        o.resourceVersion,
		MaxUpdatedBacklog: o.maxUpdatedBacklog,
	}
}

// servedTypesConfig is the configuration of the follower's engine: plain
// lists and watches of CRDs and APIServices, whatever the user's flags.
func servedTypesConfig(client rest.Interface) informer.Config {
	return informer.Config{
		NewListerWatcher: func(t informer.Target) cache.ListerWatcher {
			return source.NewListerWatcher(client, source.Target{Resource: t.Resource})
		},
	}
}

// withName adds metadata.name=name to a field selector.
func withName(fieldSelector, name string) string {
	switch {
	case name == "":
		return fieldSelector
	case fieldSelector == "":
		return "metadata.name=" + name
	}
	return fieldSelector + ",metadata.name=" + name
}

// restConfig is the REST config of the run, with a rate limit fit for
// paging and watching. It is built once.
func (o *DeltasOptions) restConfig() (*rest.Config, error) {
	if o.cachedConfig != nil {
		return o.cachedConfig, nil
	}
	config, err := o.configFlags.ToRESTConfig()
	if err != nil {
		return nil, kubeconfigError(err)
	}
	config.QPS = clientQPS
	config.Burst = clientBurst
	o.cachedConfig = config
	return config, nil
}
