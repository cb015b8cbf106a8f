package diff

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// fuzzSeeds are pairs of JSON documents for FuzzDiffApply.
var fuzzSeeds = [][2]string{
	{`{"spec":{"replicas":1}}`, `{"spec":{"replicas":3}}`},
	{`{"a":null}`, `{}`},
	{`null`, `{"a":[1,2,3]}`},
	{`[1,2,3,4]`, `[4,3]`},
	{`{"l":[{"name":"a","v":1},{"name":"b","v":1},{"name":"c"}]}`, `{"l":[{"name":"c"},{"name":"d"},{"name":"a","v":2}]}`},
	{`{"l":[{"name":"a"},{"name":"a"}]}`, `{"l":[{"name":"a"}]}`},
	{`{"a/b":{"c~d":1},"":2}`, `{"a/b":{"c~d":[1]},"":null}`},
	{`{"data":{"secret":"x","k":1}}`, `{"data":{"secret":"y"},"secret":{"secret":1}}`},
	{`{"n":1.0}`, `{"n":1}`},
	{`{"n":1e2}`, `{"n":100.5}`},
	{`{"a":{"b":{"c":{}}}}`, `{"a":{"b":[]}}`},
	{`"x"`, `true`},
	{`{"metadata":{"labels":{"app.kubernetes.io/name":"a"}},"spec":{"containers":[{"name":"app","image":"a:1","env":[{"name":"X","value":"1"}]}]}}`,
		`{"metadata":{"labels":{"app.kubernetes.io/name":"b"}},"spec":{"containers":[{"name":"side"},{"name":"app","image":"a:2","env":[{"name":"Y"},{"name":"X","value":"2"}]}]}}`},
}

// FuzzDiffApply checks Compute on pairs of JSON documents: its operations,
// applied as a JSON Patch by an independent implementation, turn the old
// document into the new one (also after a round trip through their JSON
// form, and with numbers decoded as json.Number), and redaction, ignored
// paths and the text rendering keep their promises.
func FuzzDiffApply(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s[0], s[1])
	}
	f.Fuzz(checkDiffApply)
}

// checkDiffApply is the body of FuzzDiffApply.
func checkDiffApply(t *testing.T, oldJSON, newJSON string) {
	var oldV, newV any
	if json.Unmarshal([]byte(oldJSON), &oldV) != nil || json.Unmarshal([]byte(newJSON), &newV) != nil {
		return
	}
	ops := Compute(oldV, newV, Options{})
	if ops == nil {
		t.Fatalf("Compute returned nil")
	}
	checkApply(t, oldV, newV, ops)

	// Deterministic, and empty for equal documents.
	if a, b := marshalOps(t, ops), marshalOps(t, Compute(oldV, newV, Options{})); a != b {
		t.Fatalf("Compute is not deterministic:\n%s\n%s", a, b)
	}
	if same := Compute(newV, newV, Options{}); len(same) != 0 {
		t.Fatalf("Compute(new, new) = %s, want []", marshalOps(t, same))
	}

	// The JSON form round-trips into an equivalent patch.
	var back []Operation
	if err := json.Unmarshal([]byte(marshalOps(t, ops)), &back); err != nil {
		t.Fatalf("unmarshal ops: %v", err)
	}
	checkApply(t, oldV, newV, back)

	// Numbers compare by value across Go types: decode the old
	// document with json.Number instead of float64.
	dec := json.NewDecoder(strings.NewReader(oldJSON))
	dec.UseNumber()
	var oldN any
	if err := dec.Decode(&oldN); err != nil {
		t.Fatalf("decode with UseNumber: %v", err)
	}
	checkApply(t, oldN, newV, Compute(oldN, newV, Options{}))

	// Redaction: no value under a key named "secret" is ever emitted.
	redact := func(p []string) bool { return len(p) > 0 && p[len(p)-1] == "secret" }
	for _, op := range Compute(oldV, newV, Options{Redact: redact}) {
		segs, err := parsePointer(op.Path)
		if err != nil {
			t.Fatalf("invalid path %q: %v", op.Path, err)
		}
		under := false
		for i := range segs {
			if redact(segs[:i+1]) {
				under = true
			}
		}
		if under && (!op.Redacted || op.Old != nil || op.Value != nil) {
			t.Fatalf("operation under a redacted path not redacted: %s", marshalOps(t, []Operation{op}))
		}
		if containsKey(op.Old, "secret") || containsKey(op.Value, "secret") {
			t.Fatalf("operation value contains a redacted key: %s", marshalOps(t, []Operation{op}))
		}
	}

	// Ignore: nothing at or below /a is reported, and a replaced
	// document carries no "a".
	for _, op := range Compute(oldV, newV, Options{Ignore: []string{"a"}}) {
		if op.Path == "/a" || strings.HasPrefix(op.Path, "/a/") {
			t.Fatalf("ignored path reported: %s", marshalOps(t, []Operation{op}))
		}
		if op.Path == "" {
			for _, v := range []any{op.Old, op.Value} {
				if m, ok := v.(map[string]any); ok {
					if _, found := m["a"]; found {
						t.Fatalf("ignored key in a replaced document: %s", marshalOps(t, []Operation{op}))
					}
				}
			}
		}
	}

	// A Stepper walked through the two documents, member by member,
	// ends where Compute does, also ignoring and redacting.
	if a, ok := oldV.(map[string]any); ok {
		if b, ok := newV.(map[string]any); ok {
			for _, opts := range []Options{{}, {Ignore: []string{"a", "/b/c"}}, {Redact: redact}} {
				s := NewStepper(Options{Ignore: []string{"x"}}) // Reset replaces these
				s.Reset(opts)
				stepThrough(s, a, b)
				if got, want := marshalOps(t, s.Operations()), marshalOps(t, Compute(a, b, opts)); got != want {
					t.Fatalf("Stepper with %+v:\n%s\nCompute:\n%s", opts, got, want)
				}
			}
		}
	}

	// Text rendering never spans lines.
	for _, op := range ops {
		if s := op.Text(60); strings.ContainsAny(s, "\n\r") {
			t.Fatalf("Text() = %q spans lines", s)
		}
	}
}

// stepThrough walks a and b as a caller of Stepper does: members that
// are maps on both sides entered, others that differ handed over; the
// members in map order, so in no particular order.
func stepThrough(s *Stepper, a, b map[string]any) {
	for k, av := range a {
		if s.Ignores([]byte(k)) {
			continue
		}
		bv, ok := b[k]
		switch {
		case !ok:
			s.Removed(k, av)
		case reflect.DeepEqual(av, bv):
		default:
			am, aIsMap := av.(map[string]any)
			bm, bIsMap := bv.(map[string]any)
			if aIsMap && bIsMap {
				s.Enter(k)
				stepThrough(s, am, bm)
				s.Leave()
				continue
			}
			s.Values(k, av, bv)
		}
	}
	for k, bv := range b {
		if _, ok := a[k]; !ok && !s.Ignores([]byte(k)) {
			s.Added(k, bv)
		}
	}
}

// containsKey reports whether a map under v has the key k.
func containsKey(v any, k string) bool {
	switch x := v.(type) {
	case map[string]any:
		for key, c := range x {
			if key == k || containsKey(c, k) {
				return true
			}
		}
	case []any:
		for _, c := range x {
			if containsKey(c, k) {
				return true
			}
		}
	}
	return false
}

// TestFuzzSeedsCompact keeps the seed corpus valid JSON.
func TestFuzzSeedsCompact(t *testing.T) {
	for _, s := range fuzzSeeds {
		for _, doc := range s {
			var buf bytes.Buffer
			if err := json.Compact(&buf, []byte(doc)); err != nil {
				t.Errorf("seed %q is not JSON: %v", doc, err)
			}
		}
	}
}

// FuzzDottedPath checks that DottedPath renders every path (of valid UTF-8
// keys) in a form ParsePath reads back.
func FuzzDottedPath(f *testing.F) {
	for _, s := range [][2]string{{"spec", "replicas"}, {"app.kubernetes.io/name", "0"}, {"", "a b"}, {`a"]`, `\.`}, {"01", "~1"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, k1, k2 string) {
		if !utf8.ValidString(k1) || !utf8.ValidString(k2) {
			return
		}
		want := []string{k1, k2}
		dotted := Operation{Path: pointer(want)}.DottedPath()
		got, err := ParsePath(dotted)
		if err != nil {
			t.Fatalf("ParsePath(%q) from %q: %v", dotted, want, err)
		}
		// Indices are normalized ("01" stays a key, "1" an index).
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("ParsePath(DottedPath(%q)) = %q via %q", want, got, dotted)
		}
	})
}
