package targets

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/kubectl-deltas/kubectl-deltas/internal/flaghelp"
)

// Flags are the flags of what to watch besides the arguments: every type
// (--all-types) less --exclude, every namespace (-A), what the named
// objects own (--tree) and the Events about them (--events). Request
// builds the Request they and the arguments describe.
type Flags struct {
	AllTypes      bool
	Exclude       []string
	AllNamespaces bool
	Tree          bool
	Events        bool

	// flags is the set AddFlags declared on, to tell an --exclude given
	// (even empty) from the default.
	flags *pflag.FlagSet
}

// NewFlags returns the flags with their defaults.
func NewFlags() *Flags { return &Flags{} }

// AddFlags declares the flags on fs.
func (f *Flags) AddFlags(fs *pflag.FlagSet) {
	f.flags = fs
	fs.BoolVarP(&f.AllNamespaces, "all-namespaces", "A", f.AllNamespaces, "Watch all namespaces")
	fs.BoolVar(&f.AllTypes, "all-types", f.AllTypes, "Watch every type the server can list and watch, CRDs included")
	fs.StringSliceVar(&f.Exclude, "exclude", f.Exclude, "With --all-types or a category: leave these `TYPES` out")
	fs.BoolVar(&f.Tree, "tree", f.Tree, "Also what the objects own, transitively (docs/diffs-and-trees.md)")
	fs.BoolVar(&f.Events, "events", f.Events, "Also the Events about the watched objects (docs/events.md)")
	flaghelp.File(fs, flaghelp.Watch, "all-namespaces", "all-types", "exclude", "tree", "events")
}

// Validate checks the flags against the arguments (raw as given, args
// parsed; nil with --all-types) and the run's selectors and metadata-only
// mode, before any request.
func (f *Flags) Validate(raw []string, args []Arg, selected, metadataOnly bool) error {
	switch {
	case f.AllTypes && len(raw) > 0:
		return fmt.Errorf("--all-types watches every type: drop the arguments %q or --all-types", strings.Join(raw, " "))
	case f.AllTypes:
	case len(raw) == 0:
		return errors.New(`you must specify the type of resource to watch (or --all-types). Use "kubectl api-resources" for a complete list of supported resources`)
	case f.Tree && args[0].Name == "" && !selected:
		return fmt.Errorf("--tree follows what given objects own: name them (%s/NAME) or select them with -l/--selector", args[0].Type)
	}
	for _, a := range args {
		if a.Name != "" && f.AllNamespaces {
			return errors.New("a resource cannot be watched by name across all namespaces: drop -A or the name")
		}
		if a.Name != "" && selected {
			return errors.New("a name cannot be given together with --selector or --field-selector")
		}
	}
	if f.Tree && f.AllTypes {
		return errors.New("--tree cannot be used with --all-types: name the objects to follow (deployment/web) or select them with -l")
	}
	if metadataOnly && f.Events {
		return errors.New("--events cannot be used with --metadata-only: an Event's message is not in its metadata; drop --metadata-only to see Events")
	}
	return nil
}

// Request is what to watch in a cluster whose namespace (of -n, or its
// context's) is namespace.
func (f *Flags) Request(args []Arg, namespace string) Query {
	var exclude []string
	if f.flags != nil && f.flags.Changed("exclude") {
		exclude = append([]string{}, f.Exclude...)
	}
	return Query{
		Args: args, AllTypes: f.AllTypes, Tree: f.Tree,
		Namespace: namespace, AllNamespaces: f.AllNamespaces, Exclude: exclude,
	}
}
