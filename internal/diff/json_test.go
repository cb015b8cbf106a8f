package diff

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
)

func TestOperationJSON(t *testing.T) {
	tests := []struct {
		name string
		op   Operation
		want string
	}{
		{name: "replace", op: Operation{Op: OpReplace, Path: "/spec/replicas", Old: int64(1), Value: int64(3)},
			want: `{"op":"replace","path":"/spec/replicas","old":1,"value":3}`},
		{name: "replace with nulls", op: Operation{Op: OpReplace, Path: "/a"},
			want: `{"op":"replace","path":"/a","old":null,"value":null}`},
		{name: "remove", op: Operation{Op: OpRemove, Path: "/data/old", Old: "x"},
			want: `{"op":"remove","path":"/data/old","old":"x"}`},
		{name: "add", op: Operation{Op: OpAdd, Path: "/metadata/labels/tier", Value: "web"},
			want: `{"op":"add","path":"/metadata/labels/tier","value":"web"}`},
		{name: "add null", op: Operation{Op: OpAdd, Path: "/a"},
			want: `{"op":"add","path":"/a","value":null}`},
		{name: "add object", op: Operation{Op: OpAdd, Path: "/a", Value: map[string]any{"b": []any{1.5, true}}},
			want: `{"op":"add","path":"/a","value":{"b":[1.5,true]}}`},
		{name: "redacted", op: Operation{Op: OpReplace, Path: "/data/password", Redacted: true},
			want: `{"op":"replace","path":"/data/password","redacted":true}`},
		{name: "redacted hides values even if set", op: Operation{Op: OpAdd, Path: "/data/p", Value: "secret", Redacted: true},
			want: `{"op":"add","path":"/data/p","redacted":true}`},
		{name: "escaped path and no html escaping", op: Operation{Op: OpAdd, Path: "/metadata/labels/a~1b", Value: "<&>"},
			want: `{"op":"add","path":"/metadata/labels/a~1b","value":"<&>"}`},
		{name: "json.Number", op: Operation{Op: OpAdd, Path: "/n", Value: json.Number("12345678901234567890")},
			want: `{"op":"add","path":"/n","value":12345678901234567890}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// MarshalJSON itself, as json.Marshal would escape HTML.
			b, err := tt.op.MarshalJSON()
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			if got := string(b); got != tt.want {
				t.Fatalf("Marshal() = %s, want %s", got, tt.want)
			}
			var back Operation
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatalf("Unmarshal(%s): %v", b, err)
			}
			again, err := back.MarshalJSON()
			if err != nil {
				t.Fatalf("Marshal after Unmarshal: %v", err)
			}
			if string(again) != tt.want {
				t.Errorf("round trip = %s, want %s", again, tt.want)
			}
		})
	}
}

func TestOperationJSONInEncoder(t *testing.T) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	rec := struct {
		Changes []Operation `json:"changes"`
	}{Changes: []Operation{{Op: OpAdd, Path: "/a", Value: "<b>"}}}
	if err := enc.Encode(rec); err != nil {
		t.Fatalf("Encode: %v", err)
	}
	want := `{"changes":[{"op":"add","path":"/a","value":"<b>"}]}` + "\n"
	if got := buf.String(); got != want {
		t.Errorf("Encode() = %q, want %q", got, want)
	}
}

func TestOperationMarshalError(t *testing.T) {
	_, err := json.Marshal(Operation{Op: OpAdd, Path: "/a", Value: math.Inf(1)})
	if err == nil || !strings.Contains(err.Error(), `"/a"`) {
		t.Errorf("Marshal(+Inf) error = %v, want an error naming the path", err)
	}
}

func TestOperationUnmarshal(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    Operation
		wantErr bool
	}{
		{name: "numbers as kubernetes decodes them", in: `{"op":"replace","path":"/a","old":1,"value":{"f":1.5,"e":1e3,"big":1e400,"long":12345678901234567890,"precise":0.10000000000000000001,"l":[2]}}`,
			want: Operation{Op: OpReplace, Path: "/a", Old: int64(1), Value: map[string]any{
				"f": 1.5, "e": 1000.0, "big": json.Number("1e400"), "long": json.Number("12345678901234567890"),
				"precise": json.Number("0.10000000000000000001"), "l": []any{int64(2)},
			}}},
		{name: "redacted drops values", in: `{"op":"add","path":"/p","value":"x","redacted":true}`,
			want: Operation{Op: OpAdd, Path: "/p", Redacted: true}},
		{name: "root path", in: `{"op":"replace","path":"","old":null,"value":true}`,
			want: Operation{Op: OpReplace, Path: "", Value: true}},
		{name: "missing op", in: `{"path":"/a"}`, wantErr: true},
		{name: "missing path", in: `{"op":"add"}`, wantErr: true},
		{name: "unknown op", in: `{"op":"move","path":"/a","from":"/b"}`, wantErr: true},
		{name: "invalid pointer", in: `{"op":"add","path":"a"}`, wantErr: true},
		{name: "invalid escape", in: `{"op":"add","path":"/a~2"}`, wantErr: true},
		{name: "not an object", in: `[1]`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got Operation
			err := json.Unmarshal([]byte(tt.in), &got)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("Unmarshal(%s) = %#v, want an error", tt.in, got)
				}
				return
			}
			if err != nil {
				t.Fatalf("Unmarshal(%s): %v", tt.in, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Unmarshal(%s) = %#v, want %#v", tt.in, got, tt.want)
			}
		})
	}
}

// TestWriteJSONLeavesAreEncodingJSONs: the fast paths of writeJSON write
// what encoding/json (HTML escaping off) writes.
func TestWriteJSONLeavesAreEncodingJSONs(t *testing.T) {
	for _, v := range []any{"", "web", "say \"hi\"\n\t<b>&</b>", "\x00\x1f\u2028\u2029", "bad \xff utf-8", "é🙂",
		true, false, nil, int64(0), int64(-1 << 63), int64(1<<63 - 1)} {
		var got, want bytes.Buffer
		if err := writeJSON(&got, v); err != nil {
			t.Fatal(err)
		}
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
		if w := strings.TrimSuffix(want.String(), "\n"); got.String() != w {
			t.Errorf("%#v: writeJSON wrote %s, encoding/json %s", v, got.String(), w)
		}
	}
}
