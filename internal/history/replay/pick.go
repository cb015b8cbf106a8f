package replay

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kubectl-deltas/kubectl-deltas/internal/informer"
)

// Asked is a type argument, as kubectl get takes it, and a name or "".
type Asked struct{ Type, Name string }

// Pick picks, among the recorded collections, those of the arguments (all
// without), narrowed to namespace and to the names given, in the contexts
// given (all without). file names the recording in errors.
func Pick(recorded []informer.Target, args []Asked, namespace string, contexts []string, file string) ([]informer.Target, error) {
	var candidates []informer.Target
	for _, t := range recorded {
		if len(contexts) > 0 && !slices.Contains(contexts, t.Context) {
			continue
		}
		if namespace != "" {
			if t.Namespace != "" && t.Namespace != namespace {
				continue
			}
			t.Namespace = namespace
		}
		candidates = append(candidates, t)
	}
	if len(candidates) == 0 {
		return nil, fmt.Errorf("the recording %s has nothing %s: it recorded %s", file, where(namespace, contexts), informer.Describe(recorded))
	}
	if len(args) == 0 {
		return candidates, nil
	}
	var out []informer.Target
	for _, a := range args {
		found := false
		for _, t := range candidates {
			if !NamesType(a.Type, t) || (a.Name != "" && t.Name != "" && t.Name != a.Name) {
				continue
			}
			found = true
			if a.Name != "" {
				t.Name = a.Name
			}
			if !slices.ContainsFunc(out, func(o informer.Target) bool { return o.ID() == t.ID() }) {
				out = append(out, t)
			}
		}
		if !found {
			return nil, fmt.Errorf("the recording %s has no %q %s: it recorded %s", file, a.Type, where(namespace, contexts), informer.Describe(recorded))
		}
	}
	return out, nil
}

// where says which part of a recording was looked in.
func where(namespace string, contexts []string) string {
	var parts []string
	if namespace != "" {
		parts = append(parts, "in namespace "+namespace)
	}
	if len(contexts) > 0 {
		parts = append(parts, "in context "+strings.Join(contexts, ", "))
	}
	if len(parts) == 0 {
		return "there"
	}
	return strings.Join(parts, " ")
}

// builtInShortNames are kube-apiserver's short names of its own types, by
// group/resource: what a recording is asked for offline, where no
// discovery says them.
var builtInShortNames = map[string][]string{
	"configmaps": {"cm"}, "endpoints": {"ep"}, "events": {"ev"}, "limitranges": {"limits"},
	"namespaces": {"ns"}, "nodes": {"no"}, "persistentvolumeclaims": {"pvc"}, "persistentvolumes": {"pv"},
	"pods": {"po"}, "replicationcontrollers": {"rc"}, "resourcequotas": {"quota"},
	"serviceaccounts": {"sa"}, "services": {"svc"},
	"daemonsets.apps": {"ds"}, "deployments.apps": {"deploy"}, "replicasets.apps": {"rs"},
	"statefulsets.apps": {"sts"}, "horizontalpodautoscalers.autoscaling": {"hpa"},
	"cronjobs.batch": {"cj"}, "certificatesigningrequests.certificates.k8s.io": {"csr"},
	"ingresses.networking.k8s.io": {"ing"}, "networkpolicies.networking.k8s.io": {"netpol"},
	"poddisruptionbudgets.policy": {"pdb"}, "storageclasses.storage.k8s.io": {"sc"},
	"customresourcedefinitions.apiextensions.k8s.io": {"crd", "crds"}, "events.events.k8s.io": {"ev"},
	"priorityclasses.scheduling.k8s.io": {"pc"},
}

// NamesType reports whether the type argument arg (as kubectl get takes
// it: a resource, its singular, its kind, a short name of a built-in type,
// each optionally .GROUP or .VERSION.GROUP) names t's collection, without
// asking a server: how a recording's collections are picked.
func NamesType(arg string, t informer.Target) bool {
	arg = strings.ToLower(arg)
	name, qualifier, _ := strings.Cut(arg, ".")
	group, version := t.Resource.Group, t.Resource.Version
	if qualifier != "" && qualifier != group && qualifier != version+"."+group && (group != "" || qualifier != version) {
		return false
	}
	gr := t.Resource.GroupResource().String()
	kind := strings.ToLower(t.Kind.Kind)
	switch name {
	case t.Resource.Resource, kind, kind + "s":
		return true
	}
	for _, short := range builtInShortNames[gr] {
		if name == short {
			return true
		}
	}
	return false
}
