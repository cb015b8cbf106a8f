package cmd

import (
	"fmt"

	authorizationv1client "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/client-go/rest"

	"github.com/kubectl-deltas/kubectl-deltas/internal/listwatch"
)

// clientMaker makes the clients of one cluster from its REST config: raw
// JSON lists and watches, and the reviews of the access checks.
type clientMaker func(config *rest.Config) (rest.Interface, authorizationv1client.SelfSubjectAccessReviewInterface, error)

// realClients is the clientMaker of the command.
func realClients(config *rest.Config) (rest.Interface, authorizationv1client.SelfSubjectAccessReviewInterface, error) {
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
