package diff

import (
	"errors"
	"fmt"
	"strconv"
)

// Apply applies ops in order to a deep copy of doc, as an RFC 6902 patch
// limited to add, remove and replace, and returns the result. doc and the
// values of ops are not modified, and the result shares no memory with them.
// An add at a list index inserts (index "-" appends), an add at a map key
// sets it; remove and replace need the target to exist. Redacted operations
// carry no value and cannot be applied. The empty path "" is the whole
// document (add and replace set it).
func Apply(doc any, ops []Operation) (any, error) {
	out := deepCopy(doc)
	for i, op := range ops {
		if op.Redacted {
			return nil, fmt.Errorf("operation %d (%s %q): %w", i, op.Op, op.Path, errRedacted)
		}
		tokens, err := parsePointer(op.Path)
		if err != nil {
			return nil, fmt.Errorf("operation %d: %w", i, err)
		}
		switch op.Op {
		case OpAdd, OpRemove, OpReplace:
		default:
			return nil, fmt.Errorf("operation %d: unsupported op %q (want add, remove or replace)", i, op.Op)
		}
		out, err = applyAt(out, tokens, op.Op, op.Value)
		if err != nil {
			return nil, fmt.Errorf("operation %d (%s %q): %w", i, op.Op, op.Path, err)
		}
	}
	return out, nil
}

var errRedacted = errors.New("redacted operation carries no value")

// applyAt applies one operation at tokens below node and returns the new
// node (lists are reallocated by insertions). node belongs to Apply.
func applyAt(node any, tokens []string, op Op, value any) (any, error) {
	if len(tokens) == 0 {
		if op == OpRemove {
			return nil, errors.New("cannot remove the whole document")
		}
		return deepCopy(value), nil
	}
	tok, rest := tokens[0], tokens[1:]
	switch n := node.(type) {
	case map[string]any:
		if n == nil {
			return nil, fmt.Errorf("cannot go into a nil map at %q", tok)
		}
		child, ok := n[tok]
		if len(rest) > 0 {
			if !ok {
				return nil, fmt.Errorf("key %q not found", tok)
			}
			c, err := applyAt(child, rest, op, value)
			if err != nil {
				return nil, err
			}
			n[tok] = c
			return n, nil
		}
		switch op {
		case OpAdd:
			n[tok] = deepCopy(value)
		case OpRemove:
			if !ok {
				return nil, fmt.Errorf("key %q not found", tok)
			}
			delete(n, tok)
		case OpReplace:
			if !ok {
				return nil, fmt.Errorf("key %q not found", tok)
			}
			n[tok] = deepCopy(value)
		}
		return n, nil
	case []any:
		if len(rest) == 0 && op == OpAdd && tok == "-" {
			return append(n, deepCopy(value)), nil
		}
		if !isCanonicalIndex(tok) {
			return nil, fmt.Errorf("invalid list index %q", tok)
		}
		idx, err := strconv.Atoi(tok)
		if err != nil {
			return nil, fmt.Errorf("invalid list index %q: %w", tok, err)
		}
		limit := len(n)
		if len(rest) == 0 && op == OpAdd {
			limit++ // inserting at len(n) appends
		}
		if idx >= limit {
			return nil, fmt.Errorf("list index %d out of range (length %d)", idx, len(n))
		}
		if len(rest) > 0 {
			c, err := applyAt(n[idx], rest, op, value)
			if err != nil {
				return nil, err
			}
			n[idx] = c
			return n, nil
		}
		switch op {
		case OpAdd:
			n = append(n, nil)
			copy(n[idx+1:], n[idx:])
			n[idx] = deepCopy(value)
		case OpRemove:
			copy(n[idx:], n[idx+1:])
			n[len(n)-1] = nil
			n = n[:len(n)-1]
		case OpReplace:
			n[idx] = deepCopy(value)
		}
		return n, nil
	default:
		return nil, fmt.Errorf("cannot go into %s at %q", describe(node), tok)
	}
}

// describe names the JSON type of v for error messages.
func describe(v any) string {
	switch kindOf(v) {
	case kindNull:
		return "null"
	case kindBool:
		return "a boolean"
	case kindNumber:
		return "a number"
	case kindString:
		return "a string"
	}
	return fmt.Sprintf("a value of type %T", v)
}

// deepCopy copies the maps and lists of a decoded JSON tree; other values
// are immutable and shared. Nil maps and lists stay nil (JSON null).
func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		if x == nil {
			return x
		}
		out := make(map[string]any, len(x))
		for k, c := range x {
			out[k] = deepCopy(c)
		}
		return out
	case []any:
		if x == nil {
			return x
		}
		out := make([]any, len(x))
		for i, c := range x {
			out[i] = deepCopy(c)
		}
		return out
	}
	return v
}
