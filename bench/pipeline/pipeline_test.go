package pipeline

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"io"
	"os"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	restclientwatch "k8s.io/client-go/rest/watch"
	kcache "k8s.io/client-go/tools/cache"

	"github.com/kubectl-deltas/kubectl-deltas/internal/cache"
	"github.com/kubectl-deltas/kubectl-deltas/internal/printer"
	"github.com/kubectl-deltas/kubectl-deltas/internal/rawobj"
)

// The recorded stream: a kube-apiserver v1.36 JSON watch of namespace
// bench without a resourceVersion (2,000 ConfigMaps of ~700 bytes as
// ADDED events), then 500 of them patched (MODIFIED). Recorded with
//
//	go run ./bench/harness -n 2000 -m 500 -record bench/testdata/watch-configmaps.json.gz
const streamFile = "../testdata/watch-configmaps.json.gz"

var (
	streamOnce sync.Once
	streamData []byte
	streamErr  error
)

// stream returns the recorded watch stream, uncompressed.
func stream(tb testing.TB) []byte {
	tb.Helper()
	streamOnce.Do(func() {
		f, err := os.Open(streamFile)
		if err != nil {
			streamErr = err
			return
		}
		defer f.Close()
		zr, err := gzip.NewReader(f)
		if err != nil {
			streamErr = err
			return
		}
		streamData, streamErr = io.ReadAll(zr)
	})
	if streamErr != nil {
		tb.Fatalf("read %s: %v", streamFile, streamErr)
	}
	return streamData
}

// event is one decoded event of the stream.
type event struct {
	typ string
	obj *rawobj.Object
}

// decodeAll decodes the whole stream with internal/rawobj.
func decodeAll(tb testing.TB, data []byte) []event {
	tb.Helper()
	var out []event
	dec := rawobj.NewDecoder(bytes.NewReader(data))
	for {
		typ, obj, _, err := dec.NextEvent(rawobj.ParseOptions{})
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, event{typ: typ, obj: obj})
	}
}

// clientGoDecoder decodes a JSON watch stream exactly as the dynamic
// client's watch does: client-go's JSON framer and streaming decoder into
// metav1.WatchEvent, then the embedded object with the dynamic client's
// serializer into *unstructured.Unstructured.
func clientGoDecoder(tb testing.TB, r io.Reader) *restclientwatch.Decoder {
	tb.Helper()
	config := dynamic.ConfigFor(&rest.Config{})
	negotiator := runtime.NewClientNegotiator(config.NegotiatedSerializer, schema.GroupVersion{Version: "v1"})
	objectDecoder, streamingSerializer, framer, err := negotiator.StreamDecoder("application/json", nil)
	if err != nil {
		tb.Fatal(err)
	}
	frames := framer.NewFrameReader(io.NopCloser(r))
	return restclientwatch.NewDecoder(streaming.NewDecoder(frames, streamingSerializer), objectDecoder)
}

// perDelta reports deltas/s next to ns/op, where one op is one delta.
func perDelta(b *testing.B) {
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "deltas/s")
}

// TestStreamDecodesAlike keeps the benchmarks honest: both decoders see the
// same events in the recorded stream (the first compared events, to keep
// `make test`, which runs it under the race detector, quick).
func TestStreamDecodesAlike(t *testing.T) {
	const compared = 600
	data := stream(t)
	ours := decodeAll(t, data)
	types := map[string]int{}
	for _, e := range ours {
		types[e.typ]++
	}
	if len(ours) < 1000 || types["ADDED"] == 0 || types["MODIFIED"] == 0 {
		t.Fatalf("the recorded stream has %d events (%v), want over 1000 with ADDED and MODIFIED", len(ours), types)
	}
	dec := clientGoDecoder(t, bytes.NewReader(data))
	for i := 0; i < compared; i++ {
		typ, obj, err := dec.Decode()
		if err != nil {
			t.Fatalf("client-go, event %d: %v", i, err)
		}
		u := obj.(*unstructured.Unstructured)
		if string(typ) != ours[i].typ || u.GetName() != ours[i].obj.Name || u.GetResourceVersion() != ours[i].obj.ResourceVersion {
			t.Fatalf("event %d: client-go %s %s@%s, rawobj %s %s@%s", i, typ, u.GetName(), u.GetResourceVersion(), ours[i].typ, ours[i].obj.Name, ours[i].obj.ResourceVersion)
		}
	}
}

// BenchmarkDecode: one op is one watch event, from the bytes of the stream
// to an object the cache can key.
func BenchmarkDecode(b *testing.B) {
	data := stream(b)
	b.Run("rawobj", func(b *testing.B) {
		b.SetBytes(int64(len(data) / len(decodeAll(b, data))))
		b.ReportAllocs()
		dec := rawobj.NewDecoder(bytes.NewReader(data))
		for b.Loop() {
			_, _, _, err := dec.NextEvent(rawobj.ParseOptions{})
			if errors.Is(err, io.EOF) {
				dec = rawobj.NewDecoder(bytes.NewReader(data))
				_, _, _, err = dec.NextEvent(rawobj.ParseOptions{})
			}
			if err != nil {
				b.Fatal(err)
			}
		}
		perDelta(b)
	})
	b.Run("client-go-unstructured", func(b *testing.B) {
		b.SetBytes(int64(len(data) / len(decodeAll(b, data))))
		b.ReportAllocs()
		dec := clientGoDecoder(b, bytes.NewReader(data))
		for b.Loop() {
			_, _, err := dec.Decode()
			if errors.Is(err, io.EOF) {
				dec = clientGoDecoder(b, bytes.NewReader(data))
				_, _, err = dec.Decode()
			}
			if err != nil {
				b.Fatal(err)
			}
		}
		perDelta(b)
	})
}

// newFIFO is the FIFO of kubectl deltas: knownObjects is the Store,
// Replaced deltas for lists.
func newFIFO() (*cache.DeltaFIFO, cache.Indexer) {
	store := cache.NewIndexer(cache.DeletionHandlingMetaNamespaceKeyFunc, cache.Indexers{})
	fifo := cache.NewDeltaFIFOWithOptions(cache.DeltaFIFOOptions{KnownObjects: store, EmitDeltaTypeReplaced: true, MaxUpdatedBacklog: 10})
	return fifo, store
}

// popInto pops one item and applies it to the store as the command does.
func popInto(b *testing.B, fifo *cache.DeltaFIFO, store cache.Indexer) {
	_, err := fifo.Pop(func(deltas cache.Deltas, _ bool) error {
		for _, d := range deltas {
			if _, exists, _ := store.Get(d.Object); exists {
				if err := store.Update(d.Object); err != nil {
					return err
				}
			} else if err := store.Add(d.Object); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
}

// BenchmarkFIFO: internal/cache's DeltaFIFO with the Store as known
// objects; one op is one delta in and out, the Store updated on Pop.
func BenchmarkFIFO(b *testing.B) {
	events := decodeAll(b, stream(b))
	objs := make([]any, 0, len(events))
	for _, e := range events {
		if e.typ == "ADDED" {
			objs = append(objs, e.obj)
		}
	}
	b.Run("Replace+Pop", func(b *testing.B) {
		// The initial list: Replace with every object, then pop them all.
		b.ReportAllocs()
		fifo, store := newFIFO()
		i := 0
		for b.Loop() {
			if i == 0 {
				if err := fifo.Replace(objs, "1"); err != nil {
					b.Fatal(err)
				}
			}
			popInto(b, fifo, store)
			i = (i + 1) % len(objs)
		}
		perDelta(b)
	})
	b.Run("Update+Pop", func(b *testing.B) {
		b.ReportAllocs()
		fifo, store := newFIFO()
		i := 0
		for b.Loop() {
			if err := fifo.Update(objs[i]); err != nil {
				b.Fatal(err)
			}
			popInto(b, fifo, store)
			i = (i + 1) % len(objs)
		}
		perDelta(b)
	})
	b.Run("client-go-Update+Pop", func(b *testing.B) {
		// client-go's DeltaFIFO with the Unstructured objects of the same
		// events, for comparison.
		dec := clientGoDecoder(b, bytes.NewReader(stream(b)))
		var uobjs []any
		for {
			typ, obj, err := dec.Decode()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			if typ == watch.Added {
				uobjs = append(uobjs, obj)
			}
		}
		store := kcache.NewIndexer(kcache.DeletionHandlingMetaNamespaceKeyFunc, kcache.Indexers{kcache.NamespaceIndex: kcache.MetaNamespaceIndexFunc})
		fifo := kcache.NewDeltaFIFOWithOptions(kcache.DeltaFIFOOptions{KnownObjects: store, EmitDeltaTypeReplaced: true})
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if err := fifo.Update(uobjs[i]); err != nil {
				b.Fatal(err)
			}
			_, err := fifo.Pop(func(obj any, _ bool) error {
				for _, d := range obj.(kcache.Deltas) {
					if _, exists, _ := store.Get(d.Object); exists {
						if err := store.Update(d.Object); err != nil {
							return err
						}
					} else if err := store.Add(d.Object); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
			i = (i + 1) % len(uobjs)
		}
		perDelta(b)
	})
}

// records builds the printer records of the stream's events as the command
// fills them (managedFields already stripped by Parse).
func records(b *testing.B) []*printer.Record {
	events := decodeAll(b, stream(b))
	now := time.Now()
	out := make([]*printer.Record, len(events))
	for i, e := range events {
		typ := "Replaced"
		if e.typ == "MODIFIED" {
			typ = "Updated"
		}
		r := &printer.Record{
			Type: typ, Time: now, Initial: typ == "Replaced",
			APIVersion: "v1", Kind: "ConfigMap", Resource: "configmaps",
			Namespace: e.obj.Namespace, Name: e.obj.Name, UID: e.obj.UID, ResourceVersion: e.obj.ResourceVersion,
			Object: e.obj.JSON,
		}
		if m := e.obj.Managers(); len(m) > 0 {
			r.Manager, r.Operation = m[len(m)-1].Manager, m[len(m)-1].Operation
		}
		out[i] = r
	}
	return out
}

// BenchmarkPrinter: one op is one record printed into a buffered writer
// (as the command does) over io.Discard.
func BenchmarkPrinter(b *testing.B) {
	recs := records(b)
	b.Run("AppendJSON", func(b *testing.B) {
		b.ReportAllocs()
		buf := make([]byte, 0, 4096)
		i, n := 0, 0
		for b.Loop() {
			buf = printer.AppendJSON(buf[:0], recs[i])
			n += len(buf)
			i = (i + 1) % len(recs)
		}
		b.SetBytes(int64(n / max(1, b.N)))
		perDelta(b)
	})
	for _, format := range []string{"json", "text", "name", "wide", "yaml"} {
		b.Run(format, func(b *testing.B) {
			p, err := printer.New(printer.Options{Format: format})
			if err != nil {
				b.Fatal(err)
			}
			w := bufio.NewWriterSize(io.Discard, 64<<10)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if err := p.Print(w, recs[i]); err != nil {
					b.Fatal(err)
				}
				i = (i + 1) % len(recs)
			}
			perDelta(b)
		})
	}
	b.Run("client-go-encoding-json", func(b *testing.B) {
		// What bench/baseline prints per delta: {"type":…,"object":…} of
		// an Unstructured with encoding/json.
		dec := clientGoDecoder(b, bytes.NewReader(stream(b)))
		var objs []map[string]any
		for {
			_, obj, err := dec.Decode()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			u := obj.(*unstructured.Unstructured)
			u.SetManagedFields(nil)
			objs = append(objs, u.Object)
		}
		type line struct {
			Type   string         `json:"type"`
			Object map[string]any `json:"object"`
		}
		w := bufio.NewWriterSize(io.Discard, 64<<10)
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if err := enc.Encode(line{Type: "Replaced", Object: objs[i]}); err != nil {
				b.Fatal(err)
			}
			i = (i + 1) % len(objs)
		}
		perDelta(b)
	})
}

// BenchmarkPipeline: the whole hot path on the recorded stream, one op per
// delta: decode → FIFO (with the Store) → record → JSON line into a
// buffered io.Discard; kubectl deltas' packages next to client-go's
// (Unstructured decode → client-go DeltaFIFO → encoding/json).
func BenchmarkPipeline(b *testing.B) {
	data := stream(b)
	b.Run("deltas-json", func(b *testing.B) {
		fifo, store := newFIFO()
		p, err := printer.New(printer.Options{Format: "json"})
		if err != nil {
			b.Fatal(err)
		}
		w := bufio.NewWriterSize(io.Discard, 64<<10)
		rec := &printer.Record{APIVersion: "v1", Kind: "ConfigMap", Resource: "configmaps"}
		dec := rawobj.NewDecoder(bytes.NewReader(data))
		b.ReportAllocs()
		for b.Loop() {
			_, obj, _, err := dec.NextEvent(rawobj.ParseOptions{})
			if errors.Is(err, io.EOF) {
				dec = rawobj.NewDecoder(bytes.NewReader(data))
				_, obj, _, err = dec.NextEvent(rawobj.ParseOptions{})
			}
			if err != nil {
				b.Fatal(err)
			}
			if err := fifo.Update(obj); err != nil {
				b.Fatal(err)
			}
			_, err = fifo.Pop(func(deltas cache.Deltas, initial bool) error {
				for _, d := range deltas {
					o := d.Object.(*rawobj.Object)
					if _, exists, _ := store.Get(o); exists {
						if err := store.Update(o); err != nil {
							return err
						}
					} else if err := store.Add(o); err != nil {
						return err
					}
					rec.Type, rec.Time, rec.Initial = string(d.Type), time.Now(), initial
					rec.Namespace, rec.Name, rec.UID, rec.ResourceVersion = o.Namespace, o.Name, o.UID, o.ResourceVersion
					rec.Object = o.JSON
					if err := p.Print(w, rec); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
		}
		perDelta(b)
	})
	b.Run("client-go-json", func(b *testing.B) {
		store := kcache.NewIndexer(kcache.DeletionHandlingMetaNamespaceKeyFunc, kcache.Indexers{kcache.NamespaceIndex: kcache.MetaNamespaceIndexFunc})
		fifo := kcache.NewDeltaFIFOWithOptions(kcache.DeltaFIFOOptions{KnownObjects: store, EmitDeltaTypeReplaced: true})
		w := bufio.NewWriterSize(io.Discard, 64<<10)
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		type line struct {
			Type   kcache.DeltaType `json:"type"`
			Object map[string]any   `json:"object"`
		}
		dec := clientGoDecoder(b, bytes.NewReader(data))
		b.ReportAllocs()
		for b.Loop() {
			_, obj, err := dec.Decode()
			if errors.Is(err, io.EOF) {
				dec = clientGoDecoder(b, bytes.NewReader(data))
				_, obj, err = dec.Decode()
			}
			if err != nil {
				b.Fatal(err)
			}
			u := obj.(*unstructured.Unstructured)
			u.SetManagedFields(nil)
			if err := fifo.Update(u); err != nil {
				b.Fatal(err)
			}
			_, err = fifo.Pop(func(popped any, _ bool) error {
				for _, d := range popped.(kcache.Deltas) {
					if _, exists, _ := store.Get(d.Object); exists {
						if err := store.Update(d.Object); err != nil {
							return err
						}
					} else if err := store.Add(d.Object); err != nil {
						return err
					}
					if err := enc.Encode(line{Type: d.Type, Object: d.Object.(*unstructured.Unstructured).Object}); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
		}
		perDelta(b)
	})
}
