package diff

import (
	"strconv"
)

// This file emits whole values: the additions, removals and replacements
// that Compute reports when a value exists on one side only or changes its
// JSON type. With Options.Redact, a value that contains redacted paths is
// split so that the redacted parts are reported without values while the
// patch stays valid: an empty container is added first and its children
// after it, or the children are removed before the emptied container.

// redTree marks the redacted paths below a value: a nil *redTree means
// none. self is set on the node of a path for which Redact returned true
// (nothing below it is recorded); kids holds the children (map keys, or
// list indices as decimal strings) that are or contain redacted paths.
type redTree struct {
	self bool
	kids map[string]*redTree
}

func (t *redTree) child(k string) *redTree {
	if t == nil {
		return nil
	}
	return t.kids[k]
}

// redactedBelow asks Redact about every path strictly below the current
// one inside v (ignored parts excepted) and returns where it said yes. It
// calls Redact once per node.
func (d *differ) redactedBelow(v any, ig *pathTrie) *redTree {
	if d.redact == nil {
		return nil
	}
	var t *redTree
	visit := func(k string, c any, kid *pathTrie) {
		if kid.ignored() {
			return
		}
		d.push(k)
		var node *redTree
		if d.redact(d.path[:len(d.path):len(d.path)]) {
			node = &redTree{self: true}
		} else {
			node = d.redactedBelow(c, kid)
		}
		d.pop()
		if node == nil {
			return
		}
		if t == nil {
			t = &redTree{kids: make(map[string]*redTree)}
		}
		t.kids[k] = node
	}
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			visit(k, c, ig.child(k))
		}
	case []any:
		for i, c := range x {
			k := strconv.Itoa(i)
			visit(k, c, ig.child(k))
		}
	}
	return t
}

// add emits the addition of v at the current path.
func (d *differ) add(v any, ig *pathTrie, parentRedacted bool) {
	if ig.ignored() {
		return
	}
	if d.isRedacted(parentRedacted) {
		d.addRedacted(v, ig)
		return
	}
	d.addTree(v, ig, d.redactedBelow(v, ig))
}

// addRedacted emits the addition of v at a redacted path: one operation
// per leaf key when v is a non-empty map, else one for v.
func (d *differ) addRedacted(v any, ig *pathTrie) {
	if m, ok := v.(map[string]any); ok && d.eachKey(m, ig, func(c any, kid *pathTrie) {
		d.addRedacted(c, kid)
	}) {
		return
	}
	d.emit(OpAdd, nil, nil, true)
}

// addTree emits the addition of v at the current path, which is not
// redacted; rt marks the redacted paths below it.
func (d *differ) addTree(v any, ig *pathTrie, rt *redTree) {
	if rt == nil {
		d.emit(OpAdd, nil, strip(v, ig), false)
		return
	}
	d.emit(OpAdd, nil, emptyLike(v), false)
	d.addChildren(v, ig, rt)
}

// addChildren emits the additions of the children of the container v, just
// added empty at the current path.
func (d *differ) addChildren(v any, ig *pathTrie, rt *redTree) {
	addChild := func(c any, kid *pathTrie, crt *redTree) {
		if crt != nil && crt.self {
			d.addRedacted(c, kid)
		} else {
			d.addTree(c, kid, crt)
		}
	}
	switch x := v.(type) {
	case map[string]any:
		for _, k := range sortedKeys(x) {
			kid := ig.child(k)
			if kid.ignored() {
				continue
			}
			d.push(k)
			addChild(x[k], kid, rt.child(k))
			d.pop()
		}
	case []any:
		// Ignored elements are left out, so the added ones are numbered
		// consecutively.
		j := 0
		for i, c := range x {
			k := strconv.Itoa(i)
			kid := ig.child(k)
			if kid.ignored() {
				continue
			}
			d.push(strconv.Itoa(j))
			addChild(c, kid, rt.child(k))
			d.pop()
			j++
		}
	}
}

// remove emits the removal of v from the current path.
func (d *differ) remove(v any, ig *pathTrie, parentRedacted bool) {
	if ig.ignored() {
		return
	}
	if d.isRedacted(parentRedacted) {
		d.removeRedacted(v, ig)
		return
	}
	d.removeTree(v, ig, d.redactedBelow(v, ig))
}

// removeRedacted emits the removal of v from a redacted path: one
// operation per leaf key when v is a non-empty map, else one for v.
func (d *differ) removeRedacted(v any, ig *pathTrie) {
	if m, ok := v.(map[string]any); ok && d.eachKey(m, ig, func(c any, kid *pathTrie) {
		d.removeRedacted(c, kid)
	}) {
		return
	}
	d.emit(OpRemove, nil, nil, true)
}

// removeTree emits the removal of v from the current path, which is not
// redacted; rt marks the redacted paths below it.
func (d *differ) removeTree(v any, ig *pathTrie, rt *redTree) {
	if rt == nil {
		d.emit(OpRemove, strip(v, ig), nil, false)
		return
	}
	d.removeChildren(v, ig, rt)
	d.emit(OpRemove, emptyLike(v), nil, false)
}

// removeChildren emits the removals of the children of the container v at
// the current path, leaving it empty (list elements from the last down).
func (d *differ) removeChildren(v any, ig *pathTrie, rt *redTree) {
	removeChild := func(c any, kid *pathTrie, crt *redTree) {
		if crt != nil && crt.self {
			d.removeRedacted(c, kid)
		} else {
			d.removeTree(c, kid, crt)
		}
	}
	switch x := v.(type) {
	case map[string]any:
		for _, k := range sortedKeys(x) {
			kid := ig.child(k)
			if kid.ignored() {
				continue
			}
			d.push(k)
			removeChild(x[k], kid, rt.child(k))
			d.pop()
		}
	case []any:
		for i := len(x) - 1; i >= 0; i-- {
			k := strconv.Itoa(i)
			kid := ig.child(k)
			if kid.ignored() {
				continue
			}
			d.push(k)
			removeChild(x[i], kid, rt.child(k))
			d.pop()
		}
	}
}

// replace emits the replacement of a by b at the current path, whose
// redaction red is already known.
func (d *differ) replace(a, b any, ig *pathTrie, red bool) {
	if red {
		d.emit(OpReplace, nil, nil, true)
		return
	}
	oldV, newV := a, b
	ra, rb := d.redactedBelow(a, ig), d.redactedBelow(b, ig)
	if ra != nil {
		d.removeChildren(a, ig, ra)
		oldV = emptyLike(a)
	}
	if rb != nil {
		newV = emptyLike(b)
	}
	d.emit(OpReplace, strip(oldV, ig), strip(newV, ig), false)
	if rb != nil {
		d.addChildren(b, ig, rb)
	}
}

// eachKey calls f for each non-ignored key of m in sorted order, with the
// path pushed, and reports whether f was called at all.
func (d *differ) eachKey(m map[string]any, ig *pathTrie, f func(v any, kid *pathTrie)) bool {
	called := false
	for _, k := range sortedKeys(m) {
		kid := ig.child(k)
		if kid.ignored() {
			continue
		}
		called = true
		d.push(k)
		f(m[k], kid)
		d.pop()
	}
	return called
}
