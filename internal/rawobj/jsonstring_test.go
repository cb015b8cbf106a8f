package rawobj

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// encodingJSON encodes v as encoding/json does with HTML escaping off.
func encodingJSON(t testing.TB, v any) string {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

func stringSeeds() []string {
	return []string{
		"", "demo", `quote " backslash \ slash /`, "<b> & </b>", "\x00\x01\b\f\n\r\t\x1b\x7f",
		"tab\there", "ünïcödé ✓ 日本", "\u2028\u2029", "bad \xff utf8 \xc3", "emoji 😀", "\u0080\u009f",
	}
}

func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	cases := stringSeeds()
	// Each byte to escape or not ASCII at every offset of words read 8
	// bytes at a time, with plain bytes on both sides.
	for _, special := range []string{`"`, "<", `\`, "\n", "\x1f", "\x7f", "\x00", "é", "\xff", "\u2028", "\xe2\x80"} {
		for at := 0; at <= 17; at++ {
			cases = append(cases, strings.Repeat("a", at)+special+strings.Repeat("z", 17-at))
		}
	}
	for _, s := range cases {
		if got, want := string(AppendString(nil, s)), encodingJSON(t, s); got != want {
			t.Errorf("AppendString(%q) = %s, want %s", s, got, want)
		}
		checkScriptString(t, s)
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range stringSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := string(AppendString(nil, s)), encodingJSON(t, s); got != want {
			t.Errorf("AppendString(%q) = %s, want %s", s, got, want)
		}
		checkScriptString(t, s)
	})
}

// checkScriptString: AppendScriptString (and its Bytes twin) writes what
// AppendString does, < written \u003c.
func checkScriptString(t *testing.T, s string) {
	t.Helper()
	want := strings.ReplaceAll(string(AppendString(nil, s)), "<", `\u003c`)
	if got := string(AppendScriptString([]byte("x"), s)); got != "x"+want {
		t.Errorf("AppendScriptString(%q) = %s, want %s", s, got[1:], want)
	}
	if got := string(AppendScriptStringBytes(nil, []byte(s))); got != want {
		t.Errorf("AppendScriptStringBytes(%q) = %s, want %s", s, got, want)
	}
}

// TestPlainASCIIRun holds the word loop to a byte loop: every byte value
// at every offset of a 19-byte run, so that each lands in the words read
// 8 bytes at a time and in the tail, after plain bytes and before others.
func TestPlainASCIIRun(t *testing.T) {
	byteLoop := func(raw []byte, i int) int {
		for i < len(raw) && raw[i] < 0x80 && raw[i] != '\\' {
			i++
		}
		return i
	}
	for c := 0; c < 256; c++ {
		for at := 0; at < 19; at++ {
			raw := bytes.Repeat([]byte("a"), 19)
			raw[at] = byte(c)
			if at+1 < len(raw) {
				raw[at+1] = '\\' // a second stop right after: no borrow may hide the first
			}
			for from := 0; from <= at; from++ {
				if got, want := plainASCIIRun(raw, from), byteLoop(raw, from); got != want {
					t.Fatalf("plainASCIIRun(%q, %d) = %d, want %d", raw, from, got, want)
				}
			}
		}
	}
}
