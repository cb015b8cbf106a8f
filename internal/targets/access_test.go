package targets

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

// namespaceServer answers GETs of namespaces: "shop" exists, any other is
// not found. gets counts the requests per namespace.
func namespaceServer(t *testing.T) (rest.Interface, map[string]*atomic.Int32) {
	t.Helper()
	gets := map[string]*atomic.Int32{"shop": {}, "typo": {}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := r.URL.Path[len("/api/v1/namespaces/"):]
		if n, ok := gets[name]; ok {
			n.Add(1)
		}
		w.Header().Set("Content-Type", "application/json")
		if name != "shop" {
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`))
			return
		}
		_, _ = w.Write([]byte(`{"kind":"Namespace","apiVersion":"v1","metadata":{"name":"shop"}}`))
	}))
	t.Cleanup(srv.Close)
	client, err := rest.RESTClientFor(&rest.Config{
		Host:          srv.URL,
		ContentConfig: rest.ContentConfig{GroupVersion: &schema.GroupVersion{Version: "v1"}, NegotiatedSerializer: scheme.Codecs.WithoutConversion()},
	})
	if err != nil {
		t.Fatal(err)
	}
	return client, gets
}

func TestNamespacesAskedOnce(t *testing.T) {
	client, gets := namespaceServer(t)
	ctx := context.Background()
	var ns Namespaces
	ns.Ask(ctx, client, "shop")
	ns.Ask(ctx, client, "shop")
	for range 2 {
		if err := ns.answer(ctx, client, "shop"); err != nil {
			t.Errorf("shop: %v, want it found", err)
		}
		if err := ns.answer(ctx, client, "typo"); !apierrors.IsNotFound(err) {
			t.Errorf("typo: %v, want NotFound", err)
		}
	}
	for name, n := range gets {
		if got := n.Load(); got != 1 {
			t.Errorf("namespace %q asked %d times, want once", name, got)
		}
	}
}

func TestNamespacesAnswerLeavesWithItsContext(t *testing.T) {
	client, _ := namespaceServer(t)
	var ns Namespaces
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := ns.answer(ctx, client, "shop"); err == nil {
		t.Error("an answer awaited with an ended context: nil error, want the context's")
	}
}
