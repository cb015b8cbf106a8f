package connection

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-deltas/kubectl-deltas/internal/flaghelp"
)

// Flags are the flags of which clusters a run watches: kubectl's
// connection flags (ConfigFlags: --kubeconfig, -n, --as, …), --context
// taking several contexts, --all-contexts and --skip-unavailable.
// Clusters builds the connections they describe.
type Flags struct {
	// ConfigFlags are kubectl's connection flags; with several contexts,
	// each cluster's are a copy of them for its context (ForContext).
	ConfigFlags     *genericclioptions.ConfigFlags
	Contexts        []string
	AllContexts     bool
	SkipUnavailable bool

	// Getter, if set, stands for ConfigFlags in a run of one cluster:
	// tests give cli-runtime's TestConfigFlags, with a fake discovery.
	Getter genericclioptions.RESTClientGetter

	streams genericiooptions.IOStreams
}

// NewFlags returns the flags with their defaults: the kubeconfig's current
// context.
func NewFlags(streams genericiooptions.IOStreams) *Flags {
	return &Flags{ConfigFlags: NewConfigFlags(streams), streams: streams}
}

// AddFlags declares the flags on fs: kubectl's, then --context made to
// take several contexts.
func (f *Flags) AddFlags(fs *pflag.FlagSet) {
	before := map[string]bool{}
	fs.VisitAll(func(flag *pflag.Flag) { before[flag.Name] = true })
	f.ConfigFlags.AddFlags(fs)
	var kubectls []string
	fs.VisitAll(func(flag *pflag.Flag) {
		if !before[flag.Name] {
			kubectls = append(kubectls, flag.Name)
		}
	})
	if flag := fs.Lookup("namespace"); flag != nil {
		flag.Usage = "Watch this `NAMESPACE` (default: the context's)"
	}
	if flag := fs.Lookup("context"); flag != nil {
		flag.Value = &contextList{names: &f.Contexts, single: f.ConfigFlags.Context}
		flag.Usage = "The kubeconfig context; several (a,b) merge into one stream"
	}
	fs.BoolVar(&f.AllContexts, "all-contexts", f.AllContexts, "Watch every context of the kubeconfig, as one stream")
	fs.BoolVar(&f.SkipUnavailable, "skip-unavailable", f.SkipUnavailable, "With several contexts: skip one that fails at start (a warning)")
	flaghelp.File(fs, flaghelp.Watch, "namespace", "context", "all-contexts", "skip-unavailable")
	flaghelp.Pair(fs, "context", "all-contexts", "The contexts to watch (a,b), or all: one stream (docs/clusters.md)")
	// The rest of kubectl's flags: `kubectl deltas options` lists them.
	kubectls = slices.DeleteFunc(kubectls, func(name string) bool { return name == "namespace" || name == "context" })
	flaghelp.File(fs, flaghelp.Global, kubectls...)
}

// CurrentContext is the context a run of one cluster uses: --context, else
// the kubeconfig's current context ("" when it names none).
func (f *Flags) CurrentContext() (string, error) {
	if f.ConfigFlags.Context != nil && *f.ConfigFlags.Context != "" {
		return *f.ConfigFlags.Context, nil
	}
	raw, err := f.ConfigFlags.ToRawKubeConfigLoader().RawConfig()
	if err != nil {
		return "", err
	}
	return raw.CurrentContext, nil
}

// ContextNames reads the kubeconfig and returns the contexts to watch, as
// Contexts does: nil for one cluster, the names for several.
func (f *Flags) ContextNames() ([]string, error) {
	return Contexts(f.ConfigFlags, f.Contexts, f.AllContexts)
}

// Clusters returns the connections to the contexts names (ContextNames):
// one through the flags themselves for nil, else one per context, each
// with that context's connection flags and caches.
func (f *Flags) Clusters(names []string) []*Conn {
	if len(names) == 0 {
		c := New(f.RESTClientGetter(), "")
		c.Warnings = f.streams.ErrOut
		return []*Conn{c}
	}
	out := make([]*Conn, 0, len(names))
	for _, name := range names {
		c := New(ForContext(f.ConfigFlags, name, f.streams), name)
		c.Warnings = f.streams.ErrOut
		out = append(out, c)
	}
	return out
}

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

// ContextWidth is the width of the context column of human output: the
// longest name, 0 for one cluster.
func ContextWidth(names []string) int {
	w := 0
	for _, n := range names {
		w = max(w, len(n))
	}
	return w
}

// CheckConfigPresent reports a kubeconfig that names no cluster, unless
// --server or the in-cluster environment says where the server is.
func (f *Flags) CheckConfigPresent() error {
	if f.Getter != nil {
		return nil
	}
	return CheckConfigPresent(f.ConfigFlags)
}

// RESTClientGetter is the connection flags of a run of one cluster, as
// ConfigFlags are (or Getter, when set).
func (f *Flags) RESTClientGetter() genericclioptions.RESTClientGetter {
	if f.Getter != nil {
		return f.Getter
	}
	return f.ConfigFlags
}
