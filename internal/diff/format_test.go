package diff

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
)

func TestDottedPath(t *testing.T) {
	tests := []struct {
		name string
		path string
		want string
	}{
		{name: "plain", path: "/spec/replicas", want: "spec.replicas"},
		{name: "index", path: "/spec/containers/0/image", want: "spec.containers[0].image"},
		{name: "nested index", path: "/m/1/2", want: "m[1][2]"},
		{name: "leading index", path: "/0/a", want: "[0].a"},
		{name: "label with dot and slash", path: "/metadata/labels/app.kubernetes.io~1name", want: `metadata.labels["app.kubernetes.io/name"]`},
		{name: "tilde", path: "/metadata/labels/a~0b", want: "metadata.labels.a~b"},
		{name: "space", path: "/data/a b", want: `data["a b"]`},
		{name: "quote", path: `/data/a"b`, want: `data["a\"b"]`},
		{name: "leading quoted key", path: "/a.b/c", want: `["a.b"].c`},
		{name: "empty key", path: "/data/", want: `data[""]`},
		{name: "leading zero is a key", path: "/data/01", want: "data.01"},
		{name: "non-ASCII key", path: "/data/clé", want: "data.clé"},
		{name: "newline", path: "/data/a\nb", want: `data["a\nb"]`},
		{name: "root", path: "", want: "."},
		{name: "invalid pointer", path: "spec", want: "spec"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Operation{Path: tt.path}.DottedPath()
			if got != tt.want {
				t.Fatalf("DottedPath(%q) = %q, want %q", tt.path, got, tt.want)
			}
			if tt.path == "" || tt.path[0] != '/' {
				return
			}
			// The dotted form parses back to the same segments.
			want, err := parsePointer(tt.path)
			if err != nil {
				t.Fatalf("parsePointer(%q): %v", tt.path, err)
			}
			back, err := ParsePath(got)
			if err != nil {
				t.Fatalf("ParsePath(%q): %v", got, err)
			}
			if !reflect.DeepEqual(back, want) {
				t.Errorf("ParsePath(%q) = %q, want %q", got, back, want)
			}
		})
	}
}

func TestFormatValue(t *testing.T) {
	tests := []struct {
		name   string
		v      any
		maxLen int
		want   string
	}{
		{name: "string", v: "web", maxLen: 40, want: `"web"`},
		{name: "string with newline and html", v: "a\n<b>&", maxLen: 40, want: `"a\n<b>&"`},
		{name: "float", v: float64(3), maxLen: 40, want: "3"},
		{name: "fraction", v: 0.25, maxLen: 40, want: "0.25"},
		{name: "int64", v: int64(-7), maxLen: 40, want: "-7"},
		{name: "json.Number", v: json.Number("1e3"), maxLen: 40, want: "1e3"},
		{name: "bool", v: true, maxLen: 40, want: "true"},
		{name: "null", v: nil, maxLen: 40, want: "null"},
		{name: "map compact and sorted", v: map[string]any{"b": 1, "a": []any{"x"}}, maxLen: 40, want: `{"a":["x"],"b":1}`},
		{name: "list", v: []any{1.0, "two", nil}, maxLen: 40, want: `[1,"two",null]`},
		{name: "truncated", v: "abcdefghij", maxLen: 6, want: `"abcd…`},
		{name: "truncated by runes", v: "ééééééé", maxLen: 5, want: `"ééé…`},
		{name: "exact length kept", v: "abcd", maxLen: 6, want: `"abcd"`},
		{name: "max 1", v: "abcd", maxLen: 1, want: "…"},
		{name: "no limit", v: strings.Repeat("x", 100), maxLen: 0, want: `"` + strings.Repeat("x", 100) + `"`},
		{name: "not JSON", v: math.NaN(), maxLen: 10, want: "NaN"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := FormatValue(tt.v, tt.maxLen); got != tt.want {
				t.Errorf("FormatValue(%#v, %d) = %q, want %q", tt.v, tt.maxLen, got, tt.want)
			}
		})
	}
}

func TestOperationText(t *testing.T) {
	tests := []struct {
		name string
		op   Operation
		want string
	}{
		{name: "replace", op: Operation{Op: OpReplace, Path: "/spec/replicas", Old: float64(1), Value: float64(3)}, want: "~ spec.replicas: 1 → 3"},
		{name: "add", op: Operation{Op: OpAdd, Path: "/metadata/labels/tier", Value: "web"}, want: `+ metadata.labels.tier: "web"`},
		{name: "add null", op: Operation{Op: OpAdd, Path: "/a"}, want: "+ a: null"},
		{name: "remove", op: Operation{Op: OpRemove, Path: "/data/old", Old: "x"}, want: "- data.old"},
		{name: "redacted replace", op: Operation{Op: OpReplace, Path: "/data/password", Redacted: true}, want: "~ data.password: (changed)"},
		{name: "redacted add", op: Operation{Op: OpAdd, Path: "/data/password", Redacted: true}, want: "+ data.password: (set)"},
		{name: "redacted remove", op: Operation{Op: OpRemove, Path: "/data/password", Redacted: true}, want: "- data.password"},
		{name: "truncated values", op: Operation{Op: OpReplace, Path: "/data/k", Old: "0123456789", Value: "abcdefghij"}, want: `~ data.k: "0123… → "abcd…`},
		{name: "escaped key", op: Operation{Op: OpAdd, Path: "/metadata/labels/app.kubernetes.io~1name", Value: "x"}, want: `+ metadata.labels["app.kubernetes.io/name"]: "x"`},
		{name: "list element", op: Operation{Op: OpReplace, Path: "/spec/containers/0/image", Old: "a:1", Value: "a:2"}, want: `~ spec.containers[0].image: "a:1" → "a:2"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			maxLen := 40
			if tt.name == "truncated values" {
				maxLen = 6
			}
			if got := tt.op.Text(maxLen); got != tt.want {
				t.Errorf("Text() = %q, want %q", got, tt.want)
			}
		})
	}
}
