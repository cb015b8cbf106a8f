package cmd

import (
	"bytes"
	"context"
	"fmt"
	"sync"

	"github.com/kubectl-deltas/kubectl-deltas/internal/history/recording"
	"github.com/kubectl-deltas/kubectl-deltas/internal/targets"
	"github.com/kubectl-deltas/kubectl-deltas/internal/textsafe"
)

// clusters returns the clusters of the run: one, through the command's
// connection flags; or, for several contexts, one per context with that
// context's connection flags and caches.
func (o *DeltasOptions) clusters() []*targets.Cluster {
	conns := o.Clusters.Clusters(o.contextNames)
	out := make([]*targets.Cluster, 0, len(conns))
	for _, conn := range conns {
		out = append(out, &targets.Cluster{Conn: conn, ErrOut: o.ErrOut})
	}
	return out
}

// apiServers are the API servers of clusters, each with its context: a
// plain run's is the current one.
func (o *DeltasOptions) apiServers(clusters []*targets.Cluster) []recording.APIServer {
	out := make([]recording.APIServer, 0, len(clusters))
	for _, cl := range clusters {
		context := cl.Conn.Context
		if context == "" {
			context, _ = o.Clusters.CurrentContext()
		}
		out = append(out, recording.APIServer{Context: context, URL: cl.Conn.ServerURL()})
	}
	return out
}

// preparation is how the run prepares each cluster (targets.Prepare).
func (o *DeltasOptions) preparation() targets.Preparation {
	return targets.Preparation{Flags: o.Targets, Args: o.resourceArgs, Clients: o.clients, UntilSynced: o.Wait.UntilSynced}
}

// prepareClusters prepares the clusters of the run. One that cannot be
// prepared ends the run, or with --skip-unavailable is left out with a
// warning; an interrupt during the preparation is exit 130.
func (o *DeltasOptions) prepareClusters(ctx, sigCtx context.Context) ([]*targets.Cluster, error) {
	var ready []*targets.Cluster
	for _, p := range o.prepareAll(sigCtx) {
		if _, err := o.ErrOut.Write(p.stderr); err != nil {
			return nil, err
		}
		context := p.cl.Conn.Context
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
	cl     *targets.Cluster
	err    error
	stderr []byte
}

// prepareAll prepares every cluster of the run at once: discovery and the
// access checks are round trips, so several clusters (an unreachable one
// among them) take as long as the slowest, not the sum. What each writes
// to stderr is held and handed back, to be written in the order of the
// contexts; every cluster writes to the run's stderr again afterwards.
func (o *DeltasOptions) prepareAll(ctx context.Context) []preparedCluster {
	clusters, prep := o.clusters(), o.preparation()
	if len(clusters) == 1 {
		return []preparedCluster{{cl: clusters[0], err: prep.Prepare(ctx, clusters[0])}}
	}
	out := make([]preparedCluster, len(clusters))
	held := make([]bytes.Buffer, len(clusters))
	var wg sync.WaitGroup
	for i, cl := range clusters {
		cl.ErrOut = &held[i]
		wg.Go(func() { out[i] = preparedCluster{cl: cl, err: prep.Prepare(ctx, cl)} })
	}
	wg.Wait()
	for i, cl := range clusters {
		cl.ErrOut = o.ErrOut
		out[i].stderr = held[i].Bytes()
	}
	return out
}
