// Package completion completes the command's arguments as kubectl get
// does — types from discovery, names from the server — and the values of
// --namespace, --context, --cluster and --user, each request bounded so
// that a shell never hangs on <TAB>.
package completion

import (
	"context"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-deltas/kubectl-deltas/internal/connection"
	"github.com/kubectl-deltas/kubectl-deltas/internal/targets"
)

// requestTimeout bounds each request made to complete a word when
// --request-timeout is not given: a shell must never hang on <TAB>
// because the server is slow or unreachable.
const requestTimeout = 5 * time.Second

// completer completes from the cluster the connection flags reach.
type completer struct {
	clusters *connection.Flags
	// allNamespaces reports -A: no name is completed across namespaces.
	allNamespaces func() bool
}

// Register completes root's arguments and its connection flags' values.
// clusters are its connection flags; allNamespaces reports whether -A was
// given (asked as a word is completed).
func Register(root *cobra.Command, clusters *connection.Flags, allNamespaces func() bool) {
	c := &completer{clusters: clusters, allNamespaces: allNamespaces}
	root.ValidArgsFunction = c.args
	c.registerFlags(root)
}

// args completes the positional arguments the way kubectl get
// does: resource types from discovery ("kubectl deltas con<TAB>"), names
// of objects of the given type in the namespace ("kubectl deltas cm
// <TAB>"), and TYPE/NAME ("kubectl deltas cm/<TAB>").
func (c *completer) args(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	c.boundCompletionRequests()
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	switch {
	case strings.Contains(toComplete, "/") && (len(args) == 0 || strings.Contains(args[0], "/")):
		typ, prefix, _ := strings.Cut(toComplete, "/")
		var names []string
		if !c.allNamespaces() {
			names = c.completions().Names(ctx, typ, prefix)
		}
		out := make([]string, 0, len(names))
		for _, name := range names {
			out = append(out, typ+"/"+name)
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	case len(args) == 0:
		return c.completions().Types(toComplete), cobra.ShellCompDirectiveNoFileComp
	case strings.Contains(args[0], "/"):
		// More TYPE/NAME arguments: offer the types; the name follows the
		// slash.
		return c.completions().Types(toComplete), cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	case strings.Contains(args[0], ","):
		// Names of several types at once are ambiguous; kubectl get does
		// not complete them either.
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	given := map[string]bool{}
	for _, a := range args[1:] {
		given[a] = true
	}
	if c.allNamespaces() {
		// A name cannot be watched across all namespaces.
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []string
	for _, name := range c.completions().Names(ctx, args[0], toComplete) {
		if !given[name] {
			out = append(out, name)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// boundCompletionRequests sets the request timeout of completion requests
// when the user gave none. It must run before the first client is built.
func (c *completer) boundCompletionRequests() {
	if connection.New(c.clusters.RESTClientGetter(), "").RequestTimeout() > 0 {
		return
	}
	t := requestTimeout.String()
	c.clusters.ConfigFlags.Timeout = &t
}

// completions completes from the cluster of the flags.
func (c *completer) completions() targets.Completions {
	return targets.Completions{Getter: c.clusters.RESTClientGetter(), Timeout: requestTimeout}
}

// registerFlags completes --namespace from the server, and
// --context, --cluster and --user from the kubeconfig.
func (c *completer) registerFlags(cmd *cobra.Command) {
	_ = cmd.RegisterFlagCompletionFunc("namespace", func(cmd *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		c.boundCompletionRequests()
		ctx := cmd.Context()
		if ctx == nil {
			ctx = context.Background()
		}
		return c.completions().ObjectNames(ctx, schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, "", toComplete), cobra.ShellCompDirectiveNoFileComp
	})
	// --context takes a comma-separated list: complete its last item.
	contexts := c.kubeconfigCompletion(func(n *kubeconfigNames) []string { return n.contexts })
	_ = cmd.RegisterFlagCompletionFunc("context", func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		head := ""
		if i := strings.LastIndex(toComplete, ","); i >= 0 {
			head, toComplete = toComplete[:i+1], toComplete[i+1:]
		}
		given := strings.Split(head, ",")
		names, directive := contexts(cmd, args, toComplete)
		out := make([]string, 0, len(names))
		for _, n := range names {
			if !slices.Contains(given, n) {
				out = append(out, head+n)
			}
		}
		return out, directive
	})
	_ = cmd.RegisterFlagCompletionFunc("cluster", c.kubeconfigCompletion(func(n *kubeconfigNames) []string { return n.clusters }))
	_ = cmd.RegisterFlagCompletionFunc("user", c.kubeconfigCompletion(func(n *kubeconfigNames) []string { return n.users }))
}

// kubeconfigNames are the names defined in the merged kubeconfig.
type kubeconfigNames struct {
	contexts, clusters, users []string
}

// kubeconfigCompletion completes a flag with the names pick returns.
func (c *completer) kubeconfigCompletion(pick func(*kubeconfigNames) []string) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		config, err := c.clusters.RESTClientGetter().ToRawKubeConfigLoader().RawConfig()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var names kubeconfigNames
		for name := range config.Contexts {
			names.contexts = append(names.contexts, name)
		}
		for name := range config.Clusters {
			names.clusters = append(names.clusters, name)
		}
		for name := range config.AuthInfos {
			names.users = append(names.users, name)
		}
		var out []string
		for _, name := range pick(&names) {
			if strings.HasPrefix(name, toComplete) {
				out = append(out, name)
			}
		}
		sort.Strings(out)
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}
