package targets

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/kubectl-deltas/kubectl-deltas/internal/informer"
	"github.com/kubectl-deltas/kubectl-deltas/internal/textsafe"
)

// apiServicesPath is the collection of APIServices (apiregistration.k8s.io/v1).
const apiServicesPath = "/apis/apiregistration.k8s.io/v1/apiservices"

// APIService is what the stream needs to know of one APIService: the group
// version it registers, whether an aggregated server serves it (rather
// than kube-apiserver itself, as for built-in types and CRDs), and whether
// kube-apiserver finds that server available.
type APIService struct {
	Name         string
	GroupVersion schema.GroupVersion
	// Aggregated: spec.service is set; another server answers for the
	// group version, and may be down while kube-apiserver is up.
	Aggregated bool
	// Available is the Available condition; Reason and Message say why
	// not (FailedDiscoveryCheck, MissingEndpoints, ServiceNotFound…).
	Available       bool
	Reason, Message string
}

// Why is the APIService's state as an error message reads it:
// "APIService v1.fake.example.com, which is unavailable
// (FailedDiscoveryCheck: …)".
func (s APIService) Why() string {
	if s.Available {
		return "APIService " + s.Name
	}
	why := "APIService " + s.Name + ", which is unavailable"
	if r := s.reason(); r != "" {
		why += " (" + r + ")"
	}
	return why
}

// Status is the APIService's Available condition as a note reads it:
// "APIService v1.fake.example.com: FailedDiscoveryCheck: …".
func (s APIService) Status() string {
	status := "APIService " + s.Name
	if s.Available {
		return status + ": available"
	}
	if r := s.reason(); r != "" {
		return status + ": " + r
	}
	return status + ": unavailable"
}

// reason is the Available condition's reason and message, one line:
// "FailedDiscoveryCheck: …"; "" when it has neither.
func (s APIService) reason() string {
	if s.Reason == "" && s.Message == "" {
		return ""
	}
	return strings.TrimPrefix(s.Reason+": "+textsafe.OneLine(s.Message), ": ")
}

// APIServices are a cluster's APIServices by the group version they
// register. A nil APIServices (they could not be read: no right to list
// them) knows nothing, and callers go by discovery alone.
type APIServices map[schema.GroupVersion]APIService

// ReadAPIServices lists the cluster's APIServices through client, within
// limit. What they say only adds to what discovery says, so a list that
// fails (no right to list them, a slow server) is no error: the result is
// nil, which knows nothing.
func ReadAPIServices(ctx context.Context, client rest.Interface, limit time.Duration) APIServices {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	raw, err := client.Get().AbsPath(apiServicesPath).Do(ctx).Raw()
	if err != nil {
		return nil
	}
	services, err := parseAPIServices(raw)
	if err != nil {
		return nil
	}
	return services
}

// parseAPIServices reads an APIServiceList.
func parseAPIServices(raw []byte) (APIServices, error) {
	var list struct {
		Items []struct {
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
			Spec struct {
				Group   string          `json:"group"`
				Version string          `json:"version"`
				Service json.RawMessage `json:"service"`
			} `json:"spec"`
			Status struct {
				Conditions []struct {
					Type    string `json:"type"`
					Status  string `json:"status"`
					Reason  string `json:"reason"`
					Message string `json:"message"`
				} `json:"conditions"`
			} `json:"status"`
		} `json:"items"`
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, fmt.Errorf("reading the list of APIServices: %w", err)
	}
	out := APIServices{}
	for _, item := range list.Items {
		s := APIService{
			Name:         item.Metadata.Name,
			GroupVersion: schema.GroupVersion{Group: item.Spec.Group, Version: item.Spec.Version},
			Aggregated:   len(item.Spec.Service) > 0 && string(item.Spec.Service) != "null",
		}
		for _, c := range item.Status.Conditions {
			if c.Type == "Available" {
				s.Available = c.Status == "True"
				s.Reason, s.Message = c.Reason, c.Message
			}
		}
		out[s.GroupVersion] = s
	}
	return out, nil
}

// Unavailable are the aggregated APIServices that are not available,
// sorted by name.
func (as APIServices) Unavailable() []APIService {
	var out []APIService
	for _, s := range as {
		if s.Aggregated && !s.Available {
			out = append(out, s)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Down returns the aggregated APIService of gv when it is unavailable.
func (as APIServices) Down(gv schema.GroupVersion) (APIService, bool) {
	s, ok := as[gv]
	return s, ok && s.Aggregated && !s.Available
}

// Mark names, in each target served by an aggregated server, the
// APIService that registers it: its outages are that server's, not the
// cluster's.
func (as APIServices) Mark(ts []informer.Target) {
	for i := range ts {
		if s, ok := as[ts[i].Resource.GroupVersion()]; ok && s.Aggregated {
			ts[i].APIService = s.Name
		}
	}
}

// ExplainUnknown explains a type argument that discovery does not know
// when an aggregated API is down: its types are unknown until it is back.
// A "resource.group" argument whose group is served by an unavailable
// APIService is that APIService's type; a bare name may be one of any
// unavailable APIService's. Nil when no aggregated API is down, or none
// could be the argument's.
func (as APIServices) ExplainUnknown(arg string) error {
	down := as.Unavailable()
	if len(down) == 0 {
		return nil
	}
	resource, group, hasGroup := strings.Cut(arg, ".")
	if hasGroup {
		for _, s := range down {
			if s.GroupVersion.Group == group || s.GroupVersion.Group == strings.TrimPrefix(group, s.GroupVersion.Version+".") {
				return fmt.Errorf("%s.%s is served by %s: try again when it is back (kubectl get apiservice %s)", resource, s.GroupVersion.Group, s.Why(), s.Name)
			}
		}
		return nil
	}
	whys := make([]string, 0, len(down))
	for _, s := range down {
		whys = append(whys, s.Why())
	}
	return fmt.Errorf("the server doesn't have a resource type %q now; it may be a type of %s, whose types are unknown until it is back (or name it as %s.GROUP)", arg, strings.Join(whys, "; "), arg)
}

// NamedTypeDown is the error of a target the user named whose aggregated
// API is down at the start: nil when none is.
func (as APIServices) NamedTypeDown(ts []informer.Target) error {
	for _, t := range ts {
		if t.Optional {
			continue
		}
		if s, ok := as.Down(t.Resource.GroupVersion()); ok {
			return fmt.Errorf("%s is served by %s: try again when it is back (kubectl get apiservice %s)", t.Resource.GroupResource(), s.Why(), s.Name)
		}
	}
	return nil
}

// DownGroups names the group versions discovery could not read (failed)
// and those whose aggregated APIService is unavailable, the latter with
// the APIService's reason, sorted: for the warning of the start.
func (as APIServices) DownGroups(failed []string) []string {
	out := make([]string, 0, len(failed))
	seen := map[string]bool{}
	for _, s := range as.Unavailable() {
		gv := s.GroupVersion.String()
		seen[gv] = true
		out = append(out, gv+" ("+s.Status()+")")
	}
	for _, gv := range failed {
		if !seen[gv] {
			out = append(out, gv)
		}
	}
	sort.Strings(out)
	return out
}
