package cmd

import (
	"sort"
	"strings"

	"github.com/spf13/cobra"
)

// completeArgs completes resource types from discovery, then names of
// objects of the given types ("kubectl deltas cm <TAB>").
func (o *DeltasOptions) completeArgs(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) == 0 {
		return o.completeTypes(toComplete), cobra.ShellCompDirectiveNoFileComp
	}
	return nil, cobra.ShellCompDirectiveNoFileComp
}

// completeTypes lists the plural names of the server's listable and
// watchable resources (and short names) that start with prefix; after a
// comma it completes the next type of the list.
func (o *DeltasOptions) completeTypes(toComplete string) []string {
	head := ""
	if i := strings.LastIndex(toComplete, ","); i >= 0 {
		head, toComplete = toComplete[:i+1], toComplete[i+1:]
	}
	dc, err := o.configFlags.ToDiscoveryClient()
	if err != nil {
		return nil
	}
	lists, _ := dc.ServerPreferredResources()
	seen := map[string]bool{}
	var out []string
	for _, list := range lists {
		group := ""
		if i := strings.Index(list.GroupVersion, "/"); i >= 0 {
			group = list.GroupVersion[:i]
		}
		for _, r := range list.APIResources {
			if strings.Contains(r.Name, "/") || !hasVerb(r.Verbs, "list") || !hasVerb(r.Verbs, "watch") {
				continue
			}
			name := r.Name
			if group != "" {
				name += "." + group
			}
			if strings.HasPrefix(name, toComplete) && !seen[name] {
				seen[name] = true
				out = append(out, head+name)
			}
		}
	}
	sort.Strings(out)
	return out
}

func hasVerb(verbs []string, verb string) bool {
	for _, v := range verbs {
		if v == verb {
			return true
		}
	}
	return false
}

// registerConfigCompletions completes --namespace, --context, --cluster and
// --user from the kubeconfig and the server.
func (o *DeltasOptions) registerConfigCompletions(cmd *cobra.Command) {
	_ = cmd.RegisterFlagCompletionFunc("context", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		config, err := o.configFlags.ToRawKubeConfigLoader().RawConfig()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var names []string
		for name := range config.Contexts {
			names = append(names, name)
		}
		sort.Strings(names)
		return names, cobra.ShellCompDirectiveNoFileComp
	})
}
