package diff

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
)

// decode parses a JSON document the way encoding/json does by default.
// Compute, the tests' whole-object diff (the product walks JSON with a
// Stepper), returns the changes that turn oldObj into newObj, both decoded
// JSON trees (map[string]any, []any, string, bool, nil, and numbers as
// float64, int64, json.Number or any other Go integer or float kind;
// numbers compare by value, so int64(1) equals float64(1)).
//
// The result is an RFC 6902 patch (whose operations, in JSON, also carry
// the replaced or removed value as "old", which patch libraries ignore):
// applied in order to oldObj it yields newObj, unless Ignore or Redact
// removed something. The order is deterministic: map keys in sorted order,
// list elements by index. Rules:
//
//   - a key present on one side only is an add or remove of its whole
//     value; null and a missing key differ;
//   - a change of JSON type (a map becoming a string, a value becoming
//     null) is a replace;
//   - lists whose elements are all maps with a unique string "name" on both
//     sides (containers, env, volumes…) are matched by name, as strategic
//     merge patch does: removed elements first (highest index first), then
//     the new list in order, adding new elements and diffing kept ones at
//     their new index. Elements whose relative order changed are removed
//     and added again. Other lists are compared by index, with trailing
//     adds or removes (removals from the end down).
//
// Old and Value of the operations share memory with oldObj and newObj
// (except where Ignore removed parts); treat them as read-only. The result
// is empty and non-nil when nothing differs.
func Compute(oldObj, newObj any, opts Options) []Operation {
	d := differ{
		redact: opts.Redact,
		path:   make([]string, 0, 16),
		ops:    make([]Operation, 0, 4),
	}
	ig := opts.Ignored.trieOr(opts.Ignore)
	d.diff(oldObj, newObj, ig, false)
	return d.ops
}

func decode(t testing.TB, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("invalid test JSON %q: %v", s, err)
	}
	return v
}

// normalize round-trips v through JSON, so numbers of any kind become
// float64 and the result can be compared with reflect.DeepEqual.
func normalize(t testing.TB, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal %#v: %v", v, err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("unmarshal %s: %v", b, err)
	}
	return out
}

func marshalOps(t testing.TB, ops []Operation) string {
	t.Helper()
	b, err := json.Marshal(ops)
	if err != nil {
		t.Fatalf("marshal ops: %v", err)
	}
	return string(b)
}

// compact removes the white space outside strings of a JSON text, keeping
// the order of object keys (re-encoding would sort them).
func compact(t testing.TB, s string) string {
	t.Helper()
	if !json.Valid([]byte(s)) {
		t.Fatalf("invalid want JSON %q", s)
	}
	var b strings.Builder
	inStr, esc := false, false
	for _, r := range s {
		switch {
		case inStr:
			b.WriteRune(r)
			switch {
			case esc:
				esc = false
			case r == '\\':
				esc = true
			case r == '"':
				inStr = false
			}
		case r == '"':
			inStr = true
			b.WriteRune(r)
		case r == ' ' || r == '\n' || r == '\t' || r == '\r':
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// checkApply asserts that ops, as the JSON Patch a script reads from a
// record's "changes", turn oldV into newV when an independent RFC 6902
// implementation (evanphx/json-patch) applies them; the "old" member of
// the operations is not part of RFC 6902, and the library ignores it. The
// library patches objects and arrays only, so both documents are wrapped
// as {"doc": …} and every path gets the prefix /doc: an operation on the
// whole document (path "") is one on that member.
func checkApply(t testing.TB, oldV, newV any, ops []Operation) {
	t.Helper()
	wrapped := make([]Operation, len(ops))
	for i, op := range ops {
		op.Path = "/doc" + op.Path
		wrapped[i] = op
	}
	patchJSON := marshalOps(t, wrapped)
	patch, err := jsonpatch.DecodePatch([]byte(patchJSON))
	if err != nil {
		t.Fatalf("%s is not a JSON Patch: %v", patchJSON, err)
	}
	doc, err := json.Marshal(map[string]any{"doc": oldV})
	if err != nil {
		t.Fatalf("marshal %#v: %v", oldV, err)
	}
	out, err := patch.Apply(doc)
	if err != nil {
		t.Fatalf("applying %s to %s: %v", patchJSON, doc, err)
	}
	var got map[string]any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("the patched document %s: %v", out, err)
	}
	if g, w := normalize(t, got["doc"]), normalize(t, newV); !reflect.DeepEqual(g, w) {
		t.Fatalf("applying %s to %s gives %s, want %#v", patchJSON, doc, out, w)
	}
}

func TestCompute(t *testing.T) {
	tests := []struct {
		name     string
		old, new string
		opts     Options
		// want is the JSON of the operations.
		want string
	}{
		{
			name: "identical",
			old:  `{"a":1,"b":[1,{"c":"d"}],"e":null}`,
			new:  `{"a":1,"b":[1,{"c":"d"}],"e":null}`,
			want: `[]`,
		},
		{
			name: "scalar number",
			old:  `{"spec":{"replicas":1}}`,
			new:  `{"spec":{"replicas":3}}`,
			want: `[{"op":"replace","path":"/spec/replicas","old":1,"value":3}]`,
		},
		{
			name: "scalar string and bool",
			old:  `{"a":"x","b":true}`,
			new:  `{"a":"y","b":false}`,
			want: `[{"op":"replace","path":"/a","old":"x","value":"y"},
				{"op":"replace","path":"/b","old":true,"value":false}]`,
		},
		{
			name: "nested maps",
			old:  `{"spec":{"template":{"spec":{"x":{"y":1,"z":2}}}}}`,
			new:  `{"spec":{"template":{"spec":{"x":{"y":1,"z":5}}}}}`,
			want: `[{"op":"replace","path":"/spec/template/spec/x/z","old":2,"value":5}]`,
		},
		{
			name: "added and removed keys in sorted order",
			old:  `{"metadata":{"labels":{"app":"web","old":"x"}},"data":{"old":"v"}}`,
			new:  `{"metadata":{"labels":{"app":"web","tier":"web"}},"data":{}}`,
			want: `[{"op":"remove","path":"/data/old","old":"v"},
				{"op":"remove","path":"/metadata/labels/old","old":"x"},
				{"op":"add","path":"/metadata/labels/tier","value":"web"}]`,
		},
		{
			name: "added subtree",
			old:  `{"metadata":{"name":"a"}}`,
			new:  `{"metadata":{"name":"a","labels":{"x":"1","y":"2"}}}`,
			want: `[{"op":"add","path":"/metadata/labels","value":{"x":"1","y":"2"}}]`,
		},
		{
			name: "null to missing",
			old:  `{"a":null}`,
			new:  `{}`,
			want: `[{"op":"remove","path":"/a","old":null}]`,
		},
		{
			name: "missing to null",
			old:  `{}`,
			new:  `{"a":null}`,
			want: `[{"op":"add","path":"/a","value":null}]`,
		},
		{
			name: "null to value",
			old:  `{"a":null}`,
			new:  `{"a":{"b":1}}`,
			want: `[{"op":"replace","path":"/a","old":null,"value":{"b":1}}]`,
		},
		{
			name: "type changes",
			old:  `{"a":{"b":1},"c":[1],"d":1,"e":"1","f":false}`,
			new:  `{"a":"b","c":{"0":1},"d":"1","e":1,"f":0}`,
			want: `[{"op":"replace","path":"/a","old":{"b":1},"value":"b"},
				{"op":"replace","path":"/c","old":[1],"value":{"0":1}},
				{"op":"replace","path":"/d","old":1,"value":"1"},
				{"op":"replace","path":"/e","old":"1","value":1},
				{"op":"replace","path":"/f","old":false,"value":0}]`,
		},
		{
			name: "root replaced",
			old:  `null`,
			new:  `{"a":1}`,
			want: `[{"op":"replace","path":"","old":null,"value":{"a":1}}]`,
		},
		{
			name: "root type change",
			old:  `[1,2]`,
			new:  `"x"`,
			want: `[{"op":"replace","path":"","old":[1,2],"value":"x"}]`,
		},
		{
			name: "list append",
			old:  `{"l":[1,2]}`,
			new:  `{"l":[1,2,3,4]}`,
			want: `[{"op":"add","path":"/l/2","value":3},{"op":"add","path":"/l/3","value":4}]`,
		},
		{
			name: "list shrink removes from the end down",
			old:  `{"l":[1,2,3,4]}`,
			new:  `{"l":[1]}`,
			want: `[{"op":"remove","path":"/l/3","old":4},{"op":"remove","path":"/l/2","old":3},
				{"op":"remove","path":"/l/1","old":2}]`,
		},
		{
			name: "list element change and shrink",
			old:  `{"l":[{"a":1},"x",3]}`,
			new:  `{"l":[{"a":2}]}`,
			want: `[{"op":"replace","path":"/l/0/a","old":1,"value":2},
				{"op":"remove","path":"/l/2","old":3},{"op":"remove","path":"/l/1","old":"x"}]`,
		},
		{
			name: "list prepend is compared by index",
			old:  `{"l":["b"]}`,
			new:  `{"l":["a","b"]}`,
			want: `[{"op":"replace","path":"/l/0","old":"b","value":"a"},{"op":"add","path":"/l/1","value":"b"}]`,
		},
		{
			name: "empty list to list",
			old:  `{"l":[]}`,
			new:  `{"l":[{"name":"a"}]}`,
			want: `[{"op":"add","path":"/l/0","value":{"name":"a"}}]`,
		},
		{
			name: "named list element change",
			old:  `{"containers":[{"name":"app","image":"app:1"},{"name":"side","image":"side:1"}]}`,
			new:  `{"containers":[{"name":"app","image":"app:1"},{"name":"side","image":"side:2"}]}`,
			want: `[{"op":"replace","path":"/containers/1/image","old":"side:1","value":"side:2"}]`,
		},
		{
			name: "named list container inserted in front",
			old:  `{"containers":[{"name":"app","image":"app:1"}]}`,
			new:  `{"containers":[{"name":"init","image":"busybox"},{"name":"app","image":"app:2"}]}`,
			want: `[{"op":"add","path":"/containers/0","value":{"image":"busybox","name":"init"}},
				{"op":"replace","path":"/containers/1/image","old":"app:1","value":"app:2"}]`,
		},
		{
			name: "named list container removed from the middle",
			old:  `{"containers":[{"name":"a"},{"name":"b","x":1},{"name":"c","x":1}]}`,
			new:  `{"containers":[{"name":"a"},{"name":"c","x":2}]}`,
			want: `[{"op":"remove","path":"/containers/1","old":{"name":"b","x":1}},
				{"op":"replace","path":"/containers/1/x","old":1,"value":2}]`,
		},
		{
			name: "named list added and removed",
			old:  `{"env":[{"name":"A","value":"1"},{"name":"B","value":"2"},{"name":"C","value":"3"}]}`,
			new:  `{"env":[{"name":"D","value":"4"},{"name":"B","value":"2"},{"name":"E","value":"5"}]}`,
			want: `[{"op":"remove","path":"/env/2","old":{"name":"C","value":"3"}},
				{"op":"remove","path":"/env/0","old":{"name":"A","value":"1"}},
				{"op":"add","path":"/env/0","value":{"name":"D","value":"4"}},
				{"op":"add","path":"/env/2","value":{"name":"E","value":"5"}}]`,
		},
		{
			name: "named list reordered",
			old:  `{"containers":[{"name":"a","image":"a:1"},{"name":"b","image":"b:1"}]}`,
			new:  `{"containers":[{"name":"b","image":"b:1"},{"name":"a","image":"a:1"}]}`,
			want: `[{"op":"remove","path":"/containers/1","old":{"image":"b:1","name":"b"}},
				{"op":"add","path":"/containers/0","value":{"image":"b:1","name":"b"}}]`,
		},
		{
			name: "named list reordered and changed",
			old:  `{"l":[{"name":"a","v":1},{"name":"b","v":1},{"name":"c","v":1},{"name":"d","v":1}]}`,
			new:  `{"l":[{"name":"d","v":2},{"name":"a","v":2},{"name":"c","v":1},{"name":"b","v":2}]}`,
			// seq of old indices in new order is 3 0 2 1: a and b keep
			// their relative order, d and c move.
			want: `[{"op":"remove","path":"/l/3","old":{"name":"d","v":1}},
				{"op":"remove","path":"/l/2","old":{"name":"c","v":1}},
				{"op":"add","path":"/l/0","value":{"name":"d","v":2}},
				{"op":"replace","path":"/l/1/v","old":1,"value":2},
				{"op":"add","path":"/l/2","value":{"name":"c","v":1}},
				{"op":"replace","path":"/l/3/v","old":1,"value":2}]`,
		},
		{
			name: "duplicate names are compared by index",
			old:  `{"l":[{"name":"a","v":1},{"name":"a","v":2}]}`,
			new:  `{"l":[{"name":"a","v":2}]}`,
			want: `[{"op":"replace","path":"/l/0/v","old":1,"value":2},{"op":"remove","path":"/l/1","old":{"name":"a","v":2}}]`,
		},
		{
			name: "lists without names on one side are compared by index",
			old:  `{"l":[{"name":"a"},{"name":"b"}]}`,
			new:  `{"l":[{"name":"b"},{"x":1}]}`,
			want: `[{"op":"replace","path":"/l/0/name","old":"a","value":"b"},
				{"op":"remove","path":"/l/1/name","old":"b"},{"op":"add","path":"/l/1/x","value":1}]`,
		},
		{
			name: "keys needing escapes",
			old:  `{"metadata":{"labels":{"app.kubernetes.io/name":"a","a~b":"1","a/b":"1"}}}`,
			new:  `{"metadata":{"labels":{"app.kubernetes.io/name":"b","a~b":"2"}}}`,
			want: `[{"op":"remove","path":"/metadata/labels/a~1b","old":"1"},
				{"op":"replace","path":"/metadata/labels/app.kubernetes.io~1name","old":"a","value":"b"},
				{"op":"replace","path":"/metadata/labels/a~0b","old":"1","value":"2"}]`,
		},
		{
			name: "empty key",
			old:  `{"":1}`,
			new:  `{"":2}`,
			want: `[{"op":"replace","path":"/","old":1,"value":2}]`,
		},
		{
			name: "ignore json pointer",
			old:  `{"metadata":{"managedFields":[{"manager":"a"}],"resourceVersion":"1","labels":{"a":"1"}}}`,
			new:  `{"metadata":{"managedFields":[{"manager":"b"}],"resourceVersion":"2","labels":{"a":"2"}}}`,
			opts: Options{Ignore: []string{"/metadata/managedFields", "/metadata/resourceVersion"}},
			want: `[{"op":"replace","path":"/metadata/labels/a","old":"1","value":"2"}]`,
		},
		{
			name: "ignore dotted",
			old:  `{"metadata":{"managedFields":[{"manager":"a"}],"resourceVersion":"1","labels":{"a":"1"}}}`,
			new:  `{"metadata":{"managedFields":[],"resourceVersion":"2","labels":{"a":"2"}}}`,
			opts: Options{Ignore: []string{"metadata.managedFields", ".metadata.resourceVersion"}},
			want: `[{"op":"replace","path":"/metadata/labels/a","old":"1","value":"2"}]`,
		},
		{
			name: "ignore has prefix semantics",
			old:  `{"metadata":{"labels":{"a":"1"},"annotations":{"b":"1"}},"spec":{"x":1}}`,
			new:  `{"metadata":{"labels":{"a":"2"}},"spec":{"x":2}}`,
			opts: Options{Ignore: []string{"metadata"}},
			want: `[{"op":"replace","path":"/spec/x","old":1,"value":2}]`,
		},
		{
			name: "ignore is per segment, not a string prefix",
			old:  `{"metadata":{"labels":1,"labelsX":1}}`,
			new:  `{"metadata":{"labels":2,"labelsX":2}}`,
			opts: Options{Ignore: []string{"/metadata/labels"}},
			want: `[{"op":"replace","path":"/metadata/labelsX","old":1,"value":2}]`,
		},
		{
			name: "ignored parts are stripped from added and removed subtrees",
			old:  `{"a":{"metadata":{"managedFields":[1],"name":"x"}}}`,
			new:  `{"b":{"metadata":{"managedFields":[2],"name":"y"}}}`,
			opts: Options{Ignore: []string{"/a/metadata/managedFields", "b.metadata.managedFields"}},
			want: `[{"op":"remove","path":"/a","old":{"metadata":{"name":"x"}}},
				{"op":"add","path":"/b","value":{"metadata":{"name":"y"}}}]`,
		},
		{
			name: "ignore list element field and escaped keys",
			old:  `{"spec":{"containers":[{"name":"a","image":"1","x":1}]},"metadata":{"annotations":{"a.b/c":"1","d":"1"}}}`,
			new:  `{"spec":{"containers":[{"name":"a","image":"2","x":2}]},"metadata":{"annotations":{"a.b/c":"2","d":"2"}}}`,
			opts: Options{Ignore: []string{"spec.containers[0].image", `metadata.annotations["a.b/c"]`}},
			want: `[{"op":"replace","path":"/metadata/annotations/d","old":"1","value":"2"},
				{"op":"replace","path":"/spec/containers/0/x","old":1,"value":2}]`,
		},
		{
			name: "invalid ignore entries are skipped",
			old:  `{"a":1}`,
			new:  `{"a":2}`,
			opts: Options{Ignore: []string{"", "/a~2", "a..b"}},
			want: `[{"op":"replace","path":"/a","old":1,"value":2}]`,
		},
		{
			name: "secret data changed, added and removed",
			old:  `{"kind":"Secret","data":{"password":"b2xk","gone":"eA==","same":"eQ=="}}`,
			new:  `{"kind":"Secret","data":{"password":"bmV3","token":"dA==","same":"eQ=="}}`,
			opts: Options{Redact: redactSecretValues},
			want: `[{"op":"remove","path":"/data/gone","redacted":true},
				{"op":"replace","path":"/data/password","redacted":true},
				{"op":"add","path":"/data/token","redacted":true}]`,
		},
		{
			name: "secret data added as a whole is split per key",
			old:  `{"kind":"Secret"}`,
			new:  `{"kind":"Secret","data":{"b":"Yg==","a":"YQ=="},"stringData":{}}`,
			opts: Options{Redact: redactSecretValues},
			want: `[{"op":"add","path":"/data/a","redacted":true},
				{"op":"add","path":"/data/b","redacted":true},
				{"op":"add","path":"/stringData","redacted":true}]`,
		},
		{
			name: "secret data removed as a whole is split per key",
			old:  `{"kind":"Secret","data":{"a":"YQ=="}}`,
			new:  `{"kind":"Secret"}`,
			opts: Options{Redact: redactSecretValues},
			want: `[{"op":"remove","path":"/data/a","redacted":true}]`,
		},
		{
			name: "secret data type change",
			old:  `{"data":null}`,
			new:  `{"data":{"a":"YQ=="}}`,
			opts: Options{Redact: redactSecretValues},
			want: `[{"op":"replace","path":"/data","redacted":true}]`,
		},
		{
			name: "redacted value inside an added map",
			old:  `{"metadata":{"name":"s"}}`,
			new: `{"metadata":{"name":"s","annotations":{"x":"1",
				"kubectl.kubernetes.io/last-applied-configuration":"{\"data\":{\"p\":\"c2VjcmV0\"}}"}}}`,
			opts: Options{Redact: redactSecretValues},
			want: `[{"op":"add","path":"/metadata/annotations","value":{}},
				{"op":"add","path":"/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration","redacted":true},
				{"op":"add","path":"/metadata/annotations/x","value":"1"}]`,
		},
		{
			name: "redacted value inside a removed map",
			old: `{"metadata":{"name":"s","annotations":{"x":"1",
				"kubectl.kubernetes.io/last-applied-configuration":"{}"}}}`,
			new:  `{"metadata":{"name":"s"}}`,
			opts: Options{Redact: redactSecretValues},
			want: `[{"op":"remove","path":"/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration","redacted":true},
				{"op":"remove","path":"/metadata/annotations/x","old":"1"},
				{"op":"remove","path":"/metadata/annotations","old":{}}]`,
		},
		{
			name: "redacted value inside a replaced value",
			old:  `{"metadata":{"annotations":"x"}}`,
			new:  `{"metadata":{"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{}"}}}`,
			opts: Options{Redact: redactSecretValues},
			want: `[{"op":"replace","path":"/metadata/annotations","old":"x","value":{}},
				{"op":"add","path":"/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration","redacted":true}]`,
		},
		{
			name: "redacted whole document",
			old:  `{"a":1}`,
			new:  `{"a":2,"b":{"c":3}}`,
			opts: Options{Redact: func([]string) bool { return true }},
			want: `[{"op":"replace","path":"/a","redacted":true},{"op":"add","path":"/b/c","redacted":true}]`,
		},
		{
			name: "redacted value inside an added list",
			old:  `{}`,
			new:  `{"l":[1,{"secret":"x","y":2}]}`,
			opts: Options{Redact: func(p []string) bool { return len(p) > 0 && p[len(p)-1] == "secret" }},
			want: `[{"op":"add","path":"/l","value":[]},
				{"op":"add","path":"/l/0","value":1},
				{"op":"add","path":"/l/1","value":{}},
				{"op":"add","path":"/l/1/secret","redacted":true},
				{"op":"add","path":"/l/1/y","value":2}]`,
		},
		{
			name: "redacted value inside a removed list",
			old:  `{"l":[1,{"secret":"x"}]}`,
			new:  `{}`,
			opts: Options{Redact: func(p []string) bool { return len(p) > 0 && p[len(p)-1] == "secret" }},
			want: `[{"op":"remove","path":"/l/1/secret","redacted":true},
				{"op":"remove","path":"/l/1","old":{}},
				{"op":"remove","path":"/l/0","old":1},
				{"op":"remove","path":"/l","old":[]}]`,
		},
		{
			name: "ignored list element is stripped from an added list",
			old:  `{}`,
			new:  `{"l":[1,2,{"a":1,"b":2}]}`,
			opts: Options{Ignore: []string{"l[1]", "/l/2/b"}},
			want: `[{"op":"add","path":"/l","value":[1,{"a":1}]}]`,
		},
		{
			name: "named list longer than eight",
			old: `{"l":[{"name":"a"},{"name":"b"},{"name":"c"},{"name":"d"},{"name":"e"},
				{"name":"f"},{"name":"g"},{"name":"h"},{"name":"i"},{"name":"j"}]}`,
			new: `{"l":[{"name":"a"},{"name":"b"},{"name":"c"},{"name":"d"},{"name":"f"},
				{"name":"g"},{"name":"h"},{"name":"i"},{"name":"j","v":1}]}`,
			want: `[{"op":"remove","path":"/l/4","old":{"name":"e"}},{"op":"add","path":"/l/8/v","value":1}]`,
		},
		{
			name: "long list with a duplicate name is compared by index",
			old: `{"l":[{"name":"a"},{"name":"b"},{"name":"c"},{"name":"d"},{"name":"e"},
				{"name":"f"},{"name":"g"},{"name":"h"},{"name":"i"},{"name":"a"}]}`,
			new: `{"l":[{"name":"b"}]}`,
			want: `[{"op":"replace","path":"/l/0/name","old":"a","value":"b"},
				{"op":"remove","path":"/l/9","old":{"name":"a"}},{"op":"remove","path":"/l/8","old":{"name":"i"}},
				{"op":"remove","path":"/l/7","old":{"name":"h"}},{"op":"remove","path":"/l/6","old":{"name":"g"}},
				{"op":"remove","path":"/l/5","old":{"name":"f"}},{"op":"remove","path":"/l/4","old":{"name":"e"}},
				{"op":"remove","path":"/l/3","old":{"name":"d"}},{"op":"remove","path":"/l/2","old":{"name":"c"}},
				{"op":"remove","path":"/l/1","old":{"name":"b"}}]`,
		},
		{
			name: "unchanged secret data emits nothing",
			old:  `{"data":{"a":"YQ=="},"metadata":{"labels":{"x":"1"}}}`,
			new:  `{"data":{"a":"YQ=="},"metadata":{"labels":{"x":"2"}}}`,
			opts: Options{Redact: redactSecretValues},
			want: `[{"op":"replace","path":"/metadata/labels/x","old":"1","value":"2"}]`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			oldV, newV := decode(t, tt.old), decode(t, tt.new)
			got := Compute(oldV, newV, tt.opts)
			if got == nil {
				t.Fatalf("Compute returned nil, want a non-nil slice")
			}
			if g, w := marshalOps(t, got), compact(t, tt.want); g != w {
				t.Errorf("Compute() =\n%s\nwant\n%s", g, w)
			}
			if len(tt.opts.Ignore) == 0 && tt.opts.Redact == nil {
				checkApply(t, oldV, newV, got)
			}
		})
	}
}

func TestComputeNumbers(t *testing.T) {
	tests := []struct {
		name     string
		old, new any
		want     bool // whether they differ
	}{
		{name: "float and int64", old: float64(1), new: int64(1), want: false},
		{name: "float and json.Number", old: float64(1), new: json.Number("1.0"), want: false},
		{name: "json.Number spellings", old: json.Number("1e2"), new: json.Number("100"), want: false},
		{name: "int and uint8", old: 7, new: uint8(7), want: false},
		{name: "float32", old: float32(0.5), new: json.Number("0.5"), want: false},
		{name: "float32 shortest form", old: float32(0.1), new: float64(0.1), want: false},
		{name: "negative zero", old: json.Number("-0"), new: float64(0), want: false},
		{name: "fraction", old: float64(1.5), new: int64(1), want: true},
		{name: "large int64 beyond float precision", old: int64(9007199254740993), new: float64(9007199254740992), want: true},
		{name: "large json numbers", old: json.Number("123456789012345678901234567890"), new: json.Number("123456789012345678901234567891"), want: true},
		{name: "huge exponents", old: json.Number("1e99999999999999999999"), new: json.Number("10e99999999999999999998"), want: false},
		{name: "signs", old: int64(-3), new: int64(3), want: true},
		{name: "int8 and null", old: int8(5), new: nil, want: true},
		{name: "int16 and int32", old: int16(5), new: int32(5), want: false},
		{name: "uint and uint16 and uint32", old: uint(5), new: uint16(5), want: false},
		{name: "uint32 and json.Number", old: uint32(5), new: json.Number("5e0"), want: false},
		{name: "NaN equals NaN", old: math.NaN(), new: math.NaN(), want: false},
		{name: "infinities", old: math.Inf(1), new: math.Inf(-1), want: true},
		{name: "NaN and number", old: math.NaN(), new: int64(1), want: true},
		{name: "invalid json.Number", old: json.Number("abc"), new: json.Number("abd"), want: true},
		{name: "negative exponent", old: json.Number("1.5e-3"), new: float64(0.0015), want: false},
		{name: "uint64 max", old: uint64(18446744073709551615), new: json.Number("18446744073709551615"), want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ops := Compute(map[string]any{"n": tt.old}, map[string]any{"n": tt.new}, Options{})
			if got := len(ops) > 0; got != tt.want {
				t.Errorf("Compute(%#v, %#v) = %v, want differ=%v", tt.old, tt.new, ops, tt.want)
			}
		})
	}
}

func TestComputeLargeConfigMap(t *testing.T) {
	data := make(map[string]any, 1000)
	for i := range 1000 {
		data[fmt.Sprintf("key-%04d", i)] = fmt.Sprintf("value %d", i)
	}
	oldV := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "data": data}
	newData := maps.Clone(data)
	newData["key-0500"] = "changed"
	newV := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "data": newData}
	got := Compute(oldV, newV, Options{})
	want := []Operation{{Op: OpReplace, Path: "/data/key-0500", Old: "value 500", Value: "changed"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Compute() = %#v, want %#v", got, want)
	}
	checkApply(t, oldV, newV, got)
}

func TestComputeDeterministic(t *testing.T) {
	oldM, newM := map[string]any{}, map[string]any{}
	for i := range 200 {
		k := fmt.Sprintf("k%d", i)
		switch i % 4 {
		case 0:
			oldM[k] = i
		case 1:
			newM[k] = i
		case 2:
			oldM[k], newM[k] = i, i+1
		default:
			oldM[k], newM[k] = map[string]any{"a": i, "b": i}, map[string]any{"b": i, "c": i}
		}
	}
	first := marshalOps(t, Compute(oldM, newM, Options{}))
	for i := range 20 {
		if got := marshalOps(t, Compute(oldM, newM, Options{})); got != first {
			t.Fatalf("run %d: Compute() = %s, want %s", i, got, first)
		}
	}
	got := Compute(oldM, newM, Options{})
	paths := make([]string, len(got))
	for i, op := range got {
		paths[i] = op.Path
	}
	// Sorted key order means paths of different top-level keys appear in
	// sorted order of those keys.
	tops := make([]string, 0, len(paths))
	for _, p := range paths {
		top := strings.SplitN(p[1:], "/", 2)[0]
		if len(tops) == 0 || tops[len(tops)-1] != top {
			tops = append(tops, top)
		}
	}
	if !slices.IsSorted(tops) {
		t.Errorf("top-level keys not in sorted order: %v", tops)
	}
	checkApply(t, oldM, newM, got)
}

func TestComputeDoesNotModifyInputs(t *testing.T) {
	oldV := decode(t, `{"a":{"b":[1,2,{"c":3}],"m":{"x":1}},"l":[{"name":"a"},{"name":"b"}]}`)
	newV := decode(t, `{"a":{"b":[2,{"c":4}]},"l":[{"name":"b"},{"name":"c"}],"z":{"q":1}}`)
	before := marshalOps(t, []Operation{{Op: OpReplace, Old: oldV, Value: newV}})
	ops := Compute(oldV, newV, Options{Ignore: []string{"/z/q"}})
	if after := marshalOps(t, []Operation{{Op: OpReplace, Old: oldV, Value: newV}}); after != before {
		t.Fatalf("Compute modified its inputs:\n%s\nwas\n%s", after, before)
	}
	if len(ops) == 0 {
		t.Fatalf("Compute() = [], want changes")
	}
}

func TestComputeRedactSeesPaths(t *testing.T) {
	var seen []string
	redact := func(p []string) bool {
		seen = append(seen, pointer(p))
		return len(p) == 1 && p[0] == "data"
	}
	oldV := decode(t, `{"data":{"a":"1"},"spec":{"x":1}}`)
	newV := decode(t, `{"data":{"a":"2"},"spec":{"x":2}}`)
	Compute(oldV, newV, Options{Redact: redact})
	// Maps are walked in map order: only parent-before-child is fixed.
	slices.Sort(seen)
	want := []string{"", "/data", "/spec", "/spec/x"}
	if !reflect.DeepEqual(seen, want) {
		t.Errorf("Redact called with %q, want %q", seen, want)
	}
}

func TestLongestIncreasing(t *testing.T) {
	tests := []struct {
		name string
		seq  []int
		want []int
	}{
		{name: "empty", seq: nil, want: nil},
		{name: "sorted", seq: []int{0, 1, 2}, want: []int{0, 1, 2}},
		{name: "reversed", seq: []int{2, 1, 0}, want: []int{0}},
		{name: "mixed", seq: []int{3, 0, 2, 1, 4}, want: []int{0, 1, 4}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := longestIncreasing(tt.seq); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("longestIncreasing(%v) = %v, want %v", tt.seq, got, tt.want)
			}
		})
	}
}

func TestComputeNilContainersAreNull(t *testing.T) {
	tests := []struct {
		name     string
		old, new any
		want     int
	}{
		{name: "nil map and null", old: map[string]any{"a": map[string]any(nil)}, new: map[string]any{"a": nil}, want: 0},
		{name: "nil list and empty list", old: map[string]any{"a": []any(nil)}, new: map[string]any{"a": []any{}}, want: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Compute(tt.old, tt.new, Options{})
			if len(got) != tt.want {
				t.Fatalf("Compute() = %s, want %d operations", marshalOps(t, got), tt.want)
			}
			checkApply(t, tt.old, tt.new, got)
		})
	}
}

// redactSecretValues is a Redact function like the one used for Secrets:
// data, stringData and the last-applied annotation.
func redactSecretValues(path []string) bool {
	switch len(path) {
	case 1:
		return path[0] == "data" || path[0] == "stringData"
	case 3:
		return path[0] == "metadata" && path[1] == "annotations" && path[2] == "kubectl.kubernetes.io/last-applied-configuration"
	}
	return false
}

// TestStepperOrdersLikeCompute walks members in reverse key order, nested,
// and gets Compute's operations in Compute's order.
func TestStepperOrdersLikeCompute(t *testing.T) {
	a := map[string]any{"z": 1.0, "m": map[string]any{"y": "a", "b": "a"}, "a": true, "gone": 1.0}
	b := map[string]any{"z": 2.0, "m": map[string]any{"y": "b", "b": "b", "c": []any{1.0}}, "a": false, "new": "x"}
	s := NewStepper(Options{})
	s.Values("z", 1.0, 2.0)
	s.Enter("m")
	s.Added("c", []any{1.0})
	s.Values("y", "a", "b")
	s.Values("b", "a", "b")
	s.Leave()
	s.Removed("gone", 1.0)
	s.Added("new", "x")
	s.Values("a", true, false)
	got, want := s.Operations(), Compute(a, b, Options{})
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Stepper:\n%+v\nCompute:\n%+v", got, want)
	}
	if paths := []string{"/a", "/gone", "/m/b", "/m/c", "/m/y", "/new", "/z"}; len(got) != len(paths) {
		t.Fatalf("got %d operations, want %d", len(got), len(paths))
	} else {
		for i, p := range paths {
			if got[i].Path != p {
				t.Errorf("operation %d at %s, want %s", i, got[i].Path, p)
			}
		}
	}
}
