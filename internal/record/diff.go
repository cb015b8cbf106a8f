package record

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"

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
	// decoders are changedDecoders, each with its scratch, for compute.
	decoders sync.Pool
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
	c, _ := d.decoders.Get().(*changedDecoder)
	if c == nil {
		c = &changedDecoder{ignore: d.ignored}
	}
	before, after, err := c.decode(old.JSON, obj.JSON)
	d.decoders.Put(c)
	if err != nil {
		return nil, fmt.Errorf("unable to decode an object for --diff: %w", err)
	}
	opts := diff.Options{Ignore: d.ignore, Ignored: d.ignored}
	if secret {
		opts.Redact = isSecretValuePath
	}
	return diff.Compute(before, after, opts), nil
}

// maxChangedDepth is how deep changedDecoder looks for identical members:
// an object's top level, metadata's, spec's and status', and theirs.
const maxChangedDepth = 3

// changedDecoder decodes what the diff of two JSON values needs: of two
// objects, only the members whose JSON differs (and, down to
// maxChangedDepth, only what differs in those that are objects on both
// sides); a member with the same bytes on both sides holds the same value
// and makes no change, so it is left out of both, and so is a member the
// diff ignores (metadata.managedFields, which differs on every write). An
// update changes a few fields of an object: most of it is never decoded.
type changedDecoder struct {
	// ignore are the diff's ignored paths.
	ignore *diff.Ignored
	// path is where decode is, as segments from the root.
	path []string
	// levels are the members of the two objects at each depth, reused
	// from one decode to the next.
	levels [maxChangedDepth][2]rawMembers
}

// rawMember is one member of a JSON object: its key, in the arena of the
// members' list, and its value, cut out of the object.
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
		m.arena = append(m.arena, k...)
		m.members = append(m.members, rawMember{keyStart: start, keyEnd: len(m.arena), value: v})
	})
}

// ignored reports whether the member key at c.path is ignored.
func (c *changedDecoder) ignored(key []byte) bool { return c.ignore.IgnoresMember(c.path, key) }

// decode decodes the changed parts of a and b (see changedDecoder).
func (c *changedDecoder) decode(a, b []byte) (any, any, error) {
	if len(c.path) >= maxChangedDepth || !isObject(a) || !isObject(b) {
		before, err := rawobj.DecodeExact(a)
		if err != nil {
			return nil, nil, err
		}
		after, err := rawobj.DecodeExact(b)
		return before, after, err
	}
	ma, mb := &c.levels[len(c.path)][0], &c.levels[len(c.path)][1]
	if err := ma.read(a); err != nil {
		return nil, nil, err
	}
	if err := mb.read(b); err != nil {
		return nil, nil, err
	}
	before, after := map[string]any{}, map[string]any{}
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
		if c.ignored(key) || j >= 0 && bytes.Equal(m.value, mb.members[j].value) {
			continue
		}
		k := string(key)
		if j < 0 {
			x, err := rawobj.DecodeExact(m.value)
			if err != nil {
				return nil, nil, err
			}
			before[k] = x
			continue
		}
		c.path = append(c.path, k)
		x, y, err := c.decode(m.value, mb.members[j].value)
		c.path = c.path[:len(c.path)-1]
		if err != nil {
			return nil, nil, err
		}
		before[k], after[k] = x, y
	}
	for j, m := range mb.members {
		if matched[j] || c.ignored(mb.key(j)) {
			continue
		}
		y, err := rawobj.DecodeExact(m.value)
		if err != nil {
			return nil, nil, err
		}
		after[string(mb.key(j))] = y
	}
	return before, after, nil
}

// isObject reports whether the JSON value v is an object.
func isObject(v []byte) bool {
	v = bytes.TrimLeft(v, " \t\r\n")
	return len(v) > 0 && v[0] == '{'
}

// decodeExact decodes JSON into v with numbers kept as json.Number, so
// that diffing or encoding again changes no digit.
func decodeExact(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	return dec.Decode(v)
}
