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
	"unsafe"
)

// listReaders split a body differently for ParseListFrom.
var listReaders = []struct {
	name string
	wrap func([]byte) io.Reader
}{
	{"whole", func(b []byte) io.Reader { return bytes.NewReader(b) }},
	{"one byte", func(b []byte) io.Reader { return iotest.OneByteReader(bytes.NewReader(b)) }},
	{"half", func(b []byte) io.Reader { return iotest.HalfReader(bytes.NewReader(b)) }},
	{"data+err", func(b []byte) io.Reader { return iotest.DataErrReader(bytes.NewReader(b)) }},
	{"chunks of 7", func(b []byte) io.Reader { return &chunkReader{data: b, sizes: []int{7}} }},
	{"chunks of 1000", func(b []byte) io.Reader { return &chunkReader{data: b, sizes: []int{1000, 1, 0, 3}} }},
}

// chunkReader returns data in reads of sizes[0], sizes[1], … (cycling; a 0
// is a read of nothing, but not twice in a row), and io.EOF after the last
// byte.
type chunkReader struct {
	data  []byte
	sizes []int
	i     int
	zero  bool // the last read was of nothing
	// maxRead is the largest buffer a Read was given.
	maxRead int
}

func (r *chunkReader) Read(p []byte) (int, error) {
	r.maxRead = max(r.maxRead, len(p))
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := r.sizes[r.i%len(r.sizes)]
	r.i++
	if n == 0 && r.zero {
		n = 1
	}
	r.zero = n == 0
	n = min(n, len(p), len(r.data))
	copy(p, r.data[:n])
	r.data = r.data[n:]
	return n, nil
}

// listSummary is everything ParseList returns, for comparisons.
type listSummary struct {
	APIVersion, Kind, ResourceVersion, Continue, SelfLink string
	RemainingItemCount                                    *int64
	ItemsNil                                              bool
	Items                                                 []itemSummary
	Err                                                   string
}

type itemSummary struct {
	JSON     string
	Meta     meta
	Managers []ManagedFieldsEntry // with FieldsHash
}

func summarize(l *List, err error) listSummary {
	if err != nil {
		return listSummary{Err: err.Error()}
	}
	s := listSummary{
		APIVersion: l.APIVersion, Kind: l.Kind, ResourceVersion: l.ResourceVersion,
		Continue: l.Continue, SelfLink: l.SelfLink, RemainingItemCount: l.RemainingItemCount,
		ItemsNil: l.Items == nil,
	}
	for _, o := range l.Items {
		s.Items = append(s.Items, itemSummary{JSON: string(o.JSON), Meta: metaOf(o), Managers: o.Managers()})
	}
	return s
}

// checkListFrom checks that ParseList and ParseListFrom, however the reads
// are split, return what the oracle (the former ParseList) returns.
func checkListFrom(t *testing.T, data []byte, opts ParseOptions) listSummary {
	t.Helper()
	want := summarize(oracleParseList(data, opts))
	if got := summarize(ParseList(data, opts)); !reflect.DeepEqual(got, want) {
		t.Fatalf("ParseList(%.200q)\n got %+v\nwant %+v", data, got, want)
	}
	for _, rd := range listReaders {
		if got := summarize(ParseListFrom(rd.wrap(data), opts)); !reflect.DeepEqual(got, want) {
			t.Fatalf("ParseListFrom(%s, %.200q)\n got %+v\nwant %+v", rd.name, data, got, want)
		}
	}
	return want
}

// listInputs are the inputs of the ParseList tests plus lists that need
// ParseListFrom to read on in every place.
func listInputs() []string {
	in := []string{
		`{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"5"},"items":[]}`,
		`{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"5"},"items":null}`,
		`{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"5"}}`,
		listJSON(1, ""), listJSON(50, ""), listJSON(3, "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6OTk5OTk5fQ=="),
		`{"kind":"WidgetList","apiVersion":"example.com/v1","items":[{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"a"}}]}`,
		`{"kind":"WidgetList","apiVersion":"example.com/v1","items":[{"apiVersion":"example.com/v2","metadata":{"name":"a"}}]}`,
		`{"kind":"WidgetList","apiVersion":"example.com/v1","items":[ { "kind" : "Widget", "metadata":{"name":"a"}} ]}`,
		`{"items":[{"metadata":{"name":"a"}},{"metadata":{"name":"b"}}],"metadata":{},"apiVersion":"v1","kind":"SecretList"}`,
		`{"kind":"Weird","apiVersion":"v1","items":[{"metadata":{"name":"a"}}]}`,
		`{"items":[{"metadata":{"name":"a"}}]}`,
		`{"kind":"ConfigMapList","apiVersion":"v1","items":[{"metadata":{"managedFields":[],"name":"a"}}]}`,
		" {\"kind\":\"ConfigMapList\",\"apiVersion\":\"v1\",\"metadata\":{\"selfLink\":\"/api/v1/configmaps\",\"resourceVersion\":\"5\",\"continue\":\"a\\u002bb\",\"remainingItemCount\":7,\"remainingItemCount\":null,\"other\":[1,{}]},\"extra\":{\"items\":1},\"items\":[]}\n",
		`{"metadata":null,"items":null}`,
		// Errors.
		`[]`, `{"items":{}}`, `{"items":[{"metadata":{"name":"a"}},{"metadata":{}}]}`,
		`{"items":[{"metadata":{"name":"a"}},1]}`, `{"items":[{"metadata":{"name":"a"}}`,
		`{"metadata":{"resourceVersion":1},"items":[]}`, `{"metadata":{"remainingItemCount":"1"},"items":[]}`,
		`{"items":[]}x`, `{"items":[],"x":[1,}`, ``, ` `, `{`, `{"items"`, `{"items":`, `{"items":[`,
		`{"items":[{"metadata":{"name":"a","generation":12`, `{"items":[{"metadata":{"name":"a","generation":12345678901234567890`,
		`{"items":[{"metadata":{"name":"a","generation":123456789012345678901.5}}]}`,
		`{"items":[{"metadata":{"name":"a","generation":12345678901234567890e}}]}`,
		`{"items":[{"metadata":{"name":"a"}} , ]}`, `{"items":[{"metadata":{"name":"a"}}]} {}`, `{"items":[]}  ` + "\n\t ",
		`{"items":[{"metadata":{"name":"a"}}],"kind":"XList","items":[{"metadata":{"name":"b"}}],"apiVersion":"v"}`,
		`{"kind":"XList","apiVersion":"a","items":[{"metadata":{"name":"a"}}],"apiVersion":"b","kind":"YList"}`,
		`{"kind":"XList","apiVersion":"a","items":[{"metadata":{"name":"a"}}],"apiVersion":"a","kind":"Weird","kind":"XList"}`,
		`{"kind":"XList","items":[{"kind":"Y","metadata":{"name":"a","managedFields":[]}}],"metadata":{"remainingItemCount":3}}`,
		`{"items":[{"apiVersion":"own","metadata":{"name":"a"}},{"kind":"Own","metadata":{"name":"b"}},{"kind":"K","apiVersion":"v","metadata":{"name":"c"}}],"apiVersion":"v1","kind":"ThingList"}`,
		`{"items":[` + configMapJSON(1, false) + `,` + escapedJSON + `,` + podJSON + `,` + prettyJSON + `],"kind":"ConfigMapList","apiVersion":"v1"}`,
		`{"items":[{"metadata":{"name":"a","managedFields":[{"manager":"m\u00fc","operation":"Update","time":"t","subresource":"s","fieldsV1":{"f":{}}}]},"data":{}}],"apiVersion":"v\u0031","kind":"C\u006fnfigMapList"}`,
		`{"items":[{"metadata":{"managedFields":[{"manager":"m"}],"name":"a"}}],"apiVersion":"v1","kind":"ConfigMapList"}`,
		`{"items":[{"metadata":{"name":"a"}},{"metadata":{"name":"a"}}],"kind":"List","apiVersion":"v1"}`,
		"{\"items\":[{\"metadata\":{\"name\":\"a\xffb\"}}],\"kind\":\"\xffList\"}",
		`{"items":[{"metadata":{"name":"a"},"x":` + strings.Repeat("[", maxDepth-2) + strings.Repeat("]", maxDepth-2) + `}]}`,
		`{"items":[{"metadata":{"name":"a"},"x":` + strings.Repeat("[", maxDepth-1) + strings.Repeat("]", maxDepth-1) + `}]}`,
		`{"x":` + strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth) + `,"items":[]}`,
		`{"items":[{"metadata":{"name":"a"},"data":"` + strings.Repeat("x", 3*listBufferSize) + `"}],"extra":"` + strings.Repeat("y", 2*listBufferSize) + `"}`,
		`{"items":[{"metadata":{"name":"a"},"data":"` + strings.Repeat("x", 3*listBufferSize) + `\u0"}]}`,
		`{"items":[{"metadata":{"name":"a"}}]` + strings.Repeat(" ", 3*listBufferSize) + `}` + strings.Repeat("\n", 2*listBufferSize),
		`{"items":[{"metadata":{"name":"a"}}]` + strings.Repeat(" ", 3*listBufferSize) + `}` + strings.Repeat("\n", 2*listBufferSize) + "x",
		`{"items":nul}`, `{"items":nullx}`, `{"items":[tru]}`, `{"items":[{"metadata":{"name":"a"}}]`,
		`{"kind":"XList" , "apiVersion" : "v" , "items" : [ {"metadata":{"name":"a"}} , {"metadata":{"name":"b"}} ] }`,
		`{"k\u0069nd":"XList","\u0069tems":[{"metadata":{"name":"a"}}],"metadat\u0061":{"resourceVersion":"1"}}`,
		`{"items":[{"metadata":{"name":"a"}}],"metadata":{"resourceVersion":"1","continue":"c","remainingItemCount":-5}}`,
		`{"items":[{"metadata":{"name":"a"}}],"kind":1}`, `{"items":[{"metadata":{"name":"a"}}],"apiVersion":null}`,
		`{"items" "x"}`, `{"items":[{"metadata":{"name":"a"}}]]`, `{"items":[{"metadata":{"name":"a"}}}`,
		`{1:2}`, `{"a":1,}`, `{"a"}`, `{"a":01}`, `{"a":-}`, `{"a":1.}`, `{"a":1e}`, `{"a":truex}`, `{"a":"\x"}`, "{\"a\":\"\x01\"}",
	}
	// A list of big items, each bigger than the first buffer.
	var b strings.Builder
	b.WriteString(`{"kind":"ConfigMapList","apiVersion":"v1","items":[`)
	for i := 0; i < 3; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"metadata":{"name":"big-%d"},"data":{"d":"%s"}}`, i, strings.Repeat("z", listBufferSize+i*1000))
	}
	b.WriteString("]}")
	in = append(in, b.String())
	return in
}

func TestParseListFrom(t *testing.T) {
	for i, in := range listInputs() {
		for _, opts := range []ParseOptions{{}, {KeepManagedFields: true}, {AllowMissingName: true}} {
			t.Run(fmt.Sprintf("%d/%+v", i, opts), func(t *testing.T) {
				checkListFrom(t, []byte(in), opts)
			})
		}
	}
}

// TestParseListFromTypeMetaAfterItems checks the items that got the list's
// apiVersion and kind from members after them, against the expected JSON.
func TestParseListFromTypeMetaAfterItems(t *testing.T) {
	in := `{"items":[{"apiVersion":"own","metadata":{"name":"a","managedFields":[{"manager":"m\u00fc","operation":"Update","fieldsV1":{}}]}},` +
		`{"kind":"Own","metadata":{"name":"b"}},{"metadata":{"name":"c"}}],"apiVersion":"v1","kind":"ThingList"}`
	for _, keep := range []bool{false, true} {
		for _, rd := range listReaders {
			l, err := ParseListFrom(rd.wrap([]byte(in)), ParseOptions{KeepManagedFields: keep})
			if err != nil {
				t.Fatal(err)
			}
			mf := ""
			if keep {
				mf = `,"managedFields":[{"manager":"m\u00fc","operation":"Update","fieldsV1":{}}]`
			}
			want := []string{
				`{"kind":"Thing","apiVersion":"own","metadata":{"name":"a"` + mf + `}}`,
				`{"apiVersion":"v1","kind":"Own","metadata":{"name":"b"}}`,
				`{"apiVersion":"v1","kind":"Thing","metadata":{"name":"c"}}`,
			}
			for i, o := range l.Items {
				if string(o.JSON) != want[i] {
					t.Errorf("%s keep=%v: item %d: %s, want %s", rd.name, keep, i, o.JSON, want[i])
				}
			}
			a := l.Items[0]
			if a.APIVersion != "own" || a.Kind != "Thing" || len(a.Managers()) != 1 || a.Managers()[0].Manager != "mü" || a.Managers()[0].FieldsHash == 0 {
				t.Errorf("%s keep=%v: item 0: %+v", rd.name, keep, metaOf(a))
			}
			// The carried-over summary lives in the item's allocation.
			if c := a.DeepCopy(); c.Managers()[0].Manager != "mü" || !sameAllocation(a, a.Managers()[0].Manager) {
				t.Errorf("%s keep=%v: managers not in the item's allocation", rd.name, keep)
			}
		}
	}
}

// sameAllocation reports whether s lies in o's allocation (see
// allocation).
func sameAllocation(o *Object, s string) bool {
	lo, hi := allocation(o)
	p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
	return s == "" || p >= lo && p < hi
}

// TestParseListFromReadError checks that a reader's error ends the parse
// and is wrapped, wherever it happens.
func TestParseListFromReadError(t *testing.T) {
	readErr := errors.New("connection reset")
	for _, in := range []string{
		listJSON(2, "c"),
		` { "items" : [ {"metadata":{"name":"a"}} , {"apiVersion":"x","metadata":{"name":"b","generation":12}} ] , "kind" : "XList", "extra": [1, true, null, "s"] } `,
	} {
		data := []byte(in)
		for n := 0; n <= len(data); n++ {
			r := io.MultiReader(bytes.NewReader(data[:n]), iotest.ErrReader(readErr))
			if _, err := ParseListFrom(r, ParseOptions{}); !errors.Is(err, readErr) {
				t.Errorf("error after %d bytes: %v", n, err)
			}
		}
	}
	// An error that comes with the last bytes is still reported: the end of
	// the input was not seen.
	data := []byte(listJSON(2, ""))
	r := readFunc(func(p []byte) (int, error) { return copy(p, data), readErr })
	if _, err := ParseListFrom(r, ParseOptions{}); !errors.Is(err, readErr) {
		t.Errorf("error with the last bytes: %v", err)
	}
}

// badReader returns more bytes than it was asked for.
type badReader struct{}

func (badReader) Read(p []byte) (int, error) { return len(p) + 1, nil }

type nothingReader struct{}

func (nothingReader) Read(p []byte) (int, error) { return 0, nil }

func TestParseListFromBadReader(t *testing.T) {
	if _, err := ParseListFrom(badReader{}, ParseOptions{}); err == nil || !errors.Is(err, io.ErrShortBuffer) {
		t.Errorf("bad reader: %v", err)
	}
	if _, err := ParseListFrom(nothingReader{}, ParseOptions{}); !errors.Is(err, io.ErrNoProgress) {
		t.Errorf("reader without progress: %v", err)
	}
	if _, err := NewDecoder(badReader{}).Next(); !errors.Is(err, io.ErrShortBuffer) {
		t.Errorf("Decoder, bad reader: %v", err)
	}
	if _, _, _, err := NewDecoder(badReader{}).NextEvent(ParseOptions{}); !errors.Is(err, io.ErrShortBuffer) {
		t.Errorf("Decoder.NextEvent, bad reader: %v", err)
	}
}

// TestParseListFromBuffer checks that the buffer does not grow with the
// list: it holds about one read, not the body.
func TestParseListFromBuffer(t *testing.T) {
	data := []byte(listJSON(2000, ""))
	r := &chunkReader{data: data, sizes: []int{4096, 100, 16384}}
	l, err := ParseListFrom(r, ParseOptions{})
	if err != nil || len(l.Items) != 2000 {
		t.Fatalf("%v", err)
	}
	if r.maxRead > listBufferSize {
		t.Errorf("a read of %d bytes: the buffer grew past %d for a list of %d-byte items", r.maxRead, listBufferSize, len(data)/2000)
	}
	// Errors count offsets from the first byte read, whatever was dropped.
	bad := append(bytes.Clone(data[:len(data)-2]), "]x"...)
	_, err = ParseListFrom(&chunkReader{data: bad, sizes: []int{4096}}, ParseOptions{})
	if want := fmt.Sprintf("invalid JSON at offset %d: unexpected 'x'", len(bad)-1); err == nil || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}
}

// TestParseListFromNoAlias checks that the items do not alias the bytes
// read.
func TestParseListFromNoAlias(t *testing.T) {
	data := []byte(listJSON(3, "c"))
	var got [][]byte
	r := readFunc(func(p []byte) (int, error) {
		if len(data) == 0 {
			return 0, io.EOF
		}
		n := copy(p, data[:min(len(data), 50)])
		data = data[n:]
		got = append(got, p)
		return n, nil
	})
	l, err := ParseListFrom(r, ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := summarize(l, nil)
	for _, p := range got {
		for i := range p {
			p[i] = '#'
		}
	}
	if !reflect.DeepEqual(summarize(l, nil), want) {
		t.Error("the list changed with the read buffer")
	}
}

type readFunc func([]byte) (int, error)

func (f readFunc) Read(p []byte) (int, error) { return f(p) }

// FuzzParseListFrom checks ParseList and ParseListFrom against the former
// ParseList, with reads split by the fuzzer.
func FuzzParseListFrom(f *testing.F) {
	for _, in := range listInputs() {
		if len(in) < 4096 {
			f.Add([]byte(in), []byte{3, 1, 0, 200})
		}
	}
	f.Fuzz(func(t *testing.T, data, splits []byte) {
		opts := ParseOptions{AllowMissingName: len(splits) > 0 && splits[0]&1 != 0, KeepManagedFields: len(splits) > 0 && splits[0]&2 != 0}
		want := summarize(oracleParseList(data, opts))
		if got := summarize(ParseList(data, opts)); !reflect.DeepEqual(got, want) {
			t.Fatalf("ParseList(%q)\n got %+v\nwant %+v", data, got, want)
		}
		sizes := []int{1 << 20}
		if len(splits) > 0 {
			sizes = sizes[:0]
			for _, c := range splits {
				sizes = append(sizes, int(c))
			}
		}
		got := summarize(ParseListFrom(&chunkReader{data: data, sizes: sizes}, opts))
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("ParseListFrom(%q, reads %v)\n got %+v\nwant %+v", data, sizes, got, want)
		}
		checkParseListEach(t, data, &chunkReader{data: data, sizes: sizes}, opts, want)
		if want.Err == "" && !json.Valid(data) {
			t.Fatalf("accepted invalid JSON %q", data)
		}
	})
}

// checkParseListEach checks ParseListEach on data (read through r)
// against want, the summary of ParseList: the same items handed out in
// order and the same list, or the same error — except that it refuses,
// with its own error, lists whose items it would have to change after
// handing them out.
func checkParseListEach(t *testing.T, data []byte, r io.Reader, opts ParseOptions, want listSummary) {
	t.Helper()
	var items []*Object
	l, err := ParseListEach(r, opts, func(o *Object) error {
		items = append(items, o)
		return nil
	})
	if err != nil && (strings.Contains(err.Error(), "were handed out") || strings.Contains(err.Error(), "second items member")) {
		if want.Err == "" && len(want.Items) == 0 {
			t.Fatalf("ParseListEach(%q) refused a list without items: %v", data, err)
		}
		return
	}
	if err == nil {
		if len(l.Items) != 0 {
			t.Fatalf("ParseListEach(%q) kept %d items", data, len(l.Items))
		}
		l.Items = items
		if want.Err == "" && want.ItemsNil && len(items) == 0 {
			l.Items = nil
		}
	}
	got := summarize(l, err)
	if want.Err == "" && !want.ItemsNil && got.ItemsNil {
		got.ItemsNil = false // no items handed out, where ParseList has an empty slice
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ParseListEach(%q)\n got %+v\nwant %+v", data, got, want)
	}
}

func TestParseListEach(t *testing.T) {
	for _, in := range listInputs() {
		want := summarize(ParseList([]byte(in), ParseOptions{}))
		checkParseListEach(t, []byte(in), iotest.HalfReader(strings.NewReader(in)), ParseOptions{}, want)
	}
	// Items are handed out as they are read, before the list's end (once
	// half a buffer is read ahead of them, see listParser.item).
	data := []byte(listJSON(1, ""))
	for n := 2; len(data) < 4*listBufferSize; n *= 2 {
		data = []byte(listJSON(n, ""))
	}
	pr, pw := io.Pipe()
	go func() {
		_, _ = pw.Write(data[:len(data)-2]) // all but the end of the items and the list
	}()
	got := make(chan string, 3)
	go func() {
		_, _ = ParseListEach(pr, ParseOptions{}, func(o *Object) error {
			got <- o.Name
			return nil
		})
	}()
	for _, want := range []string{"app-config-00000", "app-config-00001"} {
		if name := <-got; name != want {
			t.Fatalf("item %q, want %q", name, want)
		}
	}
	pw.Close()

	// An error of each ends the parse and is returned wrapped.
	stop := errors.New("stop")
	n := 0
	_, err := ParseListEach(strings.NewReader(listJSON(5, "")), ParseOptions{}, func(*Object) error {
		if n++; n == 2 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || n != 2 || !strings.HasPrefix(err.Error(), "items[1]: ") {
		t.Errorf("each failing at the second item: %v after %d items", err, n)
	}

	// A custom resource list: members sorted, so kind and metadata follow
	// the items, which have their own apiVersion and kind.
	cr := `{"apiVersion":"e2e.example.com/v1","items":[{"apiVersion":"e2e.example.com/v1","kind":"Widget","metadata":{"name":"a","resourceVersion":"5"}}],"kind":"WidgetList","metadata":{"continue":"","resourceVersion":"7"}}`
	var crItems []*Object
	l, err := ParseListEach(strings.NewReader(cr), ParseOptions{}, func(o *Object) error {
		crItems = append(crItems, o)
		return nil
	})
	if err != nil || l.ResourceVersion != "7" || l.Kind != "WidgetList" || len(crItems) != 1 || crItems[0].Kind != "Widget" {
		t.Errorf("custom resource list: %v, %+v, %d items", err, l, len(crItems))
	}
	checkParseListEach(t, []byte(cr), strings.NewReader(cr), ParseOptions{}, summarize(ParseList([]byte(cr), ParseOptions{})))

	// A list typed after its items cannot be streamed.
	late := `{"items":[{"metadata":{"name":"a"}}],"apiVersion":"v1","kind":"SecretList"}`
	if _, err := ParseListEach(strings.NewReader(late), ParseOptions{}, func(*Object) error { return nil }); err == nil || !strings.Contains(err.Error(), "follow its items") {
		t.Errorf("list typed after its items: %v", err)
	}
}
