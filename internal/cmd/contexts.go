package cmd

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-deltas/kubectl-deltas/internal/clientcert"
)

// contextList is the value of --context: one context, or several, given
// comma-separated or by repeating the flag. The first one is also set in
// ConfigFlags.Context, so that a single context works as in kubectl.
type contextList struct {
	names  *[]string
	single *string
}

func (c *contextList) String() string { return strings.Join(*c.names, ",") }

func (c *contextList) Set(v string) error {
	for _, name := range strings.Split(v, ",") {
		if name = strings.TrimSpace(name); name == "" {
			return fmt.Errorf("invalid --context %q: empty context name", v)
		}
		if !slices.Contains(*c.names, name) {
			*c.names = append(*c.names, name)
		}
	}
	*c.single = (*c.names)[0]
	return nil
}

func (c *contextList) Type() string { return "strings" }

// resolveContexts turns --context and --all-contexts into the contexts to
// watch: nil for one cluster (the current context, or the one --context
// names), which keeps today's output; the names, in the order given (or
// sorted, for --all-contexts), when several clusters are watched. It reads
// the kubeconfig.
func (o *DeltasOptions) resolveContexts() ([]string, error) {
	if o.allContexts && len(o.contexts) > 0 {
		return nil, errors.New("--context and --all-contexts cannot be used together: name the contexts, or take them all")
	}
	if !o.allContexts && len(o.contexts) <= 1 {
		return nil, nil
	}
	raw, err := o.configFlags.ToRawKubeConfigLoader().RawConfig()
	if err != nil {
		return nil, kubeconfigError(err)
	}
	names := o.contexts
	if o.allContexts {
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
		{"--cluster", o.configFlags.ClusterName},
		{"--user", o.configFlags.AuthInfoName},
		{"--server", o.configFlags.APIServer},
		{"--token", o.configFlags.BearerToken},
	} {
		if f.value != nil && *f.value != "" {
			return nil, fmt.Errorf("%s cannot be used with several contexts: each context names its own cluster and user; drop %s or watch one context", f.flag, f.flag)
		}
	}
	if len(names) == 1 {
		*o.configFlags.Context = names[0]
		return nil, nil
	}
	return names, nil
}

// forContext returns the connection flags of one context of a multi-cluster
// run: every flag the user gave, and that context. Each has its own
// caches (REST config, discovery, RESTMapper).
func forContext(f *genericclioptions.ConfigFlags, name string, streams genericiooptions.IOStreams) *genericclioptions.ConfigFlags {
	c := newConfigFlags(streams)
	c.KubeConfig, c.CacheDir, c.Namespace = f.KubeConfig, f.CacheDir, f.Namespace
	c.TLSServerName, c.Insecure, c.CertFile, c.KeyFile, c.CAFile = f.TLSServerName, f.Insecure, f.CertFile, f.KeyFile, f.CAFile
	c.Impersonate, c.ImpersonateUID, c.ImpersonateGroup = f.Impersonate, f.ImpersonateUID, f.ImpersonateGroup
	c.Username, c.Password, c.Timeout, c.DisableCompression = f.Username, f.Password, f.Timeout, f.DisableCompression
	c.Context = &name
	return c
}

// newConfigFlags returns the connection flags of one cluster. Its client
// certificate, when it is a pair of files, may be rotated on disk while the
// stream runs: the connections are then renewed (package clientcert).
func newConfigFlags(streams genericiooptions.IOStreams) *genericclioptions.ConfigFlags {
	return genericclioptions.NewConfigFlags(true).WithWarningPrinter(streams).WithWrapConfigFn(clientcert.New().Wrap)
}

// contextWidth is the width of the context column of human output: the
// longest name, 0 for one cluster.
func contextWidth(names []string) int {
	w := 0
	for _, n := range names {
		w = max(w, len(n))
	}
	return w
}

// oneLine keeps an error's message on one line.
func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}
