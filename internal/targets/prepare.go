package targets

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	authorizationv1client "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/client-go/rest"

	"github.com/kubectl-deltas/kubectl-deltas/internal/connection"
	"github.com/kubectl-deltas/kubectl-deltas/internal/events"
	"github.com/kubectl-deltas/kubectl-deltas/internal/informer"
	"github.com/kubectl-deltas/kubectl-deltas/internal/listwatch"
)

// ClientMaker makes the clients of one cluster from its REST config: raw
// JSON lists and watches, and the reviews of the access checks. Tests give
// fakes.
type ClientMaker func(config *rest.Config) (rest.Interface, authorizationv1client.SelfSubjectAccessReviewInterface, error)

// RealClients is the ClientMaker of the command.
func RealClients(config *rest.Config) (rest.Interface, authorizationv1client.SelfSubjectAccessReviewInterface, error) {
	client, err := listwatch.NewRESTClient(config)
	if err != nil {
		return nil, nil, err
	}
	authz, err := authorizationv1client.NewForConfig(config)
	if err != nil {
		return nil, nil, fmt.Errorf("failed to construct an authorization client: %w", err)
	}
	return client, authz.SelfSubjectAccessReviews(), nil
}

// Cluster is one cluster of a run: how to reach it, where its messages go
// and, once prepared (Preparation.Prepare), what to watch there. Only
// Prepare writes the fields after Conn and ErrOut.
type Cluster struct {
	Conn   *connection.Conn
	ErrOut io.Writer

	Client  rest.Interface
	Reviews authorizationv1client.SelfSubjectAccessReviewInterface
	Request Query
	// Resolution is what the arguments resolved to through discovery.
	Resolution *Resolution
	// Targets are what to watch there, tagged with the cluster's context:
	// the resolved targets and scouts the user may list and watch.
	Targets []informer.Target
	// Events are the Events informers of --events the user may list and
	// watch (events.Targets).
	Events []informer.Target
	// Down names the API groups that were down at the start (an
	// aggregated API, say), with their APIServices' reasons: the type
	// follower looks for them again soon; a snapshot lacks them.
	Down []string

	// namespaces are the GETs of namespaces of the access checks, the
	// stream's namespace asked ahead.
	namespaces *Namespaces
}

// Preparation is how each cluster of a run is prepared: the arguments as
// parsed, the flags, and the clients a REST config gives.
type Preparation struct {
	Flags   *Flags
	Args    []Arg
	Clients ClientMaker
	// UntilSynced: the run ends with the initial lists, so that no type
	// is followed as it comes and goes.
	UntilSynced bool
}

// Prepare resolves the arguments against the cluster's discovery, reads
// its APIServices where they can say anything of the targets, and checks
// access: the cluster's targets (and Events informers), tagged with its
// context. Every round trip is bounded by the connection's start-up limit,
// so that an unreachable server is an error, not a hang. Warnings go to
// cl.ErrOut.
func (p Preparation) Prepare(ctx context.Context, cl *Cluster) error {
	namespace, err := cl.Conn.Namespace()
	if err != nil {
		return err
	}
	cl.Request = p.Flags.Request(p.Args, namespace)
	config, err := cl.Conn.RESTConfig()
	if err != nil {
		return err
	}
	if cl.Client, cl.Reviews, err = p.Clients(config); err != nil {
		return err
	}
	cl.namespaces = &Namespaces{}
	if namespace != "" && !cl.Request.AllNamespaces {
		// The namespace is asked for while discovery is read from
		// kubectl's cache: the connection the checks share opens
		// meanwhile.
		askCtx, cancel := context.WithTimeout(ctx, cl.Conn.StartupLimit())
		defer cancel()
		cl.namespaces.Ask(askCtx, cl.Client, namespace)
	}
	if cl.Resolution, err = cl.resolve(ctx); err != nil {
		return cl.explainUnknownType(ctx, err)
	}
	// The APIServices, when they can say anything of these targets, are
	// read while the access is checked: start-up waits for the slower of
	// the two, not their sum; their errors come in that order.
	services := make(chan APIServices, 1)
	if cl.Resolution.NeedsAPIServices() {
		go func() { services <- ReadAPIServices(ctx, cl.Client, cl.Conn.StartupLimit()) }()
	} else {
		services <- nil
	}
	// The roots' access is checked as always; the scouts of --tree are
	// optional: a type the user may not list is skipped with a note.
	kept, accessErr := cl.checkAccess(ctx, append(cl.Resolution.Targets, cl.Resolution.Scouts...))
	read := <-services
	if err := p.checkAPIServices(cl, read); err != nil {
		return err
	}
	if accessErr != nil {
		return accessErr
	}
	read.Mark(kept)
	cl.Targets = kept
	for i := range cl.Targets {
		cl.Targets[i].Context = cl.Conn.Context
	}
	if p.Flags.Events {
		cl.Events = cl.checkEventsAccess(ctx, events.Targets(cl.Conn.Context, cl.Targets, cl.Request.AllNamespaces, p.Flags.Tree))
	}
	return nil
}

// FollowsTypes says whether the run follows the types the cluster serves
// as they come and go (Follower): --all-types and categories, unless the
// run ends at the initial lists or follows a tree.
func (p Preparation) FollowsTypes(cl *Cluster) bool {
	return cl.Resolution.Expanded && !p.UntilSynced && !p.Flags.Tree
}

// Follower returns the follower of the cluster's types (FollowsTypes).
func (cl *Cluster) Follower() (*Follower, error) {
	return NewFollower(FollowerConfig{
		Cluster: cl.Conn, Request: cl.Request, Categories: cl.Resolution.Categories, Context: cl.Conn.Context,
		Client: cl.Client, Reviews: cl.Reviews, ErrOut: cl.ErrOut, Down: len(cl.Down) > 0,
	})
}

// checkAPIServices reads the cluster's APIServices (when the user may):
// a named type whose aggregated API is down is an error at the start; the
// targets an aggregated API serves are marked, so that its outages are its
// own; with --all-types, categories or --tree, one warning names every
// group version that is down, with its APIService's reason.
func (p Preparation) checkAPIServices(cl *Cluster, services APIServices) error {
	res := cl.Resolution
	if err := services.NamedTypeDown(res.Targets); err != nil {
		return err
	}
	services.Mark(res.Targets)
	services.Mark(res.Scouts)
	if !res.Expanded && !cl.Request.Tree {
		return nil
	}
	down := services.DownGroups(res.FailedGroups)
	if len(down) == 0 {
		return nil
	}
	cl.Down = down
	then := "their types are not in this stream"
	if p.FollowsTypes(cl) {
		then = "their types join the stream when they are back"
	}
	fmt.Fprintf(cl.ErrOut, "warning: %snot watching the API groups that are down: %s; %s\n", cl.Conn.Prefix(), strings.Join(down, ", "), then)
	return nil
}

// explainUnknownType turns "no such type" into the reason when an
// aggregated API that may serve it is down: its types are unknown to
// discovery until it is back.
func (cl *Cluster) explainUnknownType(ctx context.Context, err error) error {
	var unknown *UnknownTypeError
	if !errors.As(err, &unknown) {
		return err
	}
	if explained := ReadAPIServices(ctx, cl.Client, cl.Conn.StartupLimit()).ExplainUnknown(unknown.Arg); explained != nil {
		return explained
	}
	return err
}

// checkEventsAccess keeps the Events informers the user may list and
// watch (Access.KeepEvents), bounded like resolve.
func (cl *Cluster) checkEventsAccess(ctx context.Context, ts []informer.Target) []informer.Target {
	ctx, cancel := context.WithTimeout(ctx, cl.Conn.StartupLimit())
	defer cancel()
	return Access{Client: cl.Client, Reviews: cl.Reviews, Context: cl.Conn.Context, ErrOut: cl.ErrOut}.KeepEvents(ctx, ts, cl.Conn.Prefix())
}

// resolve resolves the cluster's request through discovery, bounded by
// --request-timeout (or connection.StartupTimeout) so that an unreachable
// server is an error, not a hang.
func (cl *Cluster) resolve(ctx context.Context) (*Resolution, error) {
	limit := cl.Conn.StartupLimit()
	type result struct {
		res *Resolution
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := Resolve(cl.Conn, cl.Request)
		done <- result{res, err}
	}()
	timer := time.NewTimer(limit)
	defer timer.Stop()
	select {
	case r := <-done:
		if r.err != nil {
			return nil, startupError(cl.Conn, r.err)
		}
		return r.res, nil
	case <-timer.C:
		return nil, cl.Conn.NoAnswerError(limit)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// checkAccess keeps the targets the user may list and watch (see Access),
// bounded like resolve.
func (cl *Cluster) checkAccess(ctx context.Context, ts []informer.Target) ([]informer.Target, error) {
	limit := cl.Conn.StartupLimit()
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	access := Access{Client: cl.Client, Reviews: cl.Reviews, Context: cl.Conn.Context, ErrOut: cl.ErrOut, Namespaces: cl.namespaces}
	kept, err := access.Check(ctx, ts)
	var unreached *ServerError
	if !errors.As(err, &unreached) {
		return kept, err
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return nil, cl.Conn.NoAnswerError(limit)
	}
	return nil, startupError(cl.Conn, unreached.Err)
}

// startupError explains an error of the start-up: a server that cannot be
// reached, or one the engine would stop at (informer.IsFatal).
func startupError(conn *connection.Conn, err error) error {
	if connection.IsNetworkError(err) {
		return conn.ConnectionError(err)
	}
	if informer.IsFatal(err) {
		return informer.ExplainFatal(err)
	}
	return err
}

// IncompleteSnapshot is the error of an --until-synced run that listed
// every type it could while API groups were down (Incomplete).
func IncompleteSnapshot(clusters []*Cluster) error {
	var down []string
	for _, cl := range clusters {
		for _, gv := range cl.Down {
			down = append(down, cl.Conn.Prefix()+gv)
		}
	}
	return Incomplete(down)
}

// ClientOf finds the client of a cluster by its context (the only
// cluster's for any, when there is one); nil for none.
func ClientOf(clusters []*Cluster) func(context string) rest.Interface {
	return func(context string) rest.Interface {
		for _, cl := range clusters {
			if len(clusters) == 1 || cl.Conn.Context == context {
				return cl.Client
			}
		}
		return nil
	}
}
