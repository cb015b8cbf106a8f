package rawobj

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// readers wraps a stream in readers that split it differently.
var readers = []struct {
	name string
	wrap func(io.Reader) io.Reader
}{
	{"whole", func(r io.Reader) io.Reader { return r }},
	{"one byte", iotest.OneByteReader},
	{"half", iotest.HalfReader},
	{"data+err", iotest.DataErrReader},
}

// decodeAll returns the values of the stream (copied) and the final error.
func decodeAll(r io.Reader, maxSize int) ([]string, error) {
	d := NewDecoder(r)
	if maxSize > 0 {
		d.max = maxSize
	}
	var vals []string
	for {
		v, err := d.Next()
		if err != nil {
			// Errors are sticky.
			if _, err2 := d.Next(); err2 != err {
				return vals, errors.New("error not sticky: " + err2.Error())
			}
			return vals, err
		}
		vals = append(vals, string(v))
	}
}

func TestDecoder(t *testing.T) {
	added := `{"type":"ADDED","object":` + configMapJSON(1, true) + `}`
	tricky := `{"type":"MODIFIED","object":{"metadata":{"name":"a}b]c\"d\\"},"data":{"x":"{[\"}]\\\\","y":[1,{"z":"]"}]}}}`
	tests := []struct {
		name string
		in   string
		want []string
		err  error
	}{
		{"empty", ``, nil, io.EOF},
		{"only whitespace", " \n\t\r\n", nil, io.EOF},
		{"one", added, []string{added}, io.EOF},
		{"newline separated", added + "\n" + tricky + "\n", []string{added, tricky}, io.EOF},
		{"no separator", added + tricky + added, []string{added, tricky, added}, io.EOF},
		{"crlf and spaces", "\r\n  " + tricky + " \r\n\t " + added + "\r\n\r\n", []string{tricky, added}, io.EOF},
		{"scalars and arrays", `1 "a\"}" [1,[2]] true null -1.5e3{"a":1}`, []string{`1`, `"a\"}"`, `[1,[2]]`, `true`, `null`, `-1.5e3`, `{"a":1}`}, io.EOF},
		{"truncated object", added + "\n" + tricky[:len(tricky)-1], []string{added}, io.ErrUnexpectedEOF},
		{"truncated in string", `{"type":"ADD`, nil, io.ErrUnexpectedEOF},
		{"truncated after escape", `{"a":"\`, nil, io.ErrUnexpectedEOF},
		{"truncated string", `"abc`, nil, io.ErrUnexpectedEOF},
	}
	for _, tc := range tests {
		for _, rd := range readers {
			t.Run(tc.name+"/"+rd.name, func(t *testing.T) {
				got, err := decodeAll(rd.wrap(strings.NewReader(tc.in)), 0)
				if err != tc.err {
					t.Errorf("error %v, want %v", err, tc.err)
				}
				if strings.Join(got, "\x00") != strings.Join(tc.want, "\x00") {
					t.Errorf("got %q\nwant %q", got, tc.want)
				}
			})
		}
	}
}

func TestDecoderErrors(t *testing.T) {
	var se *SyntaxError
	_, err := decodeAll(strings.NewReader(`{"a":1} ]`), 0)
	if !errors.As(err, &se) || se.Offset != 8 || err.Error() != "invalid JSON at offset 8: unexpected ']'" {
		t.Errorf("stray bracket: %v", err)
	}
	readErr := errors.New("connection reset")
	r := io.MultiReader(strings.NewReader(`{"a":1}{"b":`), iotest.ErrReader(readErr))
	got, err := decodeAll(r, 0)
	if !errors.Is(err, readErr) || len(got) != 1 {
		t.Errorf("reader error: %q %v", got, err)
	}
}

func TestDecoderTooLarge(t *testing.T) {
	small := `{"a":"` + strings.Repeat("x", 90) + `"}` // 98 bytes
	big := `{"a":"` + strings.Repeat("x", 200) + `"}`
	for _, rd := range readers {
		t.Run(rd.name, func(t *testing.T) {
			got, err := decodeAll(rd.wrap(strings.NewReader(small+"\n"+small+big+small)), 100)
			if !errors.Is(err, ErrValueTooLarge) || len(got) != 2 {
				t.Errorf("got %d values, error %v", len(got), err)
			}
			if err != nil && !strings.Contains(err.Error(), "offset 197") {
				t.Errorf("error does not locate the value: %v", err)
			}
			// Exactly at the limit is fine.
			got, err = decodeAll(rd.wrap(strings.NewReader(small+small)), len(small))
			if err != io.EOF || len(got) != 2 {
				t.Errorf("at the limit: %d values, %v", len(got), err)
			}
		})
	}
	// A value larger than the initial buffer needs growing.
	huge := `{"a":"` + strings.Repeat("y", 3*initialBufferSize) + `"}`
	got, err := decodeAll(iotest.HalfReader(strings.NewReader(huge+huge)), 0)
	if err != io.EOF || len(got) != 2 || got[1] != huge {
		t.Errorf("huge values: %d, %v", len(got), err)
	}
}

// TestDecoderValueValidUntilNext documents the aliasing rule: a value may be
// overwritten by the next call.
func TestDecoderValueValidUntilNext(t *testing.T) {
	var stream bytes.Buffer
	for i := 0; i < 1000; i++ {
		stream.WriteString(`{"type":"ADDED","object":` + configMapJSON(i, true) + "}\n")
	}
	d := NewDecoder(iotest.HalfReader(&stream))
	for i := 0; ; i++ {
		frame, err := d.Next()
		if err == io.EOF {
			if i != 1000 {
				t.Fatalf("%d frames", i)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		typ, obj, err := ParseEvent(frame, ParseOptions{})
		if err != nil {
			t.Fatal(err)
		}
		o, err := Parse(obj, ParseOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if typ != "ADDED" || o.Name != fmt.Sprintf("app-config-%05d", i) || o.ResourceVersion != fmt.Sprint(100000+i) {
			t.Fatalf("frame %d: %s %s %s", i, typ, o.Name, o.ResourceVersion)
		}
	}
}

func TestParseEvent(t *testing.T) {
	status := `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 1 (2)","reason":"Expired","code":410}`
	tests := []struct {
		name, in, typ, obj string
	}{
		{"added", `{"type":"ADDED","object":` + secretJSON + `}`, "ADDED", secretJSON},
		{"object first", `{"object":` + secretJSON + `,"type":"DELETED"}`, "DELETED", secretJSON},
		{"bookmark", `{"type":"BOOKMARK","object":` + bookmarkJSON + "}\n", "BOOKMARK", bookmarkJSON},
		{"error", `{"type":"ERROR","object":` + status + `}`, "ERROR", status},
		{"whitespace", " { \"type\" : \"MODIFIED\" ,\n \"object\" : {\"a\":1} } ", "MODIFIED", `{"a":1}`},
		{"escaped type", `{"type":"ADD\u0045D","object":{}}`, "ADDED", `{}`},
		{"unknown type and member", `{"type":"NEW","x":[1],"object":null}`, "NEW", `null`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			frame := []byte(tc.in)
			typ, obj, err := ParseEvent(frame, ParseOptions{})
			if err != nil {
				t.Fatalf("ParseEvent: %v", err)
			}
			if typ != tc.typ || string(obj) != tc.obj {
				t.Errorf("got %q %s", typ, obj)
			}
			if cap(obj) != len(obj) {
				t.Error("object slice can be appended into the frame")
			}
			switch typ {
			case "ERROR":
				var st metav1.Status
				if err := json.Unmarshal(obj, &st); err != nil || st.Code != 410 || st.Reason != metav1.StatusReasonExpired {
					t.Errorf("status: %+v %v", st, err)
				}
			case "BOOKMARK":
				o, err := Parse(obj, ParseOptions{AllowMissingName: true})
				if err != nil || !o.InitialEventsEnd || o.ResourceVersion != "12345" {
					t.Errorf("bookmark: %+v %v", o, err)
				}
			}
			// The type does not alias the frame.
			want := strings.Clone(typ)
			for i := range frame {
				frame[i] = 'Z'
			}
			if typ != want {
				t.Error("type aliases the frame")
			}
		})
	}
}

func TestParseEventErrors(t *testing.T) {
	// The object is only delimited; Parse reports what is wrong inside.
	_, obj, err := ParseEvent([]byte(`{"type":"ADDED","object":{"a":}}`), ParseOptions{})
	if err != nil || string(obj) != `{"a":}` {
		t.Fatalf("ParseEvent: %q %v", obj, err)
	}
	if _, err := Parse(obj, ParseOptions{}); err == nil || err.Error() != "invalid JSON at offset 5: unexpected '}'" {
		t.Errorf("Parse: %v", err)
	}

	tests := []struct{ name, in, want string }{
		{"empty", ``, "invalid JSON at offset 0: unexpected end of input"},
		{"array", `[]`, "expected a JSON object at offset 0, found '['"},
		{"no type", `{"object":{}}`, "watch event has no type"},
		{"no object", `{"type":"ADDED"}`, "watch event has no object"},
		{"type not string", `{"type":1,"object":{}}`, "watch event type at offset 8 is not a string"},
		{"invalid object value", `{"type":"ADDED","object":nul}`, "invalid JSON at offset 28: unexpected '}'"},
		{"unterminated object", `{"type":"ADDED","object":{"a":"}"}`, "invalid JSON at offset 34: unexpected end of input"},
		{"invalid other member", `{"type":"ADDED","x":[1,],"object":{}}`, "invalid JSON at offset 23: unexpected ']'"},
		{"trailing", `{"type":"ADDED","object":{}}}`, "invalid JSON at offset 28: unexpected '}' after the event"},
		{"truncated", `{"type":"ADDED","object":{}`, "invalid JSON at offset 27: unexpected end of input"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := ParseEvent([]byte(tc.in), ParseOptions{})
			if err == nil || err.Error() != tc.want {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}
