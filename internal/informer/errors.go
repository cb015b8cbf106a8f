package informer

import (
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// IsFatal tells errors that retrying cannot fix: the user's rights or
// request are wrong.
func IsFatal(err error) bool {
	return apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err) || apierrors.IsBadRequest(err) ||
		apierrors.IsInvalid(err) || apierrors.IsMethodNotSupported(err) || apierrors.IsNotAcceptable(err)
}

// ExplainFatal adds to a fatal error a hint on how to recover.
func ExplainFatal(err error) error {
	switch {
	case apierrors.IsForbidden(err):
		return fmt.Errorf("%w\nkubectl deltas needs the list and watch verbs on the resource; check with \"kubectl auth can-i list <resource>\" and \"kubectl auth can-i watch <resource>\"", err)
	case apierrors.IsUnauthorized(err):
		return fmt.Errorf("%w: the server rejected the credentials (an expired token or client certificate?); log in again or check --kubeconfig, --context, --token and --client-certificate", err)
	case apierrors.IsMethodNotSupported(err):
		return fmt.Errorf("%w: this resource cannot be listed and watched", err)
	}
	return err
}
