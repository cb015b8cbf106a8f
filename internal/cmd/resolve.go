package cmd

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-deltas/kubectl-deltas/internal/informer"
)

// resolution is what the arguments and --all-types resolve to.
type resolution struct {
	targets []informer.Target
	// expanded says that --all-types or a category chose the targets;
	// categories are the arguments that were categories.
	expanded   bool
	categories []string
	// scouts are, with --tree, the scout targets that search every type
	// for what the roots (targets) own.
	scouts []informer.Target
	// failedGroups names API groups that discovery could not read.
	failedGroups []string
}

// resolve maps the arguments (or --all-types) to watch targets through
// discovery, bounded by --request-timeout (or startupTimeout) so that an
// unreachable server is an error, not a hang.
func (o *DeltasOptions) resolve(ctx context.Context) (*resolution, error) {
	var args []resourceArg
	if !o.allTypes {
		var err error
		if args, err = parseArgs(o.args); err != nil {
			return nil, err
		}
	}
	for _, a := range args {
		if a.name != "" && o.allNamespaces {
			return nil, errors.New("a resource cannot be watched by name across all namespaces: drop -A or the name")
		}
		if a.name != "" && (o.labelSelector != "" || o.fieldSelector != "") {
			return nil, errors.New("a name cannot be given together with --selector or --field-selector")
		}
	}
	limit := o.startupLimit()
	type result struct {
		res *resolution
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := o.discover(args)
		done <- result{res, err}
	}()
	timer := time.NewTimer(limit)
	defer timer.Stop()
	select {
	case r := <-done:
		if r.err != nil {
			return nil, o.connectionError(r.err)
		}
		return r.res, nil
	case <-timer.C:
		return nil, o.noAnswerError(limit)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// discover resolves args, or every type with --all-types, against the
// server's discovery.
func (o *DeltasOptions) discover(args []resourceArg) (*resolution, error) {
	mapper, err := o.configFlags.ToRESTMapper()
	if err != nil {
		return nil, kubeconfigError(err)
	}
	var exp *expansion
	expand := func() (*expansion, error) {
		if exp == nil {
			// --all-types asks the server, not a discovery cache that may
			// be hours old.
			exp, err = o.newExpansion(mapper, o.allTypes)
		}
		return exp, err
	}
	res := &resolution{}
	if o.allTypes {
		e, err := expand()
		if err != nil {
			return nil, err
		}
		res.targets, res.expanded, res.failedGroups = e.allTypes(), true, e.types.failedGroups
		return res, nil
	}
	res.targets, res.categories, err = resolveTargets(mapper, args, o.namespace, o.allNamespaces, expand)
	if err != nil {
		return nil, err
	}
	res.expanded = len(res.categories) > 0
	if o.tree {
		e, err := expand()
		if err != nil {
			return nil, err
		}
		res.scouts = e.scouts(res.targets)
	}
	if exp != nil {
		res.failedGroups = exp.types.failedGroups
	}
	if o.excludeSet && !res.expanded && !o.tree {
		return nil, errors.New("--exclude only applies to --all-types, to categories such as all and to --tree: drop --exclude or name a category")
	}
	return res, nil
}

// newExpansion reads discovery for --all-types and categories; fresh skips
// kubectl's discovery cache.
func (o *DeltasOptions) newExpansion(mapper meta.RESTMapper, fresh bool) (*expansion, error) {
	dc, err := o.configFlags.ToDiscoveryClient()
	if err != nil {
		return nil, kubeconfigError(err)
	}
	if fresh {
		dc.Invalidate()
		if r, ok := mapper.(meta.ResettableRESTMapper); ok {
			r.Reset()
		}
	}
	types, err := discoverTypes(dc)
	if err != nil {
		return nil, err
	}
	exclude, err := parseExclusions(mapper, o.exclusions())
	if err != nil {
		return nil, err
	}
	return &expansion{
		mapper:        mapper,
		types:         types,
		expander:      restmapper.NewDiscoveryCategoryExpander(dc),
		namespace:     o.namespace,
		allNamespaces: o.allNamespaces,
		exclude:       exclude,
	}, nil
}

// exclusions is --exclude: nil for the default exclusions, empty (not
// nil) for none.
func (o *DeltasOptions) exclusions() []string {
	if !o.excludeSet {
		return nil
	}
	return append([]string{}, o.exclude...)
}

// startupLimit bounds each step of the start-up that waits for the server
// (discovery, the preflight checks): --request-timeout, or startupTimeout.
func (o *DeltasOptions) startupLimit() time.Duration {
	if t := o.requestTimeout(); t > 0 {
		return t
	}
	return startupTimeout
}

// noAnswerError is the error of a start-up step that limit ended.
func (o *DeltasOptions) noAnswerError(limit time.Duration) error {
	return fmt.Errorf("the server %s did not answer within %s; check that it is reachable, or raise --request-timeout", o.serverName(), limit)
}

// requestTimeout is --request-timeout as the REST config has it (0 means
// none).
func (o *DeltasOptions) requestTimeout() time.Duration {
	config, err := o.restConfig()
	if err != nil {
		return 0
	}
	return config.Timeout
}

// serverName is the server URL of the current configuration, for
// messages; never credentials.
func (o *DeltasOptions) serverName() string {
	config, err := o.restConfig()
	if err != nil || config.Host == "" {
		return "(unknown server)"
	}
	return config.Host
}

// isNetworkError tells failures to reach the server at all.
func isNetworkError(err error) bool {
	if err == nil {
		return false
	}
	var netErr net.Error
	return utilnet.IsConnectionRefused(err) || utilnet.IsConnectionReset(err) || utilnet.IsProbableEOF(err) || errors.As(err, &netErr)
}

// connectionError rewrites network failures to name the server and say
// what to check.
func (o *DeltasOptions) connectionError(err error) error {
	var netErr net.Error
	switch {
	case utilnet.IsConnectionRefused(err):
		return fmt.Errorf("the connection to the server %s was refused - did you specify the right host or port? (%w)", o.serverName(), err)
	case errors.As(err, &netErr), utilnet.IsProbableEOF(err), utilnet.IsConnectionReset(err):
		return fmt.Errorf("unable to reach the server %s: %w; check --server, --context and --kubeconfig", o.serverName(), err)
	}
	if informer.IsFatal(err) {
		return informer.ExplainFatal(err)
	}
	return err
}

// kubeconfigError explains a configuration that cannot be loaded.
func kubeconfigError(err error) error {
	if clientcmd.IsEmptyConfig(err) {
		return fmt.Errorf("no configuration has been provided: set KUBECONFIG, pass --kubeconfig, or run inside a cluster (%w)", err)
	}
	if clientcmd.IsConfigurationInvalid(err) {
		return fmt.Errorf("invalid kubeconfig: %w; check --kubeconfig, --context and --cluster", err)
	}
	return fmt.Errorf("unable to load the kubeconfig: %w", err)
}

// checkConfigPresent fails when there is no configuration at all: no
// cluster in the kubeconfig files (KUBECONFIG naming files that do not
// exist, say), no --server, and not running in a cluster. client-go would
// otherwise fall back to http://localhost:8080 and report a refused
// connection to a server nobody named.
func (o *DeltasOptions) checkConfigPresent() error {
	if o.configFlags.APIServer != nil && *o.configFlags.APIServer != "" {
		return nil
	}
	if os.Getenv("KUBERNETES_SERVICE_HOST") != "" {
		return nil
	}
	raw, err := o.configFlags.ToRawKubeConfigLoader().RawConfig()
	if err != nil {
		return kubeconfigError(err)
	}
	if len(raw.Clusters) > 0 {
		return nil
	}
	where := "~/.kube/config"
	if env := os.Getenv("KUBECONFIG"); env != "" {
		where = "KUBECONFIG=" + env
	}
	if o.configFlags.KubeConfig != nil && *o.configFlags.KubeConfig != "" {
		where = *o.configFlags.KubeConfig
	}
	return fmt.Errorf("no cluster is configured (%s has none or does not exist): pass --kubeconfig, set KUBECONFIG, or use --server", where)
}
