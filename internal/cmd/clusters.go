package cmd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	authorizationv1client "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/client-go/rest"

	"github.com/kubectl-deltas/kubectl-deltas/internal/connection"
	"github.com/kubectl-deltas/kubectl-deltas/internal/events"
	"github.com/kubectl-deltas/kubectl-deltas/internal/informer"
	"github.com/kubectl-deltas/kubectl-deltas/internal/targets"
	"github.com/kubectl-deltas/kubectl-deltas/internal/textsafe"
)

// cluster is one cluster of a run: how to reach it, where its messages go
// and, once prepared, what to watch there.
type cluster struct {
	conn   *connection.Cluster
	errOut io.Writer

	// Set by prepare.
	client  rest.Interface
	reviews authorizationv1client.SelfSubjectAccessReviewInterface
	req     targets.Request
	res     *targets.Resolution
	// namespaces are the GETs of namespaces of the access checks, the
	// stream's namespace asked ahead.
	namespaces *targets.Namespaces
	// targets are what to watch there, tagged with the cluster's context:
	// the resolved targets and scouts the user may list and watch.
	targets []informer.Target
	// events are the Events informers of --events the user may list and
	// watch (events.Targets).
	events []informer.Target
	// down names the API groups that were down at the start (an
	// aggregated API, say), with their APIServices' reasons: the type
	// follower looks for them again soon; a snapshot lacks them.
	down []string
}

// clusters returns the clusters of the run: one, through the command's
// connection flags; or, for several contexts, one per context with that
// context's connection flags and caches.
func (o *DeltasOptions) clusters() []*cluster {
	conns := o.Clusters.Clusters(o.contextNames)
	out := make([]*cluster, 0, len(conns))
	for _, conn := range conns {
		out = append(out, &cluster{conn: conn, errOut: o.ErrOut})
	}
	return out
}

// prepareClusters prepares the clusters of the run. One that cannot be
// prepared ends the run, or with --skip-unavailable is left out with a
// warning; an interrupt during the preparation is exit 130.
func (o *DeltasOptions) prepareClusters(ctx, sigCtx context.Context) ([]*cluster, error) {
	var ready []*cluster
	for _, p := range o.prepareAll(sigCtx) {
		if _, err := o.ErrOut.Write(p.stderr); err != nil {
			return nil, err
		}
		context := p.cl.conn.Context
		switch err := p.err; {
		case err != nil && sigCtx.Err() != nil && ctx.Err() == nil:
			return nil, &ExitError{Code: exitInterrupted}
		case err != nil && context == "":
			return nil, err
		case err != nil && o.Clusters.SkipUnavailable:
			fmt.Fprintf(o.ErrOut, "warning: skipping context %q: %s\n", context, textsafe.OneLine(err.Error()))
			continue
		case err != nil:
			return nil, fmt.Errorf("context %q: %w (--skip-unavailable watches the other clusters)", context, err)
		}
		ready = append(ready, p.cl)
	}
	if len(ready) == 0 {
		return nil, fmt.Errorf("none of the %d contexts could be watched", len(o.contextNames))
	}
	return ready, nil
}

// preparedCluster is the outcome of one cluster's preparation, and what it
// wrote to stderr meanwhile.
type preparedCluster struct {
	cl     *cluster
	err    error
	stderr []byte
}

// prepareAll prepares every cluster of the run at once: discovery and the
// access checks are round trips, so several clusters (an unreachable one
// among them) take as long as the slowest, not the sum. What each writes
// to stderr is held and handed back, to be written in the order of the
// contexts; every cluster writes to the run's stderr again afterwards.
func (o *DeltasOptions) prepareAll(ctx context.Context) []preparedCluster {
	clusters := o.clusters()
	if len(clusters) == 1 {
		return []preparedCluster{{cl: clusters[0], err: o.prepare(ctx, clusters[0])}}
	}
	out := make([]preparedCluster, len(clusters))
	held := make([]bytes.Buffer, len(clusters))
	var wg sync.WaitGroup
	for i, cl := range clusters {
		cl.errOut = &held[i]
		wg.Go(func() { out[i] = preparedCluster{cl: cl, err: o.prepare(ctx, cl)} })
	}
	wg.Wait()
	for i, cl := range clusters {
		cl.errOut = o.ErrOut
		out[i].stderr = held[i].Bytes()
	}
	return out
}

// prepare resolves the arguments against the cluster's discovery and
// checks access: the cluster's targets, tagged with its context.
func (o *DeltasOptions) prepare(ctx context.Context, cl *cluster) error {
	namespace, err := cl.conn.Namespace()
	if err != nil {
		return err
	}
	cl.req = o.Targets.Request(o.resourceArgs, namespace)
	config, err := cl.conn.RESTConfig()
	if err != nil {
		return err
	}
	if cl.client, cl.reviews, err = o.clients(config); err != nil {
		return err
	}
	cl.namespaces = &targets.Namespaces{}
	if namespace != "" && !cl.req.AllNamespaces {
		// The namespace is asked for while discovery is read from
		// kubectl's cache: the connection the checks share opens
		// meanwhile.
		askCtx, cancel := context.WithTimeout(ctx, cl.conn.StartupLimit())
		defer cancel()
		cl.namespaces.Ask(askCtx, cl.client, namespace)
	}
	if cl.res, err = resolve(ctx, cl); err != nil {
		return explainUnknownType(ctx, cl, err)
	}
	// The APIServices, when they can say anything of these targets, are
	// read while the access is checked: start-up waits for the slower of
	// the two, not their sum; their errors come in that order.
	services := make(chan targets.APIServices, 1)
	if cl.res.NeedsAPIServices() {
		go func() { services <- targets.ReadAPIServices(ctx, cl.client, cl.conn.StartupLimit()) }()
	} else {
		services <- nil
	}
	// The roots' access is checked as always; the scouts of --tree are
	// optional: a type the user may not list is skipped with a note.
	kept, accessErr := checkAccess(ctx, cl, append(cl.res.Targets, cl.res.Scouts...))
	read := <-services
	if err := o.checkAPIServices(cl, read); err != nil {
		return err
	}
	if accessErr != nil {
		return accessErr
	}
	read.Mark(kept)
	cl.targets = kept
	for i := range cl.targets {
		cl.targets[i].Context = cl.conn.Context
	}
	if o.Targets.Events {
		cl.events = checkEventsAccess(ctx, cl, events.Targets(cl.conn.Context, cl.targets, cl.req.AllNamespaces, o.Targets.Tree))
	}
	return nil
}

// checkAPIServices reads the cluster's APIServices (when the user may):
// a named type whose aggregated API is down is an error at the start; the
// targets an aggregated API serves are marked, so that its outages are its
// own; with --all-types, categories or --tree, one warning names every
// group version that is down, with its APIService's reason.
func (o *DeltasOptions) checkAPIServices(cl *cluster, services targets.APIServices) error {
	if err := services.NamedTypeDown(cl.res.Targets); err != nil {
		return err
	}
	services.Mark(cl.res.Targets)
	services.Mark(cl.res.Scouts)
	if !cl.res.Expanded && !cl.req.Tree {
		return nil
	}
	down := services.DownGroups(cl.res.FailedGroups)
	if len(down) == 0 {
		return nil
	}
	cl.down = down
	then := "their types are not in this stream"
	if o.followsTypes(cl) {
		then = "their types join the stream when they are back"
	}
	fmt.Fprintf(cl.errOut, "warning: %snot watching the API groups that are down: %s; %s\n", cl.conn.Prefix(), strings.Join(down, ", "), then)
	return nil
}

// followsTypes says whether the run follows the types the cluster serves
// as they come and go (targets.Follower): --all-types and categories,
// unless the run ends at the initial lists or follows a tree.
func (o *DeltasOptions) followsTypes(cl *cluster) bool {
	return cl.res.Expanded && !o.Wait.UntilSynced && !o.Targets.Tree
}

// explainUnknownType turns "no such type" into the reason when an
// aggregated API that may serve it is down: its types are unknown to
// discovery until it is back.
func explainUnknownType(ctx context.Context, cl *cluster, err error) error {
	var unknown *targets.UnknownTypeError
	if !errors.As(err, &unknown) {
		return err
	}
	if explained := targets.ReadAPIServices(ctx, cl.client, cl.conn.StartupLimit()).ExplainUnknown(unknown.Arg); explained != nil {
		return explained
	}
	return err
}

// checkEventsAccess keeps the Events informers the user may list and
// watch (targets.Access.KeepEvents), bounded like resolve.
func checkEventsAccess(ctx context.Context, cl *cluster, ts []informer.Target) []informer.Target {
	ctx, cancel := context.WithTimeout(ctx, cl.conn.StartupLimit())
	defer cancel()
	return targets.Access{Client: cl.client, Reviews: cl.reviews, Context: cl.conn.Context, ErrOut: cl.errOut}.KeepEvents(ctx, ts, cl.conn.Prefix())
}

// resolve resolves the cluster's request through discovery, bounded by
// --request-timeout (or connection.StartupTimeout) so that an unreachable
// server is an error, not a hang.
func resolve(ctx context.Context, cl *cluster) (*targets.Resolution, error) {
	limit := cl.conn.StartupLimit()
	type result struct {
		res *targets.Resolution
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := targets.Resolve(cl.conn, cl.req)
		done <- result{res, err}
	}()
	timer := time.NewTimer(limit)
	defer timer.Stop()
	select {
	case r := <-done:
		if r.err != nil {
			return nil, startupError(cl.conn, r.err)
		}
		return r.res, nil
	case <-timer.C:
		return nil, cl.conn.NoAnswerError(limit)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// checkAccess keeps the targets the user may list and watch (see
// targets.Access), bounded like resolve.
func checkAccess(ctx context.Context, cl *cluster, ts []informer.Target) ([]informer.Target, error) {
	limit := cl.conn.StartupLimit()
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	access := targets.Access{Client: cl.client, Reviews: cl.reviews, Context: cl.conn.Context, ErrOut: cl.errOut, Namespaces: cl.namespaces}
	kept, err := access.Check(ctx, ts)
	var unreached *targets.ServerError
	if !errors.As(err, &unreached) {
		return kept, err
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return nil, cl.conn.NoAnswerError(limit)
	}
	return nil, startupError(cl.conn, unreached.Err)
}

// startupError explains an error of the start-up: a server that cannot be
// reached, or one the engine would stop at (informer.IsFatal).
func startupError(conn *connection.Cluster, err error) error {
	if connection.IsNetworkError(err) {
		return conn.ConnectionError(err)
	}
	if informer.IsFatal(err) {
		return informer.ExplainFatal(err)
	}
	return err
}
