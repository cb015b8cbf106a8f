package cmd

// The command run without a cluster, as kubectl's pkg/cmd tests run theirs:
// cli-runtime's TestConfigFlags with client-go's fake discovery, the plugin's
// REST client over client-go's fake HTTP transport (rest/fake), and
// client-go's fake clientset for the access reviews.

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/discovery/cached/memory"
	discoveryfake "k8s.io/client-go/discovery/fake"
	kubefake "k8s.io/client-go/kubernetes/fake"
	authorizationv1client "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/client-go/rest"
	restfake "k8s.io/client-go/rest/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kubectl-deltas/kubectl-deltas/internal/listwatch"
)

// fakeCluster answers the requests of a run: namespaces, lists of the
// objects it holds (by collection path), and watches that stay open and
// silent until the run ends. denied are the resources the access reviews
// refuse.
type fakeCluster struct {
	namespaces []string
	// objects holds each collection's items, by path
	// (/api/v1/namespaces/demo/configmaps), as JSON.
	objects map[string][]string
	denied  []string

	mu       sync.Mutex
	requests []string
}

// resources are the types discovery serves.
var resources = []*metav1.APIResourceList{
	{GroupVersion: "v1", APIResources: []metav1.APIResource{
		{Name: "configmaps", SingularName: "configmap", Namespaced: true, Kind: "ConfigMap", ShortNames: []string{"cm"}, Verbs: []string{"list", "watch", "get"}},
		{Name: "pods", SingularName: "pod", Namespaced: true, Kind: "Pod", ShortNames: []string{"po"}, Categories: []string{"all"}, Verbs: []string{"list", "watch", "get"}},
		{Name: "namespaces", SingularName: "namespace", Kind: "Namespace", ShortNames: []string{"ns"}, Verbs: []string{"list", "watch", "get"}},
	}},
	{GroupVersion: "apps/v1", APIResources: []metav1.APIResource{
		{Name: "deployments", SingularName: "deployment", Namespaced: true, Kind: "Deployment", ShortNames: []string{"deploy"}, Categories: []string{"all"}, Verbs: []string{"list", "watch", "get"}},
		{Name: "replicasets", SingularName: "replicaset", Namespaced: true, Kind: "ReplicaSet", ShortNames: []string{"rs"}, Categories: []string{"all"}, Verbs: []string{"list", "watch", "get"}},
	}},
	{GroupVersion: "events.k8s.io/v1", APIResources: []metav1.APIResource{
		{Name: "events", SingularName: "event", Namespaced: true, Kind: "Event", ShortNames: []string{"ev"}, Verbs: []string{"list", "watch", "get"}},
	}},
}

// roundTrip is the cluster's HTTP side.
func (f *fakeCluster) roundTrip(req *http.Request) (*http.Response, error) {
	f.mu.Lock()
	f.requests = append(f.requests, req.URL.RequestURI())
	f.mu.Unlock()
	path := req.URL.Path
	if path == "/version" {
		return respond(http.StatusOK, `{"major":"1","minor":"36","gitVersion":"v1.36.3"}`), nil
	}
	if ns, ok := strings.CutPrefix(path, "/api/v1/namespaces/"); ok && !strings.Contains(ns, "/") {
		if !slices.Contains(f.namespaces, ns) {
			return status(http.StatusNotFound, "NotFound", fmt.Sprintf("namespaces %q not found", ns)), nil
		}
		return respond(http.StatusOK, fmt.Sprintf(`{"kind":"Namespace","apiVersion":"v1","metadata":{"name":%q}}`, ns)), nil
	}
	items, known := f.objects[path]
	if !known {
		return status(http.StatusNotFound, "NotFound", "the server could not find the requested resource"), nil
	}
	if req.URL.Query().Get("watch") == "true" {
		// Open and silent until the run ends.
		r, w := io.Pipe()
		go func() {
			<-req.Context().Done()
			w.Close()
		}()
		return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}}, Body: r, Request: req}, nil
	}
	name := ""
	if sel := req.URL.Query().Get("fieldSelector"); strings.HasPrefix(sel, "metadata.name=") {
		name = strings.TrimPrefix(sel, "metadata.name=")
	}
	var kept []string
	for _, item := range items {
		if name == "" || strings.Contains(item, fmt.Sprintf(`"name":%q`, name)) {
			kept = append(kept, item)
		}
	}
	return respond(http.StatusOK, `{"kind":"List","apiVersion":"v1","metadata":{"resourceVersion":"10"},"items":[`+strings.Join(kept, ",")+`]}`), nil
}

func respond(code int, body string) *http.Response {
	return &http.Response{StatusCode: code, Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(strings.NewReader(body))}
}

func status(code int, reason, message string) *http.Response {
	return respond(code, fmt.Sprintf(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":%q,"message":%q,"code":%d}`, reason, message, code))
}

// clients is the run's clientMaker: the plugin's own REST client (over the
// fake transport of the getter's config), and reviews that allow all but
// the denied resources.
func (f *fakeCluster) clients(config *rest.Config) (rest.Interface, authorizationv1client.SelfSubjectAccessReviewInterface, error) {
	client, err := listwatch.NewRESTClient(config)
	if err != nil {
		return nil, nil, err
	}
	cs := kubefake.NewClientset()
	cs.PrependReactor("create", "selfsubjectaccessreviews", func(action k8stesting.Action) (bool, runtime.Object, error) {
		review := action.(k8stesting.CreateAction).GetObject().(*authorizationv1.SelfSubjectAccessReview)
		attrs := review.Spec.ResourceAttributes
		review.Status.Allowed = attrs == nil || !slices.Contains(f.denied, attrs.Resource)
		return true, review, nil
	})
	return client, cs.AuthorizationV1().SelfSubjectAccessReviews(), nil
}

// getter is the connection flags of a run against f: a kubeconfig whose
// context's namespace is demo (or -n's, namespace), REST configs whose
// transport is f (client-go's fake HTTP client), and client-go's fake
// discovery.
func (f *fakeCluster) getter(namespace *string) genericclioptions.RESTClientGetter {
	config := clientcmdapi.NewConfig()
	config.Clusters["fake"] = &clientcmdapi.Cluster{Server: "https://fake.invalid"}
	config.AuthInfos["fake"] = &clientcmdapi.AuthInfo{Token: "t"}
	config.Contexts["fake"] = &clientcmdapi.Context{Cluster: "fake", AuthInfo: "fake", Namespace: "demo"}
	config.CurrentContext = "fake"
	disco := &discoveryfake.FakeDiscovery{Fake: &k8stesting.Fake{Resources: resources}}
	return genericclioptions.NewTestConfigFlags().
		WithClientConfig(fakeClientConfig{clientcmd.NewDefaultClientConfig(*config, &clientcmd.ConfigOverrides{}), namespace, f}).
		WithDiscoveryClient(memory.NewMemCacheClient(disco))
}

// fakeClientConfig is a client config whose namespace is -n's when given,
// as ConfigFlags' is, and whose REST configs reach the fake cluster.
type fakeClientConfig struct {
	base    clientcmd.ClientConfig
	flag    *string
	cluster *fakeCluster
}

func (c fakeClientConfig) Namespace() (string, bool, error) {
	if *c.flag != "" {
		return *c.flag, true, nil
	}
	return c.base.Namespace()
}

func (c fakeClientConfig) ClientConfig() (*rest.Config, error) {
	config, err := c.base.ClientConfig()
	if err != nil {
		return nil, err
	}
	config.Transport = restfake.CreateHTTPClient(c.cluster.roundTrip).Transport
	return config, nil
}

func (c fakeClientConfig) RawConfig() (clientcmdapi.Config, error) { return c.base.RawConfig() }
func (c fakeClientConfig) ConfigAccess() clientcmd.ConfigAccess    { return c.base.ConfigAccess() }

// ran is the outcome of one run of the command.
type ran struct {
	code           int
	stdout, stderr string
}

// runCommand runs the command with args against f, as Execute does.
func runCommand(t *testing.T, f *fakeCluster, args ...string) ran {
	t.Helper()
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	o := NewDeltasOptions(streams)
	o.Clusters.Getter = f.getter(o.Clusters.ConfigFlags.Namespace)
	o.clients = f.clients
	code := execute(o, args)
	return ran{code: code, stdout: out.String(), stderr: errOut.String()}
}

// object is the JSON of an object of kind in namespace demo, owned by the
// owners given as kind/name (UIDs are "uid-"+name).
func object(apiVersion, kind, name string, owners ...string) string {
	var refs []string
	for _, o := range owners {
		k, n, _ := strings.Cut(o, "/")
		refs = append(refs, fmt.Sprintf(`{"apiVersion":"apps/v1","kind":%q,"name":%q,"uid":"uid-%s","controller":true}`, k, n, n))
	}
	return fmt.Sprintf(`{"apiVersion":%q,"kind":%q,"metadata":{"name":%q,"namespace":"demo","uid":"uid-%s","resourceVersion":"5","ownerReferences":[%s]}}`,
		apiVersion, kind, name, name, strings.Join(refs, ","))
}

// requested is the requests f was sent, joined by new lines.
func (f *fakeCluster) requested() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var b bytes.Buffer
	for _, r := range f.requests {
		b.WriteString(r + "\n")
	}
	return b.String()
}
