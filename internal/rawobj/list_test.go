package rawobj

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestParseList(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		n         int
		rv, cont  string
		remaining *int64
	}{
		{"empty", `{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"5"},"items":[]}`, 0, "5", "", nil},
		{"null items", `{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"5"},"items":null}`, 0, "5", "", nil},
		{"no items", `{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"5"}}`, 0, "5", "", nil},
		{"one", listJSON(1, ""), 1, "999999", "", nil},
		{"many", listJSON(50, ""), 50, "999999", "", nil},
		{"continue", listJSON(3, "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6OTk5OTk5fQ=="), 3, "999999", "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6OTk5OTk5fQ==", ptr(int64(42))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := []byte(tc.in)
			l, err := ParseList(in, ParseOptions{})
			if err != nil {
				t.Fatalf("ParseList: %v", err)
			}
			if l.Kind != "ConfigMapList" || l.APIVersion != "v1" || l.GetResourceVersion() != tc.rv || l.GetContinue() != tc.cont ||
				!reflect.DeepEqual(l.GetRemainingItemCount(), tc.remaining) {
				t.Errorf("list meta %+v", l)
			}
			if len(l.Items) != tc.n {
				t.Fatalf("%d items, want %d", len(l.Items), tc.n)
			}
			var raw struct{ Items []json.RawMessage }
			if err := json.Unmarshal(in, &raw); err != nil {
				t.Fatal(err)
			}
			for i, o := range l.Items {
				if o.Kind != "ConfigMap" || o.APIVersion != "v1" {
					t.Errorf("item %d: apiVersion %q kind %q", i, o.APIVersion, o.Kind)
				}
				if !strings.HasPrefix(string(o.JSON), `{"apiVersion":"v1","kind":"ConfigMap","metadata":`) {
					t.Errorf("item %d JSON does not start with the inserted type meta: %.80s", i, o.JSON)
				}
				if want := fmt.Sprintf("app-config-%05d", i); o.Name != want {
					t.Errorf("item %d name %q, want %q", i, o.Name, want)
				}
				// The item equals the list's item plus apiVersion and kind.
				var item map[string]any
				if err := json.Unmarshal(raw.Items[i], &item); err != nil {
					t.Fatal(err)
				}
				item["apiVersion"], item["kind"] = "v1", "ConfigMap"
				withType, _ := json.Marshal(item)
				checkAgainstOracle(t, withType, ParseOptions{}, o)
			}
			// The list does not alias its input.
			want := make([]string, len(l.Items))
			for i, o := range l.Items {
				want[i] = string(o.JSON) + strings.Clone(o.Name) + strings.Clone(o.Managers()[0].Manager)
			}
			wantCont := strings.Clone(l.Continue)
			for i := range in {
				in[i] = '#'
			}
			for i, o := range l.Items {
				if got := string(o.JSON) + o.Name + o.Managers()[0].Manager; got != want[i] {
					t.Errorf("item %d changed with the input", i)
				}
			}
			if l.Continue != wantCont {
				t.Errorf("continue changed with the input")
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func TestParseListTypeMeta(t *testing.T) {
	tests := []struct {
		name, in              string
		wantJSON              []string
		wantAPIVersion, wantK []string
	}{
		{"items with type meta are unchanged",
			`{"kind":"WidgetList","apiVersion":"example.com/v1","items":[{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"a"}}]}`,
			[]string{`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"a"}}`}, []string{"example.com/v1"}, []string{"Widget"}},
		{"only kind missing",
			`{"kind":"WidgetList","apiVersion":"example.com/v1","items":[{"apiVersion":"example.com/v2","metadata":{"name":"a"}}]}`,
			[]string{`{"kind":"Widget","apiVersion":"example.com/v2","metadata":{"name":"a"}}`}, []string{"example.com/v2"}, []string{"Widget"}},
		{"only apiVersion missing, whitespace",
			`{"kind":"WidgetList","apiVersion":"example.com/v1","items":[ { "kind" : "Widget", "metadata":{"name":"a"}} ]}`,
			[]string{`{"apiVersion":"example.com/v1", "kind" : "Widget", "metadata":{"name":"a"}}`}, []string{"example.com/v1"}, []string{"Widget"}},
		{"type meta after items",
			`{"items":[{"metadata":{"name":"a"}},{"metadata":{"name":"b"}}],"metadata":{},"apiVersion":"v1","kind":"SecretList"}`,
			[]string{`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"a"}}`, `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"b"}}`},
			[]string{"v1", "v1"}, []string{"Secret", "Secret"}},
		{"kind without List suffix",
			`{"kind":"Weird","apiVersion":"v1","items":[{"metadata":{"name":"a"}}]}`,
			[]string{`{"apiVersion":"v1","metadata":{"name":"a"}}`}, []string{"v1"}, []string{""}},
		{"no list type meta",
			`{"items":[{"metadata":{"name":"a"}}]}`,
			[]string{`{"metadata":{"name":"a"}}`}, []string{""}, []string{""}},
		{"managedFields stripped",
			`{"kind":"ConfigMapList","apiVersion":"v1","items":[{"metadata":{"managedFields":[],"name":"a"}}]}`,
			[]string{`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}`}, []string{"v1"}, []string{"ConfigMap"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, err := ParseList([]byte(tc.in), ParseOptions{})
			if err != nil {
				t.Fatalf("ParseList: %v", err)
			}
			if len(l.Items) != len(tc.wantJSON) {
				t.Fatalf("%d items", len(l.Items))
			}
			for i, o := range l.Items {
				if string(o.JSON) != tc.wantJSON[i] || o.APIVersion != tc.wantAPIVersion[i] || o.Kind != tc.wantK[i] {
					t.Errorf("item %d: %s %q %q", i, o.JSON, o.APIVersion, o.Kind)
				}
				if !json.Valid(o.JSON) {
					t.Errorf("item %d: invalid JSON", i)
				}
			}
		})
	}
}

func TestParseListErrors(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"not an object", `[]`, "expected a JSON object at offset 0, found '['"},
		{"items not array", `{"items":{}}`, "items at offset 9 is not an array"},
		{"item without name", `{"items":[{"metadata":{"name":"a"}},{"metadata":{}}]}`, "items[1]: object has no metadata.name"},
		{"item not object", `{"items":[{"metadata":{"name":"a"}},1]}`, "items[1]: expected a JSON object at offset 36, found '1'"},
		{"truncated", `{"items":[{"metadata":{"name":"a"}}`, "invalid JSON at offset 35: unexpected end of input"},
		{"bad list meta", `{"metadata":{"resourceVersion":1},"items":[]}`, "metadata.resourceVersion at offset 31 is not a string"},
		{"bad remainingItemCount", `{"metadata":{"remainingItemCount":"1"},"items":[]}`, "metadata.remainingItemCount at offset 34 is not a number"},
		{"trailing", `{"items":[]}x`, "invalid JSON at offset 12: unexpected 'x' after the object"},
		{"invalid later", `{"items":[],"x":[1,}`, "invalid JSON at offset 19: unexpected '}'"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseList([]byte(tc.in), ParseOptions{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
	_, err := ParseList([]byte(`{"items":[{"metadata":{}}]}`), ParseOptions{})
	if !errors.Is(err, ErrNoName) {
		t.Errorf("item error does not wrap the cause: %v", err)
	}
}

func TestListInterfaces(t *testing.T) {
	l, err := ParseList([]byte(listJSON(3, "c")), ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var li metav1.ListInterface = l
	li.SetResourceVersion("7")
	li.SetContinue("d")
	li.SetSelfLink("/x")
	li.SetRemainingItemCount(ptr(int64(1)))
	if li.GetResourceVersion() != "7" || li.GetContinue() != "d" || li.GetSelfLink() != "/x" || *li.GetRemainingItemCount() != 1 {
		t.Errorf("setters: %+v", l)
	}
	// apimachinery's helpers work on it.
	if !apimeta.IsListType(l) {
		t.Error("apimeta.IsListType = false")
	}
	var names []string
	if err := apimeta.EachListItem(l, func(o runtime.Object) error {
		names = append(names, o.(*Object).Name)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(names, []string{"app-config-00000", "app-config-00001", "app-config-00002"}) {
		t.Errorf("apimeta.EachListItem: %v", names)
	}
	stop := errors.New("stop")
	n := 0
	if err := l.EachListItem(func(runtime.Object) error { n++; return stop }); err != stop || n != 1 {
		t.Errorf("EachListItem: %v after %d", err, n)
	}
	if lm, err := apimeta.ListAccessor(l); err != nil || lm.GetResourceVersion() != "7" {
		t.Errorf("apimeta.ListAccessor: %v", err)
	}
	c := l.DeepCopyObject().(*List)
	if c.Items[0] == l.Items[0] || c.Items[0].Name != l.Items[0].Name || c.RemainingItemCount == l.RemainingItemCount {
		t.Error("DeepCopy shares items")
	}
	l.GetObjectKind().SetGroupVersionKind(metav1.SchemeGroupVersion.WithKind("XList"))
	if l.APIVersion != "meta.k8s.io/v1" || l.Kind != "XList" {
		t.Errorf("SetGroupVersionKind: %q %q", l.APIVersion, l.Kind)
	}
}

func TestParseListMeta(t *testing.T) {
	in := " {\"kind\":\"ConfigMapList\",\"apiVersion\":\"v1\",\"metadata\":{\"selfLink\":\"/api/v1/configmaps\",\"resourceVersion\":\"5\",\"continue\":\"a\\u002bb\",\"remainingItemCount\":7,\"remainingItemCount\":null,\"other\":[1,{}]},\"extra\":{\"items\":1},\"items\":[]}\n"
	l, err := ParseList([]byte(in), ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if l.SelfLink != "/api/v1/configmaps" || l.ResourceVersion != "5" || l.Continue != "a+b" || l.RemainingItemCount != nil || l.Items == nil || len(l.Items) != 0 {
		t.Errorf("%+v", l)
	}
	if gvk := l.GroupVersionKind(); gvk.Kind != "ConfigMapList" || gvk.Version != "v1" {
		t.Errorf("GVK %v", gvk)
	}
	if l, err := ParseList([]byte(`{"metadata":null,"items":null}`), ParseOptions{}); err != nil || l.Items != nil {
		t.Errorf("null metadata and items: %+v %v", l, err)
	}
}
