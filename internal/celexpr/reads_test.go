package celexpr

import (
	"bytes"
	"encoding/json"
	"testing"
)

// wholeDecode is how expressions saw their objects before they decoded
// only what they read: all of it, by encoding/json, whole numbers as
// ints and others as doubles.
func wholeDecode(t *testing.T, raw []byte) any {
	t.Helper()
	if raw == nil {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return numbers(v)
}

func numbers(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			x[k] = numbers(c)
		}
	case []any:
		for i, c := range x {
			x[i] = numbers(c)
		}
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		if f, err := x.Float64(); err == nil {
			return f
		}
	}
	return v
}

// TestReadsDecodeWhatIsRead: an expression decodes only what it reads of
// object and oldObject, and yields what it yields on the whole of them —
// selections, presence tests, macros over a member, the variable alone,
// indexed or as an optional, both variables, several expressions at
// once — on objects whose members are missing, null, of another type, or
// nested deeper than the expression reads.
func TestReadsDecodeWhatIsRead(t *testing.T) {
	exprs := []string{
		`object.metadata.labels.v == "2"`,
		`has(object.metadata.labels) && object.metadata.labels.v == "2"`,
		`has(object.status)`,
		`object.status.replicas > 2`,
		`object.spec.replicas == 3 && object.status.readyReplicas == 3`,
		`object.status.conditions.exists(c, c.type == "Ready" && c.status == "True")`,
		`object.metadata.labels.size() == 1`,
		`object == null`,
		`object["status"]["phase"] == "Running"`,
		`object.?status.?phase.orValue("none") == "Running"`,
		`object.metadata.name == oldObject.metadata.name && object.data != oldObject.data`,
		`oldObject == null || oldObject.metadata.labels.v != object.metadata.labels.v`,
		`[string(object.metadata.name), name].all(n, n == "web")`,
		`{"k": object.status.phase}.k == "Running"`,
		`object.metadata.annotations.filter(k, k.startsWith("a")).size() > 0`,
		`[1, 2].exists(object, object == 2)`,
		`object.data.big.size() > 0 && object.data.big == "x"`,
	}
	objects := []string{
		`{"metadata":{"name":"web","labels":{"v":"2"},"annotations":{"a1":"x"},"managedFields":[{"manager":"m"}]},"spec":{"replicas":3},"status":{"phase":"Running","replicas":3,"readyReplicas":3,"conditions":[{"type":"Ready","status":"True"}]},"data":{"big":"x"}}`,
		`{"metadata":{"name":"web","labels":{"v":2}},"status":{"phase":"Pending","replicas":1.5,"conditions":[{"type":"Ready","status":"False"}]}}`,
		`{"metadata":{"name":"other"},"status":"Running","data":null}`,
		`{"metadata":"web","status":{"phase":{"deeper":"Running"}},"spec":{"replicas":"3"}}`,
		`{"metadata":{"name":"web","labels":null},"status":{"conditions":"none"},"data":{"big":""}}`,
	}
	olds := [][]byte{nil, []byte(`{"metadata":{"name":"web","labels":{"v":"1"}},"data":{"big":"y"}}`)}
	for _, src := range exprs {
		p, err := Compile("--where", src)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		for _, obj := range objects {
			for _, old := range olds {
				v := Vars{Object: []byte(obj), OldObject: old, Name: "web"}
				got, gotErr := p.Eval(v)
				want, wantErr := p.eval(&activation{object: wholeDecode(t, v.Object), oldObject: wholeDecode(t, v.OldObject), vars: &v}, v)
				if got != want || (gotErr == nil) != (wantErr == nil) {
					t.Errorf("%s on %s (old %s): %v, %v; decoding the whole objects: %v, %v", src, obj, old, got, gotErr, want, wantErr)
				}
			}
		}
	}
	// Several at once read what each reads.
	a, _ := Compile("--where", `object.metadata.name == "web"`)
	b, _ := Compile("--where", `object.status.phase == "Running"`)
	for _, obj := range objects {
		v := Vars{Object: []byte(obj), Name: "web"}
		got, _ := All([]*Program{a, b}, v)
		wa, _ := a.eval(&activation{object: wholeDecode(t, v.Object), vars: &v}, v)
		wb, _ := b.eval(&activation{object: wholeDecode(t, v.Object), vars: &v}, v)
		if got != (wa && wb) {
			t.Errorf("both on %s: %v, want %v", obj, got, wa && wb)
		}
	}
	if !a.object.used || a.object.fields == nil || len(a.object.fields) != 1 || a.oldObject.used {
		t.Errorf(`object.metadata.name == "web" reads %+v of object and %+v of oldObject; want metadata.name alone`, a.object, a.oldObject)
	}
}
