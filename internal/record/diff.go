package record

import (
	"bytes"
	"encoding/json"
	"fmt"

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
	// ignore are the paths left out of diffs.
	ignore []string
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
	before, after, err := decodeChanged(old.JSON, obj.JSON, 0)
	if err != nil {
		return nil, fmt.Errorf("unable to decode an object for --diff: %w", err)
	}
	opts := diff.Options{Ignore: d.ignore}
	if secret {
		opts.Redact = isSecretValuePath
	}
	return diff.Compute(before, after, opts), nil
}

// maxChangedDepth is how deep decodeChanged looks for identical members:
// an object's top level, metadata's, spec's and status', and theirs.
const maxChangedDepth = 3

// decodeChanged decodes what the diff of the JSON values a and b needs:
// of two objects, only the members whose JSON differs (and, down to
// maxChangedDepth, only what differs in those that are objects on both
// sides); a member with the same bytes on both sides holds the same value
// and makes no change, so it is left out of both. An update changes a few
// fields of an object: most of it is never decoded.
func decodeChanged(a, b []byte, depth int) (any, any, error) {
	if depth >= maxChangedDepth || !isObject(a) || !isObject(b) {
		before, err := rawobj.DecodeExact(a)
		if err != nil {
			return nil, nil, err
		}
		after, err := rawobj.DecodeExact(b)
		return before, after, err
	}
	membersA, membersB := map[string][]byte{}, map[string][]byte{}
	if err := rawobj.EachMember(a, func(k, v []byte) { membersA[string(k)] = v }); err != nil {
		return nil, nil, err
	}
	if err := rawobj.EachMember(b, func(k, v []byte) { membersB[string(k)] = v }); err != nil {
		return nil, nil, err
	}
	before, after := map[string]any{}, map[string]any{}
	for k, va := range membersA {
		vb, both := membersB[k]
		switch {
		case both && bytes.Equal(va, vb):
		case both:
			x, y, err := decodeChanged(va, vb, depth+1)
			if err != nil {
				return nil, nil, err
			}
			before[k], after[k] = x, y
		default:
			x, err := rawobj.DecodeExact(va)
			if err != nil {
				return nil, nil, err
			}
			before[k] = x
		}
	}
	for k, vb := range membersB {
		if _, both := membersA[k]; both {
			continue
		}
		y, err := rawobj.DecodeExact(vb)
		if err != nil {
			return nil, nil, err
		}
		after[k] = y
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
