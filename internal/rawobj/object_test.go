package rawobj

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
	"unsafe"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var realistic = []struct {
	name string
	json string
	want meta
}{
	{"configmap", configMapJSON(7, true), meta{
		APIVersion: "v1", Kind: "ConfigMap", Namespace: "default", Name: "app-config-00007",
		UID: "6a1c2f3e-8d4b-4c1a-9e2f-000000000007", ResourceVersion: "100007",
		CreationTimestamp: "2024-05-01T12:00:00Z",
		Managers: []ManagedFieldsEntry{
			{Manager: "kubectl-client-side-apply", Operation: "Update", Time: "2024-05-01T12:00:00Z"},
			{Manager: "kube-controller-manager", Operation: "Update", Time: "2024-05-02T08:30:00Z"},
		},
	}},
	{"secret", secretJSON, meta{
		APIVersion: "v1", Kind: "Secret", Namespace: "prod", Name: "db-credentials",
		UID: "0b7d5c3a-1e90-4c1a-9e2f-6a1c2f3e8d4b", ResourceVersion: "77",
		CreationTimestamp: "2023-11-30T23:59:59Z",
		Managers:          []ManagedFieldsEntry{{Manager: "kubectl-create", Operation: "Update", Time: "2023-11-30T23:59:59Z"}},
	}},
	{"pod", podJSON, meta{
		APIVersion: "v1", Kind: "Pod", Namespace: "shop", Name: "web-7d4b9c8f6-x2x9k",
		UID: "e3b0c442-98fc-1c14-9afb-f4c8996fb924", ResourceVersion: "5012345", Generation: 3,
		CreationTimestamp: "2024-02-29T10:11:12Z", DeletionTimestamp: "2024-03-01T00:00:00Z",
		Managers: []ManagedFieldsEntry{
			{Manager: "kube-controller-manager", Operation: "Update", Time: "2024-02-29T10:11:12Z"},
			{Manager: "kubelet", Operation: "Update", Subresource: "status", Time: "2024-02-29T10:11:20Z"},
			{Manager: "example-controller", Operation: "Apply", Time: "2024-02-29T10:12:00Z"},
		},
	}},
	{"namespace", namespaceJSON, meta{
		APIVersion: "v1", Kind: "Namespace", Name: "kube-system",
		UID: "9f86d081-884c-7d65-9a2f-eaa0c55ad015", ResourceVersion: "4",
		CreationTimestamp: "2023-01-01T00:00:00Z",
	}},
	{"escapes and unicode", escapedJSON, meta{
		APIVersion: "v1", Kind: "ConfigMap", Namespace: "ns-1", Name: "café-/x\"y\\z-😀-😀",
		UID: "uid", ResourceVersion: "12", InitialEventsEnd: true,
		Managers: []ManagedFieldsEntry{{Manager: "müller", Operation: "Update", Time: "2024-01-01T00:00:00Z"}},
	}},
	{"nested metadata keys, metadata last", nestedMetadataJSON, meta{
		APIVersion: "apps/v1", Kind: "Deployment", Namespace: "apps", Name: "right", UID: "u",
		ResourceVersion: "9", Generation: 12,
		Managers: []ManagedFieldsEntry{{Manager: "kube-controller-manager", Operation: "Update", Time: "2024-01-01T00:00:00Z"}},
	}},
	{"pretty-printed", prettyJSON, meta{
		APIVersion: "v1", Kind: "ConfigMap", Namespace: "default", Name: "pretty", ResourceVersion: "3",
		Managers: []ManagedFieldsEntry{{Manager: "kubectl", Operation: "Apply", Time: "2024-01-01T00:00:00Z"}},
	}},
}

func TestParseRealistic(t *testing.T) {
	for _, tc := range realistic {
		for _, keep := range []bool{false, true} {
			opts := ParseOptions{KeepManagedFields: keep}
			t.Run(tc.name+map[bool]string{false: "/strip", true: "/keep"}[keep], func(t *testing.T) {
				o, err := Parse([]byte(tc.json), opts)
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				if got := metaOf(o); !reflect.DeepEqual(got, tc.want) {
					t.Errorf("got  %+v\nwant %+v", got, tc.want)
				}
				checkAgainstOracle(t, []byte(tc.json), opts, o)
				if !keep && strings.Contains(string(o.JSON), `"managedFields"`) && tc.name != "nested metadata keys, metadata last" {
					t.Errorf("managedFields not stripped: %s", o.JSON)
				}
			})
		}
	}
}

// TestParseVersusUnstructured compares with apimachinery's own decoding.
func TestParseVersusUnstructured(t *testing.T) {
	for _, tc := range realistic {
		t.Run(tc.name, func(t *testing.T) {
			o, err := Parse([]byte(tc.json), ParseOptions{})
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			obj, _, err := unstructured.UnstructuredJSONScheme.Decode([]byte(tc.json), nil, nil)
			if err != nil {
				t.Fatalf("unstructured decode: %v", err)
			}
			u := obj.(*unstructured.Unstructured)
			if o.GetName() != u.GetName() || o.GetNamespace() != u.GetNamespace() || o.GetUID() != u.GetUID() ||
				o.GetResourceVersion() != u.GetResourceVersion() || o.Generation != u.GetGeneration() ||
				o.APIVersion != u.GetAPIVersion() || o.Kind != u.GetKind() {
				t.Errorf("metadata differs from unstructured: %+v vs %v", metaOf(o), u.Object["metadata"])
			}
			if o.GroupVersionKind() != u.GroupVersionKind() {
				t.Errorf("GVK %v, unstructured %v", o.GroupVersionKind(), u.GroupVersionKind())
			}
			checkTime(t, "creationTimestamp", o.CreationTimestamp, u.GetCreationTimestamp())
			var del metav1.Time
			if d := u.GetDeletionTimestamp(); d != nil {
				del = *d
			}
			checkTime(t, "deletionTimestamp", o.DeletionTimestamp, del)
			mf := u.GetManagedFields()
			if len(mf) != len(o.Managers()) {
				t.Fatalf("%d managers, unstructured has %d", len(o.Managers()), len(mf))
			}
			for i, e := range mf {
				m := o.Managers()[i]
				if m.Manager != e.Manager || m.Operation != string(e.Operation) || m.Subresource != e.Subresource {
					t.Errorf("manager %d: %+v vs %+v", i, m, e)
				}
				var tm metav1.Time
				if e.Time != nil {
					tm = *e.Time
				}
				checkTime(t, "managedFields time", m.Time, tm)
			}
			if got, want := o.InitialEventsEnd, u.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "true"; got != want {
				t.Errorf("InitialEventsEnd %v, unstructured says %v", got, want)
			}
		})
	}
}

func checkTime(t *testing.T, what, raw string, want metav1.Time) {
	t.Helper()
	if raw == "" {
		if !want.IsZero() {
			t.Errorf("%s empty, unstructured has %v", what, want)
		}
		return
	}
	got, err := time.Parse(time.RFC3339, raw)
	if err != nil || !got.Equal(want.Time) {
		t.Errorf("%s %q (%v), unstructured has %v", what, raw, err, want)
	}
}

func TestManagedFieldsStripping(t *testing.T) {
	mf := `"managedFields":[{"manager":"m","fieldsV1":{"f:a":{}}}]`
	tests := []struct{ name, in, want string }{
		{"only member", `{"metadata":{` + mf + `}}`, `{"metadata":{}}`},
		{"first", `{"metadata":{` + mf + `,"name":"a"}}`, `{"metadata":{"name":"a"}}`},
		{"middle", `{"metadata":{"name":"a",` + mf + `,"uid":"u"}}`, `{"metadata":{"name":"a","uid":"u"}}`},
		{"last", `{"metadata":{"name":"a",` + mf + `}}`, `{"metadata":{"name":"a"}}`},
		{"null", `{"metadata":{"name":"a","managedFields":null}}`, `{"metadata":{"name":"a"}}`},
		{"repeated", `{"metadata":{"name":"a",` + mf + `,` + mf + `}}`, `{"metadata":{"name":"a"}}`},
		{"repeated around", `{"metadata":{` + mf + `,"name":"a",` + mf + `}}`, `{"metadata":{"name":"a"}}`},
		{"repeated only", `{"metadata":{` + mf + `,` + mf + `,` + mf + `,` + mf + `}}`, `{"metadata":{}}`},
		{"many repeated", `{"metadata":{"name":"a",` + strings.Repeat(mf+",", 5) + `"uid":"u",` + mf + `,` + mf + `}}`, `{"metadata":{"name":"a","uid":"u"}}`},
		{"escaped key", `{"metadata":{"name":"a","managed\u0046ields":[]}}`, `{"metadata":{"name":"a"}}`},
		{"only in top-level metadata", `{"spec":{"metadata":{` + mf + `}},"metadata":{"name":"a"}}`, `{"spec":{"metadata":{` + mf + `}},"metadata":{"name":"a"}}`},
		{"whitespace", "{ \"metadata\" : { \"name\" : \"a\" ,\n  \"managedFields\" : [ ] \n } }", "{ \"metadata\" : { \"name\" : \"a\" \n } }"},
		{"whitespace first", "{ \"metadata\" : {\n  \"managedFields\" : [ ] ,\n  \"name\" : \"a\"\n } }", "{ \"metadata\" : {\n  \"name\" : \"a\"\n } }"},
		{"surrounding whitespace dropped", " \n{\"metadata\":{\"name\":\"a\"}}\t\n", `{"metadata":{"name":"a"}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o, err := Parse([]byte(tc.in), ParseOptions{AllowMissingName: true})
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if string(o.JSON) != tc.want {
				t.Errorf("got  %s\nwant %s", o.JSON, tc.want)
			}
			checkAgainstOracle(t, []byte(tc.in), ParseOptions{AllowMissingName: true}, o)
			if cap(o.JSON) != len(o.JSON) {
				t.Errorf("cap(JSON) = %d > len %d: appending would overwrite the strings", cap(o.JSON), len(o.JSON))
			}
			k, err := Parse([]byte(tc.in), ParseOptions{KeepManagedFields: true, AllowMissingName: true})
			if err != nil {
				t.Fatalf("Parse keeping managedFields: %v", err)
			}
			checkAgainstOracle(t, []byte(tc.in), ParseOptions{KeepManagedFields: true, AllowMissingName: true}, k)
		})
	}
}

// TestParseNoAlias overwrites the input after Parse: the object must not
// change.
func TestParseNoAlias(t *testing.T) {
	for _, tc := range realistic {
		for _, keep := range []bool{false, true} {
			in := []byte(tc.json)
			o, err := Parse(in, ParseOptions{KeepManagedFields: keep})
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			wantJSON := string(o.JSON)
			wantMeta := metaOf(o)
			wantMeta.Managers = append([]ManagedFieldsEntry(nil), o.Managers()...)
			// Deep-copy the strings so that they survive if they did alias.
			wantMeta = cloneMeta(wantMeta)
			for i := range in {
				in[i] = 'X'
			}
			if string(o.JSON) != wantJSON {
				t.Errorf("%s: JSON changed with the input", tc.name)
			}
			if got := metaOf(o); !reflect.DeepEqual(got, wantMeta) {
				t.Errorf("%s: metadata changed with the input:\n%+v\n%+v", tc.name, got, wantMeta)
			}
		}
	}
}

func cloneMeta(m meta) meta {
	c := strings.Clone
	m.APIVersion, m.Kind, m.Namespace, m.Name, m.UID = c(m.APIVersion), c(m.Kind), c(m.Namespace), c(m.Name), c(m.UID)
	m.ResourceVersion, m.CreationTimestamp, m.DeletionTimestamp = c(m.ResourceVersion), c(m.CreationTimestamp), c(m.DeletionTimestamp)
	for i, e := range m.Managers {
		m.Managers[i] = ManagedFieldsEntry{Manager: c(e.Manager), Operation: c(e.Operation), Subresource: c(e.Subresource), Time: c(e.Time)}
	}
	return m
}

func TestParseKeyOrderAndDuplicates(t *testing.T) {
	tests := []struct {
		name, in string
		want     meta
	}{
		{"metadata first", `{"metadata":{"name":"a"},"kind":"K","apiVersion":"v"}`, meta{APIVersion: "v", Kind: "K", Name: "a"}},
		{"nulls", `{"apiVersion":null,"kind":null,"metadata":{"name":"a","namespace":null,"uid":null,"generation":null,"annotations":null,"managedFields":null,"creationTimestamp":null}}`, meta{Name: "a"}},
		{"last metadata wins", `{"metadata":{"name":"a","namespace":"x","generation":5,"annotations":{"k8s.io/initial-events-end":"true"}},"metadata":{"name":"b"}}`, meta{Name: "b"}},
		{"last name wins", `{"metadata":{"name":"a","name":"b"}}`, meta{Name: "b"}},
		{"last annotation wins", `{"metadata":{"name":"a","annotations":{"k8s.io/initial-events-end":"true","k8s.io/initial-events-end":"false"}}}`, meta{Name: "a"}},
		{"last annotations wins", `{"metadata":{"name":"a","annotations":{"k8s.io/initial-events-end":"true"},"annotations":{}}}`, meta{Name: "a"}},
		{"initial events end", `{"metadata":{"name":"a","annotations":{"a":{"k8s.io/initial-events-end":"false"},"k8s.io/initial-events-end":"true"}}}`, meta{Name: "a", InitialEventsEnd: true}},
		{"initial events end not true", `{"metadata":{"name":"a","annotations":{"k8s.io/initial-events-end":"True"}}}`, meta{Name: "a"}},
		{"escaped metadata key", `{"meta\u0064ata":{"n\u0061me":"a"}}`, meta{Name: "a"}},
		{"negative generation", `{"metadata":{"name":"a","generation":-9223372036854775808}}`, meta{Name: "a", Generation: -9223372036854775808}},
		{"max generation", `{"metadata":{"name":"a","generation":9223372036854775807}}`, meta{Name: "a", Generation: 9223372036854775807}},
		{"invalid UTF-8", "{\"metadata\":{\"name\":\"a\xffb\",\"uid\":\"\xc3\xa9\"}}", meta{Name: "a\uFFFDb", UID: "é"}},
		{"lone surrogate", `{"metadata":{"name":"a\ud800b\udc00"}}`, meta{Name: "a\uFFFDb\uFFFD"}},
		{"empty managedFields entry", `{"metadata":{"name":"a","managedFields":[{},{"manager":null}]}}`, meta{Name: "a", Managers: []ManagedFieldsEntry{{}, {}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o, err := Parse([]byte(tc.in), ParseOptions{})
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if got := metaOf(o); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
			checkAgainstOracle(t, []byte(tc.in), ParseOptions{}, o)
		})
	}
}

func TestParseBookmark(t *testing.T) {
	if _, err := Parse([]byte(bookmarkJSON), ParseOptions{}); !errors.Is(err, ErrNoName) {
		t.Fatalf("Parse without AllowMissingName: %v, want %v", err, ErrNoName)
	}
	o, err := Parse([]byte(bookmarkJSON), ParseOptions{AllowMissingName: true})
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if o.ResourceVersion != "12345" || !o.InitialEventsEnd || o.Name != "" {
		t.Errorf("got %+v", metaOf(o))
	}
	if got := o.GetAnnotations(); !reflect.DeepEqual(got, map[string]string{"k8s.io/initial-events-end": "true"}) {
		t.Errorf("GetAnnotations() = %v", got)
	}
	p, _ := Parse([]byte(secretJSON), ParseOptions{})
	if got := p.GetAnnotations(); got != nil {
		t.Errorf("GetAnnotations() = %v, want nil", got)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"empty", ``, "invalid JSON at offset 0: unexpected end of input"},
		{"spaces", `   `, "invalid JSON at offset 3: unexpected end of input"},
		{"array", `[]`, "expected a JSON object at offset 0, found '['"},
		{"string", `"x"`, "expected a JSON object at offset 0, found '\"'"},
		{"garbage", `x`, "expected a JSON object at offset 0, found 'x'"},
		{"stray bracket", `{"metadata":{"name":"a"]}`, "invalid JSON at offset 23: unexpected ']'"},
		{"truncated", `{"metadata":{"name":"a"`, "invalid JSON at offset 23: unexpected end of input"},
		{"truncated string", `{"metadata":{"name":"a`, "invalid JSON at offset 22: unexpected end of input"},
		{"trailing", `{"metadata":{"name":"a"}} {}`, "invalid JSON at offset 26: unexpected '{' after the object"},
		{"trailing comma", `{"metadata":{"name":"a"},}`, "invalid JSON at offset 25: unexpected '}'"},
		{"missing colon", `{"metadata" {}}`, "invalid JSON at offset 12: unexpected '{'"},
		{"bad escape", `{"metadata":{"name":"a\x"}}`, `invalid JSON at offset 23: invalid escape 'x' in string`},
		{"bad unicode escape", `{"metadata":{"name":"\u12g4"}}`, `invalid JSON at offset 25: invalid character 'g' in \u escape`},
		{"control char", "{\"metadata\":{\"name\":\"a\nb\"}}", `invalid JSON at offset 22: invalid control character '\n' in string`},
		{"bad number", `{"metadata":{"name":"a"},"n":01}`, "invalid JSON at offset 30: unexpected '1'"},
		{"bad number 2", `{"metadata":{"name":"a"},"n":1.}`, "invalid JSON at offset 31: unexpected '}'"},
		{"bad number 3", `{"metadata":{"name":"a"},"n":-}`, "invalid JSON at offset 30: unexpected '}'"},
		{"bad literal", `{"metadata":{"name":"a"},"n":tru}`, "invalid JSON at offset 32: unexpected '}'"},
		{"bad literal in skipped data", `{"data":[nul],"metadata":{"name":"a"}}`, "invalid JSON at offset 12: unexpected ']'"},
		{"invalid after metadata", `{"metadata":{"name":"a"},"data":{"a":}}`, "invalid JSON at offset 37: unexpected '}'"},
		{"no metadata", `{"kind":"ConfigMap"}`, "object has no metadata"},
		{"no name", `{"metadata":{"namespace":"a"}}`, "object has no metadata.name"},
		{"empty name", `{"metadata":{"name":""}}`, "object has no metadata.name"},
		{"metadata not object", `{"metadata":[]}`, "metadata at offset 12 is not an object"},
		{"name not string", `{"metadata":{"name":1}}`, "metadata.name at offset 20 is not a string"},
		{"kind not string", `{"kind":{},"metadata":{"name":"a"}}`, "kind at offset 8 is not a string"},
		{"generation not integer", `{"metadata":{"name":"a","generation":1.5}}`, "metadata.generation at offset 37 is not a 64-bit integer"},
		{"generation overflow", `{"metadata":{"name":"a","generation":9223372036854775808}}`, "metadata.generation at offset 37 is not a 64-bit integer"},
		{"generation string", `{"metadata":{"name":"a","generation":"1"}}`, "metadata.generation at offset 37 is not a number"},
		{"annotations not object", `{"metadata":{"name":"a","annotations":[]}}`, "metadata.annotations at offset 38 is not an object"},
		{"managedFields not array", `{"metadata":{"name":"a","managedFields":{}}}`, "metadata.managedFields at offset 40 is not an array"},
		{"managedFields entry not object", `{"metadata":{"name":"a","managedFields":[{},1]}}`, "metadata.managedFields[1] at offset 44 is not an object"},
		{"manager not string", `{"metadata":{"name":"a","managedFields":[{"manager":true}]}}`, "metadata.managedFields[].manager at offset 52 is not a string"},
		{"too deep", `{"metadata":{"name":"a"},"x":` + strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth) + `}`, "exceeded max depth"},
		{"NUL", "{\"metadata\":{\"name\":\"a\"}\x00}", "invalid JSON at offset 24: unexpected '\\x00'"},
		{"high byte", "{\"metadata\":{\"name\":\"a\"}\xff}", "invalid JSON at offset 24: unexpected byte 0xff"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o, err := Parse([]byte(tc.in), ParseOptions{})
			if err == nil {
				t.Fatalf("Parse(%q) = %s, want error %q", tc.in, o.JSON, tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Parse(%q) error\n%q, want\n%q", tc.in, err, tc.want)
			}
		})
	}
	// Depth maxDepth itself is allowed, as in encoding/json.
	in := `{"metadata":{"name":"a"},"x":` + strings.Repeat("[", maxDepth-1) + strings.Repeat("]", maxDepth-1) + `}`
	if _, err := Parse([]byte(in), ParseOptions{}); err != nil {
		t.Errorf("depth %d: %v", maxDepth, err)
	}
	var se *SyntaxError
	if _, err := Parse([]byte(`{]`), ParseOptions{}); !errors.As(err, &se) || se.Offset != 1 {
		t.Errorf("want a *SyntaxError at offset 1, got %v", err)
	}
}

// TestParseRejectsWhatEncodingJSONRejects checks syntax errors against
// json.Valid on small malformed inputs.
func TestParseRejectsWhatEncodingJSONRejects(t *testing.T) {
	base := `{"metadata":{"name":"a"},"x":%s}`
	for _, v := range []string{
		`1`, `-1`, `0`, `-0`, `1.5`, `1e5`, `1E+5`, `1e-5`, `-0.0e0`, `01`, `.5`, `1.`, `1e`, `1e+`, `+1`, `--1`, `0x1`,
		`true`, `false`, `null`, `nul`, `truex`, `True`, `"a"`, `"\u00"`, `"\uD83D\uDE00"`, `"\'"`, `"\a"`,
		`[]`, `[1,]`, `[,1]`, `[1 2]`, `{}`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{,}`, `{1:2}`, `{"a":1 "b":2}`,
		`[[[]]]`, `[{"a":[{"b":null}]}]`, "\"\t\"", "\"\x7f\"", "\"\xff\"", `Infinity`, `NaN`,
	} {
		in := strings.Replace(base, "%s", v, 1)
		_, err := Parse([]byte(in), ParseOptions{})
		if valid := json.Valid([]byte(in)); valid != (err == nil) {
			t.Errorf("%s: json.Valid = %v, Parse error = %v", in, valid, err)
		}
	}
}

func TestDeepCopy(t *testing.T) {
	for _, tc := range realistic {
		for _, keep := range []bool{false, true} {
			o, err := Parse([]byte(tc.json), ParseOptions{KeepManagedFields: keep})
			if err != nil {
				t.Fatal(err)
			}
			c := o.DeepCopyObject().(*Object)
			if !reflect.DeepEqual(metaOf(c), metaOf(o)) || string(c.JSON) != string(o.JSON) {
				t.Errorf("%s: copy differs", tc.name)
			}
			lo, hi := allocation(o)
			in := func(s string) bool {
				p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
				return s != "" && p >= lo && p < hi
			}
			for _, s := range []string{c.Name, c.Namespace, c.UID, c.ResourceVersion, c.CreationTimestamp, c.DeletionTimestamp} {
				if in(s) {
					t.Errorf("%s: copy's %q shares memory with the original", tc.name, s)
				}
			}
			for _, m := range c.Managers() {
				if in(m.Manager) || in(m.Time) || in(m.Operation) {
					t.Errorf("%s: copy's manager %+v shares memory with the original", tc.name, m)
				}
			}
			if len(c.JSON) > 0 && unsafe.SliceData(c.JSON) == unsafe.SliceData(o.JSON) {
				t.Errorf("%s: copy shares JSON", tc.name)
			}
			if c.managers != "" && unsafe.StringData(c.managers) == unsafe.StringData(o.managers) {
				t.Errorf("%s: copy shares the managedFields summary", tc.name)
			}
		}
	}
	// An Object made by hand.
	h := &Object{JSON: []byte(`{}`), Name: "n"}
	h.SetManagers([]ManagedFieldsEntry{{Manager: "m"}})
	c := h.DeepCopy()
	if c.Name != "n" || string(c.JSON) != "{}" || &c.JSON[0] == &h.JSON[0] || c.Managers()[0].Manager != "m" {
		t.Errorf("hand-made copy: %+v", c)
	}
	var nilObj *Object
	if nilObj.DeepCopy() != nil {
		t.Error("nil DeepCopy")
	}
}

// allocation returns the bounds of the allocation of o, made by Parse:
// [JSON | decoded strings | managedFields summary], up to the end of the
// summary (of the JSON without one).
func allocation(o *Object) (lo, hi uintptr) {
	lo = uintptr(unsafe.Pointer(unsafe.SliceData(o.JSON)))
	hi = lo + uintptr(len(o.JSON))
	if o.managers != "" {
		hi = uintptr(unsafe.Pointer(unsafe.StringData(o.managers))) + uintptr(len(o.managers))
	}
	return lo, hi
}

func TestSetGroupVersionKind(t *testing.T) {
	tests := []struct {
		name, in string
		gvk      schema.GroupVersionKind
		want     string
	}{
		{"replace", `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a"}}`,
			schema.GroupVersionKind{Group: "g", Version: "v2", Kind: "K"}, `{"apiVersion":"g/v2","kind":"K","metadata":{"name":"a"}}`},
		{"insert", `{"metadata":{"name":"a"},"data":{}}`,
			schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{}}`},
		{"clear", `{"metadata":{"name":"a"},"kind":"ConfigMap","apiVersion":"v1"}`,
			schema.GroupVersionKind{}, `{"metadata":{"name":"a"}}`},
		{"escaped", `{"kind":"X","metadata":{"name":"a"}}`,
			schema.GroupVersionKind{Version: "v1", Kind: "a\"b"}, `{"apiVersion":"v1","kind":"a\"b","metadata":{"name":"a"}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o, err := Parse([]byte(tc.in), ParseOptions{})
			if err != nil {
				t.Fatal(err)
			}
			o.GetObjectKind().SetGroupVersionKind(tc.gvk)
			if string(o.JSON) != tc.want {
				t.Errorf("JSON %s, want %s", o.JSON, tc.want)
			}
			if got := o.GetObjectKind().GroupVersionKind(); got != tc.gvk {
				t.Errorf("GVK %v, want %v", got, tc.gvk)
			}
			checkAgainstOracle(t, o.JSON, ParseOptions{}, o)
		})
	}
	// Managers survive even though the JSON no longer has managedFields.
	o, _ := Parse([]byte(podJSON), ParseOptions{})
	want := cloneMeta(metaOf(o))
	o.SetGroupVersionKind(schema.GroupVersionKind{Version: "v2", Kind: "Pod"})
	want.APIVersion = "v2"
	if got := metaOf(o); !reflect.DeepEqual(got, want) {
		t.Errorf("after SetGroupVersionKind\n%+v\nwant %+v", got, want)
	}
}

func TestInterfaces(t *testing.T) {
	o, err := Parse([]byte(podJSON), ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var ro runtime.Object = o
	if gvk := ro.GetObjectKind().GroupVersionKind(); gvk != (schema.GroupVersionKind{Version: "v1", Kind: "Pod"}) {
		t.Errorf("GVK %v", gvk)
	}
	if o.GetUID() != "e3b0c442-98fc-1c14-9afb-f4c8996fb924" || o.GetName() != "web-7d4b9c8f6-x2x9k" ||
		o.GetNamespace() != "shop" || o.GetResourceVersion() != "5012345" {
		t.Errorf("getters: %+v", metaOf(o))
	}
}

func TestManyManagers(t *testing.T) {
	var entries []string
	var want []ManagedFieldsEntry
	for i := 0; i < 6; i++ {
		m := strings.Repeat("m", i+1)
		entries = append(entries, `{"manager":"`+m+`","operation":"Update","apiVersion":"v1","time":"2024-01-0`+string(rune('1'+i))+`T00:00:00Z","fieldsType":"FieldsV1","fieldsV1":{"f:data":{}}}`)
		want = append(want, ManagedFieldsEntry{Manager: m, Operation: "Update", Time: "2024-01-0" + string(rune('1'+i)) + "T00:00:00Z", FieldsHash: fnv1a([]byte(`{"f:data":{}}`))})
	}
	in := `{"metadata":{"name":"a","managedFields":[` + strings.Join(entries[:5], ",") + `],"managedFields":[` + strings.Join(entries, ",") + `]}}`
	for _, keep := range []bool{false, true} {
		o, err := Parse([]byte(in), ParseOptions{KeepManagedFields: keep})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(o.Managers(), want) {
			t.Errorf("keep=%v: managers %+v", keep, o.Managers())
		}
		checkAgainstOracle(t, []byte(in), ParseOptions{KeepManagedFields: keep}, o)
		if c := o.DeepCopy(); !reflect.DeepEqual(c.Managers(), want) {
			t.Errorf("keep=%v: copy's managers %+v", keep, c.Managers())
		}
	}
}

func TestSetGroupVersionKindQuoting(t *testing.T) {
	o, err := Parse([]byte(`{"metadata":{"name":"a"}}`), ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	o.SetGroupVersionKind(schema.GroupVersionKind{Group: "é.io", Version: "v1", Kind: "K\x01\"\\<"})
	if want := `{"apiVersion":"é.io/v1","kind":"K\u0001\"\\<","metadata":{"name":"a"}}`; string(o.JSON) != want {
		t.Errorf("JSON %s, want %s", o.JSON, want)
	}
	checkAgainstOracle(t, o.JSON, ParseOptions{}, o)
	// An Object made by hand keeps its fields; its JSON is rewritten.
	h := &Object{JSON: []byte(`{"kind":"X"}`), Name: "n"}
	h.SetGroupVersionKind(schema.GroupVersionKind{Version: "v1", Kind: "Y"})
	if string(h.JSON) != `{"apiVersion":"v1","kind":"Y"}` || h.Name != "n" || h.Kind != "Y" {
		t.Errorf("hand-made: %s %+v", h.JSON, metaOf(h))
	}
	// Invalid JSON: only the fields change.
	bad := &Object{JSON: []byte(`{`)}
	bad.SetGroupVersionKind(schema.GroupVersionKind{Version: "v1", Kind: "Y"})
	if string(bad.JSON) != `{` || bad.Kind != "Y" || bad.APIVersion != "v1" {
		t.Errorf("invalid JSON: %s %+v", bad.JSON, metaOf(bad))
	}
}

func TestFieldsHash(t *testing.T) {
	parse := func(fields string) uint64 {
		t.Helper()
		in := `{"metadata":{"name":"a","managedFields":[{"manager":"m","fieldsV1":` + fields + `,"time":"2024-01-01T00:00:00Z"}]}}`
		if fields == "" {
			in = `{"metadata":{"name":"a","managedFields":[{"manager":"m"}]}}`
		}
		o, err := Parse([]byte(in), ParseOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return o.Managers()[0].FieldsHash
	}
	a, a2, b := parse(`{"f:data":{"f:x":{}}}`), parse(`{"f:data":{"f:x":{}}}`), parse(`{"f:data":{"f:y":{}}}`)
	if a == 0 || a != a2 || a == b {
		t.Errorf("hashes: same fields %x/%x, other fields %x", a, a2, b)
	}
	if h := parse(""); h != 0 {
		t.Errorf("no fieldsV1: hash %x, want 0", h)
	}
	o, _ := Parse([]byte(`{"metadata":{"name":"a","managedFields":[{"manager":"m","fieldsV1":{"f:x":{}}}]}}`), ParseOptions{})
	if c := o.DeepCopy(); c.Managers()[0].FieldsHash != o.Managers()[0].FieldsHash {
		t.Error("DeepCopy lost FieldsHash")
	}
}
