package targets

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	authorizationv1client "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/client-go/rest"

	"github.com/kubectl-deltas/kubectl-deltas/internal/connection"
	"github.com/kubectl-deltas/kubectl-deltas/internal/informer"
	"github.com/kubectl-deltas/kubectl-deltas/internal/textsafe"
)

// Access is what the access checks need of one cluster.
type Access struct {
	// Client reads namespaces; Reviews asks the server what the user may
	// do.
	Client  rest.Interface
	Reviews authorizationv1client.SelfSubjectAccessReviewInterface
	// Context names the cluster in messages ("" for one cluster).
	Context string
	// ErrOut receives the note on the types left out.
	ErrOut io.Writer
	// Namespaces, if set, holds the namespaces asked for ahead
	// (Namespaces.Ask); nil asks each here.
	Namespaces *Namespaces
}

// Namespaces are the GETs of namespaces the access checks make, each sent
// once. Start-up asks for the stream's namespace ahead, while it reads
// discovery from kubectl's cache: the connection the checks then share
// is opened meanwhile. The zero value is ready; it is safe for concurrent
// use.
type Namespaces struct {
	mu    sync.Mutex // guards asked
	asked map[string]*namespaceGet
}

// namespaceGet is one GET of a namespace: err is its outcome, set before
// done is closed.
type namespaceGet struct {
	done chan struct{}
	err  error
}

// Ask sends the GET of namespace ns through client, bounded by ctx,
// unless it was sent.
func (n *Namespaces) Ask(ctx context.Context, client rest.Interface, ns string) {
	n.get(ctx, client, ns)
}

func (n *Namespaces) get(ctx context.Context, client rest.Interface, ns string) *namespaceGet {
	n.mu.Lock()
	defer n.mu.Unlock()
	if g, ok := n.asked[ns]; ok {
		return g
	}
	if n.asked == nil {
		n.asked = map[string]*namespaceGet{}
	}
	g := &namespaceGet{done: make(chan struct{})}
	n.asked[ns] = g
	go func() {
		defer close(g.done)
		g.err = client.Get().AbsPath("/api/v1/namespaces", ns).Do(ctx).Error()
	}()
	return g
}

// answer is the outcome of the GET of ns, sent now (bounded by ctx) if it
// was not; ctx ending first is the answer then.
func (n *Namespaces) answer(ctx context.Context, client rest.Interface, ns string) error {
	g := n.get(ctx, client, ns)
	select {
	case <-g.done:
		return g.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ServerError is a request of the access checks that did not reach the
// server, or that ctx ended: the caller says which server and what to
// check.
type ServerError struct{ Err error }

func (e *ServerError) Error() string { return e.Err.Error() }
func (e *ServerError) Unwrap() error { return e.Err }

// Check checks, before anything is printed, what would otherwise fail
// only after the initial list is out: that the namespaces exist and that
// the user may both list and watch every target. Checks the server cannot
// answer (old servers, no right to ask) are skipped: the list and watch
// themselves remain the final word.
//
// A target the user did not name (Optional: a member of a category, of
// --all-types, a scout of --tree) that may not be listed or watched is left
// out, with one note naming every such type; only when nothing at all
// remains is it an error. Check returns the targets to watch.
//
// A server that cannot be reached is an error here (a *ServerError), not
// an outage to ride out: discovery may have been answered from kubectl's
// disk cache, so this is the first request that proves the server is
// there.
func (a Access) Check(ctx context.Context, targets []informer.Target) ([]informer.Target, error) {
	// Every request at once (a bounded number in flight): start-up waits
	// for one round trip, not one per namespace, verb and type. The
	// answers are then read in the targets' order, so that the outcome,
	// and which error is reported, are those of asking one by one.
	namespaces, reviews := a.ask(ctx, targets)
	var kept, skipped []informer.Target
	for i, t := range targets {
		if err, asked := namespaces[t.Namespace]; asked {
			switch {
			case apierrors.IsNotFound(err):
				return nil, fmt.Errorf("namespace %q not found: check -n/--namespace or the context's namespace", t.Namespace)
			case connection.IsNetworkError(err) || errors.Is(err, context.DeadlineExceeded):
				return nil, &ServerError{Err: err}
			}
		}
		if denied := reviews[i].denied(t); denied != nil {
			if !t.Optional {
				return nil, denied
			}
			skipped = append(skipped, t)
			continue
		}
		kept = append(kept, t)
	}
	if len(skipped) > 0 && len(kept) == 0 {
		return nil, fmt.Errorf("you may not list and watch any of the %d types asked for (%s); check with \"kubectl auth can-i --list\"", len(skipped), joinResources(skipped))
	}
	if len(skipped) > 0 {
		fmt.Fprintf(a.ErrOut, "info: %sskipping %d types you may not list and watch: %s\n", textsafe.ContextPrefix(a.Context), len(skipped), joinResources(skipped))
	}
	return kept, nil
}

// KeepEvents keeps the Events targets (--events) the user may list and
// watch; for the others, one note each on ErrOut: the stream goes on
// without their Events. prefix names the cluster in the notes.
func (a Access) KeepEvents(ctx context.Context, ts []informer.Target, prefix string) []informer.Target {
	var kept []informer.Target
	for _, t := range ts {
		if err := a.Denied(ctx, t); err != nil {
			where := "in any namespace"
			if t.Namespace != "" {
				where = "in namespace " + t.Namespace
			}
			fmt.Fprintf(a.ErrOut, "info: %s--events: you may not list and watch events.events.k8s.io %s: no Events from there\n", prefix, where)
			continue
		}
		kept = append(kept, t)
	}
	return kept
}

// Denied returns the Forbidden error of the first of list and watch that
// the user may not use on t, nil when both are allowed or the server cannot
// say (the list and watch themselves remain the final word).
func (a Access) Denied(ctx context.Context, t informer.Target) error {
	return deniedVerb(ctx, a.Reviews, t)
}

// deniedVerb returns the Forbidden error of the first of list and watch
// that the user may not use on t, nil when both are allowed (or the server
// cannot say).
func deniedVerb(ctx context.Context, reviews authorizationv1client.SelfSubjectAccessReviewInterface, t informer.Target) error {
	var answers verbAnswers
	for i, verb := range accessVerbs {
		answers[i].allowed, answers[i].reason, answers[i].ok = accessReview(ctx, reviews, t, verb)
	}
	return answers.denied(t)
}

// accessVerbs are the verbs a target needs, in the order they are
// reported.
var accessVerbs = [2]string{"list", "watch"}

// verbAnswers are the access reviews of accessVerbs for one target.
type verbAnswers [2]struct {
	allowed, ok bool
	reason      string
}

// denied is the Forbidden error of the first verb refused, nil if none
// was (or the server could not say).
func (v *verbAnswers) denied(t informer.Target) error {
	for i, verb := range accessVerbs {
		if v[i].ok && !v[i].allowed {
			return forbiddenError(t, verb, v[i].reason)
		}
	}
	return nil
}

// maxInFlight bounds the start-up requests of Check sent at once.
const maxInFlight = 16

// ask sends, at once, the GET of every namespace of the targets and the
// access reviews of every target, and returns the namespaces' errors (nil
// for one that exists) and each target's reviews.
func (a Access) ask(ctx context.Context, targets []informer.Target) (map[string]error, []verbAnswers) {
	namespaces := map[string]error{}
	reviews := make([]verbAnswers, len(targets))
	var lock sync.Mutex // guards namespaces
	var wg sync.WaitGroup
	slots := make(chan struct{}, maxInFlight)
	do := func(f func()) {
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			f()
		})
	}
	var distinct []string
	for _, t := range targets {
		if ns := t.Namespace; ns != "" && !slices.Contains(distinct, ns) {
			distinct = append(distinct, ns)
		}
	}
	asked := a.Namespaces
	if asked == nil {
		asked = &Namespaces{}
	}
	for _, ns := range distinct {
		do(func() {
			err := asked.answer(ctx, a.Client, ns)
			lock.Lock()
			namespaces[ns] = err
			lock.Unlock()
		})
	}
	for i, t := range targets {
		for v, verb := range accessVerbs {
			do(func() {
				r := &reviews[i][v]
				r.allowed, r.reason, r.ok = accessReview(ctx, a.Reviews, t, verb)
			})
		}
	}
	wg.Wait()
	return namespaces, reviews
}

// accessReview asks the server whether the current user may verb the
// target. ok is false when the server could not answer.
func accessReview(ctx context.Context, reviews authorizationv1client.SelfSubjectAccessReviewInterface, t informer.Target, verb string) (allowed bool, reason string, ok bool) {
	review := &authorizationv1.SelfSubjectAccessReview{
		Spec: authorizationv1.SelfSubjectAccessReviewSpec{
			ResourceAttributes: &authorizationv1.ResourceAttributes{
				Namespace: t.Namespace,
				Verb:      verb,
				Group:     t.Resource.Group,
				Version:   t.Resource.Version,
				Resource:  t.Resource.Resource,
				Name:      t.Name,
			},
		},
	}
	answer, err := reviews.Create(ctx, review, metav1.CreateOptions{})
	if err != nil {
		return false, "", false
	}
	return answer.Status.Allowed, answer.Status.Reason, true
}

// forbiddenError reads like the server's Forbidden message, with the
// command to check the rights.
func forbiddenError(t informer.Target, verb, reason string) error {
	gvr := t.Resource
	where := "at the cluster scope"
	nsFlag := " -A"
	if t.Namespace != "" {
		where = fmt.Sprintf("in the namespace %q", t.Namespace)
		nsFlag = " -n " + t.Namespace
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s is forbidden: cannot %s resource %q in API group %q %s", gvr.GroupResource(), verb, gvr.Resource, gvr.Group, where)
	if reason != "" {
		fmt.Fprintf(&b, " (%s)", reason)
	}
	fmt.Fprintf(&b, "\nkubectl deltas needs the list and watch verbs; check with \"kubectl auth can-i %s %s%s\"", verb, gvr.GroupResource(), nsFlag)
	return fmt.Errorf("%s", b.String())
}
