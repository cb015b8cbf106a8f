package targets

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/restmapper"

	"github.com/kubectl-deltas/kubectl-deltas/internal/informer"
	"github.com/kubectl-deltas/kubectl-deltas/internal/listwatch"
)

// Discovery is the discovery of one cluster: kubectl's cached RESTMapper and
// discovery client, with configuration errors explained
// (connection.Conn).
type Discovery interface {
	RESTMapper() (meta.RESTMapper, error)
	DiscoveryClient() (discovery.CachedDiscoveryInterface, error)
}

// freshDiscovery is a Discovery that reads discovery without a cache
// (connection.Conn): with aggregated discovery, only such a read
// reports the group versions whose aggregated API is down.
type freshDiscovery interface {
	FreshDiscoveryClient() (discovery.DiscoveryInterface, error)
}

// Query is what to resolve in one cluster.
type Query struct {
	// Args are the parsed arguments; AllTypes asks for every type instead.
	Args     []Arg
	AllTypes bool
	// Tree asks for the scouts that search every type for what the
	// targets own.
	Tree bool
	// Namespace is where namespaced targets are watched, unless
	// AllNamespaces.
	Namespace     string
	AllNamespaces bool
	// Exclude is --exclude: nil for the default exclusions, empty (not
	// nil) for none.
	Exclude []string
}

// Resolution is what a Request resolves to.
type Resolution struct {
	Targets []informer.Target
	// Expanded says that --all-types or a category chose the targets;
	// Categories are the arguments that were categories.
	Expanded   bool
	Categories []string
	// Scouts are, with Tree, the scout targets that search every type for
	// what the roots (Targets) own.
	Scouts []informer.Target
	// FailedGroups names API groups that discovery could not read.
	FailedGroups []string
}

// NeedsAPIServices reports whether the cluster's APIServices can tell the
// stream anything about this resolution: a target or scout whose group
// version an aggregated API may serve, or a group discovery could not
// read. The group versions of client-go's scheme are kube-apiserver's own
// (it registers their APIServices itself, with no service), so a stream
// of built-in types alone need not read them.
func (r *Resolution) NeedsAPIServices() bool {
	if len(r.FailedGroups) > 0 {
		return true
	}
	for _, ts := range [][]informer.Target{r.Targets, r.Scouts} {
		for _, t := range ts {
			if !listwatch.BuiltIn(t.Resource.GroupVersion()) {
				return true
			}
		}
	}
	return false
}

// Resolve maps the arguments, or every type with AllTypes, to targets
// through the cluster's discovery. --all-types and categories read
// discovery afresh; named types use kubectl's discovery cache as kubectl
// get does.
func Resolve(c Discovery, req Query) (*Resolution, error) {
	mapper, err := c.RESTMapper()
	if err != nil {
		return nil, err
	}
	var exp *expansion
	expand := func() (*expansion, error) {
		if exp == nil {
			// --all-types asks the server, not a discovery cache that may
			// be hours old.
			exp, err = newExpansion(c, mapper, req, req.AllTypes)
		}
		return exp, err
	}
	res := &Resolution{}
	if req.AllTypes {
		e, err := expand()
		if err != nil {
			return nil, err
		}
		res.Targets, res.Expanded, res.FailedGroups = e.allTypes(), true, e.types.failedGroups
		return res, nil
	}
	res.Targets, res.Categories, err = resolveArgs(mapper, req, expand)
	if err != nil {
		return nil, err
	}
	res.Expanded = len(res.Categories) > 0
	if req.Tree {
		e, err := expand()
		if err != nil {
			return nil, err
		}
		res.Scouts = e.scouts(res.Targets)
	}
	if exp != nil {
		res.FailedGroups = exp.types.failedGroups
	}
	if req.Exclude != nil && !res.Expanded && !req.Tree {
		return nil, errors.New("--exclude only applies to --all-types, to categories such as all and to --tree: drop --exclude or name a category")
	}
	return res, nil
}

// resolveArgs maps the arguments to targets, merging arguments that name
// the same resource ("cm,configmaps") into one. A type argument that is no
// resource may be a category ("all"), which expand expands; categories are
// the arguments that were.
func resolveArgs(mapper meta.RESTMapper, req Query, expand func() (*expansion, error)) (targets []informer.Target, categories []string, err error) {
	seen := map[string]bool{}
	add := func(t informer.Target) {
		if !seen[t.ID()] {
			seen[t.ID()] = true
			targets = append(targets, t)
		}
	}
	for _, a := range req.Args {
		mapping, err := MappingFor(mapper, a.Type)
		if err != nil {
			members, ok, cerr := expandCategory(expand, a)
			if cerr != nil {
				return nil, nil, cerr
			}
			if !ok {
				return nil, nil, err
			}
			categories = append(categories, a.Type)
			for _, t := range members {
				add(t)
			}
			continue
		}
		t := informer.Target{Resource: mapping.Resource, Kind: mapping.GroupVersionKind, Name: a.Name}
		if mapping.Scope.Name() == meta.RESTScopeNameNamespace && !req.AllNamespaces {
			t.Namespace = req.Namespace
		}
		add(t)
	}
	return targets, categories, nil
}

// expandCategory expands a.Type if it is a category; ok is false if it is
// not.
func expandCategory(expand func() (*expansion, error), a Arg) (targets []informer.Target, ok bool, err error) {
	e, err := expand()
	if err != nil {
		return nil, false, err
	}
	targets, ok = e.category(a.Type)
	if ok && a.Name != "" {
		return nil, false, fmt.Errorf("%q is a category of types, which cannot be watched by name: name a type instead (kubectl deltas TYPE/%s)", a.Type, a.Name)
	}
	return targets, ok, nil
}

// newExpansion reads discovery for --all-types and categories; fresh skips
// kubectl's discovery cache.
func newExpansion(c Discovery, mapper meta.RESTMapper, req Query, fresh bool) (*expansion, error) {
	dc, err := c.DiscoveryClient()
	if err != nil {
		return nil, err
	}
	if fresh {
		dc.Invalidate()
		if r, ok := mapper.(meta.ResettableRESTMapper); ok {
			r.Reset()
		}
	}
	var reader discovery.DiscoveryInterface = dc
	if f, ok := c.(freshDiscovery); ok && fresh {
		if reader, err = f.FreshDiscoveryClient(); err != nil {
			return nil, err
		}
	}
	types, err := discoverTypes(reader)
	if err != nil {
		return nil, err
	}
	exclude, err := parseExclusions(mapper, req.Exclude)
	if err != nil {
		return nil, err
	}
	return &expansion{
		mapper:        mapper,
		types:         types,
		expander:      restmapper.NewDiscoveryCategoryExpander(dc),
		namespace:     req.Namespace,
		allNamespaces: req.AllNamespaces,
		exclude:       exclude,
	}, nil
}

// TypeNames are the names of the listable and watchable types discovery
// lists, "plural[.group]", that start with prefix, sorted: for shell
// completion, which shows nothing when discovery fails.
func TypeNames(dc discovery.DiscoveryInterface, prefix string) []string {
	types, err := discoverTypes(dc)
	if err != nil {
		return nil
	}
	var out []string
	for _, gvr := range types.resources {
		if name := gvr.GroupResource().String(); strings.HasPrefix(name, prefix) {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return slices.Compact(out)
}

// DistinctResources counts the different resources among targets.
func DistinctResources(targets []informer.Target) int {
	set := map[string]bool{}
	for _, t := range targets {
		set[t.Resource.String()] = true
	}
	return len(set)
}

// Incomplete is the error of a snapshot (--until-synced) that listed every
// type it could while the API groups down (each "context: group/version")
// were: the user asked for them too; nil when none was.
func Incomplete(down []string) error {
	if len(down) == 0 {
		return nil
	}
	return fmt.Errorf("the snapshot is incomplete: the types of the API groups that are down were not listed: %s (try again once they are back: kubectl get apiservices)", strings.Join(down, "; "))
}
