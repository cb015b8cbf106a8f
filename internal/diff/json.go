package diff

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/kubectl-deltas/kubectl-deltas/internal/rawobj"
)

// MarshalJSON writes the operation with its fields in a fixed order:
//
//	replace: {"op":"replace","path":…,"old":…,"value":…}
//	remove:  {"op":"remove","path":…,"old":…}
//	add:     {"op":"add","path":…,"value":…}
//	redacted (any op): {"op":…,"path":…,"redacted":true}
//
// A nil Old or Value is written as null. HTML characters are not escaped,
// so an enclosing encoder decides (json.Encoder.SetEscapeHTML).
func (o Operation) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString(`{"op":`)
	if err := writeJSON(&buf, string(o.Op)); err != nil {
		return nil, err
	}
	buf.WriteString(`,"path":`)
	if err := writeJSON(&buf, o.Path); err != nil {
		return nil, err
	}
	if o.Redacted {
		buf.WriteString(`,"redacted":true}`)
		return buf.Bytes(), nil
	}
	withOld, withValue := o.Op == OpReplace || o.Op == OpRemove, o.Op == OpReplace || o.Op == OpAdd
	if o.Op != OpAdd && o.Op != OpRemove && o.Op != OpReplace {
		// An op this package does not emit: keep whatever it carries.
		withOld, withValue = o.Old != nil, o.Value != nil
	}
	if withOld {
		buf.WriteString(`,"old":`)
		if err := writeJSON(&buf, o.Old); err != nil {
			return nil, fmt.Errorf("old value at %q: %w", o.Path, err)
		}
	}
	if withValue {
		buf.WriteString(`,"value":`)
		if err := writeJSON(&buf, o.Value); err != nil {
			return nil, fmt.Errorf("value at %q: %w", o.Path, err)
		}
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// writeJSON appends the compact JSON of v without HTML escaping.
func writeJSON(buf *bytes.Buffer, v any) error {
	switch v := v.(type) { // the common leaves, as encoding/json writes them
	case string:
		buf.Write(rawobj.AppendString(buf.AvailableBuffer(), v))
		return nil
	case bool:
		buf.WriteString(strconv.FormatBool(v))
		return nil
	case nil:
		buf.WriteString("null")
		return nil
	case int64:
		buf.Write(strconv.AppendInt(buf.AvailableBuffer(), v, 10))
		return nil
	}
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	// Encode ends with a newline.
	buf.Truncate(buf.Len() - 1)
	return nil
}

// UnmarshalJSON reads the form MarshalJSON writes. "op" (add, remove or
// replace) and "path" (a JSON pointer) are required. Numbers are decoded as
// Kubernetes does, int64 when integral and in range and float64 otherwise,
// except that a number float64 cannot hold exactly (by its shortest decimal
// form) stays a json.Number, so no value changes. When "redacted" is true,
// any "old" and "value" are dropped.
func (o *Operation) UnmarshalJSON(data []byte) error {
	var raw struct {
		Op       *string         `json:"op"`
		Path     *string         `json:"path"`
		Old      json.RawMessage `json:"old"`
		Value    json.RawMessage `json:"value"`
		Redacted bool            `json:"redacted"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return fmt.Errorf("invalid operation: %w", err)
	}
	if raw.Op == nil {
		return errors.New(`invalid operation: missing "op"`)
	}
	if raw.Path == nil {
		return errors.New(`invalid operation: missing "path"`)
	}
	op := Op(*raw.Op)
	switch op {
	case OpAdd, OpRemove, OpReplace:
	default:
		return fmt.Errorf("invalid operation: unsupported op %q (want add, remove or replace)", *raw.Op)
	}
	if _, err := parsePointer(*raw.Path); err != nil {
		return fmt.Errorf("invalid operation: %w", err)
	}
	out := Operation{Op: op, Path: *raw.Path, Redacted: raw.Redacted}
	if !raw.Redacted {
		var err error
		if out.Old, err = decodeValue(raw.Old); err != nil {
			return fmt.Errorf("invalid operation: old value: %w", err)
		}
		if out.Value, err = decodeValue(raw.Value); err != nil {
			return fmt.Errorf("invalid operation: value: %w", err)
		}
	}
	*o = out
	return nil
}

// decodeValue decodes a JSON value (nil for absent) with Kubernetes number
// conventions.
func decodeValue(raw json.RawMessage) (any, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return convertNumbers(v), nil
}

// convertNumbers replaces the json.Numbers of v, in place, by int64 or
// float64 where they hold the same value. It is not apimachinery's
// util/json conversion (which the template printers use, as kubectl does):
// that one turns every non-integer into a float64, which would change
// values a decoded operation must carry exactly.
func convertNumbers(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			x[k] = convertNumbers(c)
		}
	case []any:
		for i, c := range x {
			x[i] = convertNumbers(c)
		}
	case json.Number:
		if i, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return i
		}
		// Keep the json.Number when float64 would change the value.
		if f, err := strconv.ParseFloat(string(x), 64); err == nil && !math.IsInf(f, 0) &&
			canonicalFloat(f, 64) == normalizeDecimal(string(x)) {
			return f
		}
	}
	return v
}
