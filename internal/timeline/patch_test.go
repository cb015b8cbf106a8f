package timeline

import (
	"bytes"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kubectl-deltas/kubectl-deltas/internal/rawobj"
)

// applyHunks is the page's applyPatch in Go: the text hunks make of a; it
// fails t when they are not in order, apart and within a.
func applyHunks(t *testing.T, a []byte, hunks []hunk) []byte {
	t.Helper()
	var out []byte
	pos := 0
	for _, h := range hunks {
		if h.at < pos || h.del < 0 || h.at+h.del > len(a) {
			t.Fatalf("hunk %+v out of order or out of %d bytes (at %d)", h, len(a), pos)
		}
		out = append(append(out, a[pos:h.at]...), h.ins...)
		pos = h.at + h.del
	}
	return append(out, a[pos:]...)
}

// checkPatch checks that diffBytes' hunks, when it makes them, make b of
// a within the budget, and returns whether it made them.
func checkPatch(t *testing.T, a, b []byte) bool {
	t.Helper()
	hunks, ok := diffBytes(nil, a, b)
	if !ok {
		return false
	}
	if got := applyHunks(t, a, hunks); !bytes.Equal(got, b) {
		t.Fatalf("the hunks %+v make %q of %q, not %q", hunks, got, a, b)
	}
	cost := 0
	for _, h := range hunks {
		cost += len(h.ins) + hunkCost
	}
	if cost > maxPatchBytes {
		t.Fatalf("hunks of %d bytes: more than %d", cost, maxPatchBytes)
	}
	return true
}

func TestDiffBytes(t *testing.T) {
	cm := func(rv, at, data string) []byte {
		return []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","resourceVersion":"` + rv +
			`","managedFields":[{"manager":"m","time":"` + at + `"}]},"data":{"k":"` + data + `","z":"` + strings.Repeat("z", 300) + `"}}`)
	}
	cases := []struct {
		name  string
		a, b  []byte
		hunks int // -1: no patch
	}{
		{"alike", cm("1", "2026-11-26T10:00:00Z", "a"), cm("1", "2026-11-26T10:00:00Z", "a"), 0},
		{"in place", cm("100", "2026-11-26T10:00:00Z", "aaaa"), cm("101", "2026-11-26T10:00:09Z", "aaab"), 3},
		{"in place, near", cm("100", "2026-11-26T10:00:00Z", "a"), cm("109", "2026-11-26T10:00:00Z", "b"), 2},
		{"grown at the end", cm("100", "2026-11-26T10:00:00Z", "a"), cm("101", "2026-11-26T10:00:01Z", "a"+strings.Repeat("b", 50)), 3},
		{"shrunk", cm("100", "2026-11-26T10:00:00Z", strings.Repeat("b", 50)), cm("101", "2026-11-26T10:00:01Z", "a"), 4}, // the first byte in place, the rest removed
		{"rewritten", cm("100", "2026-11-26T10:00:00Z", "a"), cm("1000", "2027-01-01T00:00:00Z", strings.Repeat("q", 600)), -1},
		{"empty to something", nil, []byte(`{}`), 1},
		{"something to empty", []byte(`{}`), nil, 1},
	}
	for _, c := range cases {
		hunks, ok := diffBytes(nil, c.a, c.b)
		if got := len(hunks); ok != (c.hunks >= 0) || ok && got != c.hunks {
			t.Errorf("%s: %d hunks (ok %v), want %d: %+v", c.name, got, ok, c.hunks, hunks)
		}
		checkPatch(t, c.a, c.b)
	}
}

// TestDiffBytesRandomEdits edits texts the way updates do (values
// rewritten in place, grown, shrunk, inserted and removed) and checks
// every patch, and that the small edits are patched.
func TestDiffBytesRandomEdits(t *testing.T) {
	r := rand.New(rand.NewPCG(46, 3))
	patched := 0
	for i := range 3000 {
		a := make([]byte, 50+r.IntN(2000))
		for j := range a {
			a[j] = "abc\"{}:,0123456789"[r.IntN(18)]
		}
		b := bytes.Clone(a)
		edits := 1 + r.IntN(4)
		for range edits {
			at := r.IntN(len(b))
			n := 1 + r.IntN(20)
			switch r.IntN(4) {
			case 0: // in place
				for j := at; j < min(at+n, len(b)); j++ {
					b[j] = 'x'
				}
			case 1: // inserted
				b = append(b[:at], append(bytes.Repeat([]byte("y"), n), b[at:]...)...)
			case 2: // removed
				b = append(b[:at], b[min(at+n, len(b)):]...)
			default: // rewritten, another length
				b = append(b[:at], append(bytes.Repeat([]byte("w"), n), b[min(at+n/2, len(b)):]...)...)
			}
		}
		if checkPatch(t, a, b) {
			patched++
		} else if edits == 1 {
			t.Fatalf("case %d: one edit of at most 20 bytes not patched", i)
		}
	}
	if patched < 2000 {
		t.Errorf("only %d of 3000 edited texts patched", patched)
	}
}

func FuzzDiffBytes(f *testing.F) {
	f.Add([]byte(`{"a":"1","b":"2"}`), []byte(`{"a":"12","b":"3"}`))
	f.Add([]byte(`{"metadata":{"resourceVersion":"99"},"data":{"k":"v"}}`), []byte(`{"metadata":{"resourceVersion":"100"},"data":{"k":"w"}}`))
	f.Add([]byte(""), []byte("x"))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		checkPatch(t, a, b)
	})
}

// referenceText is what appendRawText must write: rawobj.AppendString's
// JSON string, < written \u003c.
func referenceText(raw []byte) []byte {
	return bytes.ReplaceAll(rawobj.AppendStringBytes(nil, raw), []byte("<"), []byte(`\u003c`))
}

func TestAppendRawText(t *testing.T) {
	cases := []string{"", "plain", `{"a":"b\\c","<x>":[1,2]}`, "\x00\x1f\x7f\n\t", "é日本😀", "\u2028\u2029", "bad \xff \xc3", "<</script>"}
	for _, special := range []string{`"`, `\`, "<", "\n", "\x1f", "\x7f", "é", "\xff", "\u2028", "\xe2\x80", "😀"} {
		for at := range 18 {
			cases = append(cases, strings.Repeat("a", at)+special+strings.Repeat("z", 17-at))
		}
	}
	for _, c := range cases {
		if got, want := appendRawText([]byte("prefix"), []byte(c)), append([]byte("prefix"), referenceText([]byte(c))...); !bytes.Equal(got, want) {
			t.Errorf("appendRawText(%q) = %s, want %s", c, got, want)
		}
		if got, want := appendText(nil, c), referenceText([]byte(c)); !bytes.Equal(got, want) {
			t.Errorf("appendText(%q) = %s, want %s", c, got, want)
		}
	}
}

func FuzzAppendRawText(f *testing.F) {
	f.Add([]byte(`{"a":"<b>","c":"\u2028"}`))
	f.Add([]byte("\xff\xfe plain \x00"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		if got, want := appendRawText(nil, raw), referenceText(raw); !bytes.Equal(got, want) {
			t.Errorf("appendRawText(%q) = %s, want %s", raw, got, want)
		}
	})
}

// TestIsScriptText holds the word-at-a-time check to the byte-at-a-time
// one: every byte value at every position of texts of 1 to 24 bytes,
// and pairs of bytes that make a borrow cross from one into the next.
func TestIsScriptText(t *testing.T) {
	for n := 1; n <= 24; n++ {
		for at := 0; at < n; at++ {
			for c := 0; c < 256; c++ {
				b := bytes.Repeat([]byte("a"), n)
				b[at] = byte(c)
				want := c >= 0x20 && c < 0x7f && c != '<'
				if got := isScriptText(b); got != want || scriptTextBytes(b) != want {
					t.Fatalf("%q: %v, want %v", b, got, want)
				}
				if at+1 < n {
					for _, next := range []byte{0x00, 0x1f, 0x20, 0x21, '<', '=', 0x7e, 0x7f, 0x80} {
						b[at+1] = next
						want := want && next >= 0x20 && next < 0x7f && next != '<'
						if got := isScriptText(b); got != want {
							t.Fatalf("%q: %v, want %v", b, got, want)
						}
					}
				}
			}
		}
	}
}

// TestAppendBase: the bases, in chunks, are the texts appended one after
// the other, each at the offset appendBase returned; a snapshot taken
// before more are appended keeps its bytes.
func TestAppendBase(t *testing.T) {
	tl := New(filepath.Join(t.TempDir(), "t.html"), "", nil)
	rng := rand.New(rand.NewPCG(1, 2))
	var want []byte
	var snapshot [][]byte
	var snapshotText string
	largest := 0
	for i := 0; i < 3000; i++ {
		n := rng.IntN(logChunk / 8)
		if i%500 == 7 {
			n = logChunk + rng.IntN(logChunk) // larger than a chunk
		}
		text := bytes.Repeat([]byte{byte('a' + i%26)}, n)
		largest = max(largest, n)
		if at := tl.appendBase(text); at != len(want) {
			t.Fatalf("text %d at %d, want %d", i, at, len(want))
		}
		want = append(want, text...)
		if i == 1000 {
			snapshot, snapshotText = slices.Clone(tl.bases.chunks), string(want)
		}
	}
	if got := bytes.Join(tl.bases.chunks, nil); !bytes.Equal(got, want) || tl.bases.size != len(want) {
		t.Fatalf("the bases are %d bytes (%d said), not the %d appended", len(got), tl.bases.size, len(want))
	}
	for _, c := range tl.bases.chunks {
		if cap(c) > max(logChunk, largest) {
			t.Fatalf("a chunk of %d bytes, above %d", cap(c), max(logChunk, largest))
		}
	}
	if string(bytes.Join(snapshot, nil)) != snapshotText {
		t.Fatal("appending changed the bytes of an earlier snapshot")
	}
}
