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
	before, err := decodeJSON(old.JSON)
	if err != nil {
		return nil, err
	}
	after, err := decodeJSON(obj.JSON)
	if err != nil {
		return nil, err
	}
	opts := diff.Options{Ignore: d.ignore}
	if secret {
		opts.Redact = isSecretValuePath
	}
	return diff.Compute(before, after, opts), nil
}

// decodeJSON decodes an object for diffing.
func decodeJSON(raw []byte) (any, error) {
	var v any
	if err := decodeExact(raw, &v); err != nil {
		return nil, fmt.Errorf("unable to decode an object for --diff: %w", err)
	}
	return v, nil
}

// decodeExact decodes JSON into v with numbers kept as json.Number, so
// that diffing or encoding again changes no digit.
func decodeExact(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	return dec.Decode(v)
}
