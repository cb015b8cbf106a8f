package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"
)

// preflight checks, before anything is printed, what would otherwise fail
// only after the initial list is out: that the namespaces exist and that
// the user may both list and watch every target. Checks the server cannot
// answer (old servers, no right to ask) are skipped: the list and watch
// themselves remain the final word.
//
// A server that cannot be reached is an error here, not an outage to ride
// out: discovery may have been answered from kubectl's disk cache, so this
// is the first request that proves the server is there.
func (o *DeltasOptions) preflight(ctx context.Context, client rest.Interface, targets []watchTarget) error {
	limit := o.startupLimit()
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	checkedNamespaces := map[string]bool{}
	for _, t := range targets {
		if ns := t.namespace; ns != "" && !checkedNamespaces[ns] {
			checkedNamespaces[ns] = true
			err := client.Get().AbsPath("/api/v1/namespaces", ns).Do(ctx).Error()
			switch {
			case apierrors.IsNotFound(err):
				return fmt.Errorf("namespace %q not found: check -n/--namespace or the context's namespace", ns)
			case isNetworkError(err) || errors.Is(err, context.DeadlineExceeded):
				if ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
					return o.noAnswerError(limit)
				}
				return o.connectionError(err)
			}
		}
		for _, verb := range []string{"list", "watch"} {
			allowed, reason, ok := accessReview(ctx, client, t, verb)
			if ok && !allowed {
				return forbiddenError(t, verb, reason)
			}
		}
	}
	return nil
}

// accessReview asks the server whether the current user may verb the
// target. ok is false when the server could not answer.
func accessReview(ctx context.Context, client rest.Interface, t watchTarget, verb string) (allowed bool, reason string, ok bool) {
	gvr := t.mapping.Resource
	review := authorizationv1.SelfSubjectAccessReview{
		Spec: authorizationv1.SelfSubjectAccessReviewSpec{
			ResourceAttributes: &authorizationv1.ResourceAttributes{
				Namespace: t.namespace,
				Verb:      verb,
				Group:     gvr.Group,
				Version:   gvr.Version,
				Resource:  gvr.Resource,
				Name:      t.name,
			},
		},
	}
	review.APIVersion, review.Kind = "authorization.k8s.io/v1", "SelfSubjectAccessReview"
	body, err := json.Marshal(review)
	if err != nil {
		return false, "", false
	}
	raw, err := client.Post().AbsPath("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews").Body(body).Do(ctx).Raw()
	if err != nil {
		return false, "", false
	}
	var answer authorizationv1.SelfSubjectAccessReview
	if err := json.Unmarshal(raw, &answer); err != nil {
		return false, "", false
	}
	return answer.Status.Allowed, answer.Status.Reason, true
}

// forbiddenError reads like the server's Forbidden message, with the
// command to check the rights.
func forbiddenError(t watchTarget, verb, reason string) error {
	gvr := t.mapping.Resource
	where := "at the cluster scope"
	nsFlag := " -A"
	if t.namespace != "" {
		where = fmt.Sprintf("in the namespace %q", t.namespace)
		nsFlag = " -n " + t.namespace
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s is forbidden: cannot %s resource %q in API group %q %s", gvr.GroupResource(), verb, gvr.Resource, gvr.Group, where)
	if reason != "" {
		fmt.Fprintf(&b, " (%s)", reason)
	}
	fmt.Fprintf(&b, "\nkubectl deltas needs the list and watch verbs; check with \"kubectl auth can-i %s %s%s\"", verb, gvr.GroupResource(), nsFlag)
	return fmt.Errorf("%s", b.String())
}
