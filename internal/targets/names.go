package targets

import (
	"strings"

	"github.com/kubectl-deltas/kubectl-deltas/internal/informer"
)

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
