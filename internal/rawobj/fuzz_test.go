package rawobj

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"testing"
	"testing/iotest"
)

func parseSeeds() []string {
	seeds := []string{
		configMapJSON(1, true), configMapJSON(2, false), secretJSON, podJSON, namespaceJSON, escapedJSON,
		nestedMetadataJSON, prettyJSON, bookmarkJSON,
		`{"metadata":{"managedFields":[],"name":"a"}}`,
		`{"metadata":{"name":"a","managedFields":[{"manager":"m"}],"managedFields":null}}`,
		`{"metadata":{"managedFields":[],"managedFields":[],"name":"a","managedFields":[]},"metadata":{"managedFields":[],"name":"b"}}`,
		`{"meta\u0064ata":{"n\u0061me":"\ud83d\ude00","managed\u0046ields":[{"time":"\u0030"}]}}`,
		"{\"metadata\":{\"name\":\"a\xffb\"}}",
		`{"metadata":{"name":"a","generation":-9223372036854775808,"annotations":{"k8s.io/initial-events-end":"true"}}}`,
		`{"metadata":{"name":"a"},"x":[1,-0.5e+3,true,false,null,{"y":"\u00e9\n"}]}`,
		`{"kind":"K","apiVersion":"v","metadata":{"name":"a","uid":"u"}}`,
		`{]`, `{"metadata":{"name":"a"}`, `[]`, ``,
	}
	return seeds
}

// FuzzParse checks that Parse never panics, and that whenever it succeeds,
// its output is valid JSON equal (decoded) to the input minus
// metadata.managedFields, and its metadata equals what encoding/json
// decodes.
func FuzzParse(f *testing.F) {
	for _, s := range parseSeeds() {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, data []byte, keep bool) {
		opts := ParseOptions{KeepManagedFields: keep, AllowMissingName: true}
		in := bytes.Clone(data)
		o, err := Parse(data, opts)
		if !bytes.Equal(in, data) {
			t.Fatal("Parse modified its input")
		}
		if err != nil {
			var se *SyntaxError
			if errors.As(err, &se) && json.Valid(data) {
				t.Fatalf("syntax error %v for valid JSON %q", err, data)
			}
			return
		}
		checkAgainstOracle(t, data, opts, o)
		var top map[string]json.RawMessage
		if err := json.Unmarshal(data, &top); err == nil {
			if _, has := top["status"]; has == o.WithoutStatus() {
				t.Fatalf("WithoutStatus() = %v, but encoding/json finds a status: %v", o.WithoutStatus(), has)
			}
			got, err := o.Members("status")
			want, werr := Members(o.JSON, "status")
			if err != nil || werr != nil || !bytes.Equal(got[0], want[0]) {
				t.Fatalf("status %s (%v), a scan of the JSON finds %s (%v)", got[0], err, want[0], werr)
			}
		}
		if _, err := Parse(data, ParseOptions{KeepManagedFields: keep}); (err == nil) != (o.Name != "") {
			t.Fatalf("name %q but Parse without AllowMissingName: %v", o.Name, err)
		}
		want, wantJSON := cloneMeta(metaOf(o)), string(o.JSON)
		c := o.DeepCopy()
		for i := range data {
			data[i] = '!'
		}
		if string(o.JSON) != wantJSON || !reflect.DeepEqual(metaOf(o), want) {
			t.Fatal("object changed with its input")
		}
		if string(c.JSON) != wantJSON || !reflect.DeepEqual(metaOf(c), want) {
			t.Fatal("DeepCopy differs")
		}
	})
}

// FuzzParseList checks ParseList against Parse on each item.
func FuzzParseList(f *testing.F) {
	f.Add([]byte(listJSON(2, "c")))
	f.Add([]byte(`{"items":[{"metadata":{"name":"a"}}],"kind":"XList","apiVersion":"v"}`))
	f.Add([]byte(`{"kind":"XList","items":[{"kind":"Y","metadata":{"name":"a","managedFields":[]}}],"metadata":{"remainingItemCount":3}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := ParseList(data, ParseOptions{AllowMissingName: true})
		if err != nil {
			var se *SyntaxError
			if errors.As(err, &se) && json.Valid(data) {
				t.Fatalf("syntax error %v for valid JSON %q", err, data)
			}
			return
		}
		if !json.Valid(data) {
			t.Fatalf("ParseList accepted invalid JSON %q", data)
		}
		for i, o := range l.Items {
			p, err := Parse(o.JSON, ParseOptions{KeepManagedFields: true, AllowMissingName: true})
			if err != nil {
				t.Fatalf("item %d: output does not parse: %v\n%s", i, err, o.JSON)
			}
			got, want := metaOf(o), metaOf(p)
			got.Managers, want.Managers = nil, nil
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("item %d: %+v, reparsed %+v", i, got, want)
			}
		}
	})
}

// FuzzDecoder checks that the Decoder splits a stream the same way however
// the reads are split, and like encoding/json for objects, arrays and
// strings.
func FuzzDecoder(f *testing.F) {
	f.Add([]byte(`{"type":"ADDED","object":{"a":"}\"{"}}` + "\n" + `{"b":[1,{"c":"]"}]} "x" [1]`))
	f.Add([]byte(`1 2 true{}`))
	f.Add([]byte(`{"a":1}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		whole, wholeErr := decodeAll(bytes.NewReader(data), 0)
		bytewise, byteErr := decodeAll(iotest.OneByteReader(bytes.NewReader(data)), 0)
		if !reflect.DeepEqual(whole, bytewise) || !sameError(wholeErr, byteErr) {
			t.Fatalf("whole: %q %v\nbyte by byte: %q %v", whole, wholeErr, bytewise, byteErr)
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		for i := 0; ; i++ {
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				if err == io.EOF && (i != len(whole) || wholeErr != io.EOF) {
					t.Fatalf("encoding/json found %d values, Decoder %q %v", i, whole, wholeErr)
				}
				return
			}
			if c := v[0]; c != '{' && c != '[' && c != '"' {
				return // scalars run into what follows differently
			}
			if i >= len(whole) || whole[i] != string(v) {
				t.Fatalf("value %d: encoding/json %q, Decoder %q %v", i, v, whole, wholeErr)
			}
		}
	})
}

func sameError(a, b error) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Error() == b.Error()
}

// FuzzParseEvent checks ParseEvent against encoding/json on valid frames.
func FuzzParseEvent(f *testing.F) {
	f.Add([]byte(`{"type":"ADDED","object":` + secretJSON + `}`))
	f.Add([]byte(`{"object":{"a":["}",{"b":"\"]"}]},"type":"B\u004fOKMARK","x":null}`))
	f.Add([]byte(`{"type":"ERROR","object":{"kind":"Status","code":410},"object":[1]}`))
	f.Fuzz(func(t *testing.T, frame []byte) {
		typ, obj, err := ParseEvent(frame, ParseOptions{})
		if !json.Valid(frame) {
			return
		}
		var m map[string]json.RawMessage
		if json.Unmarshal(frame, &m) != nil {
			if err == nil {
				t.Fatalf("ParseEvent accepted a frame that is not an object: %q", frame)
			}
			return
		}
		var wantType string
		typeErr := json.Unmarshal(m["type"], &wantType)
		if _, ok := m["type"]; !ok || typeErr != nil || string(m["type"]) == "null" || m["object"] == nil {
			if err == nil {
				t.Fatalf("ParseEvent accepted %q: %q %q", frame, typ, obj)
			}
			return
		}
		if err != nil {
			t.Fatalf("ParseEvent(%q): %v", frame, err)
		}
		if typ != wantType || !bytes.Equal(obj, m["object"]) {
			t.Fatalf("ParseEvent(%q) = %q %q, encoding/json: %q %q", frame, typ, obj, wantType, m["object"])
		}
	})
}
