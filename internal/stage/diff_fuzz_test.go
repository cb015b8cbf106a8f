package stage

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/kubectl-deltas/kubectl-deltas/internal/diff"
	"github.com/kubectl-deltas/kubectl-deltas/internal/rawobj"
)

// FuzzChangeWalker checks the differ's walk over two objects' JSON
// against diff.Compute of the two decoded: the same operations, in the
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
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, oldJSON, newJSON string) {
		if !isJSONObject(oldJSON) || !isJSONObject(newJSON) || hasDuplicateKeys(oldJSON) || hasDuplicateKeys(newJSON) {
			return // what an API server sends: one object, each key once
		}
		old, obj := &rawobj.Object{JSON: []byte(oldJSON)}, &rawobj.Object{JSON: []byte(newJSON)}
		var before, after any
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
				want := diff.Compute(before, after, opts)
				if g, w := opsJSON(t, got), opsJSON(t, want); g != w {
					t.Fatalf("options %+v, secret %v:\nwalk    %s\nCompute %s", o, secret, g, w)
				}
			}
		}
	})
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
