// Package targets turns what the user asked for into what the engine
// watches: arguments (types, short names, kinds, TYPE/NAME, categories such
// as all) or --all-types resolved through the cluster's discovery into
// informer targets, less --exclude and the types the user may not list
// and watch; the scouts of --tree; and, while the stream runs, the
// follower that adds the types that appear and retires those that go. It
// reaches the engine through the small Stream interface and knows nothing
// of flags or printing.
package targets

import (
	"errors"
	"fmt"
	"strings"
)

// Arg is one requested resource type with an optional name, as typed by
// the user ("cm", "deployments.apps", "cm/demo").
type Arg struct {
	Type string
	Name string
}

// ParseArgs splits the arguments the way kubectl get does:
// TYPE[,TYPE...] [NAME ...] or TYPE/NAME [TYPE/NAME ...]. It checks the
// syntax only; types are resolved against the server by Resolve.
func ParseArgs(args []string) ([]Arg, error) {
	if len(args) == 0 {
		return nil, errors.New("no resource type given")
	}
	slashed := 0
	for _, a := range args {
		if strings.Contains(a, "/") {
			slashed++
		}
	}
	var out []Arg
	switch {
	case slashed == len(args):
		for _, a := range args {
			typ, name, _ := strings.Cut(a, "/")
			if typ == "" || name == "" || strings.Contains(name, "/") {
				return nil, fmt.Errorf("arguments in resource/name form must have a single resource and name, got %q", a)
			}
			out = append(out, Arg{Type: typ, Name: name})
		}
	case slashed > 0:
		return nil, fmt.Errorf("there is no need to specify a resource type as a separate argument when passing arguments in resource/name form (e.g. 'kubectl deltas resource/<resource_name>' instead of 'kubectl deltas resource resource/<resource_name>')")
	default:
		types := strings.Split(args[0], ",")
		names := args[1:]
		for _, t := range types {
			if t == "" {
				return nil, fmt.Errorf("invalid resource type list %q: empty type", args[0])
			}
			if len(names) == 0 {
				out = append(out, Arg{Type: t})
			}
			for _, n := range names {
				out = append(out, Arg{Type: t, Name: n})
			}
		}
	}
	return out, nil
}
