package diff

import (
	"reflect"
	"testing"
)

func TestParsePath(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []string
		wantErr bool
	}{
		{name: "pointer", in: "/metadata/managedFields", want: []string{"metadata", "managedFields"}},
		{name: "pointer escapes", in: "/metadata/labels/app.kubernetes.io~1name/a~0b", want: []string{"metadata", "labels", "app.kubernetes.io/name", "a~b"}},
		{name: "pointer ~01 is ~1", in: "/a~01", want: []string{"a~1"}},
		{name: "pointer empty key", in: "/", want: []string{""}},
		{name: "pointer index", in: "/spec/containers/0", want: []string{"spec", "containers", "0"}},
		{name: "pointer bad escape", in: "/a~2", wantErr: true},
		{name: "pointer trailing tilde", in: "/a~", wantErr: true},
		{name: "dotted", in: "metadata.managedFields", want: []string{"metadata", "managedFields"}},
		{name: "dotted leading dot", in: ".spec.replicas", want: []string{"spec", "replicas"}},
		{name: "dotted escaped dot", in: `metadata.labels.app\.kubernetes\.io/name`, want: []string{"metadata", "labels", "app.kubernetes.io/name"}},
		{name: "dotted escaped backslash", in: `a\\b`, want: []string{`a\b`}},
		{name: "dotted index", in: "spec.containers[0].image", want: []string{"spec", "containers", "0", "image"}},
		{name: "dotted index normalized", in: "l[007]", want: []string{"l", "7"}},
		{name: "dotted nested index", in: "m[1][2]", want: []string{"m", "1", "2"}},
		{name: "dotted quoted key", in: `metadata.labels["app.kubernetes.io/name"]`, want: []string{"metadata", "labels", "app.kubernetes.io/name"}},
		{name: "dotted quoted key with escapes", in: `a["x\"]y"].b`, want: []string{"a", `x"]y`, "b"}},
		{name: "dotted leading bracket", in: `["a.b"].c`, want: []string{"a.b", "c"}},
		{name: "dotted numeric key", in: "data.0", want: []string{"data", "0"}},
		{name: "empty", in: "", wantErr: true},
		{name: "only a dot", in: ".", wantErr: true},
		{name: "empty segment", in: "a..b", wantErr: true},
		{name: "trailing dot", in: "a.", wantErr: true},
		{name: "trailing dot after bracket", in: "a[0].", wantErr: true},
		{name: "lone backslash", in: `a\`, wantErr: true},
		{name: "unterminated bracket", in: "a[0", wantErr: true},
		{name: "bad index", in: "a[-1]", wantErr: true},
		{name: "wildcard index", in: "a[*]", wantErr: true},
		{name: "unterminated quote", in: `a["b]`, wantErr: true},
		{name: "missing bracket after quote", in: `a["b"`, wantErr: true},
		{name: "text after bracket", in: "a[0]b", wantErr: true},
		{name: "empty segment before bracket", in: "a.[0]", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParsePath(tt.in)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("ParsePath(%q) = %q, want an error", tt.in, got)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParsePath(%q): %v", tt.in, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParsePath(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestPointerRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		segs []string
		want string
	}{
		{name: "plain", segs: []string{"spec", "replicas"}, want: "/spec/replicas"},
		{name: "escapes", segs: []string{"a/b", "c~d", "~1"}, want: "/a~1b/c~0d/~01"},
		{name: "empty key", segs: []string{""}, want: "/"},
		{name: "root", segs: nil, want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := pointer(tt.segs)
			if got != tt.want {
				t.Fatalf("pointer(%q) = %q, want %q", tt.segs, got, tt.want)
			}
			back, err := parsePointer(got)
			if err != nil {
				t.Fatalf("parsePointer(%q): %v", got, err)
			}
			if len(back) != len(tt.segs) || (len(back) > 0 && !reflect.DeepEqual(back, tt.segs)) {
				t.Errorf("parsePointer(%q) = %q, want %q", got, back, tt.segs)
			}
		})
	}
}
