package cmd

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/kubectl-deltas/kubectl-deltas/internal/cache"
	"github.com/kubectl-deltas/kubectl-deltas/internal/diff"
	"github.com/kubectl-deltas/kubectl-deltas/internal/rawobj"
)

// Paths left out of every diff: they change with every write and say
// nothing about what changed.
var alwaysIgnoredPaths = []string{"/metadata/resourceVersion", "/metadata/managedFields"}

// diffConfig decides which deltas get a field-level diff and how.
type diffConfig struct {
	// show puts the changes into the record (--diff).
	show bool
	// changedOnly drops Updated deltas whose diff is empty (--changed-only).
	changedOnly bool
	// ignore are the JSON pointers left out of diffs.
	ignore []string
}

// newDiffConfig builds the ignore list: the defaults, metadata.generation
// with --changed-only, status with --status=false, then --ignore-path.
func newDiffConfig(show, changedOnly, status bool, ignorePaths []string) (*diffConfig, error) {
	c := &diffConfig{show: show, changedOnly: changedOnly}
	c.ignore = append(c.ignore, alwaysIgnoredPaths...)
	if changedOnly {
		c.ignore = append(c.ignore, "/metadata/generation")
	}
	if !status {
		c.ignore = append(c.ignore, "/status")
	}
	for _, p := range ignorePaths {
		if _, err := diff.ParsePath(p); err != nil {
			return nil, fmt.Errorf("invalid --ignore-path %q: %w; use a JSON pointer (/spec/replicas) or a dotted path (spec.replicas)", p, err)
		}
		c.ignore = append(c.ignore, p)
	}
	return c, nil
}

// enabled reports whether any diff is computed at all.
func (c *diffConfig) enabled() bool {
	return c != nil && (c.show || c.changedOnly)
}

// applies reports whether an item is diffed: updates, and relisted
// objects whose resourceVersion changed, when the Store had a previous
// state.
func (c *diffConfig) applies(it *item, initial bool) bool {
	if !c.enabled() || it.old == nil || it.obj == nil {
		return false
	}
	switch it.delta.Type {
	case cache.Updated:
		return true
	case cache.Replaced:
		return !initial && !it.unchanged
	}
	return false
}

// compute returns the changes from old to obj.
func (c *diffConfig) compute(old, obj *rawobj.Object, secret bool) ([]diff.Operation, error) {
	before, err := decodeJSON(old.JSON)
	if err != nil {
		return nil, err
	}
	after, err := decodeJSON(obj.JSON)
	if err != nil {
		return nil, err
	}
	opts := diff.Options{Ignore: c.ignore}
	if secret {
		opts.Redact = diff.RedactSecret
	}
	return diff.Compute(before, after, opts), nil
}

// decodeJSON decodes an object for diffing, numbers kept exact.
func decodeJSON(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("unable to decode an object for --diff: %w", err)
	}
	return v, nil
}
