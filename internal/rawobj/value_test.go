package rawobj

import (
	"bytes"
	"encoding/json"
	"hash/maphash"
	"reflect"
	"strings"
	"testing"

	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// DecodeValue is DecodeFields of everything, as the tests hold it to
// apimachinery's util/json.
func DecodeValue(data []byte) (any, error) { return DecodeFields(data, nil) }

// valueSeeds are JSON values and near misses for DecodeValue.
func valueSeeds() []string {
	return append(parseSeeds(),
		`1`, `-0`, `1.5`, `1e2`, `9223372036854775807`, `9223372036854775808`, `-9223372036854775809`, `1e400`,
		`"a\u00e9\ud83d\ude00\n"`, "\"\xff\"", `{"\u0061":1,"a":2}`, "{\"\xfe\":1}", `[[],{},[{}]]`, `  true `, `null`,
		`[1,]`, `{"a":}`, `"x`, `01`, `[1 2]`, `{"a":1}x`)
}

// checkDecodeValue holds DecodeValue to the oracle, apimachinery's
// util/json.Unmarshal into an any: the same value, or both failing.
func checkDecodeValue(t *testing.T, data []byte) {
	t.Helper()
	in := bytes.Clone(data)
	got, err := DecodeValue(data)
	var want any
	wantErr := utiljson.Unmarshal(data, &want)
	if !bytes.Equal(in, data) {
		t.Fatal("DecodeValue modified its input")
	}
	if (err != nil) != (wantErr != nil) {
		if err != nil && json.Valid(data) && bytes.Contains([]byte(err.Error()), []byte("max depth")) {
			return // deeper than the scanner allows
		}
		t.Fatalf("DecodeValue(%q): %v; util/json: %v", data, err, wantErr)
	}
	if err == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("DecodeValue(%q) = %#v, util/json = %#v", data, got, want)
	}
	// DecodeFields keeps what pruning the whole value keeps.
	keep := Fields{"metadata": {"name": nil, "labels": nil}, "x": {"y": nil}, "status": nil}
	pruned, perr := DecodeFields(data, keep)
	if (perr != nil) != (err != nil) {
		if perr != nil && json.Valid(data) && bytes.Contains([]byte(perr.Error()), []byte("max depth")) {
			return
		}
		if perr == nil && json.Valid(data) && bytes.Contains([]byte(err.Error()), []byte("number out of range")) {
			return // a number float64 cannot hold, in what DecodeFields skips: valid JSON, never decoded
		}
		t.Fatalf("DecodeFields(%q): %v; DecodeValue: %v", data, perr, err)
	}
	if err == nil && !reflect.DeepEqual(pruned, prune(want, keep)) {
		t.Fatalf("DecodeFields(%q) = %#v, want %#v", data, pruned, prune(want, keep))
	}
	// On valid JSON DecodeValidFields, which skips without validating,
	// decodes what DecodeFields does; as DecodeExact, its numbers are
	// json.Numbers.
	if json.Valid(data) && perr == nil {
		if valid, err := DecodeValidFields(data, keep, false); err != nil || !reflect.DeepEqual(valid, pruned) {
			t.Fatalf("DecodeValidFields(%q) = %#v, %v; DecodeFields: %#v", data, valid, err, pruned)
		}
		exact, eerr := DecodeExact(data)
		valid, verr := DecodeValidFields(data, keep, true)
		if eerr == nil && (verr != nil || !reflect.DeepEqual(valid, prune(exact, keep))) {
			t.Fatalf("DecodeValidFields(%q, exact) = %#v, %v; DecodeExact pruned: %#v", data, valid, verr, prune(exact, keep))
		}
	} else {
		_, _ = DecodeValidFields(data, keep, false) // an error or a wrong value, never a panic
	}
	checkHashMember(t, data, keep)
}

// checkHashMember: the value as an object's status, HashMember of the
// parsed object writes what HashFields writes, and fails where it does.
func checkHashMember(t *testing.T, data []byte, keep Fields) {
	t.Helper()
	o, err := Parse(append([]byte(`{"metadata":{"name":"a"},"status":`), append(bytes.Clone(data), '}')...), ParseOptions{})
	if err != nil {
		return
	}
	status, err := o.Member("status")
	if err != nil || status == nil {
		return
	}
	seed := maphash.MakeSeed()
	for _, keep := range []Fields{keep, nil, {"a": nil, "x": {"y": nil}}} {
		var valid, checked maphash.Hash
		valid.SetSeed(seed)
		checked.SetSeed(seed)
		verr, cerr := o.HashMember(&valid, status, Select(keep)), HashFields(&checked, status, keep)
		if (verr != nil) != (cerr != nil) || valid.Sum64() != checked.Sum64() {
			t.Fatalf("status %s, keeping %v: HashMember %x (%v), HashFields %x (%v)", status, keep, valid.Sum64(), verr, checked.Sum64(), cerr)
		}
	}
}

// prune is what keep selects of v (see Fields).
func prune(v any, keep Fields) any {
	if keep == nil {
		return v
	}
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, sub := range keep {
			if e, ok := x[k]; ok {
				out[k] = prune(e, sub)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = prune(e, keep)
		}
		return out
	}
	return v
}

func TestDecodeValue(t *testing.T) {
	for _, s := range valueSeeds() {
		checkDecodeValue(t, []byte(s))
	}
	v, err := DecodeValue([]byte(`{"status":{"phase":"Running","restartCount":3,"ratio":0.5,"ok":true,"x":null,"l":[]}}`))
	want := map[string]any{"status": map[string]any{"phase": "Running", "restartCount": int64(3), "ratio": 0.5, "ok": true, "x": nil, "l": []any{}}}
	if err != nil || !reflect.DeepEqual(v, want) {
		t.Errorf("DecodeValue = %#v, %v", v, err)
	}
}

// FuzzDecodeValue holds DecodeValue to util/json on any input.
func FuzzDecodeValue(f *testing.F) {
	for _, s := range valueSeeds() {
		f.Add([]byte(s))
	}
	f.Fuzz(checkDecodeValue)
}

func TestHashFields(t *testing.T) {
	seed := maphash.MakeSeed()
	sum := func(data string, keep Fields) uint64 {
		t.Helper()
		var h maphash.Hash
		h.SetSeed(seed)
		if err := HashFields(&h, []byte(data), keep); err != nil {
			t.Fatalf("HashFields(%s): %v", data, err)
		}
		return h.Sum64()
	}
	a := `{"a":1,"b":{"c":[{"x":1,"y":2}],"d":3}}`
	b := `{"a":1,"b":{"c":[{"x":1,"y":9}],"d":4}}`
	narrow := Fields{"b": {"c": {"x": nil}}}
	if sum(a, narrow) != sum(b, narrow) {
		t.Error("values equal in what is selected hash differently")
	}
	for _, keep := range []Fields{nil, {"b": nil}, {"b": {"d": nil}}, {"b": {"c": {"y": nil}}}} {
		if sum(a, keep) == sum(b, keep) {
			t.Errorf("values that differ in what %v selects hash equally", keep)
		}
	}
	if sum(`{"a":[1,2]}`, Fields{"a": nil}) == sum(`{"a":[12]}`, Fields{"a": nil}) {
		t.Error("[1,2] and [12] hash equally")
	}
	var h maphash.Hash
	if err := HashFields(&h, []byte(`{"a":`), narrow); err == nil {
		t.Error("broken JSON hashed")
	}
	// Of a parsed object's member, without a second validation: the same.
	long := strings.Repeat("x", 300)
	for _, status := range []string{a, b, `{"b":{"c":[]}}`, `{"b":[{"c":1}],"\u0062":{"c":[{"x":"\u00e9"}]}}`, `[1,{"b":2}]`, `"s"`, `null`,
		// White space between every token, and a key escaped as a whole.
		"{ \"b\" :\n\t{ \"c\" : [ { \"y\" : 1 } , { \"y\" : \"z\" } ] , \"d\" : true } ,\r\n \"\\u0061\" : [ ] }",
		// Selected values longer than the hash's buffer, and many short ones
		// that fill it.
		`{"b":{"c":"` + long + `","d":["` + long + `","` + long + `"]},"a":"` + long + `"}`,
		`{"b":{"c":[` + strings.Repeat(`{"y":"abcdefgh","z":1},`, 40) + `{"y":0}]}}`,
	} {
		for _, keep := range []Fields{nil, narrow, {"b": nil}, {"a": nil, "b": {"c": {"y": nil}, "d": nil}}} {
			checkHashMember(t, []byte(status), keep)
		}
	}
	o, err := Parse([]byte(`{"metadata":{"name":"a"},"status":{"a":1}}`), ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := o.HashMember(&h, []byte(`{"a":`), Select(narrow)); err == nil {
		t.Error("broken JSON that is not the object's hashed as if validated")
	}
}

func TestDecodeExactKeepsEveryDigit(t *testing.T) {
	v, err := DecodeExact([]byte(`{"a":1,"b":-0,"c":1.10,"d":12345678901234567890123,"e":1e400,"f":["x\u0041",true,null]}`))
	if err != nil {
		t.Fatal(err)
	}
	m := v.(map[string]any)
	for key, want := range map[string]json.Number{"a": "1", "b": "-0", "c": "1.10", "d": "12345678901234567890123", "e": "1e400"} {
		if got, ok := m[key].(json.Number); !ok || got != want {
			t.Errorf("%s: %#v, want json.Number(%q)", key, m[key], want)
		}
	}
	if f := m["f"].([]any); f[0] != "xA" || f[1] != true || f[2] != nil {
		t.Errorf("f: %#v", f)
	}
	if _, err := DecodeExact([]byte(`{"a":1} x`)); err == nil {
		t.Error("trailing data must be an error")
	}
}

// TestDecodeFieldsSkipsWhatItDoesNotKeep: a number float64 cannot hold is
// an error where DecodeFields decodes it, and none in what it skips.
func TestDecodeFieldsSkipsWhatItDoesNotKeep(t *testing.T) {
	keep := Fields{"status": nil}
	if _, err := DecodeFields([]byte(`{"status":{"n":1e700}}`), keep); err == nil {
		t.Error("1e700 in a kept field decoded without an error")
	}
	v, err := DecodeFields([]byte(`{"spec":{"n":1e700},"status":{"n":1}}`), keep)
	if err != nil || !reflect.DeepEqual(v, map[string]any{"status": map[string]any{"n": int64(1)}}) {
		t.Errorf("1e700 in a skipped field: %v, %v", v, err)
	}
}

// TestFieldsKeep: a path kept whole keeps each member on the way, a
// shorter path kept whole makes the longer ones moot, and a longer path
// under what is kept whole changes nothing.
func TestFieldsKeep(t *testing.T) {
	f := Fields{}
	f.Keep("metadata", "labels", "v")
	f.Keep("status", "phase")
	f.Keep("metadata", "name")
	want := Fields{"metadata": {"labels": {"v": nil}, "name": nil}, "status": {"phase": nil}}
	if !reflect.DeepEqual(f, want) {
		t.Fatalf("got %#v, want %#v", f, want)
	}
	f.Keep("metadata")
	f.Keep("metadata", "annotations")
	if want := (Fields{"metadata": nil, "status": {"phase": nil}}); !reflect.DeepEqual(f, want) {
		t.Fatalf("got %#v, want %#v", f, want)
	}
}
