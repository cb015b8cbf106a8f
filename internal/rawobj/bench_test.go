package rawobj

import (
	"bytes"
	"encoding/json"
	"io"
	"runtime"
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

// BenchmarkParseListFrom10k parses the list of BenchmarkParseList10k from a
// reader, in reads of 16 KiB as from an HTTP body.
func BenchmarkParseListFrom10k(b *testing.B) {
	data := []byte(listJSON(10000, ""))
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		l, err := ParseListFrom(&chunkReader{data: data, sizes: []int{16 << 10}}, ParseOptions{})
		if err != nil || len(l.Items) != 10000 {
			b.Fatal(err)
		}
	}
}

// liveHeap returns the bytes of live heap objects, after a GC.
func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// eofProbe measures the live heap when its reader reaches the end, the
// peak of ParseListFrom: all items parsed, the buffer still held.
type eofProbe struct {
	r    io.Reader
	live uint64
}

func (p *eofProbe) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	if err == io.EOF && p.live == 0 {
		p.live = liveHeap()
	}
	return n, err
}

// BenchmarkListBody10k reads a list of 10,000 ConfigMaps (7.9 MB) from a
// reader in 16 KiB reads: io.ReadAll then ParseList, as rest.Request.Do
// and the former List did, against ParseListFrom. live-B is the heap in
// use at the peak (measured once, after the timed loop): the body and the
// items for the former, the items and the buffer for the latter.
func BenchmarkListBody10k(b *testing.B) {
	data := []byte(listJSON(10000, ""))
	b.Run("ReadAll+ParseList", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		parse := func() (*List, []byte) {
			body, err := io.ReadAll(&chunkReader{data: data, sizes: []int{16 << 10}})
			if err != nil {
				b.Fatal(err)
			}
			l, err := ParseList(body, ParseOptions{})
			if err != nil || len(l.Items) != 10000 {
				b.Fatal(err)
			}
			return l, body
		}
		for b.Loop() {
			parse()
		}
		base := liveHeap()
		l, body := parse()
		live := liveHeap()
		runtime.KeepAlive(l)
		runtime.KeepAlive(body)
		b.ReportMetric(float64(live-base), "live-B")
	})
	b.Run("ParseListFrom", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			l, err := ParseListFrom(&chunkReader{data: data, sizes: []int{16 << 10}}, ParseOptions{})
			if err != nil || len(l.Items) != 10000 {
				b.Fatal(err)
			}
		}
		base := liveHeap()
		p := &eofProbe{r: &chunkReader{data: data, sizes: []int{16 << 10}}}
		l, err := ParseListFrom(p, ParseOptions{})
		if err != nil {
			b.Fatal(err)
		}
		runtime.KeepAlive(l)
		b.ReportMetric(float64(p.live-base), "live-B")
	})
}

// watchStream10k is the stream of BenchmarkWatchStream10k.
func watchStream10k() []byte {
	var stream bytes.Buffer
	for i := 0; i < 10000; i++ {
		stream.WriteString(`{"type":"ADDED","object":` + configMapJSON(i, true) + "}\n")
	}
	return stream.Bytes()
}

// BenchmarkWatchStream10kEventObject is BenchmarkWatchStream10k with
// parseEventObject instead of ParseEvent and Parse: one scan less.
func BenchmarkWatchStream10kEventObject(b *testing.B) {
	data := watchStream10k()
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
			if _, _, _, err := parseEventObject(frame, 0, ParseOptions{}); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkWatchStream10kNextEvent is BenchmarkWatchStream10k with
// Decoder.NextEvent: each event is scanned once.
func BenchmarkWatchStream10kNextEvent(b *testing.B) {
	data := watchStream10k()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		d := NewDecoder(bytes.NewReader(data))
		for {
			_, _, _, err := d.NextEvent(ParseOptions{})
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
		}
	}
}
