package stage

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"
	"unicode/utf8"

	"github.com/kubectl-deltas/kubectl-deltas/internal/cache"
	"github.com/kubectl-deltas/kubectl-deltas/internal/diff"
	"github.com/kubectl-deltas/kubectl-deltas/internal/informer"
	"github.com/kubectl-deltas/kubectl-deltas/internal/rawobj"
)

// DiffOptions configure field-level diffs.
type DiffOptions struct {
	// Show puts the changes into the record (--diff).
	Show bool
	// ChangedOnly drops Updated deltas whose diff is empty (--changed-only).
	ChangedOnly bool
	// IgnoreStatus leaves /status out of diffs (--status=false).
	IgnoreStatus bool
	// IgnorePaths are left out of diffs: JSON pointers or dotted paths.
	IgnorePaths []string
}

// alwaysIgnoredPaths are left out of every diff: they change with every
// write and say nothing about what changed.
func alwaysIgnoredPaths() []string {
	return []string{"/metadata/resourceVersion", "/metadata/managedFields"}
}

// differ decides which deltas get a field-level diff and computes it.
type differ struct {
	show        bool
	changedOnly bool
	// ignore are the paths left out of diffs; ignored the same, parsed.
	ignore  []string
	ignored *diff.Ignored
	// onlyAlways: ignore is alwaysIgnoredPaths alone (Changes.Versions).
	onlyAlways bool
	// walkers are changeWalkers, each with its scratch, for compute.
	walkers sync.Pool
}

// newDiffer builds the ignore list: the defaults, metadata.generation with
// ChangedOnly, status with IgnoreStatus, then IgnorePaths.
func newDiffer(o DiffOptions) (*differ, error) {
	d := &differ{show: o.Show, changedOnly: o.ChangedOnly, ignore: alwaysIgnoredPaths()}
	if o.ChangedOnly {
		d.ignore = append(d.ignore, "/metadata/generation")
	}
	if o.IgnoreStatus {
		d.ignore = append(d.ignore, "/status")
	}
	for _, p := range o.IgnorePaths {
		if _, err := diff.ParsePath(p); err != nil {
			return nil, fmt.Errorf("invalid --ignore-path %q: %w; use a JSON pointer (/spec/replicas) or a dotted path (spec.replicas)", p, err)
		}
		d.ignore = append(d.ignore, p)
	}
	d.ignored = diff.ParseIgnored(d.ignore)
	d.onlyAlways = len(d.ignore) == len(alwaysIgnoredPaths())
	return d, nil
}

// applies reports whether an item is diffed: updates, and relisted objects
// that changed, when the Store had a previous state.
func (d *differ) applies(it *informer.Item) bool {
	if !d.show && !d.changedOnly || it.Old == nil || it.Object == nil {
		return false
	}
	switch it.Type {
	case cache.Updated:
		return true
	case cache.Replaced:
		return !it.Initial && !it.Unchanged
	}
	return false
}

// compute returns the changes from old to obj; a Secret's values are
// reported as changed without them.
func (d *differ) compute(old, obj *rawobj.Object, secret bool) ([]diff.Operation, error) {
	w := d.walker(secret)
	err := w.walk(old.JSON, obj.JSON)
	ops := w.step.Operations()
	d.release(w)
	if err != nil {
		return nil, fmt.Errorf("unable to decode an object for --diff: %w", err)
	}
	return ops, nil
}

// appendRaw appends to dst the members that differ from old to obj,
// undecoded (RawChanges), and reports whether it could: not for a Secret,
// whose values are not to be copied, nor where an ignored path lies
// inside a member that differs (the raw values would carry it); compute
// is the answer then.
func (d *differ) appendRaw(dst []byte, old, obj *rawobj.Object, secret bool) ([]byte, bool, error) {
	if secret {
		return dst, false, nil
	}
	w := d.walker(false)
	w.raws, w.raw = true, rawEntries{out: append(dst, '[')}
	err := w.walk(old.JSON, obj.JSON)
	w.raw.out = append(w.raw.out, ']')
	out, ok := w.raw.out, !w.raw.cannot
	w.raws, w.raw = false, rawEntries{}
	d.release(w)
	if err != nil {
		return dst, false, fmt.Errorf("unable to decode an object for --diff: %w", err)
	}
	if !ok {
		return dst, false, nil
	}
	if len(out) == len(dst)+2 {
		return dst, true, nil // nothing differs: no entries at all
	}
	return out, true, nil
}

// walker is a changeWalker of d's pool, its stepper reset for a diff
// (with a Secret's values redacted).
func (d *differ) walker(secret bool) *changeWalker {
	w, _ := d.walkers.Get().(*changeWalker)
	if w == nil {
		w = &changeWalker{step: diff.NewStepper(diff.Options{})}
	}
	opts := diff.Options{Ignored: d.ignored} // d.ignore, parsed once
	if secret {
		opts.Redact = isSecretValuePath
	}
	w.step.Reset(opts)
	return w
}

// release puts w back in d's pool.
func (d *differ) release(w *changeWalker) {
	w.release()
	d.walkers.Put(w)
}

// changeWalker walks two versions of an object's JSON side by side and
// hands the diff's Stepper what differs: a member with the same bytes on
// both sides holds the same value and makes no change, so it is skipped
// undecoded, and so is a member the diff ignores; a member that is an
// object on both sides is walked into; any other member that differs is
// decoded, on its side or on both. An update changes a few fields of an
// object: most of it is never decoded, and no map of its members is made.
//
// In raw mode (raws) the walk decodes nothing: it appends each member
// that differs to raw as it is in the two objects (appendRaw), and
// descends as it does otherwise; the stepper is then only asked which
// members are ignored.
type changeWalker struct {
	step *diff.Stepper
	raws bool
	raw  rawEntries
	// levels are the members of the two objects at each depth of the
	// walk, reused from one walk to the next; depth is where it is.
	levels []*[2]rawMembers
	depth  int
	// differing are what differs at each depth a walkAligned began, when
	// the two objects' keys go together; key and unescaped the scratch of
	// a member's key (escapes undone, U+FFFD for what is not UTF-8, as
	// rawMembers keys).
	differing      [][]rawobj.MemberDiff
	key, unescaped []byte
}

// rawMember is one member of a JSON object: its key as encoding/json
// decodes it (escapes undone, a byte that is not UTF-8 made U+FFFD), in
// the arena of the members' list, and its value, cut out of the object.
// Keys are matched decoded: "\xff" and "\xfe" are one key to a decoder,
// so they are one member to the walk.
type rawMember struct {
	keyStart, keyEnd int
	value            []byte
}

// rawMembers are the members of one JSON object, in order.
type rawMembers struct {
	arena   []byte
	members []rawMember
}

func (m *rawMembers) key(i int) []byte { return m.arena[m.members[i].keyStart:m.members[i].keyEnd] }

// index is the position of key in m, looked for from hint on (members
// of two versions of an object come in the same order), -1 if absent.
func (m *rawMembers) index(key []byte, hint int) int {
	n := len(m.members)
	for j := range n {
		i := (hint + j) % n
		if bytes.Equal(m.key(i), key) {
			return i
		}
	}
	return -1
}

// read makes m the members of the JSON object data, reusing its memory.
func (m *rawMembers) read(data []byte) error {
	clear(m.members) // let go of the previous object's values
	m.arena, m.members = m.arena[:0], m.members[:0]
	return rawobj.EachValidMember(data, func(k, v []byte) {
		start := len(m.arena)
		m.arena = appendKey(m.arena, k)
		m.members = append(m.members, rawMember{keyStart: start, keyEnd: len(m.arena), value: v})
	})
}

// release lets go of the objects of the last walk.
func (w *changeWalker) release() {
	for _, l := range w.levels {
		clear(l[0].members)
		clear(l[1].members)
	}
	for _, d := range w.differing {
		clear(d[:cap(d)])
	}
}

// walk hands w.step the differences of the JSON objects a and b, at the
// stepper's place.
func (w *changeWalker) walk(a, b []byte) error {
	if done, err := w.walkAligned(a, b); done || err != nil {
		return err
	}
	for len(w.levels) <= w.depth {
		w.levels = append(w.levels, new([2]rawMembers))
	}
	ma, mb := &w.levels[w.depth][0], &w.levels[w.depth][1]
	if err := ma.read(a); err != nil {
		return err
	}
	if err := mb.read(b); err != nil {
		return err
	}
	var small [32]bool
	var matched []bool
	if n := len(mb.members); n <= len(small) {
		matched = small[:n]
	} else {
		matched = make([]bool, n)
	}
	for i, m := range ma.members {
		key := ma.key(i)
		j := mb.index(key, i)
		if j >= 0 {
			matched[j] = true
		}
		if w.step.Ignores(key) || j >= 0 && bytes.Equal(m.value, mb.members[j].value) {
			continue
		}
		if j < 0 {
			if w.raws {
				w.raw.entry('-', string(key), m.value, nil, w.step)
				continue
			}
			x, err := rawobj.DecodeExact(m.value)
			if err != nil {
				return err
			}
			w.step.Removed(string(key), x)
			continue
		}
		if err := w.member(string(key), m.value, mb.members[j].value); err != nil {
			return err
		}
	}
	for j, m := range mb.members {
		if matched[j] || w.step.Ignores(mb.key(j)) {
			continue
		}
		if w.raws {
			w.raw.entry('+', string(mb.key(j)), nil, m.value, w.step)
			continue
		}
		y, err := rawobj.DecodeExact(m.value)
		if err != nil {
			return err
		}
		w.step.Added(string(mb.key(j)), y)
	}
	return nil
}

// walkAligned is walk for two objects whose keys come alike in the same
// order, as two versions of an object's do: the members that differ, at
// every depth, are found by one scan of the two side by side
// (rawobj.DiffMembers), with no list of members made. done is false, and
// nothing handed over, when the keys part ways: walk reads the members of
// each then.
func (w *changeWalker) walkAligned(a, b []byte) (done bool, err error) {
	for len(w.differing) <= w.depth {
		w.differing = append(w.differing, nil)
	}
	found, aligned, err := rawobj.DiffMembers(w.differing[w.depth][:0], a, b)
	w.differing[w.depth] = found
	if err != nil || !aligned {
		return false, err
	}
	skip := 0 // the depth inside an ignored member being passed over
	for i := range found {
		d := &found[i]
		if skip > 0 {
			switch d.Kind {
			case rawobj.DiffEnter:
				skip++
			case rawobj.DiffLeave:
				skip--
			}
			continue
		}
		if d.Kind == rawobj.DiffLeave {
			w.leave()
			continue
		}
		w.unescaped = rawobj.AppendUnescapedKey(w.unescaped[:0], d)
		w.key = appendKey(w.key[:0], w.unescaped)
		if w.step.Ignores(w.key) {
			if d.Kind == rawobj.DiffEnter {
				skip = 1
			}
			continue
		}
		key := string(w.key)
		switch d.Kind {
		case rawobj.DiffEnter:
			w.enter(key)
		case rawobj.DiffValues, rawobj.DiffObjects:
			if err := w.member(key, d.A, d.B); err != nil {
				return true, err
			}
		}
	}
	return true, nil
}

// enter descends into the member key, an object on both sides.
func (w *changeWalker) enter(key string) {
	w.step.Enter(key)
	w.depth++
}

// leave comes back from the member enter descended into.
func (w *changeWalker) leave() {
	w.depth--
	w.step.Leave()
}

// appendKey appends the member key, its escapes undone, as encoding/json
// decodes it: a byte that is not UTF-8 becomes U+FFFD.
func appendKey(b, key []byte) []byte {
	if utf8.Valid(key) {
		return append(b, key...)
	}
	for len(key) > 0 {
		r, n := utf8.DecodeRune(key)
		b = utf8.AppendRune(b, r) // RuneError, U+FFFD, for a byte that is not UTF-8
		key = key[n:]
	}
	return b
}

// member hands w.step the member key, present on both sides with
// different bytes: walked into when an object on both, else decoded.
func (w *changeWalker) member(key string, a, b []byte) error {
	if isObject(a) && isObject(b) {
		w.enter(key)
		err := w.walk(a, b)
		w.leave()
		return err
	}
	if w.raws {
		w.raw.entry('~', key, a, b, w.step)
		return nil
	}
	x, err := rawobj.DecodeExact(a)
	if err != nil {
		return err
	}
	y, err := rawobj.DecodeExact(b)
	if err != nil {
		return err
	}
	w.step.Values(key, x, y)
	return nil
}

// isObject reports whether the JSON value v is an object.
func isObject(v []byte) bool {
	for _, c := range v {
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		}
		return c == '{'
	}
	return false
}

// decodeExact decodes JSON into v with numbers kept as json.Number, so
// that diffing or encoding again changes no digit.
func decodeExact(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	return dec.Decode(v)
}

// rawEntries are the members that differ between two versions of an
// object, undecoded, as the page's script reads them (RawChanges): a JSON
// array of ["~", path, old, new], ["+", path, new] and ["-", path, old],
// path the keys from the object's root, the values as they are in the
// objects, in the order the walk meets them.
type rawEntries struct {
	out []byte
	// cannot: a member that differs holds an ignored path, which its raw
	// value would carry.
	cannot bool
}

// entry appends the member key of the object the walk is in (the
// stepper's place): op '~' with both values, '+' with b, '-' with a.
func (r *rawEntries) entry(op byte, key string, a, b []byte, step *diff.Stepper) {
	if step.IgnoresBelow(key) {
		r.cannot = true
		return
	}
	if r.out[len(r.out)-1] != '[' {
		r.out = append(r.out, ',')
	}
	r.out = append(r.out, '[', '"', op, '"', ',', '[')
	for _, k := range step.Path() {
		r.out = rawobj.AppendString(r.out, k)
		r.out = append(r.out, ',')
	}
	r.out = rawobj.AppendString(r.out, key)
	r.out = append(r.out, ']')
	if op != '+' {
		r.out = append(append(r.out, ','), a...)
	}
	if op != '-' {
		r.out = append(append(r.out, ','), b...)
	}
	r.out = append(r.out, ']')
}
