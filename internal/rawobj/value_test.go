package rawobj

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	utiljson "k8s.io/apimachinery/pkg/util/json"
)

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
