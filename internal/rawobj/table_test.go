package rawobj

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
)

// tableJSON is a Table as kube-apiserver sends it for a list of Pods with
// includeObject=Object (descriptions cut short), n rows.
func tableJSON(n int, rowsFirst bool) string {
	cols := `"columnDefinitions":[{"name":"Name","type":"string","format":"name","description":"Name must be unique","priority":0},` +
		`{"name":"Ready","type":"string","format":"","description":"The aggregate readiness","priority":0},` +
		`{"name":"Node","type":"string","format":"","description":"The node","priority":1}]`
	var rows strings.Builder
	rows.WriteString(`"rows":[`)
	for i := range n {
		if i > 0 {
			rows.WriteString(",")
		}
		fmt.Fprintf(&rows, `{"cells":["web-%d","1/1",%q],"object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"web-%d","namespace":"demo","resourceVersion":"%d",`+
			`"managedFields":[{"manager":"kubelet","operation":"Update","time":"t","fieldsV1":{"f:status":{}}}]},"spec":{"nodeName":"node-%d"},"status":{"phase":"Running"}}}`,
			i, "node-"+fmt.Sprint(i)+strings.Repeat(" ", i%3), i, 100+i, i)
	}
	rows.WriteString("]")
	head := `{"kind":"Table","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":"200","continue":"c"},`
	if rowsFirst {
		return head + rows.String() + "," + cols + "}"
	}
	return head + cols + "," + rows.String() + "}"
}

func TestParseTable(t *testing.T) {
	wantCols := []TableColumn{{Name: "Name", Type: "string", Format: "name"}, {Name: "Ready", Type: "string"}, {Name: "Node", Type: "string", Priority: 1}}
	for _, n := range []int{0, 1, 3, 200} {
		data := []byte(tableJSON(n, false))
		l, err := ParseList(data, ParseOptions{})
		if err != nil {
			t.Fatalf("%d rows: %v", n, err)
		}
		if l.Kind != "Table" || l.ResourceVersion != "200" || l.Continue != "c" || !reflect.DeepEqual(l.Columns, wantCols) || len(l.Items) != n {
			t.Fatalf("%d rows: list %+v", n, l)
		}
		for i, o := range l.Items {
			wantObj, err := Parse([]byte(fmt.Sprintf(`{"kind":"Pod","apiVersion":"v1","metadata":{"name":"web-%d","namespace":"demo","resourceVersion":"%d"},"spec":{"nodeName":"node-%d"},"status":{"phase":"Running"}}`, i, 100+i, i)), ParseOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(o.JSON, wantObj.JSON) || o.Name != wantObj.Name || o.ResourceVersion != wantObj.ResourceVersion || len(o.Managers()) != 1 {
				t.Fatalf("row %d: object %s, want %s", i, o.JSON, wantObj.JSON)
			}
			if want := fmt.Sprintf(`["web-%d","1/1",%q]`, i, "node-"+fmt.Sprint(i)+strings.Repeat(" ", i%3)); string(o.Row.Cells) != want {
				t.Errorf("row %d: cells %s, want %s", i, o.Row.Cells, want)
			}
			if !reflect.DeepEqual(o.Row.Columns, wantCols) {
				t.Errorf("row %d: columns %+v", i, o.Row.Columns)
			}
			if c := o.DeepCopy(); !bytes.Equal(c.Row.Cells, o.Row.Cells) || !reflect.DeepEqual(c.Row.Columns, o.Row.Columns) || &c.Row.Cells[0] == &o.Row.Cells[0] {
				t.Errorf("row %d: DeepCopy cells %s columns %+v", i, c.Row.Cells, c.Row.Columns)
			}
		}
		// Streamed, however the body is split, the same.
		for _, rd := range listReaders {
			got, err := ParseListFrom(rd.wrap(data), ParseOptions{})
			if err != nil || len(got.Items) != n || !reflect.DeepEqual(got.Columns, wantCols) {
				t.Fatalf("%d rows, %s: %v, %+v", n, rd.name, err, got)
			}
			for i := range got.Items {
				if !bytes.Equal(got.Items[i].JSON, l.Items[i].JSON) || !bytes.Equal(got.Items[i].Row.Cells, l.Items[i].Row.Cells) {
					t.Fatalf("%d rows, %s: row %d differs", n, rd.name, i)
				}
			}
		}
	}
}

func TestParseTableErrors(t *testing.T) {
	for _, in := range []string{
		`{"kind":"Table","rows":[{"cells":["a"]}]}`,              // no object
		`{"kind":"Table","rows":[1]}`,                            // not a row
		`{"kind":"Table","rows":{}}`,                             // not an array
		`{"kind":"Table","rows":[{"cells":["a",],"object":{}}]}`, // bad JSON
		`{"kind":"Table","columnDefinitions":[{"name":1}],"rows":[]}`,
		`{"kind":"Table","rows":[{"cells":[],"object":{"metadata":{"name":"a"}}}`,
	} {
		if _, err := ParseList([]byte(in), ParseOptions{}); err == nil {
			t.Errorf("ParseList(%s): no error", in)
		}
		if _, err := ParseListFrom(strings.NewReader(in), ParseOptions{}); err == nil {
			t.Errorf("ParseListFrom(%s): no error", in)
		}
	}
	// A second rows member after rows were handed out cannot be taken back.
	in := `{"kind":"Table","rows":[{"cells":[],"object":{"metadata":{"name":"a"}}}],"rows":[]}`
	_, err := ParseListEach(strings.NewReader(in), ParseOptions{}, func(*Object) error { return nil })
	if !errors.Is(err, ErrNotStreamable) {
		t.Errorf("second rows: %v", err)
	}
}

// TestNextTableEvent reads a watch of Tables as kube-apiserver sends it:
// column definitions with the first event only, a BOOKMARK as a one-row
// Table, an ERROR's Status; and plain objects from a server that cannot
// render the type.
func TestNextTableEvent(t *testing.T) {
	stream := `{"type":"ADDED","object":{"kind":"Table","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":"5"},"columnDefinitions":[{"name":"Name","type":"string","format":"name","priority":0}],"rows":[{"cells":["a"],"object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","resourceVersion":"5"}}}]}}
{"type":"MODIFIED","object":{"kind":"Table","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":"6"},"columnDefinitions":null,"rows":[{"cells":["a"],"object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","resourceVersion":"6"}}}]}}
{"type":"BOOKMARK","object":{"kind":"Table","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":"7"},"columnDefinitions":null,"rows":[{"cells":["",0,"\u003cunknown\u003e"],"object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"resourceVersion":"7"}}}]}}
{"type":"DELETED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"plain","resourceVersion":"8"}}}
{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","code":410}}
{"type":"ADDED","object":{"kind":"Table","rows":[]}}
{"type":"WEIRD","object":{}}
`
	d := NewDecoder(strings.NewReader(stream))
	want := []struct {
		typ, name, rv, cells string
		columns              int
	}{
		{"ADDED", "a", "5", `["a"]`, 1},
		{"MODIFIED", "a", "6", `["a"]`, 0},
		{"BOOKMARK", "", "7", `["",0,"\u003cunknown\u003e"]`, 0},
		{"DELETED", "plain", "8", "", 0},
	}
	for i, w := range want {
		typ, obj, status, err := d.NextTableEvent(ParseOptions{})
		if err != nil || status != nil || typ != w.typ || obj.Name != w.name || obj.ResourceVersion != w.rv || string(rowOf(obj).Cells) != w.cells || len(rowOf(obj).Columns) != w.columns {
			t.Fatalf("event %d: %s %+v %s %v", i, typ, obj, status, err)
		}
	}
	if typ, obj, status, err := d.NextTableEvent(ParseOptions{}); typ != "ERROR" || obj != nil || !strings.Contains(string(status), `"code":410`) || err != nil {
		t.Fatalf("error event: %s %v %s %v", typ, obj, status, err)
	}
	// A Table without its row, and an unknown type: errors of that event
	// only; the stream goes on to its end.
	for _, what := range []string{"no row", "unknown type"} {
		var ee *EventError
		if _, _, _, err := d.NextTableEvent(ParseOptions{}); !errors.As(err, &ee) {
			t.Fatalf("%s: %v", what, err)
		}
	}
	if _, _, _, err := d.NextTableEvent(ParseOptions{}); !errors.Is(err, io.EOF) {
		t.Fatalf("end: %v", err)
	}
}

// rowOf is obj's row, empty when it came without one.
func rowOf(obj *Object) TableRow {
	if obj == nil || obj.Row == nil {
		return TableRow{}
	}
	return *obj.Row
}
