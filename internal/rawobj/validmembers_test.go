package rawobj

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// membersBy lists the members a walker finds, as key=value lines.
func membersBy(walk func([]byte, func(k, v []byte)) error, data []byte) (string, error) {
	var b bytes.Buffer
	err := walk(data, func(k, v []byte) { fmt.Fprintf(&b, "%s=%s\n", k, v) })
	return b.String(), err
}

var validMemberCases = []string{
	`{}`, ` { } `, `{"a":1}`, `{"a":-1.5e3,"b":true,"c":false,"d":null}`,
	`{"a":"x","b":"say \"hi\" \\","c":"\\\\"}`,
	`{"metadata":{"name":"a","labels":{"x":"1"}},"status":{"phase":"A"},"spec":{"replicas":1,"l":[1,[2,{"x":"]}"}],3]}}`,
	"{\n \"a\" : [ ] ,\n \"b\" : { } \n}\n",
	`{"k\u00e9y":1,"a\"b":2,"x\\":"y"}`,
	`{"a":1,"a":2}`,
}

func TestEachValidMemberAgreesWithEachMember(t *testing.T) {
	for _, c := range validMemberCases {
		want, err := membersBy(EachMember, []byte(c))
		if err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		got, err := membersBy(EachValidMember, []byte(c))
		if err != nil || got != want {
			t.Errorf("%s: EachValidMember gave %q, %v; EachMember %q", c, got, err, want)
		}
	}
}

func TestEachValidMemberRefusesWhatItCannotWalk(t *testing.T) {
	for _, c := range []string{``, `[]`, `{`, `{"a"}`, `{"a":1`, `{"a":"x}`, `{"a":{"b":1}`, `{"a":1}x`, `{"a":1 "b":2}`, `{1:2}`} {
		if _, err := membersBy(EachValidMember, []byte(c)); err == nil {
			t.Errorf("%q: no error", c)
		}
	}
}

// FuzzEachValidMember: on valid JSON objects it finds what EachMember
// finds; on anything else it returns, without a panic.
func FuzzEachValidMember(f *testing.F) {
	for _, c := range validMemberCases {
		f.Add([]byte(c))
	}
	f.Add([]byte(`{"a":"\u12"}`))
	f.Add([]byte(`{"a\`))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, gotErr := membersBy(EachValidMember, data)
		want, err := membersBy(EachMember, data)
		if err == nil && (gotErr != nil || got != want) {
			t.Fatalf("%q: EachValidMember gave %q, %v; EachMember %q", data, got, gotErr, want)
		}
	})
}

// TestDiffMembers: what DiffMembers finds of two versions of an object,
// and where it says the keys part ways.
func TestDiffMembers(t *testing.T) {
	for _, c := range []struct {
		a, b    string
		aligned bool
		want    string // the findings: ~key(A|B), >key, <, !key(A|B)
	}{
		{`{"a":1,"b":"x"}`, `{"a":1,"b":"y"}`, true, `~b("x"|"y")`},
		{`{"a":12,"b":1}`, `{"a":123,"b":1}`, true, `~a(12|123)`},
		{`{"m":{"r":"1","n":"x"},"d":{"k":"v"}}`, `{"m":{"r":"2","n":"x"},"d":{"k":"v"}}`, true, `>m ~r("1"|"2") <`},
		{`{"m":{"r":1},"d":{}}`, `{"m":{"r":1},"d":{"k":1}}`, true, `!d({}|{"k":1})`},
		{`{"m":{"x":1,"y":2}}`, `{"m":{"y":2,"x":1}}`, true, `!m({"x":1,"y":2}|{"y":2,"x":1})`},
		{`{ "a" : {"b" : [1]} , "c":true}`, `{"a":{"b":[2]},"c":true }`, true, `>a ~b([1]|[2]) <`},
		{`{"k\u0061":1}`, `{"k\u0061":2}`, true, `~k\u0061(1|2)`},
		{`{"a":{"b":1}}`, `{"a":{"b":1}}`, true, ``},
		{`{"a":{"b":1}}`, `{"a":{ "b":1}}`, true, ``},
		{`{"a":1}`, `{"a":1,"b":2}`, false, ``},
		{`{"a":1,"b":2}`, `{"b":2,"a":1}`, false, ``},
		{`{"ka":1}`, `{"k\u0061":1}`, false, ``},
		{`{}`, `{}`, true, ``},
		{`{}`, `{"a":1}`, false, ``},
	} {
		got, aligned, err := DiffMembers(nil, []byte(c.a), []byte(c.b))
		if err != nil {
			t.Fatalf("%s %s: %v", c.a, c.b, err)
		}
		var parts []string
		for _, d := range got {
			switch d.Kind {
			case DiffValues:
				parts = append(parts, fmt.Sprintf("~%s(%s|%s)", d.Key, d.A, d.B))
			case DiffEnter:
				parts = append(parts, ">"+string(d.Key))
			case DiffLeave:
				parts = append(parts, "<")
			case DiffObjects:
				parts = append(parts, fmt.Sprintf("!%s(%s|%s)", d.Key, d.A, d.B))
			}
		}
		if s := strings.Join(parts, " "); aligned != c.aligned || s != c.want {
			t.Errorf("%s → %s: aligned %v %q, want %v %q", c.a, c.b, aligned, s, c.aligned, c.want)
		}
	}
	if _, _, err := DiffMembers(nil, []byte(`{"a":`), []byte(`{"a":1}`)); err == nil {
		t.Error("an object cut short must be an error")
	}
}

// TestValidStringEnd holds the word loop to a byte loop: every byte value
// at every offset of a 19-byte string, so that each lands in the words
// read 8 bytes at a time and in the tail; followed by a quote, by an
// escape, or by nothing (no end).
func TestValidStringEnd(t *testing.T) {
	byteLoop := func(data []byte, i int) (int, bool) {
		escaped := false
		for j := i + 1; j < len(data); j++ {
			switch data[j] {
			case '"':
				return j + 1, escaped
			case '\\':
				escaped = true
				j++
			}
		}
		return 0, false
	}
	for c := 0; c < 256; c++ {
		for at := 1; at < 20; at++ {
			for _, tail := range []string{`"`, `\""x"`, `\\"`, ``, `\`} {
				data := append(bytes.Repeat([]byte("a"), 20), tail...)
				data[0] = '"'
				data[at] = byte(c)
				end, escaped := validStringEnd(data, 0)
				wantEnd, wantEscaped := byteLoop(data, 0)
				if end != wantEnd || escaped != wantEscaped {
					t.Fatalf("validStringEnd(%q) = %d, %v; want %d, %v", data, end, escaped, wantEnd, wantEscaped)
				}
				if e, err := endOfValidString(data, 0); e != wantEnd || (err != nil) != (wantEnd == 0) {
					t.Fatalf("endOfValidString(%q) = %d, %v; want %d", data, e, err, wantEnd)
				}
			}
		}
	}
}
