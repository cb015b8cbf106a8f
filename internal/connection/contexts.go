package connection

import (
	"errors"
	"fmt"
	"slices"

	"k8s.io/cli-runtime/pkg/genericclioptions"
)

// Contexts turns --context (names, in the order given) and --all-contexts
// (all) into the contexts to watch: nil for one cluster (the current
// context, or the one context named, which it sets in flags), which keeps
// the output of a plain run; the names, in the order given (or sorted, for
// --all-contexts), when several clusters are watched. It reads the
// kubeconfig and refuses the flags that would name one cluster or user for
// all of them.
func Contexts(flags *genericclioptions.ConfigFlags, names []string, all bool) ([]string, error) {
	if all && len(names) > 0 {
		return nil, errors.New("--context and --all-contexts cannot be used together: name the contexts, or take them all")
	}
	if !all && len(names) <= 1 {
		return nil, nil
	}
	raw, err := flags.ToRawKubeConfigLoader().RawConfig()
	if err != nil {
		return nil, KubeconfigError(err)
	}
	if all {
		names = nil
		for name := range raw.Contexts {
			names = append(names, name)
		}
		slices.Sort(names)
		if len(names) == 0 {
			return nil, errors.New("--all-contexts: the kubeconfig has no contexts; check --kubeconfig or KUBECONFIG")
		}
	}
	for _, name := range names {
		if _, ok := raw.Contexts[name]; !ok {
			return nil, fmt.Errorf("context %q not found in the kubeconfig", name)
		}
	}
	for _, f := range []struct {
		flag  string
		value *string
	}{
		{"--cluster", flags.ClusterName},
		{"--user", flags.AuthInfoName},
		{"--server", flags.APIServer},
		{"--token", flags.BearerToken},
	} {
		if f.value != nil && *f.value != "" {
			return nil, fmt.Errorf("%s cannot be used with several contexts: each context names its own cluster and user; drop %s or watch one context", f.flag, f.flag)
		}
	}
	if len(names) == 1 {
		*flags.Context = names[0]
		return nil, nil
	}
	return names, nil
}
