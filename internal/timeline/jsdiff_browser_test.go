package timeline

// The page computes a mark's changes from its raw values ("x") when it is
// looked at (changesFromRaw in page.html), in place of the [op, text]
// pairs Go computed before ("c"). These tests hold the page's script to
// Go's: for pairs of objects, the pairs the page makes of their raw
// differing members are exactly changesOf(difftest.Compute(old, new)) of the
// whole objects, in headless Chromium (the page's own engine), as CI runs
// it (.ci/run installs chromium).

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/chromedp/chromedp"

	"github.com/kubectl-deltas/kubectl-deltas/internal/diff"
	"github.com/kubectl-deltas/kubectl-deltas/internal/diff/difftest"
	"github.com/kubectl-deltas/kubectl-deltas/internal/printer"
	"github.com/kubectl-deltas/kubectl-deltas/internal/rawobj"
	"github.com/kubectl-deltas/kubectl-deltas/internal/stage"
)

// jsCase is a pair of versions of an object, their JSON.
type jsCase struct {
	name     string
	old, new []byte
}

// TestChangesFromRawInBrowser evaluates the page's changesFromRaw on the
// raw differing members of many pairs of objects, in batches, and
// compares each result with Go's changes of the whole objects.
func TestChangesFromRawInBrowser(t *testing.T) {
	began := time.Now()
	cases := allCases(t)

	// Each case is handed to the page three times: one entry per
	// top-level member that differs; shuffled, with the members that are
	// objects on both sides split one level deeper; and as the run writes
	// it (stage.Changes.AppendRaw, walked to the leaves, the always
	// ignored paths left out), then compared with the run's own
	// operations.
	differ, err := stage.NewDiffer(stage.DiffOptions{})
	if err != nil {
		t.Fatal(err)
	}
	asRun := 0
	type run struct {
		c    int // the index of its case
		x    string
		want [][2]string
	}
	var runs []run
	for i, c := range cases {
		want := goChanges(t, c)
		top := rawChanges(t, c.old, c.new, false, nil)
		runs = append(runs, run{i, top, want})
		if deeper := rawChanges(t, c.old, c.new, true, rand.New(rand.NewPCG(uint64(i), 7))); deeper != top {
			runs = append(runs, run{i, deeper, want})
		}
		oldObj, newObj := &rawobj.Object{JSON: c.old}, &rawobj.Object{JSON: c.new}
		changes := differ.Changes(oldObj, newObj, false)
		x, ok, err := changes.AppendRaw(nil)
		if err != nil {
			t.Fatalf("case %s: AppendRaw: %v", c.name, err)
		}
		ops, err := changes.Operations()
		if err != nil {
			t.Fatalf("case %s: Operations: %v", c.name, err)
		}
		if ok && len(x) > 0 {
			runs, asRun = append(runs, run{i, string(x), changesOf(ops)}), asRun+1
		} else if ok && len(ops) > 0 {
			t.Fatalf("case %s: no members that differ, and yet %d changes", c.name, len(ops))
		}
	}
	if asRun < len(cases)/2 {
		t.Fatalf("only %d of %d cases handed over as the run writes them", asRun, len(cases))
	}

	built := time.Since(began)
	b := openPage(t, "{}")
	start, failures, inPage := time.Now(), 0, 0.0
	for from := 0; from < len(runs); {
		to, size := from, 0
		for to < len(runs) && (to == from || size+len(runs[to].x) < 1<<20) && to-from < 1000 {
			size += len(runs[to].x)
			to++
		}
		xs := make([]string, 0, to-from)
		for _, r := range runs[from:to] {
			xs = append(xs, r.x)
		}
		arg, err := json.Marshal(xs)
		if err != nil {
			t.Fatal(err)
		}
		var res struct {
			Got []json.RawMessage
			MS  float64
		}
		b.eval(`(function (xs) { const start = performance.now(), got = xs.map(function (x) {
			try { return window.changesFromRaw(x); } catch (e) { return 'threw: ' + e.message; } });
			return {Got: got, MS: performance.now() - start}; })(`+string(arg)+`)`, &res)
		got := res.Got
		inPage += res.MS
		if len(got) != to-from {
			t.Fatalf("the page returned %d results for %d", len(got), to-from)
		}
		for i, raw := range got {
			r := runs[from+i]
			var pairs [][2]string
			if err := json.Unmarshal(raw, &pairs); err != nil || !slices.Equal(pairs, r.want) {
				if failures++; failures <= 15 {
					c := cases[r.c]
					t.Errorf("case %s\nold %q\nnew %q\nx   %q\npage %s\ngo   %s", c.name, c.old, c.new, r.x, raw, mustJSON(t, r.want))
				}
			}
		}
		from = to
	}
	if failures > 0 {
		t.Errorf("%d of %d results differ", failures, len(runs))
	}
	b.noConsoleErrors()
	t.Logf("%d cases (made in %v), %d calls of changesFromRaw: %v, %.0f ms of it in the page", len(cases), built.Round(time.Millisecond),
		len(runs), time.Since(start).Round(time.Millisecond), inPage)
}

// allCases are the pairs the page's diffs are held to Go's with.
func allCases(t *testing.T) []jsCase {
	var cases []jsCase
	cases = append(cases, handCases()...)
	cases = append(cases, fixtureCases(t)...)
	cases = append(cases, unicodeKeyCases()...)
	cases = append(cases, objectHistoryCases(t)...)
	return append(cases, randomCases(3000)...)
}

// TestChangesFromPatchesInBrowser hands the page each pair of ASCII
// objects as the version before and a patch ("pb", "p"): the patch the
// run writes (diffBytes) where it makes one, and one hunk replacing the
// whole object, and compares the version the page makes with the version
// after and its changes with the run's own operations.
func TestChangesFromPatchesInBrowser(t *testing.T) {
	differ, err := stage.NewDiffer(stage.DiffOptions{})
	if err != nil {
		t.Fatal(err)
	}
	type run struct {
		B, P, N string // the version before, the patch (JSON), the version after
		c       int
		want    [][2]string
	}
	var runs []run
	cases, patched := allCases(t), 0
	for i, c := range cases {
		if !isASCII(c.old) || !isASCII(c.new) {
			continue
		}
		ops, err := differ.Changes(&rawobj.Object{JSON: c.old}, &rawobj.Object{JSON: c.new}, false).Operations()
		if err != nil {
			t.Fatalf("case %s: %v", c.name, err)
		}
		want := changesOf(ops)
		if hunks, ok := diffBytes(nil, c.old, c.new); ok {
			runs, patched = append(runs, run{string(c.old), string(appendHunks(nil, hunks)), string(c.new), i, want}), patched+1
		}
		whole := appendHunks(nil, []hunk{{at: 0, del: len(c.old), ins: c.new}})
		runs = append(runs, run{string(c.old), string(whole), string(c.new), i, want})
	}
	if patched < len(runs)/3 {
		t.Fatalf("only %d of %d ASCII cases patched", patched, len(runs)-patched)
	}
	b := openPage(t, "{}")
	failures := 0
	for from := 0; from < len(runs); from += 500 {
		batch := runs[from:min(from+500, len(runs))]
		arg := mustJSON(t, batch)
		var got []struct {
			Same  bool
			After string
			C     [][2]string
			E     string
		}
		b.eval(`(function (runs) { return runs.map(function (r) { try {
			const p = JSON.parse(r.P), after = window.patchedVersion(r.B, p);
			return {Same: after === r.N, After: after === r.N ? '' : after, C: window.changesFromPatch(r.B, p)};
			} catch (e) { return {E: e.message}; } }); })(`+string(arg)+`)`, &got)
		if len(got) != len(batch) {
			t.Fatalf("the page returned %d results for %d", len(got), len(batch))
		}
		for i, g := range got {
			r := batch[i]
			if g.E != "" || !g.Same || !slices.Equal(g.C, r.want) {
				if failures++; failures <= 15 {
					t.Errorf("case %s\nbefore %q\npatch %s\nafter %q\npage made %q (error %q)\npage %s\ngo   %s", cases[r.c].name, r.B, r.P, r.N, g.After, g.E, mustJSON(t, g.C), mustJSON(t, r.want))
				}
			}
		}
	}
	if failures > 0 {
		t.Errorf("%d of %d results differ", failures, len(runs))
	}
	b.noConsoleErrors()
	t.Logf("%d cases, %d patched as the run does, %d calls", len(cases), patched, len(runs))
}

// TestPatchChainsInBrowser observes the histories of a busy Pod and
// Deployment as a run does (a lane each; now and then a version the
// stream did not show, or one not ASCII, breaks the chain of patches),
// writes the page, and has the page read its document and make every
// mark's changes: each must be the run's own operations.
func TestPatchChainsInBrowser(t *testing.T) {
	differ, err := stage.NewDiffer(stage.DiffOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tl := New(filepath.Join(t.TempDir(), "t.html"), "", nil)
	tl.maxBase = 1 << 20 // the fixtures are larger than a chain starts from
	// The objects as the stream has them, without managedFields, their
	// identity fixed (the generator rewrites any member, these too), their
	// text made ASCII (asciiJSON), as most objects' is.
	parse := func(name string, data []byte) *rawobj.Object {
		n := parseNode(t, data)
		id, _, _ := strings.Cut(name, " ")
		for _, k := range []string{"managedFields", "uid", "name", "namespace", "creationTimestamp", "generation", "deletionTimestamp"} {
			n.del([]string{"metadata", k})
		}
		n.set([]string{"metadata", "name"}, strNode(id))
		n.set([]string{"metadata", "namespace"}, strNode("demo"))
		n.set([]string{"metadata", "uid"}, strNode(id+"-uid"))
		o, err := rawobj.Parse(asciiJSON(n.bytes()), rawobj.ParseOptions{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return o
	}
	want := map[string][][][2]string{} // by lane UID, a mark's changes each
	var prev *rawobj.Object
	cases, at := objectHistoryCases(t), time.Duration(0)
	for i, c := range cases {
		if strings.HasPrefix(c.name, "deployment ") {
			// The fixtures' messages hold markup ('<'), which keeps a
			// version before out of the bases element: the Deployment's
			// lane without, the Pod's with.
			c.old, c.new = bytes.ReplaceAll(c.old, []byte("<"), []byte("(")), bytes.ReplaceAll(c.new, []byte("<"), []byte("("))
		}
		old := prev
		if old == nil || !bytes.Equal(old.JSON, parse(c.name, c.old).JSON) {
			old = parse(c.name, c.old)
			at += time.Second
			tl.Observe(&printer.Record{Type: "Added", Time: t0.Add(at), APIVersion: old.APIVersion, Kind: old.Kind, Namespace: old.Namespace, Name: old.Name, UID: old.UID}, old, stage.Changes{})
			want[old.UID] = append(want[old.UID], nil)
		}
		newJSON := c.new
		switch {
		case i%17 == 5: // not ASCII: walked
			newJSON = bytes.Replace(newJSON, []byte(`"metadata":{`), []byte(`"metadata":{"annotations":{"note":"é"},`), 1)
			if bytes.Contains(c.new, []byte(`"annotations"`)) {
				newJSON = c.new
			}
		case i%13 == 7: // a version the stream did not show
			old = parse(c.name, bytes.Replace(c.old, []byte(`"resourceVersion":"`), []byte(`"resourceVersion":"9`), 1))
		case i%11 == 2 && !bytes.Contains(c.old, []byte(`"annotations"`)):
			// One not shown either, with markup: its text is a string
			// ("pb"), not in the bases element ("pr").
			old = parse(c.name, bytes.Replace(c.old, []byte(`"metadata":{`), []byte(`"metadata":{"annotations":{"note":"</script><b>"},`), 1))
		}
		obj := parse(c.name, newJSON)
		ops, err := differ.Changes(old, obj, false).Operations()
		if err != nil {
			t.Fatal(err)
		}
		at += time.Second
		tl.Observe(&printer.Record{Type: "Updated", Time: t0.Add(at), APIVersion: obj.APIVersion, Kind: obj.Kind, Namespace: obj.Namespace, Name: obj.Name, UID: obj.UID}, obj, differ.Changes(old, obj, false))
		want[obj.UID] = append(want[obj.UID], changesOf(ops))
		prev = obj
		if i%17 == 5 {
			prev = nil
		}
	}
	if err := tl.Write(false); err != nil {
		t.Fatal(err)
	}
	doc, text := readDocument(t, tl.Path())
	counts := map[string]int{}
	for _, l := range doc.Lanes {
		for _, m := range l.Marks {
			switch {
			case m.Base != nil:
				counts["pb"]++
			case m.BaseAt != nil:
				counts["pr"]++
			case m.Patch != nil:
				counts["p"]++
			case m.Raw != nil:
				counts["x"]++
			}
		}
	}
	if counts["p"] < 150 || counts["pr"] < 10 || counts["pb"] < 3 || counts["x"] < 10 {
		t.Fatalf("marks with a patch alone, with its version before in the bases or as a string, walked: %v", counts)
	}
	b := openPage(t, "{}")
	var got map[string][][][2]string
	b.eval(`(function (doc, bases) { const out = {};
		for (const l of doc.lanes) out[l.uid] = window.changesOfMarks(l.marks, bases); return out; })(`+text+`, `+string(mustJSON(t, doc.Bases))+`)`, &got)
	for uid, w := range want {
		g := got[uid]
		if len(g) != len(w) {
			t.Fatalf("lane %s: %d marks in the page, %d observed", uid, len(g), len(w))
		}
		for i := range w {
			if !slices.Equal(g[i], w[i]) {
				t.Errorf("lane %s, mark %d: page %s\ngo %s", uid, i, mustJSON(t, g[i]), mustJSON(t, w[i]))
			}
		}
	}
	b.noConsoleErrors()
	t.Logf("marks: %v", counts)
}

// asciiJSON is the JSON text data with every rune that is not ASCII (or
// byte that is not UTF-8) in its strings written as an escape: the same
// values, decoded.
func asciiJSON(data []byte) []byte {
	var out []byte
	for len(data) > 0 {
		r, size := utf8.DecodeRune(data)
		switch {
		case r < utf8.RuneSelf:
			out = append(out, data[0])
		case r > 0xffff:
			r1, r2 := utf16.EncodeRune(r)
			out = fmt.Appendf(out, `\u%04x\u%04x`, r1, r2)
		default: // utf8.RuneError for a byte that is not UTF-8, as a decoder reads it
			out = fmt.Appendf(out, `\u%04x`, r)
		}
		data = data[size:]
	}
	return out
}

// TestPageShowsRawChanges opens a page whose marks carry "c", "x", an "x"
// that does not parse and an "x" without changes, and reads what a
// hover and a click on each show.
func TestPageShowsRawChanges(t *testing.T) {
	const t0 = 1764153600000
	x := func(s string) string { return string(mustJSON(t, s)) }
	doc := fmt.Sprintf(`{"v":1,"title":"raw changes","command":"kubectl deltas cm","generated":"2026-11-26T10:40:00Z","live":false,
		"start":%d,"end":%d,"contexts":[],"lanes":[{"ctx":"","av":"v1","kind":"ConfigMap","ns":"demo","name":"a","uid":"u1","parent":-1,
		"marks":[{"t":%d,"d":"Added","i":true},
		{"t":%d,"d":"Updated","x":%s},
		{"t":%d,"d":"Updated","c":[["replace","~ data.k: \"1\" → \"2\""]]},
		{"t":%d,"d":"Updated","x":%s},
		{"t":%d,"d":"Updated","x":%s}],"events":[]}]}`,
		t0, t0+4000, t0, t0+1000, x(`[["~",["data","k"],"0","1"],["+",["data","a.b"],{"z":1,"y":[1.50]}]]`),
		t0+2000, t0+3000, x(`[["~",["data"]`), t0+4000, x(`[["~",["spec","replicas"],1,1.0]]`))
	mark := func(ms int) string {
		return fmt.Sprintf(`[data-delta="Updated"][data-time=%q]`, time.UnixMilli(t0+int64(ms)).UTC().Format("2006-01-02T15:04:05.000Z"))
	}
	hover := func(b *pageBrowser, ms int) string {
		var tip string
		b.eval(fmt.Sprintf(`(function () { const m = document.querySelector(%q), r = m.getBoundingClientRect();
			m.dispatchEvent(new PointerEvent('pointermove', {bubbles: true, clientX: r.left + 2, clientY: r.top + 2, pointerId: 1}));
			return document.getElementById('tip').textContent; })()`, mark(ms)), &tip)
		return tip
	}
	details := func(b *pageBrowser, ms int) string {
		b.click(mark(ms))
		var text string
		b.eval(`document.querySelector('[data-details]').textContent`, &text)
		return text
	}
	marks := []struct {
		at         int
		tip, shown string
	}{
		{1000, "2 changes — click for the diff", `+ data["a.b"]: {"y":[1.50],"z":1}~ data.k: "0" → "1"`},
		{2000, "1 change — click for the diff", `~ data.k: "1" → "2"`},
		{3000, "1 change — click for the diff", "the changes could not be computed: "},
		{4000, "", "No changes computed for this delta."},
	}
	// The changes are computed by whichever comes first, the tip or the
	// details: each first on a page of its own.
	for _, tipFirst := range []bool{true, false} {
		b := openPage(t, doc)
		for i := range 2 * len(marks) {
			c := marks[i%len(marks)]
			if (i < len(marks)) == tipFirst {
				tip := hover(b, c.at)
				if c.tip != "" && !strings.Contains(tip, c.tip) || c.tip == "" && strings.Contains(tip, "click for the diff") {
					t.Errorf("the tip of the mark at +%d ms: %q, want %q", c.at, tip, c.tip)
				}
				continue
			}
			shown := details(b, c.at)
			if !strings.Contains(shown, c.shown) {
				t.Errorf("the details of the mark at +%d ms: %q, want %q in them", c.at, shown, c.shown)
			}
			if c.tip == "" {
				var lines int
				b.eval(`document.querySelectorAll('[data-details] .chg').length`, &lines)
				if lines != 0 {
					t.Errorf("the mark without changes shows %d lines", lines)
				}
			}
		}
		b.noConsoleErrors()
	}
}

// TestPlainKeyRunes checks the page's table of the runes a key written
// bare in a dotted path may hold (PLAIN_KEY_RUNES) against Go's unicode
// package, as internal/diff's isPlainKey reads it.
func TestPlainKeyRunes(t *testing.T) {
	m := regexp.MustCompile(`const PLAIN_KEY_RUNES = '([0-9a-z ]*)';`).FindSubmatch(page)
	if m == nil {
		t.Fatal("page.html has no PLAIN_KEY_RUNES")
	}
	if want := plainKeyRunes(); string(m[1]) != want {
		t.Errorf("page.html's PLAIN_KEY_RUNES is not Go's (unicode %s); write it so:\nconst PLAIN_KEY_RUNES = '%s';", unicode.Version, want)
	}
	// The rule above is diff's: a key of one such rune after "a" is
	// written bare by DottedPath, any other one in brackets (asked of
	// the runes at the edges of its ranges, and of one in 61 between).
	var runes []rune
	for _, r := range plainKeyEdges() {
		runes = append(runes, r-1, r)
	}
	for r := rune(0); r <= unicode.MaxRune; r += 61 {
		runes = append(runes, r)
	}
	for _, r := range runes {
		if r < 0 || r > unicode.MaxRune || utf16Surrogate(r) {
			continue
		}
		key := "a" + string(r)
		op := diff.Operation{Path: "/" + strings.NewReplacer("~", "~0", "/", "~1").Replace(key)}
		if bare := op.DottedPath() == key; bare != plainKeyRune(r) {
			t.Fatalf("U+%04X: written bare %v by DottedPath, %v by the rule of the table", r, bare, !bare)
		}
	}
}

func utf16Surrogate(r rune) bool { return r >= 0xd800 && r < 0xe000 }

// plainKeyRune is isPlainKey's rule for one rune (internal/diff/format.go).
func plainKeyRune(r rune) bool {
	switch r {
	case '.', '/', '[', ']', '"', '\\':
		return false
	}
	return !unicode.IsSpace(r) && !unicode.IsControl(r) && unicode.IsPrint(r)
}

// plainKeyEdges are the runes where plainKeyRune changes, from U+0000:
// the first of a range of plain runes, the first after it, and so on.
var plainKeyEdges = sync.OnceValue(func() []rune {
	var edges []rune
	in := false
	for r := rune(0); r <= unicode.MaxRune+1; r++ {
		if p := r <= unicode.MaxRune && plainKeyRune(r); p != in {
			edges = append(edges, r)
			in = p
		}
	}
	return edges
})

// plainKeyRunes is PLAIN_KEY_RUNES as Go's tables make it: the lengths of
// the ranges of runes in and out of plainKeyRune from U+0000, alternately
// (the first is out), in base 36, separated by spaces.
func plainKeyRunes() string {
	var b strings.Builder
	last := rune(0)
	for i, r := range plainKeyEdges() {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strconv.FormatInt(int64(r-last), 36))
		last = r
	}
	return b.String()
}

// goChanges is what Go writes in "c" for the pair: changesOf the
// operations of the whole objects, decoded as the stage decodes them.
func goChanges(t *testing.T, c jsCase) [][2]string {
	t.Helper()
	a, err := rawobj.DecodeExact(c.old)
	if err != nil {
		t.Fatalf("case %s: old: %v", c.name, err)
	}
	b, err := rawobj.DecodeExact(c.new)
	if err != nil {
		t.Fatalf("case %s: new: %v", c.name, err)
	}
	return changesOf(difftest.Compute(a.(map[string]any), b.(map[string]any), diff.Options{}))
}

// rawChanges is the "x" of the pair: ["~", path, old, new], ["+", path,
// new] and ["-", path, old] for each top-level member that differs (its
// bytes) or is on one side only, in the members' order; deeper: members
// that are objects on both sides are split one level down, and the
// entries shuffled with r.
func rawChanges(t *testing.T, oldJSON, newJSON []byte, deeper bool, r *rand.Rand) string {
	t.Helper()
	var entries [][]byte
	entry := func(op byte, path []string, vals ...[]byte) {
		e := append([]byte{'['}, '"', op, '"', ',', '[')
		for i, k := range path {
			if i > 0 {
				e = append(e, ',')
			}
			e = rawobj.AppendString(e, k)
		}
		e = append(e, ']')
		for _, v := range vals {
			e = append(append(e, ','), v...)
		}
		entries = append(entries, append(e, ']'))
	}
	var walk func(path []string, a, b []byte, depth int)
	walk = func(path []string, a, b []byte, depth int) {
		ak, av := membersOf(t, a)
		bk, bv := membersOf(t, b)
		for _, k := range ak {
			p := append(slices.Clip(path), k)
			switch y, ok := bv[k]; {
			case !ok:
				entry('-', p, av[k])
			case bytes.Equal(av[k], y):
			case depth > 0 && isObject(av[k]) && isObject(y):
				walk(p, av[k], y, depth-1)
			default:
				entry('~', p, av[k], y)
			}
		}
		for _, k := range bk {
			if _, ok := av[k]; !ok {
				entry('+', append(slices.Clip(path), k), bv[k])
			}
		}
	}
	depth := 0
	if deeper {
		depth = 1
	}
	walk(nil, oldJSON, newJSON, depth)
	if r != nil {
		r.Shuffle(len(entries), func(i, j int) { entries[i], entries[j] = entries[j], entries[i] })
	}
	return "[" + string(bytes.Join(entries, []byte(","))) + "]"
}

func isObject(v []byte) bool {
	v = bytes.TrimLeft(v, " \t\r\n")
	return len(v) > 0 && v[0] == '{'
}

// membersOf is the keys of an object's members, decoded, in their order,
// and their values as written (a key twice: the last, as Go decodes it).
func membersOf(t *testing.T, data []byte) ([]string, map[string][]byte) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not an object: %q", data)
	}
	var keys []string
	vals := map[string][]byte{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatalf("%q: %v", data, err)
		}
		k := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			t.Fatalf("%q: %v", data, err)
		}
		if _, seen := vals[k]; !seen {
			keys = append(keys, k)
		}
		vals[k] = raw
	}
	return keys, vals
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// ---------- the cases ----------

// handCases are the corners: numbers, keys, strings, lists, types.
func handCases() []jsCase {
	long := strings.Repeat
	pairs := [][2]string{
		// Numbers: equal by value, kept as written.
		{`{"a":1}`, `{"a":1.0}`},
		{`{"a":1e2}`, `{"a":100}`},
		{`{"a":100}`, `{"a":1E+2}`},
		{`{"a":12345678901234567890}`, `{"a":12345678901234567891}`},
		{`{"a":12345678901234567890}`, `{"a":1.2345678901234567890e19}`},
		{`{"a":-0}`, `{"a":0}`},
		{`{"a":-0.0}`, `{"a":1}`},
		{`{"a":1.50}`, `{"a":1.5}`},
		{`{"a":1.50}`, `{"a":2.50}`},
		{`{"a":0.1}`, `{"a":1e-1}`},
		{`{"a":1e400}`, `{"a":1e401}`},
		{`{"a":1e-400}`, `{"a":0}`},
		{`{"a":9007199254740993}`, `{"a":9007199254740992}`},
		{`{"a":[1,2.0,3e0]}`, `{"a":[1.0,2,30e-1]}`},
		{`{"a":{"b":1}}`, `{"a":{"b":1.000,"c":2E-0}}`},
		{`{"a":1e999999999999999999999}`, `{"a":10e999999999999999999998}`},
		{`{"a":1e999999999999999999999}`, `{"a":1e999999999999999999998}`},
		{`{"a":0.000e-99999999999999999999}`, `{"a":-0e+5}`},
		{`{"a":-1E-0009}`, `{"a":-0.000000001}`},
		{`{"n":1}`, `{"n":"1"}`},
		{`{"n":1,"m":true,"o":null}`, `{"n":true,"m":1,"o":0}`},
		// Keys: escaped, needing brackets, ordered by their UTF-8.
		{`{"é":1}`, `{"\u00e9":2}`},
		{`{"\u00e9":1,"e":1,"f":1}`, `{"é":2,"e":2,"f":2}`},
		{`{"😀":1,"\uffff":1,"\ue000":1,"ﬀ":1,"z":1}`, `{"😀":2,"\uffff":2,"\ue000":2,"ﬀ":2,"z":2}`},
		{`{"\ud83d\ude00":1,"\uff21":1,"\ud7ff":1}`, `{"\ud83d\ude00":2,"\uff21":2,"\ud7ff":2}`},
		{`{"":1,"a.b":1,"a/b":1,"a b":1,"a~b":1,"[x]":1,"\"":1,"\\":1,"\t":1,"\u0000":1,"\u007f":1,"\u0085":1,"\u00a0":1,"\u00ad":1,"\u2028":1,"\u3000":1,"\ud800":1,"0":1,"00":1,"01":1,"10":1,"-1":1,"1.5":1,"<&>":1,"a:b":1,"f:app.kubernetes.io/name":1,"~":1}`,
			`{"":2,"a.b":2,"a/b":2,"a b":2,"a~b":2,"[x]":2,"\"":2,"\\":2,"\t":2,"\u0000":2,"\u007f":2,"\u0085":2,"\u00a0":2,"\u00ad":2,"\u2028":2,"\u3000":2,"\ud800":2,"0":2,"00":2,"01":2,"10":2,"-1":2,"1.5":2,"<&>":2,"a:b":2,"f:app.kubernetes.io/name":2,"~":2}`},
		{`{"metadata":{"labels":{"app.kubernetes.io/name":"a","a/b":"x"},"annotations":{}}}`, `{"metadata":{"labels":{"app.kubernetes.io/name":"b"},"annotations":{"kubectl.kubernetes.io/restartedAt":"2026"}}}`},
		{"{\"\xff\":1,\"k\":{\"\xfe\":1}}", "{\"\xff\":2,\"k\":{\"\xfe\":2,\"\xc3\":3}}"},
		{`{"\ud800\u0041":1,"\udc00\ud800":1,"\ud83d\ud83d\ude00":1}`, `{"\ud800\u0041":2,"\udc00\ud800":2,"\ud83d\ud83d\ude00":2}`},
		{`{"0":{"1":{"2":1}}}`, `{"0":{"1":{"2":2}}}`},
		// Strings.
		{`{"s":"\u2028\u2029"}`, `{"s":"<&>"}`},
		{"{\"s\":\"\xff\xfe\",\"t\":\"\xe2\x82\",\"u\":\"a\xc3\"}", `{"s":"\ud800","t":"\udc00","u":"\ud800\u0041"}`},
		{`{"s":"\ud83d\ud83d\ude00"}`, `{"s":"\ud83d\ude00\ude00"}`},
		{`{"s":"\u0000\u0001\u001f\u007f\b\f\n\r\t\/\"\\"}`, `{"s":"\u0000"}`},
		{"{\"s\":\"\x7f\"}", `{"s":"\u007F"}`},
		{`{"s":"\u00e9\u00E9é"}`, `{"s":"ééé"}`},
		{`{"s":"a"}`, `{"s":"\u0061"}`},
		// Long values: cut at 240 runes, multi-byte, pairs, escapes.
		{`{"s":"` + long("é", 300) + `"}`, `{"s":"` + long("😀", 300) + `"}`},
		{`{"s":"` + long("x", 238) + `"}`, `{"s":"` + long("x", 239) + `"}`},
		{`{"s":"` + long("x", 237) + `😀"}`, `{"s":"` + long("x", 238) + `😀😀"}`},
		{`{"s":"` + long("x", 236) + `😀😀"}`, `{"s":"` + long("x", 237) + `😀😀"}`},
		{`{"s":"` + long(`\n`, 200) + `"}`, `{"s":"` + long(`\u2028`, 50) + `"}`},
		{`{"s":"` + long(`\u0001`, 50) + `"}`, `{"s":"` + long(`\ud800`, 300) + `"}`},
		{`{"l":[` + strings.TrimSuffix(long("1.0,", 200), ",") + `]}`, `{"l":[]}`},
		{`{"m":{` + strings.TrimSuffix(long(`"k":{"a":"`+long("y", 30)+`"},`, 1), ",") + `}}`, `{"m":{"k":[` + strings.TrimSuffix(long(`{"z":"é😀","a":[1,2]},`, 40), ",") + `]}}`},
		{`{"deep":` + long(`{"a":`, 60) + "1" + long("}", 60) + `}`, `{"deep":` + long(`{"a":`, 60) + "2" + long("}", 60) + `}`},
		// Types, null and missing.
		{`{"a":null}`, `{}`},
		{`{}`, `{"a":null}`},
		{`{"a":null}`, `{"a":{}}`},
		{`{"a":[]}`, `{"a":{}}`},
		{`{"a":""}`, `{"a":null}`},
		{`{"a":false}`, `{"a":0}`},
		{`{"a":{"b":{}}}`, `{"a":{"b":[]}}`},
		{`{"a":{}}`, `{"a":{"b":{}}}`},
		{`{}`, `{}`},
		{`{"a" : { "b" : [ 1 , 2 ] } }`, `{"a":{"b":[1,2]}}`},
		{`{"a":{"x":1,"y":2}}`, `{"a":{"y":2,"x":1}}`},
		// Lists by index and by name.
		{`{"l":[1,2]}`, `{"l":[1,2,3,4]}`},
		{`{"l":[1,2,3,4]}`, `{"l":[1]}`},
		{`{"l":[[1,[2]],{"a":[3]}]}`, `{"l":[[1,[2,3]],{"a":[]}]}`},
		{`{"l":[{"name":"a"},{"name":"b"},{"name":"c"},{"name":"d"},{"name":"e"}]}`, `{"l":[{"name":"e"},{"name":"c"},{"name":"a"},{"name":"f"},{"name":"b"}]}`},
		{`{"l":[{"name":"a","v":1},{"name":"b","v":1}]}`, `{"l":[{"name":"a","v":2},{"name":"b","v":1.0}]}`},
		{`{"l":[{"name":1},{"name":"b"}]}`, `{"l":[{"name":"b"},{"name":1}]}`},
		{`{"l":[{"name":"a"},{"name":"a"}]}`, `{"l":[{"name":"a"}]}`},
		{`{"l":[{"name":"a"},"x"]}`, `{"l":["x",{"name":"a"}]}`},
		{`{"l":[{"name":"\u00e9"},{"name":"b"}]}`, `{"l":[{"name":"b"},{"name":"é","x":1}]}`},
		{`{"l":[{"name":"a"},{"name":"b"},{"name":"c"},{"name":"d"},{"name":"e"},{"name":"f"},{"name":"g"},{"name":"h"},{"name":"i"},{"name":"j"}]}`,
			`{"l":[{"name":"j"},{"name":"b"},{"name":"i"},{"name":"d"},{"name":"c"},{"name":"x"},{"name":"g"},{"name":"a"},{"name":"h"},{"name":"e"}]}`},
		{`{"spec":{"containers":[{"name":"app","image":"app:1","env":[{"name":"A","value":"1"},{"name":"B"}]}]}}`,
			`{"spec":{"containers":[{"name":"init"},{"name":"app","image":"app:2","env":[{"name":"B"},{"name":"A","value":"2"}]}]}}`},
	}
	var out []jsCase
	for i, p := range pairs {
		out = append(out, jsCase{fmt.Sprintf("hand %d", i), []byte(p[0]), []byte(p[1])})
	}
	return out
}

// fixtureCases are the pairs of objects the tests of internal/diff and
// internal/stage use: the string pairs of their composite literals (old
// and new fields, two-string elements) that are both JSON objects.
func fixtureCases(t *testing.T) []jsCase {
	t.Helper()
	var out []jsCase
	for _, pattern := range []string{"../diff/*_test.go", "../stage/*_test.go"} {
		files, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		for _, file := range files {
			f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(f, func(n ast.Node) bool {
				lit, ok := n.(*ast.CompositeLit)
				if !ok {
					return true
				}
				var pair [2]string
				var found [2]bool
				str := func(e ast.Expr) (string, bool) {
					b, ok := e.(*ast.BasicLit)
					if !ok || b.Kind != token.STRING {
						return "", false
					}
					s, err := strconv.Unquote(b.Value)
					return s, err == nil
				}
				if len(lit.Elts) == 2 {
					pair[0], found[0] = str(lit.Elts[0])
					pair[1], found[1] = str(lit.Elts[1])
				}
				for _, e := range lit.Elts {
					if kv, ok := e.(*ast.KeyValueExpr); ok {
						if id, ok := kv.Key.(*ast.Ident); ok && (id.Name == "old" || id.Name == "new") {
							i := 0
							if id.Name == "new" {
								i = 1
							}
							pair[i], found[i] = str(kv.Value)
						}
					}
				}
				if found[0] && found[1] && isJSONObject(pair[0]) && isJSONObject(pair[1]) {
					out = append(out, jsCase{fmt.Sprintf("%s %d", filepath.Base(file), len(out)), []byte(pair[0]), []byte(pair[1])})
				}
				return true
			})
		}
	}
	if len(out) < 50 {
		t.Fatalf("only %d pairs of objects in the tests of internal/diff and internal/stage: were they moved?", len(out))
	}
	return out
}

// isJSONObject reports whether s is one JSON object, each key once.
func isJSONObject(s string) bool {
	v, err := rawobj.DecodeExact([]byte(s))
	if _, ok := v.(map[string]any); !ok || err != nil {
		return false
	}
	dup := func(data []byte) bool {
		dec := json.NewDecoder(bytes.NewReader(data))
		var walk func() bool
		walk = func() bool {
			tok, err := dec.Token()
			if err != nil {
				return true
			}
			switch tok {
			case json.Delim('{'):
				seen := map[string]bool{}
				for dec.More() {
					k, _ := dec.Token()
					if seen[k.(string)] || walk() {
						return true
					}
					seen[k.(string)] = true
				}
				_, _ = dec.Token()
			case json.Delim('['):
				for dec.More() {
					if walk() {
						return true
					}
				}
				_, _ = dec.Token()
			}
			return false
		}
		return walk()
	}
	return !dup([]byte(s))
}

// unicodeKeyCases change members whose keys are a rune at each edge of
// the ranges of PLAIN_KEY_RUNES, and in a few blocks around them: bare
// or in brackets, and ordered by their UTF-8.
func unicodeKeyCases() []jsCase {
	var runes []rune
	for _, r := range plainKeyEdges() {
		runes = append(runes, r-2, r-1, r, r+1)
	}
	runes = append(runes, 0xd7ff, 0xe000, 0xfffd, 0xffff, 0x10000, 0x1f600, 0x10ffff)
	var keys []string
	seen := map[string]bool{}
	for _, r := range runes {
		if r < 0 || r > unicode.MaxRune || utf16Surrogate(r) {
			continue
		}
		for _, k := range []string{string(r), "k" + string(r), string(r) + "0"} {
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	var out []jsCase
	for i := 0; i < len(keys); i += 400 {
		var a, b bytes.Buffer
		a.WriteByte('{')
		b.WriteByte('{')
		for j, k := range keys[i:min(i+400, len(keys))] {
			if j > 0 {
				a.WriteByte(',')
				b.WriteByte(',')
			}
			a.Write(rawobj.AppendString(nil, k))
			b.Write(rawobj.AppendString(nil, k))
			switch j % 3 {
			case 0:
				a.WriteString(":1")
				b.WriteString(":2")
			case 1:
				a.WriteString(`:{"x":1}`)
				b.WriteString(`:{"x":1,"` + strconv.Itoa(j) + `":2}`)
			default:
				a.WriteString(":null")
				b.WriteString(`:{}`)
			}
		}
		a.WriteByte('}')
		b.WriteByte('}')
		out = append(out, jsCase{fmt.Sprintf("unicode keys %d", i), a.Bytes(), b.Bytes()})
	}
	return out
}

// objectHistoryCases are the successive versions of a Pod (the running
// Pod of internal/health's tests) and a Deployment as a busy cluster
// changes them: scheduling, statuses, restarts, rollouts, managed fields,
// labels and annotations, deletion; each version against the one before.
func objectHistoryCases(t *testing.T) []jsCase {
	t.Helper()
	podJSON, err := os.ReadFile("../health/testdata/running-pod.json")
	if err != nil {
		t.Fatal(err)
	}
	deployJSON := []byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"demo","uid":"6f1c2a0e-3b7d-4c52-9a8e-1d2f3c4b5a69",
		"resourceVersion":"1000","generation":1,"creationTimestamp":"2026-11-25T06:00:00Z","labels":{"app":"web"},
		"annotations":{"deployment.kubernetes.io/revision":"1"},
		"managedFields":[{"manager":"kubectl-client-side-apply","operation":"Update","apiVersion":"apps/v1","time":"2026-11-25T06:00:00Z","fieldsType":"FieldsV1",
		"fieldsV1":{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:replicas":{},"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{".":{},"f:image":{}}}}}}}}]},
		"spec":{"replicas":3,"selector":{"matchLabels":{"app":"web"}},"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxUnavailable":"25%","maxSurge":"25%"}},
		"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"web","image":"nginx:1.27","ports":[{"containerPort":80,"protocol":"TCP"}],
		"resources":{"limits":{"cpu":"500m","memory":"128Mi"},"requests":{"cpu":"0.25","memory":"64Mi"}}}],"restartPolicy":"Always","terminationGracePeriodSeconds":30}}},
		"status":{"observedGeneration":1,"replicas":3,"updatedReplicas":3,"readyReplicas":3,"availableReplicas":3,
		"conditions":[{"type":"Available","status":"True","lastUpdateTime":"2026-11-25T06:00:10Z","lastTransitionTime":"2026-11-25T06:00:10Z","reason":"MinimumReplicasAvailable","message":"Deployment has minimum availability."},
		{"type":"Progressing","status":"True","lastUpdateTime":"2026-11-25T06:00:10Z","lastTransitionTime":"2026-11-25T06:00:00Z","reason":"NewReplicaSetAvailable","message":"ReplicaSet \"web-7665494998\" has successfully progressed."}]}}`)
	r := rand.New(rand.NewPCG(2026, 11))
	g := &jsonGen{r: r}
	var out []jsCase
	for _, base := range []struct {
		name string
		json []byte
	}{{"pod", podJSON}, {"deployment", deployJSON}} {
		cur := parseNode(t, base.json)
		rv := 31415
		for v := range 150 {
			next := cur.clone()
			rv += 1 + r.IntN(50)
			next.set([]string{"metadata", "resourceVersion"}, strNode(strconv.Itoa(rv)))
			for range 1 + r.IntN(3) {
				busyChange(g, next, v)
			}
			a, b := cur.bytes(), next.bytes()
			out = append(out, jsCase{fmt.Sprintf("%s version %d", base.name, v), a, b})
			cur = next
		}
	}
	return out
}

// busyChange is one change a busy cluster makes to a Pod or Deployment
// (v: the version, for times).
func busyChange(g *jsonGen, n *jnode, v int) {
	r := g.r
	at := strNode(time.Date(2026, 11, 25, 6, 0, 0, 0, time.UTC).Add(time.Duration(v) * time.Second).Format(time.RFC3339))
	container := []string{"spec", "containers"}
	if n.get([]string{"kind"}).lit == `"Deployment"` {
		container = []string{"spec", "template", "spec", "containers"}
	}
	switch r.IntN(14) {
	case 0:
		n.set([]string{"metadata", "labels", []string{"app.kubernetes.io/version", "pod-template-hash", "tier"}[r.IntN(3)]}, strNode(strconv.Itoa(r.IntN(1e9))))
	case 1:
		n.set([]string{"metadata", "annotations", "kubectl.kubernetes.io/restartedAt"}, at)
	case 2:
		n.set([]string{"metadata", "deletionTimestamp"}, at)
		n.set([]string{"metadata", "deletionGracePeriodSeconds"}, numNode([]string{"30", "30.0", "3e1"}[r.IntN(3)]))
	case 3:
		n.set([]string{"status", "phase"}, strNode([]string{"Pending", "Running", "Succeeded", "Failed"}[r.IntN(4)]))
	case 4:
		if conds := n.get([]string{"status", "conditions"}); conds != nil && len(conds.kids) > 0 {
			c := conds.kids[r.IntN(len(conds.kids))]
			c.set([]string{"status"}, strNode([]string{"True", "False", "Unknown"}[r.IntN(3)]))
			c.set([]string{"lastTransitionTime"}, at)
			if r.IntN(2) == 0 {
				c.set([]string{"message"}, strNode("containers with unready status: [web]\n<&> "+strings.Repeat("é", r.IntN(250))))
			}
		}
	case 5:
		if cs := n.get([]string{"status", "containerStatuses"}); cs != nil && len(cs.kids) > 0 {
			c := cs.kids[0]
			restarts := c.get([]string{"restartCount"})
			count, _ := strconv.Atoi(restarts.lit)
			c.set([]string{"restartCount"}, numNode(strconv.Itoa(count+1)))
			c.set([]string{"lastState"}, c.get([]string{"state"}).clone())
			if r.IntN(2) == 0 {
				c.set([]string{"state"}, parseNodeString(`{"terminated":{"exitCode":137,"reason":"OOMKilled","startedAt":"2026-11-25T06:00:01Z","finishedAt":"2026-11-25T06:05:00Z"}}`))
			} else {
				c.set([]string{"state"}, parseNodeString(`{"waiting":{"reason":"CrashLoopBackOff","message":"back-off 5m0s restarting failed container=web pod=web_demo(0b7f8a4c)"}}`))
			}
			c.set([]string{"ready"}, &jnode{kind: 't', lit: []string{"true", "false"}[r.IntN(2)]})
		} else {
			n.set([]string{"status", "readyReplicas"}, numNode(strconv.Itoa(r.IntN(4))))
			n.set([]string{"status", "availableReplicas"}, numNode(strconv.Itoa(r.IntN(4))))
		}
	case 6:
		if cs := n.get(container); cs != nil && len(cs.kids) > 0 {
			cs.kids[0].set([]string{"image"}, strNode(fmt.Sprintf("nginx:1.%d", 20+r.IntN(10))))
		}
	case 7: // a sidecar comes or goes, before or after
		if cs := n.get(container); cs != nil {
			if len(cs.kids) > 1 {
				i := r.IntN(len(cs.kids))
				cs.kids = slices.Delete(cs.kids, i, i+1)
			} else {
				side := parseNodeString(`{"name":"istio-proxy","image":"istio/proxyv2:1.24","args":["proxy","sidecar","--domain","$(POD_NAMESPACE).svc.cluster.local"]}`)
				cs.kids = slices.Insert(cs.kids, r.IntN(len(cs.kids)+1), side)
			}
		}
	case 8:
		mf := n.get([]string{"metadata", "managedFields"})
		if mf == nil {
			mf = &jnode{kind: '['}
			n.set([]string{"metadata", "managedFields"}, mf)
		}
		if len(mf.kids) > 2 {
			mf.kids[len(mf.kids)-1].set([]string{"time"}, at)
			break
		}
		mf.kids = append(mf.kids, parseNodeString(`{"manager":"kube-controller-manager","operation":"Update","apiVersion":"v1","time":"2026-11-25T06:01:00Z","fieldsType":"FieldsV1","subresource":"status",
			"fieldsV1":{"f:status":{"f:conditions":{"k:{\"type\":\"Ready\"}":{".":{},"f:lastTransitionTime":{},"f:status":{}}},"f:podIP":{},"f:podIPs":{".":{},"k:{\"ip\":\"10.244.0.7\"}":{".":{},"f:ip":{}}}}}}`))
	case 9:
		if r.IntN(2) == 0 {
			n.set([]string{"status", "podIP"}, strNode(fmt.Sprintf("10.244.%d.%d", r.IntN(4), r.IntN(250))))
			n.set([]string{"status", "podIPs"}, parseNodeString(`[{"ip":"10.244.0.7"},{"ip":"fd00::7"}]`))
		} else {
			n.del([]string{"status", "podIP"})
			n.del([]string{"status", "podIPs"})
		}
	case 10:
		if cs := n.get(container); cs != nil && len(cs.kids) > 0 {
			env := cs.kids[0].get([]string{"env"})
			if env == nil || len(env.kids) < 2 {
				cs.kids[0].set([]string{"env"}, parseNodeString(`[{"name":"A","value":"1"},{"name":"B","valueFrom":{"fieldRef":{"fieldPath":"metadata.name"}}},{"name":"C","value":"3"}]`))
			} else {
				r.Shuffle(len(env.kids), func(i, j int) { env.kids[i], env.kids[j] = env.kids[j], env.kids[i] })
			}
		}
	case 11:
		n.set([]string{"metadata", "finalizers"}, parseNodeString(`["kubernetes.io/pvc-protection","example.com/x"]`))
	case 12:
		if s := n.get([]string{"spec", "replicas"}); s != nil {
			n.set([]string{"spec", "replicas"}, numNode([]string{"1", "3", "3.0", "10", "0"}[r.IntN(5)]))
			n.set([]string{"metadata", "generation"}, numNode(strconv.Itoa(v+2)))
		} else {
			n.set([]string{"spec", "nodeName"}, strNode("kwok-node-"+strconv.Itoa(r.IntN(100))))
		}
	default:
		g.mutate(n)
	}
}

// randomCases are pairs of random objects, the new one the old with a
// few random changes: from a fixed seed, so a failure repeats.
func randomCases(n int) []jsCase {
	g := &jsonGen{r: rand.New(rand.NewPCG(20261126, 1))}
	out := make([]jsCase, 0, n)
	for i := range n {
		old := g.object(3)
		next := old.clone()
		for range g.r.IntN(4) {
			g.mutate(next)
		}
		out = append(out, jsCase{fmt.Sprintf("random %d", i), old.bytes(), next.bytes()})
	}
	return out
}

// ---------- JSON written and changed as it is written ----------

// jnode is a JSON value kept as written: its scalars' text, its members'
// keys as JSON strings (escapes and all), spaces or none.
type jnode struct {
	kind byte     // '{', '[', '"' (a string), '0' (a number), 't' (true, false, null)
	lit  string   // a scalar's text
	keys []string // an object's keys, as JSON strings
	dec  []string // the keys, decoded (decodedKey)
	kids []*jnode // an object's values, an array's elements
	ws   bool     // written with spaces
}

func strNode(s string) *jnode { return &jnode{kind: '"', lit: string(rawobj.AppendString(nil, s))} }
func numNode(s string) *jnode { return &jnode{kind: '0', lit: s} }

func (n *jnode) clone() *jnode {
	c := *n
	c.keys, c.dec = slices.Clone(n.keys), slices.Clone(n.dec)
	c.kids = make([]*jnode, len(n.kids))
	for i, k := range n.kids {
		c.kids[i] = k.clone()
	}
	return &c
}

func (n *jnode) bytes() []byte {
	var b bytes.Buffer
	n.write(&b)
	return b.Bytes()
}

func (n *jnode) write(b *bytes.Buffer) {
	sp := func() {
		if n.ws {
			b.WriteString(" \n\t")
		}
	}
	switch n.kind {
	case '{', '[':
		b.WriteByte(n.kind)
		for i, k := range n.kids {
			if i > 0 {
				b.WriteByte(',')
			}
			sp()
			if n.kind == '{' {
				b.WriteString(n.keys[i])
				sp()
				b.WriteByte(':')
				sp()
			}
			k.write(b)
		}
		sp()
		b.WriteByte(n.kind + 2) // } and ]
	default:
		b.WriteString(n.lit)
	}
}

// decodedKey is the key written k (a JSON string), decoded.
func decodedKey(k string) string {
	var s string
	if err := json.Unmarshal([]byte(k), &s); err != nil {
		panic(fmt.Sprintf("key %q: %v", k, err))
	}
	return s
}

// index is the index of n's member of key k (decoded), or -1.
func (n *jnode) index(k string) int {
	if len(n.dec) != len(n.keys) {
		n.dec = n.dec[:0]
		for _, raw := range n.keys {
			n.dec = append(n.dec, decodedKey(raw))
		}
	}
	return slices.Index(n.dec, k)
}

// insert puts the member raw (a JSON string): v at i.
func (n *jnode) insert(i int, raw string, v *jnode) {
	n.index("") // n.dec up to date
	n.keys = slices.Insert(n.keys, i, raw)
	n.dec = slices.Insert(n.dec, i, decodedKey(raw))
	n.kids = slices.Insert(n.kids, i, v)
}

// remove removes the member at i.
func (n *jnode) remove(i int) {
	n.index("")
	n.keys = slices.Delete(n.keys, i, i+1)
	n.dec = slices.Delete(n.dec, i, i+1)
	n.kids = slices.Delete(n.kids, i, i+1)
}

// get is the value at path (keys; indexes in arrays), or nil.
func (n *jnode) get(path []string) *jnode {
	for _, k := range path {
		switch n.kind {
		case '{':
			i := n.index(k)
			if i < 0 {
				return nil
			}
			n = n.kids[i]
		case '[':
			i, err := strconv.Atoi(k)
			if err != nil || i < 0 || i >= len(n.kids) {
				return nil
			}
			n = n.kids[i]
		default:
			return nil
		}
	}
	return n
}

// set puts v at path, making the objects on the way.
func (n *jnode) set(path []string, v *jnode) {
	for i, k := range path {
		if n.kind != '{' {
			*n = jnode{kind: '{'}
		}
		j := n.index(k)
		if j < 0 {
			j = len(n.kids)
			n.insert(j, string(rawobj.AppendString(nil, k)), &jnode{kind: '{'})
		}
		if i == len(path)-1 {
			n.kids[j] = v
			return
		}
		n = n.kids[j]
	}
}

// del removes the member at path, if there is one.
func (n *jnode) del(path []string) {
	parent := n.get(path[:len(path)-1])
	if parent == nil || parent.kind != '{' {
		return
	}
	if i := parent.index(path[len(path)-1]); i >= 0 {
		parent.remove(i)
	}
}

func parseNodeString(s string) *jnode {
	n, err := parseNodeErr([]byte(s))
	if err != nil {
		panic(err)
	}
	return n
}

func parseNode(t *testing.T, data []byte) *jnode {
	t.Helper()
	n, err := parseNodeErr(data)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// parseNodeErr reads JSON into a jnode, in the members' order, numbers
// as written.
func parseNodeErr(data []byte) (*jnode, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var value func() (*jnode, error)
	value = func() (*jnode, error) {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		switch x := tok.(type) {
		case json.Delim:
			n := &jnode{kind: byte(x)}
			for dec.More() {
				if n.kind == '{' {
					k, err := dec.Token()
					if err != nil {
						return nil, err
					}
					n.keys = append(n.keys, string(rawobj.AppendString(nil, k.(string))))
				}
				kid, err := value()
				if err != nil {
					return nil, err
				}
				n.kids = append(n.kids, kid)
			}
			_, err := dec.Token()
			return n, err
		case string:
			return strNode(x), nil
		case json.Number:
			return numNode(string(x)), nil
		case bool:
			return &jnode{kind: 't', lit: strconv.FormatBool(x)}, nil
		default:
			return &jnode{kind: 't', lit: "null"}, nil
		}
	}
	return value()
}

// jsonGen makes random JSON, from a pool of the texts that matter.
type jsonGen struct{ r *rand.Rand }

var (
	genKeys = []string{`"a"`, `"b"`, `"c"`, `"name"`, `"spec"`, `"status"`, `"0"`, `"1"`, `"10"`, `"01"`, `""`, `"a.b"`, `"a/b"`, `"a b"`,
		`"a~b"`, `"[x]"`, `"\""`, `"\\"`, `"\u00e9"`, `"z\u00e9"`, `"ze"`, `"😀"`, `"\uffff"`, `"\ue000"`, `"ﬀ"`, `"\u0085"`, `"\u00a0"`,
		`"\u00ad"`, `"\u0001"`, `"\t"`, `"\u2028"`, `"<&>"`, "\"\xff\"", `"\ud800"`, `"\u0041"`, `"A"`, `"k:{\"name\":\"x\"}"`,
		`"f:app.kubernetes.io/name"`, `"\ud83d\ude00x"`, `"\uff21"`, `"Ω"`, `"日本"`, `"e\u0301"`}
	genStrings = []string{`"a"`, `"web"`, `""`, `"\u00e9"`, `"é"`, `"\ud800"`, `"\udc00\ud800"`, `"\ud83d\ude00"`, `"😀"`, `"\u2028\u2029"`,
		`"<&>"`, `"a\"b"`, `"\\"`, `"\/"`, `"\n\t\b\f\r"`, `"\u0001\u001f\u007f"`, "\"\x7f\"", "\"\xff\xfe\"", "\"\xe2\x82\"",
		`"\ud800\u0041"`, `"\u00a0"`, `"1"`, `"true"`, `"null"`, `"nginx:1.27"`, `"2026-11-25T06:00:00Z"`}
	genNumbers = []string{"0", "-0", "1", "1.0", "1.50", "1.5", "1e2", "100", "1E+2", "100.0e0", "12345678901234567890",
		"12345678901234567890.0", "1e400", "-1e-400", "0.1", "1e-1", "3.14159", "-2", "2e0", "9007199254740993", "9007199254740992", "42"}
	genNames = []string{`"a"`, `"b"`, `"c"`, `"d"`, `"e"`, `"web"`, `"\u00e9"`}
)

func (g *jsonGen) pick(pool []string) string { return pool[g.r.IntN(len(pool))] }

// scalar is a random string, number, boolean or null; now and then a
// long string.
func (g *jsonGen) scalar() *jnode {
	switch g.r.IntN(20) {
	case 0, 1, 2, 3, 4, 5, 6, 7:
		return &jnode{kind: '"', lit: g.pick(genStrings)}
	case 8, 9, 10, 11, 12, 13:
		return numNode(g.pick(genNumbers))
	case 14, 15:
		return &jnode{kind: 't', lit: []string{"true", "false"}[g.r.IntN(2)]}
	case 16, 17, 18:
		return &jnode{kind: 't', lit: "null"}
	default:
		var b strings.Builder
		for range 40 + g.r.IntN(100) {
			b.WriteString(strings.Trim(g.pick(genStrings), `"`))
		}
		return &jnode{kind: '"', lit: `"` + b.String() + `"`}
	}
}

func (g *jsonGen) value(depth int) *jnode {
	if depth <= 0 {
		return g.scalar()
	}
	switch g.r.IntN(6) {
	case 0:
		return g.object(depth - 1)
	case 1:
		return g.array(depth - 1)
	default:
		return g.scalar()
	}
}

// object is a random object, each key once (decoded).
func (g *jsonGen) object(depth int) *jnode {
	n := &jnode{kind: '{', ws: g.r.IntN(8) == 0}
	for range g.r.IntN(6) {
		g.addMember(n, depth)
	}
	return n
}

func (g *jsonGen) addMember(n *jnode, depth int) {
	k := g.pick(genKeys)
	if n.index(decodedKey(k)) >= 0 {
		return
	}
	n.insert(g.r.IntN(len(n.kids)+1), k, g.value(depth))
}

// array is a random list: of values, or of objects with unique names.
func (g *jsonGen) array(depth int) *jnode {
	n := &jnode{kind: '[', ws: g.r.IntN(8) == 0}
	named := g.r.IntN(2) == 0
	for range g.r.IntN(6) {
		if named {
			n.kids = append(n.kids, g.named(depth))
		} else {
			n.kids = append(n.kids, g.value(depth))
		}
	}
	return n
}

// named is an object with a "name" (now and then not a string).
func (g *jsonGen) named(depth int) *jnode {
	e := g.object(depth)
	e.del([]string{"name"})
	name := &jnode{kind: '"', lit: g.pick(genNames)}
	if g.r.IntN(20) == 0 {
		name = numNode("1")
	}
	e.insert(0, `"name"`, name)
	return e
}

// mutate makes one random change somewhere in n (an object).
func (g *jsonGen) mutate(n *jnode) {
	var all []*jnode
	var walk func(*jnode)
	walk = func(x *jnode) {
		all = append(all, x)
		for _, k := range x.kids {
			walk(k)
		}
	}
	walk(n)
	x := all[g.r.IntN(len(all))]
	switch x.kind {
	case '{':
		switch op := g.r.IntN(6); {
		case op == 0 || len(x.kids) == 0:
			g.addMember(x, 2)
		case op == 1:
			x.remove(g.r.IntN(len(x.kids)))
		case op == 2:
			x.kids[g.r.IntN(len(x.kids))] = g.value(2)
		case op == 3:
			i, j := g.r.IntN(len(x.kids)), g.r.IntN(len(x.kids))
			x.index("")
			x.keys[i], x.keys[j] = x.keys[j], x.keys[i]
			x.dec[i], x.dec[j] = x.dec[j], x.dec[i]
			x.kids[i], x.kids[j] = x.kids[j], x.kids[i]
		case op == 4:
			x.ws = !x.ws
		default:
			if k := x.index("name"); k >= 0 {
				x.kids[k] = &jnode{kind: '"', lit: g.pick(genNames)}
			} else if x != n {
				*x = *g.value(2)
			}
		}
	case '[':
		named := len(x.kids) > 0 && x.kids[0].kind == '{' && x.kids[0].index("name") >= 0
		elem := func() *jnode {
			if named {
				return g.named(1)
			}
			return g.value(2)
		}
		switch op := g.r.IntN(6); {
		case op == 0 || len(x.kids) == 0:
			x.kids = append(x.kids, elem())
		case op == 1:
			x.kids = x.kids[:len(x.kids)-1]
		case op == 2:
			i := g.r.IntN(len(x.kids))
			x.kids = slices.Delete(x.kids, i, i+1)
		case op == 3:
			x.kids = slices.Insert(x.kids, g.r.IntN(len(x.kids)+1), elem())
		case op == 4:
			i, j := g.r.IntN(len(x.kids)), g.r.IntN(len(x.kids))
			x.kids[i], x.kids[j] = x.kids[j], x.kids[i]
		default:
			*x = *g.value(2)
		}
	case '0':
		if g.r.IntN(2) == 0 && !strings.ContainsAny(x.lit, "eE") {
			if strings.Contains(x.lit, ".") {
				x.lit += "0"
			} else {
				x.lit += []string{".0", "e0", "E+0", ".00e-0"}[g.r.IntN(4)]
			}
			return
		}
		*x = *g.value(2)
	default:
		if x == n {
			return
		}
		*x = *g.value(2)
	}
}

// ---------- the browser ----------

// chromiumPath is the Chromium the page tests drive; the test fails,
// saying how to install it, when there is none.
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{os.Getenv("DELTAS_CHROMIUM"), "chromium", "chromium-browser", "google-chrome"} {
		if name == "" {
			continue
		}
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("the timeline's page tests need Chromium: install it (apt-get install chromium; .ci/run does), or name one with DELTAS_CHROMIUM=/path/to/chrome")
	return ""
}

// pageBrowser is a headless Chromium showing the page with a data
// document, and what the page wrote to the console that is an error or a
// warning.
type pageBrowser struct {
	t   *testing.T
	ctx context.Context
	mu  sync.Mutex
	bad []string
}

// openPage writes the page with doc as its data document and opens it
// in headless Chromium (stopped when the test ends), with no network.
func openPage(t *testing.T, doc string) *pageBrowser {
	t.Helper()
	path := filepath.Join(t.TempDir(), "page.html")
	html := bytes.Replace(bytes.Replace(page, []byte(dataMarker), []byte(doc), 1), []byte(basesMarker), nil, 1)
	if err := os.WriteFile(path, html, 0o600); err != nil {
		t.Fatal(err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromiumPath(t)), chromedp.NoSandbox, chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1400, 900),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-quic", true), chromedp.Flag("no-first-run", true),
	)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	b := &pageBrowser{t: t, ctx: ctx}
	console := chromedp.Console(ctx)
	go func() {
		for m, err := range console {
			if err != nil {
				return
			}
			if m.IsException() || m.Type == chromedp.ConsoleError || m.Type == chromedp.ConsoleWarning {
				b.mu.Lock()
				b.bad = append(b.bad, m.String())
				b.mu.Unlock()
			}
		}
	}()
	limited, cancelOpen := context.WithTimeout(ctx, 60*time.Second)
	defer cancelOpen()
	if err := chromedp.Do(limited, chromedp.Navigate("file://"+path), chromedp.WaitReady(chromedp.CSS("[data-timeline][data-ready]"))); err != nil {
		t.Fatalf("opening the page: %v", err)
	}
	return b
}

// eval evaluates a JavaScript expression on the page into res (its
// JSON).
func (b *pageBrowser) eval(expr string, res any) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 60*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[json.RawMessage](expr))
	if err == nil {
		err = json.Unmarshal(v, res)
	}
	if err != nil {
		short := expr
		if len(short) > 200 {
			short = short[:200] + "…"
		}
		b.t.Fatalf("evaluating %s: %v", short, err)
	}
}

// click clicks the first element sel matches, as a user does.
func (b *pageBrowser) click(sel string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(sel))); err != nil {
		b.t.Fatalf("clicking %s: %v", sel, err)
	}
}

// noConsoleErrors fails the test if the page wrote an error or a warning.
func (b *pageBrowser) noConsoleErrors() {
	b.t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, m := range b.bad {
		b.t.Errorf("the page's console: %s", m)
	}
}
