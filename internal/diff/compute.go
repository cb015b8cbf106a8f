package diff

import (
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// Options tune a diff (Stepper, and Compute in the tests).
type Options struct {
	// Ignore lists paths whose changes are dropped, as JSON pointers
	// ("/metadata/managedFields") or dotted paths ("metadata.managedFields"),
	// see ParsePath. Ignoring a path drops every change at or below it, and
	// an added, removed or replaced subtree is emitted without its ignored
	// parts. Entries that ParsePath rejects are skipped; validate user input
	// with ParsePath first. Nothing is ignored by default: the caller decides
	// (kubectl deltas ignores managedFields and resourceVersion).
	Ignore []string
	// Ignored, when set, is Ignore parsed once (ParseIgnored) for many
	// Compute calls; Ignore is not read then.
	Ignored *Ignored
	// Redact, when set, is asked about the paths Compute visits, parents
	// before children (the root is the empty path; siblings in no
	// particular order); once it returns true for a path, every
	// change at or below it is emitted with Redacted set and without values.
	// Changed maps under a redacted path are still walked, so each changed
	// key gets its own operation ("/data/password"), and an added or
	// removed map is split into one operation per leaf key. An added,
	// removed or replaced subtree that merely contains a redacted path is
	// split the same way so that no redacted value is emitted.
	//
	// The slice is only valid during the call: Redact must not keep or
	// modify it.
	Redact func(path []string) bool
}

// Ignored is a list of ignored paths (Options.Ignore) parsed once.
type Ignored struct{ trie *pathTrie }

// ParseIgnored parses paths as Options.Ignore does.
func ParseIgnored(paths []string) *Ignored { return &Ignored{trie: newPathTrie(paths)} }

// trieOr is i's trie, or, when i is nil, paths parsed.
func (i *Ignored) trieOr(paths []string) *pathTrie {
	if i != nil {
		return i.trie
	}
	return newPathTrie(paths)
}

// differ holds the state of one Compute call.
type differ struct {
	redact func([]string) bool
	// path is the current location, as unescaped segments.
	path []string
	ops  []Operation
}

func (d *differ) push(seg string) { d.path = append(d.path, seg) }
func (d *differ) pop()            { d.path = d.path[:len(d.path)-1] }

// isRedacted evaluates Redact at the current path, unless a parent already
// was redacted.
func (d *differ) isRedacted(parent bool) bool {
	if parent {
		return true
	}
	if d.redact == nil {
		return false
	}
	return d.redact(slices.Clip(d.path))
}

func (d *differ) emit(op Op, oldV, newV any, redacted bool) {
	o := Operation{Op: op, Path: pointer(d.path), Redacted: redacted}
	if !redacted {
		switch op {
		case OpAdd:
			o.Value = newV
		case OpRemove:
			o.Old = oldV
		case OpReplace:
			o.Old, o.Value = oldV, newV
		}
	}
	d.ops = append(d.ops, o)
}

// jsonKind classifies a value by its JSON type.
type jsonKind int

const (
	kindOther jsonKind = iota
	kindNull
	kindBool
	kindNumber
	kindString
	kindObject
	kindArray
)

// kindOf returns the JSON type of v. A nil map or list is null, as
// encoding/json writes it.
func kindOf(v any) jsonKind {
	switch x := v.(type) {
	case nil:
		return kindNull
	case bool:
		return kindBool
	case string:
		return kindString
	case map[string]any:
		if x == nil {
			return kindNull
		}
		return kindObject
	case []any:
		if x == nil {
			return kindNull
		}
		return kindArray
	}
	if isNumber(v) {
		return kindNumber
	}
	return kindOther
}

// diff compares a and b at the current path. ig is the ignore node of the
// path; parentRedacted tells whether a parent path was redacted.
func (d *differ) diff(a, b any, ig *pathTrie, parentRedacted bool) {
	if ig.ignored() {
		return
	}
	red := d.isRedacted(parentRedacted)
	ka, kb := kindOf(a), kindOf(b)
	if ka != kb {
		d.replace(a, b, ig, red)
		return
	}
	switch ka {
	case kindNull:
		return
	case kindBool:
		if a.(bool) != b.(bool) {
			d.replace(a, b, ig, red)
		}
	case kindString:
		if a.(string) != b.(string) {
			d.replace(a, b, ig, red)
		}
	case kindNumber:
		if !numbersEqual(a, b) {
			d.replace(a, b, ig, red)
		}
	case kindObject:
		d.diffMaps(a.(map[string]any), b.(map[string]any), ig, red)
	case kindArray:
		d.diffLists(a.([]any), b.([]any), ig, red)
	default:
		if !reflect.DeepEqual(a, b) {
			d.replace(a, b, ig, red)
		}
	}
}

// diffMaps compares two maps key by key. Keys are visited in map order
// (sorting every map's keys would dominate the cost of diffing equal
// objects); the operations of the few keys that changed are then put in
// sorted key order.
func (d *differ) diffMaps(a, b map[string]any, ig *pathTrie, red bool) {
	base := len(d.ops)
	var runs []keyRun // the operations of each changed key
	visit := func(k string, av, bv any, inA, inB bool) {
		kid := ig.child(k)
		if kid.ignored() {
			return
		}
		start := len(d.ops)
		d.push(k)
		switch {
		case !inB:
			d.remove(av, kid, red)
		case !inA:
			d.add(bv, kid, red)
		default:
			d.diff(av, bv, kid, red)
		}
		d.pop()
		if len(d.ops) > start {
			runs = append(runs, keyRun{key: k, start: start - base, end: len(d.ops) - base})
		}
	}
	for k, av := range a {
		bv, inB := b[k]
		visit(k, av, bv, true, inB)
	}
	for k, bv := range b {
		if _, inA := a[k]; !inA {
			visit(k, nil, bv, false, true)
		}
	}
	sortRuns(d.ops[base:], runs)
}

// keyRun locates the operations emitted for one map key, as offsets into
// the operations of its map: ops[start:end].
type keyRun struct {
	key        string
	start, end int
}

// sortRuns puts the runs of ops, the operations of one map's keys, in
// key order (runs are offsets into ops and cover it).
func sortRuns(ops []Operation, runs []keyRun) {
	compareRuns := func(x, y keyRun) int { return strings.Compare(x.key, y.key) }
	if len(runs) < 2 || slices.IsSortedFunc(runs, compareRuns) {
		return
	}
	slices.SortFunc(runs, compareRuns)
	sorted := make([]Operation, 0, len(ops))
	for _, r := range runs {
		sorted = append(sorted, ops[r.start:r.end]...)
	}
	copy(ops, sorted)
}

// sortedKeys returns the keys of m, sorted.
func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func (d *differ) diffLists(a, b []any, ig *pathTrie, red bool) {
	// Named lists with the same names in the same order (the common case)
	// pair the same elements by index and by name.
	if !sameNames(a, b) && isNamedList(a) && isNamedList(b) {
		d.diffNamedLists(a, b, ig, red)
		return
	}
	n := min(len(a), len(b))
	for i := range n {
		seg := strconv.Itoa(i)
		d.push(seg)
		d.diff(a[i], b[i], ig.child(seg), red)
		d.pop()
	}
	for i := n; i < len(b); i++ {
		seg := strconv.Itoa(i)
		d.push(seg)
		d.add(b[i], ig.child(seg), red)
		d.pop()
	}
	for i := len(a) - 1; i >= n; i-- {
		seg := strconv.Itoa(i)
		d.push(seg)
		d.remove(a[i], ig.child(seg), red)
		d.pop()
	}
}

// isNamedList reports whether l is a non-empty list of maps that all have
// a unique string "name".
func isNamedList(l []any) bool {
	if len(l) == 0 {
		return false
	}
	const small = 8 // below this, a quadratic scan beats a map
	var seen map[string]struct{}
	if len(l) > small {
		seen = make(map[string]struct{}, len(l))
	}
	for i, e := range l {
		name, ok := elemName(e)
		if !ok {
			return false
		}
		if seen != nil {
			if _, dup := seen[name]; dup {
				return false
			}
			seen[name] = struct{}{}
			continue
		}
		for _, prev := range l[:i] {
			if p, _ := elemName(prev); p == name {
				return false
			}
		}
	}
	return true
}

// sameNames reports whether a and b have the same length and every pair of
// elements at the same index are maps with the same string "name".
func sameNames(a, b []any) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, ok1 := elemName(a[i])
		y, ok2 := elemName(b[i])
		if !ok1 || !ok2 || x != y {
			return false
		}
	}
	return true
}

func elemName(e any) (string, bool) {
	m, ok := e.(map[string]any)
	if !ok {
		return "", false
	}
	name, ok := m["name"].(string)
	return name, ok
}

// diffNamedLists matches elements by name. Kept elements are those of a
// longest run of common names whose relative order is unchanged; every
// other old element is removed (from the highest index down) and every
// other new element added at its new index, in increasing order, which
// also diffs the kept elements at their new index.
func (d *differ) diffNamedLists(a, b []any, ig *pathTrie, red bool) {
	oldIdx := make(map[string]int, len(a))
	for i, e := range a {
		name, _ := elemName(e)
		oldIdx[name] = i
	}
	// For each new element, the old index of the same name, or -1.
	match := make([]int, len(b))
	var seq []int // old indices of common names, in new order
	for j, e := range b {
		name, _ := elemName(e)
		i, ok := oldIdx[name]
		if !ok {
			match[j] = -1
			continue
		}
		match[j] = i
		seq = append(seq, i)
	}
	keptOld := make([]bool, len(a))
	for _, i := range longestIncreasing(seq) {
		keptOld[i] = true
	}
	for i := len(a) - 1; i >= 0; i-- {
		if keptOld[i] {
			continue
		}
		seg := strconv.Itoa(i)
		d.push(seg)
		d.remove(a[i], ig.child(seg), red)
		d.pop()
	}
	for j := range b {
		seg := strconv.Itoa(j)
		d.push(seg)
		if i := match[j]; i >= 0 && keptOld[i] {
			d.diff(a[i], b[j], ig.child(seg), red)
		} else {
			d.add(b[j], ig.child(seg), red)
		}
		d.pop()
	}
}

// longestIncreasing returns the values of a longest strictly increasing
// subsequence of seq (deterministically, the one patience sorting finds).
func longestIncreasing(seq []int) []int {
	if len(seq) == 0 {
		return nil
	}
	// tails[k] is the position in seq of the smallest tail of an
	// increasing subsequence of length k+1; prev links positions.
	tails := make([]int, 0, len(seq))
	prev := make([]int, len(seq))
	for p, v := range seq {
		k, _ := slices.BinarySearchFunc(tails, v, func(pos, target int) int {
			return seq[pos] - target
		})
		if k > 0 {
			prev[p] = tails[k-1]
		} else {
			prev[p] = -1
		}
		if k == len(tails) {
			tails = append(tails, p)
		} else {
			tails[k] = p
		}
	}
	out := make([]int, len(tails))
	for p, k := tails[len(tails)-1], len(tails)-1; k >= 0; k-- {
		out[k] = seq[p]
		p = prev[p]
	}
	return out
}

// emptyLike returns an empty map or list of the kind of v (v is a map or a
// list).
func emptyLike(v any) any {
	if _, ok := v.([]any); ok {
		return []any{}
	}
	return map[string]any{}
}

// strip returns v without its ignored parts; v itself when nothing below
// it is ignored. v is never modified.
func strip(v any, ig *pathTrie) any {
	if ig == nil || len(ig.kids) == 0 {
		return v
	}
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, c := range x {
			kid := ig.child(k)
			if kid.ignored() {
				continue
			}
			out[k] = strip(c, kid)
		}
		return out
	case []any:
		out := make([]any, 0, len(x))
		for i, c := range x {
			kid := ig.child(strconv.Itoa(i))
			if kid.ignored() {
				continue
			}
			out = append(out, strip(c, kid))
		}
		return out
	}
	return v
}
