package cmd

import (
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-deltas/kubectl-deltas/internal/informer"
)

// resourceArg is one requested resource type with an optional name, as
// typed by the user ("cm", "deployments.apps", "cm/demo").
type resourceArg struct {
	typ  string
	name string
}

// parseArgs splits the arguments the way kubectl get does:
// TYPE[,TYPE...] [NAME ...] or TYPE/NAME [TYPE/NAME ...]. It checks the
// syntax only; types are resolved against the server later.
func parseArgs(args []string) ([]resourceArg, error) {
	if len(args) == 0 {
		return nil, errors.New("no resource type given")
	}
	slashed := 0
	for _, a := range args {
		if strings.Contains(a, "/") {
			slashed++
		}
	}
	var out []resourceArg
	switch {
	case slashed == len(args):
		for _, a := range args {
			typ, name, _ := strings.Cut(a, "/")
			if typ == "" || name == "" || strings.Contains(name, "/") {
				return nil, fmt.Errorf("arguments in resource/name form must have a single resource and name, got %q", a)
			}
			out = append(out, resourceArg{typ: typ, name: name})
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
				out = append(out, resourceArg{typ: t})
			}
			for _, n := range names {
				out = append(out, resourceArg{typ: t, name: n})
			}
		}
	}
	return out, nil
}

// validateSelectors parses -l and --field-selector so that a bad one fails
// before any request.
func validateSelectors(labelSelector, fieldSelector string) error {
	if _, err := labels.Parse(labelSelector); err != nil {
		return fmt.Errorf("invalid --selector %q: %w", labelSelector, err)
	}
	if _, err := fields.ParseSelector(fieldSelector); err != nil {
		return fmt.Errorf("invalid --field-selector %q: %w", fieldSelector, err)
	}
	return nil
}

// mappingFor resolves a type argument as kubectl does: resource (plural,
// singular, short name), then kind, with an optional .version.group.
func mappingFor(mapper meta.RESTMapper, arg string) (*meta.RESTMapping, error) {
	fullySpecifiedGVR, groupResource := schema.ParseResourceArg(arg)
	gvk := schema.GroupVersionKind{}
	if fullySpecifiedGVR != nil {
		gvk, _ = mapper.KindFor(*fullySpecifiedGVR)
	}
	if gvk.Empty() {
		gvk, _ = mapper.KindFor(groupResource.WithVersion(""))
	}
	if !gvk.Empty() {
		return mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}

	fullySpecifiedGVK, groupKind := schema.ParseKindArg(arg)
	if fullySpecifiedGVK == nil {
		gvk := groupKind.WithVersion("")
		fullySpecifiedGVK = &gvk
	}
	if !fullySpecifiedGVK.Empty() {
		if mapping, err := mapper.RESTMapping(fullySpecifiedGVK.GroupKind(), fullySpecifiedGVK.Version); err == nil {
			return mapping, nil
		}
	}
	mapping, err := mapper.RESTMapping(groupKind, gvk.Version)
	if err != nil {
		// A no-match error means the type is unknown; anything else is a
		// discovery problem worth showing as it is.
		if meta.IsNoMatchError(err) {
			return nil, fmt.Errorf("the server doesn't have a resource type %q", groupResource.Resource)
		}
		return nil, err
	}
	return mapping, nil
}

// resolveTargets maps the arguments to targets, merging arguments that
// name the same resource ("cm,configmaps") into one. A type argument that is
// no resource may be a category ("all"), which expand, when not nil,
// expands; categories are the arguments that were.
func resolveTargets(mapper meta.RESTMapper, args []resourceArg, namespace string, allNamespaces bool, expand func() (*expansion, error)) (targets []informer.Target, categories []string, err error) {
	seen := map[string]bool{}
	add := func(t informer.Target) {
		if !seen[t.ID()] {
			seen[t.ID()] = true
			targets = append(targets, t)
		}
	}
	for _, a := range args {
		mapping, err := mappingFor(mapper, a.typ)
		if err != nil {
			members, ok, cerr := expandCategory(expand, a)
			if cerr != nil {
				return nil, nil, cerr
			}
			if !ok {
				return nil, nil, err
			}
			categories = append(categories, a.typ)
			for _, t := range members {
				add(t)
			}
			continue
		}
		t := informer.Target{Resource: mapping.Resource, Kind: mapping.GroupVersionKind, Name: a.name}
		if mapping.Scope.Name() == meta.RESTScopeNameNamespace && !allNamespaces {
			t.Namespace = namespace
		}
		add(t)
	}
	return targets, categories, nil
}

// expandCategory expands a.typ if it is a category; ok is false if it is
// not (or nothing can expand it).
func expandCategory(expand func() (*expansion, error), a resourceArg) (targets []informer.Target, ok bool, err error) {
	if expand == nil {
		return nil, false, nil
	}
	e, err := expand()
	if err != nil {
		return nil, false, err
	}
	targets, ok = e.category(a.typ)
	if ok && a.name != "" {
		return nil, false, fmt.Errorf("%q is a category of types, which cannot be watched by name: name a type instead (kubectl deltas TYPE/%s)", a.typ, a.name)
	}
	return targets, ok, nil
}

// distinctResources counts the different resources among targets.
func distinctResources(targets []informer.Target) int {
	set := map[string]bool{}
	for _, t := range targets {
		set[t.Resource.String()] = true
	}
	return len(set)
}
