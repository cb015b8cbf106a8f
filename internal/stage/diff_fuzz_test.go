package stage

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"

	"github.com/kubectl-deltas/kubectl-deltas/internal/diff"
	"github.com/kubectl-deltas/kubectl-deltas/internal/diff/difftest"
	"github.com/kubectl-deltas/kubectl-deltas/internal/rawobj"
)

// FuzzChangeWalker checks the differ's walk over two objects' JSON
// against difftest.Compute of the two decoded: the same operations, in the
// same order, with the default ignored paths, with more of them, and for
// a Secret.
func FuzzChangeWalker(f *testing.F) {
	for _, s := range [][2]string{
		{`{"metadata":{"name":"a","resourceVersion":"1","labels":{"x":"1"}},"spec":{"replicas":1}}`,
			`{"metadata":{"name":"a","resourceVersion":"2","labels":{"x":"2","y":"1"}},"spec":{"replicas":3}}`},
		{`{"a":{"b":{"c":{"d":{"e":1}}}},"z":[1,2]}`, `{"z":[2],"a":{"b":{"c":{"d":{"e":1.0,"f":null}}}}}`},
		{`{"data":{"password":"YQ==","user":"YQ=="},"type":"Opaque"}`, `{"data":{"password":"Yg=="},"stringData":{"k":"v"}}`},
		{`{"spec":{"template":{"spec":{"containers":[{"name":"a","image":"x:1"}]}}}}`, `{"spec":{"template":{"spec":{"containers":[{"name":"a","image":"x:2"},{"name":"b"}]}}}}`},
		{`{"a": {"b" : 1}, "c":{}}`, `{"a":{"b":1},"c":[]}`},
		{`{"k\u0061":1,"status":{"phase":"A"}}`, `{"ka":2,"status":{"phase":"B"}}`},
		{"{\"\xff\":\"\"}", "{\"\xfe\":{}}"}, // two keys that are not UTF-8 and decode alike
		{"{\"a\":{\"\xff\":1},\"v\":\"\xff\"}", "{\"a\":{\"\xfe\":1},\"v\":\"\xfe\"}"},
		// Keys alike in the same order (walkAligned): a number the other
		// continues, one more member, spaces, escaped keys.
		{`{"a":12,"b":{"c":1}}`, `{"a":123,"b":{"c":1}}`},
		{`{"a":1,"b":{"c":[1]}}`, `{"a":1,"b":{"c":[1]},"d":null}`},
		{`{"a" : "x" , "b":{} }`, `{"a":"x","b":{ }}`},
		{`{"k\u0061":{"x":1},"k\"":2}`, `{"k\u0061":{"x":2},"k\"":2}`},
		{`{"metadata":{"resourceVersion":"1","managedFields":[{"m":1}]},"data":{"k":"v"}}`, `{"metadata":{"resourceVersion":"2","managedFields":[{"m":2}]},"data":{"k":"w"}}`},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, oldJSON, newJSON string) {
		if !isJSONObject(oldJSON) || !isJSONObject(newJSON) || hasDuplicateKeys(oldJSON) || hasDuplicateKeys(newJSON) {
			return // what an API server sends: one object, each key once
		}
		old, obj := &rawobj.Object{JSON: []byte(oldJSON)}, &rawobj.Object{JSON: []byte(newJSON)}
		var before, after map[string]any
		if decodeExact(old.JSON, &before) != nil || decodeExact(obj.JSON, &after) != nil {
			return
		}
		for _, o := range []DiffOptions{{Show: true}, {Show: true, ChangedOnly: true, IgnoreStatus: true, IgnorePaths: []string{"spec.template", "/a/b"}}} {
			d, err := newDiffer(o)
			if err != nil {
				t.Fatal(err)
			}
			for _, secret := range []bool{false, true} {
				got, err := d.compute(old, obj, secret)
				if err != nil {
					t.Fatalf("compute: %v", err)
				}
				opts := diff.Options{Ignored: d.ignored}
				if secret {
					opts.Redact = isSecretValuePath
				}
				want := difftest.Compute(before, after, opts)
				if g, w := opsJSON(t, got), opsJSON(t, want); g != w {
					t.Fatalf("options %+v, secret %v:\nwalk    %s\nCompute %s", o, secret, g, w)
				}
				raw, ok, err := d.appendRaw(nil, old, obj, secret)
				if err != nil || ok && secret {
					t.Fatalf("appendRaw: ok %v, %v for a Secret %v", ok, err, secret)
				}
				if ok {
					if g, w := opsJSON(t, opsFromRaw(t, raw)), opsJSON(t, want); g != w {
						t.Fatalf("options %+v: the members that differ %s make\n%s\nCompute %s", o, raw, g, w)
					}
				}
			}
		}
	})
}

// opsFromRaw are the operations the members that differ (appendRaw) make,
// as the page's script makes them: each entry's own, diffed as Compute
// diffs one member of an object, the entries in key order.
func opsFromRaw(t *testing.T, raw []byte) []diff.Operation {
	t.Helper()
	if len(raw) == 0 {
		return []diff.Operation{}
	}
	var entries [][]json.RawMessage
	if err := decodeExact(raw, &entries); err != nil {
		t.Fatalf("the members that differ are not JSON: %v\n%s", err, raw)
	}
	type member struct {
		path      []string
		old, next map[string]any
	}
	var members []member
	for _, e := range entries {
		var op string
		var path []string
		if len(e) < 3 || json.Unmarshal(e[0], &op) != nil || json.Unmarshal(e[1], &path) != nil || len(path) == 0 {
			t.Fatalf("a malformed entry %s", raw)
		}
		m := member{path: path, old: map[string]any{}, next: map[string]any{}}
		key, values := path[len(path)-1], e[2:]
		var v any
		if err := decodeExact(values[0], &v); err != nil {
			t.Fatal(err)
		}
		switch {
		case op == "~" && len(values) == 2:
			var w any
			if err := decodeExact(values[1], &w); err != nil {
				t.Fatal(err)
			}
			m.old[key], m.next[key] = v, w
		case op == "+" && len(values) == 1:
			m.next[key] = v
		case op == "-" && len(values) == 1:
			m.old[key] = v
		default:
			t.Fatalf("a malformed entry %s", raw)
		}
		members = append(members, m)
	}
	slices.SortFunc(members, func(a, b member) int { return slices.Compare(a.path, b.path) })
	ops := []diff.Operation{}
	for _, m := range members {
		ops = append(ops, difftest.At(m.path[:len(m.path)-1], m.old, m.next, diff.Options{})...)
	}
	return ops
}

// isJSONObject reports whether s is one valid JSON object.
func isJSONObject(s string) bool {
	b := bytes.TrimSpace([]byte(s))
	return json.Valid(b) && len(b) > 0 && b[0] == '{' && len(b) == len(s)
}

// hasDuplicateKeys reports whether an object in the JSON s has a key
// twice.
func hasDuplicateKeys(s string) bool {
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	type frame struct {
		object bool
		keys   map[string]bool
		key    bool // the next token of an object is a key
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.object && top.key {
			if k, ok := tok.(string); ok {
				if top.keys[k] {
					return true
				}
				top.keys[k] = true
				top.key = false
				continue
			}
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{object: true, keys: map[string]bool{}, key: true})
			continue
		case json.Delim('['):
			stack = append(stack, &frame{})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		if len(stack) > 0 && stack[len(stack)-1].object {
			stack[len(stack)-1].key = true // a value ended: a key comes next
		}
	}
}

func opsJSON(t *testing.T, ops []diff.Operation) string {
	t.Helper()
	b, err := json.Marshal(ops)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
