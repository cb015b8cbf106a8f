package rawobj

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// eventSummary is everything parseEventObject returns, for comparisons.
type eventSummary struct {
	Type   string
	HasObj bool
	Obj    itemSummary
	Status string
	OK     bool
}

func summarizeEvent(typ string, obj *Object, status []byte, err error) eventSummary {
	e := eventSummary{Type: typ, Status: string(status), OK: err == nil}
	if err != nil {
		e.Type = ""
	}
	if obj != nil {
		e.HasObj = true
		e.Obj = itemSummary{JSON: string(obj.JSON), Meta: metaOf(obj), Managers: obj.Managers()}
	}
	return e
}

// oracleEventObject is what parseEventObject stands for: ParseEvent, then
// Parse for the types with an object, a validity check for ERROR.
func oracleEventObject(frame []byte, opts ParseOptions) (string, *Object, []byte, error) {
	typ, raw, err := ParseEvent(frame, opts)
	if err != nil {
		return "", nil, nil, err
	}
	switch typ {
	case "ERROR":
		if !json.Valid(raw) {
			return "", nil, nil, errors.New("invalid status")
		}
		return typ, nil, raw, nil
	case "ADDED", "MODIFIED", "DELETED", "BOOKMARK":
		o := opts
		o.AllowMissingName = o.AllowMissingName || typ == "BOOKMARK"
		obj, err := Parse(raw, o)
		if err != nil {
			return "", nil, nil, err
		}
		return typ, obj, nil, nil
	}
	return "", nil, nil, errors.New("unknown type")
}

func eventFrames() []string {
	status := `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 1 (2)","reason":"Expired","code":410}`
	return []string{
		`{"type":"ADDED","object":` + secretJSON + `}`,
		`{"object":` + secretJSON + `,"type":"DELETED"}`,
		`{"type":"BOOKMARK","object":` + bookmarkJSON + "}\n",
		`{"type":"MODIFIED","object":` + bookmarkJSON + "}\n",
		`{"object":` + bookmarkJSON + `,"type":"BOOKMARK"}`,
		`{"type":"ERROR","object":` + status + `}`,
		`{"object":` + status + `,"type":"ERROR"}`,
		" { \"type\" : \"MODIFIED\" ,\n \"object\" : " + prettyJSON + " } ",
		`{"type":"ADD\u0045D","object":{"metadata":{"name":"a"}}}`,
		`{"type":"NEW","x":[1],"object":null}`,
		`{"type":"ADDED","object":{"metadata":{"name":"a"}},"type":"ERROR"}`,
		`{"type":"ADDED","object":{"a":1},"type":"ERROR"}`,
		`{"type":"ERROR","object":{"a":1},"type":"ADDED"}`,
		`{"type":"BOOKMARK","object":{"metadata":{}},"type":"ADDED"}`,
		`{"type":"ADDED","object":{"metadata":{"name":"a"}},"type":"BOOKMARK"}`,
		`{"type":"ADDED","object":{"metadata":{"name":"a"}},"object":{"metadata":{"name":"b"}}}`,
		`{"type":"ADDED","object":{"metadata":{"name":"a"}},"object":{"metadata":{}}}`,
		`{"type":"ADDED","object":{"metadata":{"name":1}},"x":[1,]}`,
		`{"type":"ADDED","object":{"metadata":{"name":1}},"type":"ERROR"}`,
		`{"type":"ADDED","object":{"metadata":{"name":"a","generation":"x"}}}`,
		`{"type":"ADDED","object":[]}`, `{"type":"ADDED","object":null}`, `{"type":"ERROR","object":null}`,
		`{"type":"ERROR","object":{"a":}}`, `{"type":"ADDED","object":{"a":}}`, `{"object":{"a":},"type":"ADDED"}`,
		`{"type":"ADDED","object":{"metadata":{"name":"a"}}`, `{"type":"ADDED","object":{"metadata":{"name":"a"}}}}`,
		`{"type":"ADDED","object":{"metadata":{"name":"a"}}} x`, `{"type":1,"object":{}}`, `{"object":{}}`,
		`{"type":"ADDED"}`, `[]`, ``, `{`, `{"type":null,"object":{}}`,
		`{"type":"ADDED","object":{"metadata":{"name":"a","managedFields":[{"manager":"m"}]}}}`,
		`{"type":"ADDED","object":{"metadata":{"name":"a"},"x":` + strings.Repeat("[", maxDepth-2) + strings.Repeat("]", maxDepth-2) + `}}`,
	}
}

func TestParseEventObject(t *testing.T) {
	for i, frame := range eventFrames() {
		for _, opts := range []ParseOptions{{}, {KeepManagedFields: true}, {AllowMissingName: true}} {
			t.Run(fmt.Sprintf("%d/%+v", i, opts), func(t *testing.T) {
				in := []byte(frame)
				want := summarizeEvent(oracleEventObject(in, opts))
				typ, obj, status, err := parseEventObject(in, 0, opts)
				if got := summarizeEvent(typ, obj, status, err); !reflect.DeepEqual(got, want) {
					t.Fatalf("parseEventObject(%.200q)\n got %+v %v\nwant %+v", in, got, err, want)
				}
				if status != nil && cap(status) != len(status) {
					t.Error("status can be appended into the frame")
				}
				if obj != nil {
					// Neither the object nor the type alias the frame.
					want := summarizeEvent(typ, obj, nil, nil)
					for i := range in {
						in[i] = 'Z'
					}
					if got := summarizeEvent(typ, obj, nil, nil); !reflect.DeepEqual(got, want) {
						t.Error("the event changed with the frame")
					}
				}
			})
		}
	}
}

func TestParseEventObjectErrors(t *testing.T) {
	tests := []struct{ name, in, typ, want string }{
		{"empty", ``, "", "invalid JSON at offset 0: unexpected end of input"},
		{"array", `[]`, "", "expected a JSON object at offset 0, found '['"},
		{"no type", `{"object":{}}`, "", "watch event has no type"},
		{"no object", `{"type":"ADDED"}`, "ADDED", "watch event has no object"},
		{"type not string", `{"type":1,"object":{}}`, "", "watch event type at offset 8 is not a string"},
		{"invalid object", `{"type":"ADDED","object":{"a":}}`, "ADDED", "invalid JSON at offset 30: unexpected '}'"},
		{"invalid object first", `{"object":{"a":},"type":"ADDED"}`, "", "invalid JSON at offset 15: unexpected '}'"},
		{"invalid status", `{"type":"ERROR","object":{"a":}}`, "ERROR", "invalid JSON at offset 30: unexpected '}'"},
		{"unterminated object", `{"type":"ADDED","object":{"a":"}"}`, "ADDED", "invalid JSON at offset 34: unexpected end of input"},
		{"invalid other member", `{"type":"ADDED","x":[1,],"object":{}}`, "ADDED", "invalid JSON at offset 23: unexpected ']'"},
		{"invalid after object", `{"type":"ADDED","object":{"metadata":{"name":1}},"x":[1,]}`, "ADDED", "invalid JSON at offset 56: unexpected ']'"},
		{"trailing", `{"type":"ADDED","object":{"metadata":{"name":"a"}}}}`, "ADDED", "invalid JSON at offset 51: unexpected '}' after the event"},
		{"no name", `{"type":"ADDED","object":{"metadata":{}}}`, "ADDED", "object has no metadata.name"},
		{"no metadata", `{"object":{},"type":"DELETED"}`, "DELETED", "object has no metadata"},
		{"name not string", `{"type":"ADDED","object":{"metadata":{"name":1}}}`, "ADDED", "metadata.name at offset 45 is not a string"},
		{"not an object", `{"type":"ADDED","object":[]}`, "ADDED", "expected a JSON object at offset 25, found '['"},
		{"unknown type", `{"type":"NEW","object":{}}`, "NEW", `unknown watch event type "NEW"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			typ, obj, status, err := parseEventObject([]byte(tc.in), 0, ParseOptions{})
			if err == nil || err.Error() != tc.want || typ != tc.typ || obj != nil || status != nil {
				t.Errorf("got %q %v %q, error %v; want %q, error %q", typ, obj, status, err, tc.typ, tc.want)
			}
		})
	}
	_, _, _, err := parseEventObject([]byte(`{"type":"ADDED","object":{"metadata":{}}}`), 0, ParseOptions{})
	if !errors.Is(err, ErrNoName) {
		t.Errorf("does not wrap ErrNoName: %v", err)
	}
	typ, obj, status, err := parseEventObject([]byte(`{"type":"ERROR","object":{"kind":"Status","code":410,"reason":"Expired"}}`), 0, ParseOptions{})
	var st metav1.Status
	if err != nil || typ != "ERROR" || obj != nil || json.Unmarshal(status, &st) != nil || st.Code != 410 {
		t.Errorf("status: %q %v %q %v", typ, obj, status, err)
	}
}

// FuzzParseEventObject checks parseEventObject against ParseEvent and Parse.
func FuzzParseEventObject(f *testing.F) {
	for _, frame := range eventFrames() {
		if len(frame) < 4096 {
			f.Add([]byte(frame), false)
		}
	}
	f.Fuzz(func(t *testing.T, frame []byte, keep bool) {
		opts := ParseOptions{KeepManagedFields: keep}
		in := bytes.Clone(frame)
		typ, obj, status, err := parseEventObject(frame, 0, opts)
		if !bytes.Equal(in, frame) {
			t.Fatal("parseEventObject modified its input")
		}
		if !json.Valid(frame) {
			// ParseEvent does not validate an object value that a later
			// "object" member replaces; parseEventObject rejects it.
			if err == nil {
				t.Fatalf("accepted invalid JSON %q", frame)
			}
			return
		}
		want := summarizeEvent(oracleEventObject(frame, opts))
		if got := summarizeEvent(typ, obj, status, err); !reflect.DeepEqual(got, want) {
			t.Fatalf("parseEventObject(%q)\n got %+v %v\nwant %+v", frame, got, err, want)
		}
	})
}

// decodeEvents decodes a stream with NextEvent, one line per event or
// error, and the final error.
func decodeEvents(r io.Reader, maxSize int, opts ParseOptions) ([]string, error) {
	d := NewDecoder(r)
	if maxSize > 0 {
		d.max = maxSize
	}
	var out []string
	for {
		typ, obj, status, err := d.NextEvent(opts)
		var ee *EventError
		switch {
		case errors.As(err, &ee):
			out = append(out, fmt.Sprintf("error %q: %v", ee.Type, err))
			continue
		case err != nil:
			if _, _, _, err2 := d.NextEvent(opts); err2 != err {
				return out, fmt.Errorf("error not sticky: %v then %v", err, err2)
			}
			return out, err
		}
		out = append(out, fmt.Sprintf("%+v", summarizeEvent(typ, obj, status, nil)))
	}
}

// oracleEvents decodes a stream with Next and parseEventObject.
func oracleEvents(r io.Reader, maxSize int, opts ParseOptions) ([]string, error) {
	d := NewDecoder(r)
	if maxSize > 0 {
		d.max = maxSize
	}
	var out []string
	for {
		frame, err := d.Next()
		if err != nil {
			return out, err
		}
		typ, obj, status, err := parseEventObject(frame, d.off+int64(d.start-len(frame)), opts)
		if err != nil {
			out = append(out, fmt.Sprintf("error %q: %v", typ, err))
			continue
		}
		out = append(out, fmt.Sprintf("%+v", summarizeEvent(typ, obj, status, nil)))
	}
}

func eventStreams() []string {
	var b strings.Builder
	for i := 0; i < 300; i++ {
		fmt.Fprintf(&b, "{\"type\":\"ADDED\",\"object\":%s}\n", configMapJSON(i, true))
	}
	many := b.String()
	added := `{"type":"ADDED","object":` + configMapJSON(1, true) + `}`
	return []string{
		many,
		strings.TrimSuffix(many, "\n"),
		strings.ReplaceAll(many, "\n", ""),
		strings.ReplaceAll(many, "\n", "\r\n"),
		strings.ReplaceAll(many, "\n", " \n\n  "),
		added + added + "\n" + added + " " + added + "\n",
		"{\"type\":\"MODIFIED\",\n\"object\":" + prettyJSON + "}\n" + added + "\n",
		added + "\n" + `{"type":"ADDED","object":{"metadata":{}}}` + "\n" + added + "\n",
		added + "\n" + `{"type":"ADDED","object":{"a":}}` + "\n" + added + "\n",
		added + "\n" + `{"type":"ADDED","object":{"a":1}` + "\n" + `}` + "\n" + added + "\n",
		added + "\n" + `{"type":"ADDED","object":{"a":1}}}` + "\n" + added + "\n",
		added + "\n" + `[1]` + "\n" + `"x"` + "\n" + `12 ` + added,
		added + "\n" + added[:100],
		added + "\n" + `{"type":"ERROR","object":{"kind":"Status","code":410}}` + "\n",
		"\n\n" + added + "\n\n",
		"",
		added + "\n" + `{"type":"ADDED","object":{"metadata":{"name":"` + strings.Repeat("n", 3*initialBufferSize) + `"}}}` + "\n" + added + "\n",
		added + "\n}\n" + added,
		added + "\n\x00\n",
	}
}

func TestNextEvent(t *testing.T) {
	for i, in := range eventStreams() {
		for _, rd := range readers {
			for _, maxSize := range []int{0, 1000} {
				t.Run(fmt.Sprintf("%d/%s/max%d", i, rd.name, maxSize), func(t *testing.T) {
					want, wantErr := oracleEvents(strings.NewReader(in), maxSize, ParseOptions{})
					got, err := decodeEvents(rd.wrap(strings.NewReader(in)), maxSize, ParseOptions{})
					if !reflect.DeepEqual(got, want) || !sameError(err, wantErr) {
						t.Fatalf("NextEvent:\n%s\n%v\nNext and parseEventObject:\n%s\n%v", strings.Join(got, "\n"), err, strings.Join(want, "\n"), wantErr)
					}
				})
			}
		}
	}
	// Errors count offsets from the start of the stream.
	in := `{"type":"ADDED","object":{"metadata":{"name":"a"}}}` + "\n" + `{"type":"ADDED","object":{"metadata":{"name":1}}}` + "\n"
	_, err := decodeEvents(strings.NewReader(in), 0, ParseOptions{})
	if err != io.EOF {
		t.Fatal(err)
	}
	d := NewDecoder(strings.NewReader(in))
	if _, _, _, err := d.NextEvent(ParseOptions{}); err != nil {
		t.Fatal(err)
	}
	var ee *EventError
	if _, _, _, err := d.NextEvent(ParseOptions{}); !errors.As(err, &ee) || ee.Type != "ADDED" || err.Error() != "metadata.name at offset 97 is not a string" {
		t.Errorf("event error %v", err)
	}
}

// FuzzNextEvent checks NextEvent against Next and parseEventObject, with
// the reads split in two ways.
func FuzzNextEvent(f *testing.F) {
	for _, in := range eventStreams() {
		if len(in) < 4096 {
			f.Add([]byte(in))
		}
	}
	f.Add([]byte("{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\"}}}\n{\"type\":\"DELETED\",\"object\":{\"metadata\":{\"name\":\"a\"}}}\n"))
	f.Add([]byte("{\"type\":\"ADDED\",\"object\":{{}},\"object\":{\"metadata\":{\"name\":\"0\"}}}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		want, wantErr := oracleEvents(bytes.NewReader(data), 0, ParseOptions{})
		for _, r := range []io.Reader{bytes.NewReader(data), iotest.OneByteReader(bytes.NewReader(data)), iotest.HalfReader(bytes.NewReader(data))} {
			got, err := decodeEvents(r, 0, ParseOptions{})
			if !reflect.DeepEqual(got, want) || !sameError(err, wantErr) {
				t.Fatalf("stream %q\nNextEvent:\n%s\n%v\nNext and parseEventObject:\n%s\n%v", data, strings.Join(got, "\n"), err, strings.Join(want, "\n"), wantErr)
			}
		}
	})
}
