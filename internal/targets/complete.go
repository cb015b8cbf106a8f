package targets

import (
	"context"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/metadata"
)

// completionListLimit caps the objects fetched to complete a name: one
// page is plenty to choose from, and keeps <TAB> fast on big clusters.
const completionListLimit = 1000

// Completions lists what a shell completes from the cluster the kubectl
// flags of Getter reach: types, and names of objects. Errors mean no
// completions: a shell shows nothing rather than a message.
type Completions struct {
	Getter genericclioptions.RESTClientGetter
	// Timeout bounds each list when the REST config has no timeout of
	// its own (--request-timeout).
	Timeout time.Duration
}

// Types lists the names of the server's listable and watchable resources
// that start with prefix; after a comma it completes the next type of the
// list.
func (c Completions) Types(prefix string) []string {
	head := ""
	if i := strings.LastIndex(prefix, ","); i >= 0 {
		head, prefix = prefix[:i+1], prefix[i+1:]
	}
	dc, err := c.Getter.ToDiscoveryClient()
	if err != nil {
		return nil
	}
	names := TypeNames(dc, prefix)
	for i := range names {
		names[i] = head + names[i]
	}
	return names
}

// Names lists the names of the objects of type typ (as typed by the user:
// "cm", "deployments.apps") that start with prefix, in the namespace of
// the flags and kubeconfig.
func (c Completions) Names(ctx context.Context, typ, prefix string) []string {
	mapper, err := c.Getter.ToRESTMapper()
	if err != nil {
		return nil
	}
	mapping, err := MappingFor(mapper, typ)
	if err != nil {
		return nil
	}
	namespace := ""
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		if namespace, _, err = c.Getter.ToRawKubeConfigLoader().Namespace(); err != nil {
			return nil
		}
	}
	return c.ObjectNames(ctx, mapping.Resource, namespace, prefix)
}

// ObjectNames lists the names of the objects of resource in namespace (""
// is all namespaces or a cluster-scoped resource) that start with prefix,
// sorted, with one bounded metadata-only list request.
func (c Completions) ObjectNames(ctx context.Context, resource schema.GroupVersionResource, namespace, prefix string) []string {
	config, err := c.Getter.ToRESTConfig()
	if err != nil {
		return nil
	}
	client, err := metadata.NewForConfig(config)
	if err != nil {
		return nil
	}
	timeout := c.Timeout
	if config.Timeout > 0 {
		timeout = config.Timeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	list, err := client.Resource(resource).Namespace(namespace).List(ctx, metav1.ListOptions{Limit: completionListLimit})
	if err != nil {
		return nil
	}
	var out []string
	for i := range list.Items {
		if name := list.Items[i].Name; strings.HasPrefix(name, prefix) {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}
