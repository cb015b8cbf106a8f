package rawobj

import (
	"bytes"
	"fmt"
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
