package rawobj

import (
	"bytes"
	"encoding/json"
	"io"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Run with:
//
//	go test -run '^$' -bench . -benchmem ./internal/rawobj/
//
// BenchmarkParse* and BenchmarkUnstructuredDecode* decode the same bytes.

func BenchmarkParseConfigMap(b *testing.B) {
	data := []byte(configMapJSON(1, true))
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(data, ParseOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseConfigMapKeepManagedFields(b *testing.B) {
	data := []byte(configMapJSON(1, true))
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(data, ParseOptions{KeepManagedFields: true}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseList10k(b *testing.B) {
	data := []byte(listJSON(10000, ""))
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		l, err := ParseList(data, ParseOptions{})
		if err != nil || len(l.Items) != 10000 {
			b.Fatal(err)
		}
	}
}

func BenchmarkUnstructuredDecode(b *testing.B) {
	data := []byte(configMapJSON(1, true))
	b.Run("UnstructuredJSONScheme", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			if _, _, err := unstructured.UnstructuredJSONScheme.Decode(data, nil, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("json.Unmarshal", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			var m map[string]any
			if err := json.Unmarshal(data, &m); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkUnstructuredDecodeList10k(b *testing.B) {
	data := []byte(listJSON(10000, ""))
	b.Run("UnstructuredJSONScheme", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			if _, _, err := unstructured.UnstructuredJSONScheme.Decode(data, nil, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("json.Unmarshal", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			var m map[string]any
			if err := json.Unmarshal(data, &m); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkWatchStream10k frames, validates and parses 10,000 watch events.
func BenchmarkWatchStream10k(b *testing.B) {
	var stream bytes.Buffer
	for i := 0; i < 10000; i++ {
		stream.WriteString(`{"type":"ADDED","object":` + configMapJSON(i, true) + "}\n")
	}
	data := stream.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		d := NewDecoder(bytes.NewReader(data))
		for {
			frame, err := d.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			_, obj, err := ParseEvent(frame, ParseOptions{})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := Parse(obj, ParseOptions{}); err != nil {
				b.Fatal(err)
			}
		}
	}
}
