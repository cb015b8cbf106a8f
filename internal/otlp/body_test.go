package otlp

import (
	"reflect"
	"testing"

	"go.opentelemetry.io/otel/attribute"
)

// valueToGo is v as encoding/json would decode its JSON, integers as
// int64.
func valueToGo(v attribute.Value) any {
	switch v.Type() {
	case attribute.MAP:
		m := map[string]any{}
		for _, kv := range v.AsMap() {
			m[string(kv.Key)] = valueToGo(kv.Value)
		}
		return m
	case attribute.SLICE:
		out := []any{}
		for _, e := range v.AsSlice() {
			out = append(out, valueToGo(e))
		}
		return out
	case attribute.STRING:
		return v.AsString()
	case attribute.INT64:
		return v.AsInt64()
	case attribute.FLOAT64:
		return v.AsFloat64()
	case attribute.BOOL:
		return v.AsBool()
	case attribute.EMPTY:
		return nil
	}
	return "unexpected " + v.Type().String()
}

// TestBodyOfDecodesAsEncodingJSON: every kind of JSON value, nested, with
// escapes, decodes as encoding/json decodes it (integers kept exact); one
// parser decodes many bodies, its scratch space reused.
func TestBodyOfDecodesAsEncodingJSON(t *testing.T) {
	var p jsonParser
	for _, js := range []string{
		`{"a":1,"b":-2,"c":1.5,"d":1e3,"e":9007199254740993,"f":18446744073709551616,"g":true,"h":false,"i":null}`,
		`{"s":"plain","esc":"q\"b\\s\/n\nt\tu\u00e9\ud83d\ude00","empty":"","utf8":"été"}`,
		`{"nested":{"x":{"y":{"z":[1,[2,[3,{}]],{"k":[]}]}}},"after":"still here"}`,
		`[1,"two",null,{"three":3},[]]`,
		`{}`, `[]`, `"alone"`, `42`, ` { "spaced" : [ 1 , 2 ] } `,
		`{"a":{"b":1,"c":2},"d":{"e":3},"f":[{"g":4},{"h":5}]}`,
	} {
		v, err := p.bodyOf([]byte(js))
		if err != nil {
			t.Errorf("%s: %v", js, err)
			continue
		}
		want := jsonToGo(t, []byte(js))
		if got := valueToGo(v); !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %#v\nwant %#v", js, got, want)
		}
	}
	for _, bad := range []string{``, `{`, `{"a"}`, `{"a":}`, `[1,]`, `"open`, `tru`, `{"a":1}x`, `01x`, `-`} {
		if _, err := p.bodyOf([]byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
