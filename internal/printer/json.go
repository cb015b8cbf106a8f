package printer

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/kubectl-deltas/kubectl-deltas/internal/diff"
	"github.com/kubectl-deltas/kubectl-deltas/internal/rawobj"
)

// jsonPrinter writes one compact JSON object per line (JSON Lines).
type jsonPrinter struct {
	buf []byte
}

func (p *jsonPrinter) Print(w io.Writer, r *Record) error {
	p.buf = append(AppendJSON(p.buf[:0], r), '\n')
	_, err := w.Write(p.buf)
	return err
}

// appendOwners appends owners as a JSON array of {"apiVersion","kind",
// "name","uid"}.
func appendOwners(dst []byte, owners []Owner) []byte {
	dst = append(dst, '[')
	for i, o := range owners {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"apiVersion":`...)
		dst = rawobj.AppendString(dst, o.APIVersion)
		dst = append(dst, `,"kind":`...)
		dst = rawobj.AppendString(dst, o.Kind)
		dst = append(dst, `,"name":`...)
		dst = rawobj.AppendString(dst, o.Name)
		dst = append(dst, `,"uid":`...)
		dst = rawobj.AppendString(dst, o.UID)
		dst = append(dst, '}')
	}
	return append(dst, ']')
}

// appendHealth appends h as {"status","source","reason","message"}
// (source and reason when not empty).
func appendHealth(dst []byte, h *Health) []byte {
	dst = append(dst, `{"status":`...)
	dst = rawobj.AppendString(dst, h.Status)
	if h.Source != "" {
		dst = append(dst, `,"source":`...)
		dst = rawobj.AppendString(dst, h.Source)
	}
	if h.Reason != "" {
		dst = append(dst, `,"reason":`...)
		dst = rawobj.AppendString(dst, h.Reason)
	}
	dst = append(dst, `,"message":`...)
	dst = rawobj.AppendString(dst, h.Message)
	return append(dst, '}')
}

// AppendJSON appends the record's JSON form (schema v1, documented in
// docs/output.md), without a trailing newline, and returns the extended buffer.
// Keys come in the documented order:
//
//	type, time, initial, [context], apiVersion, kind, resource, namespace,
//	name, uid, resourceVersion, [delta, oldResourceVersion | isInInitialList],
//	[finalStateUnknown], [coalesced], [caughtUp], [owners], [manager],
//	[operation], [health], [changes], object, [oldObject]
//
// A handler call's record (--handler: type OnAdd, OnUpdate or OnDelete)
// has delta (the delta it comes from), and oldResourceVersion for OnUpdate
// or isInInitialList for OnAdd; oldObject for OnUpdate with --diff.
// context is written when not empty, finalStateUnknown when true, coalesced when not 0, owners
// (an array of {"apiVersion","kind","name","uid"}) when not empty, manager and
// operation each when not empty, health ({"status","reason","message"}, reason
// when not empty) when not nil, changes when not nil (an empty non-nil
// slice is "changes":[], meaning the diff found nothing). time is RFC 3339
// with nanoseconds, in UTC. object is r.Object as is (it must be valid
// JSON; an indented one is compacted), or null when empty.
//
// Strings are escaped as encoding/json does with HTML escaping off. Apart
// from growing dst, AppendJSON does not allocate unless the record has
// Changes.
func AppendJSON(dst []byte, r *Record) []byte {
	dst = append(dst, `{"type":`...)
	dst = rawobj.AppendString(dst, r.Type)
	dst = append(dst, `,"time":"`...)
	dst = r.Time.UTC().AppendFormat(dst, time.RFC3339Nano)
	if r.Initial {
		dst = append(dst, `","initial":true`...)
	} else {
		dst = append(dst, `","initial":false`...)
	}
	if r.Context != "" {
		dst = append(dst, `,"context":`...)
		dst = rawobj.AppendString(dst, r.Context)
	}
	dst = append(dst, `,"apiVersion":`...)
	dst = rawobj.AppendString(dst, r.APIVersion)
	dst = append(dst, `,"kind":`...)
	dst = rawobj.AppendString(dst, r.Kind)
	dst = append(dst, `,"resource":`...)
	dst = rawobj.AppendString(dst, r.Resource)
	dst = append(dst, `,"namespace":`...)
	dst = rawobj.AppendString(dst, r.Namespace)
	dst = append(dst, `,"name":`...)
	dst = rawobj.AppendString(dst, r.Name)
	dst = append(dst, `,"uid":`...)
	dst = rawobj.AppendString(dst, r.UID)
	dst = append(dst, `,"resourceVersion":`...)
	dst = rawobj.AppendString(dst, r.ResourceVersion)
	if r.IsCall() {
		dst = appendCall(dst, r)
	}
	if r.FinalStateUnknown {
		dst = append(dst, `,"finalStateUnknown":true`...)
	}
	if r.Coalesced != 0 {
		dst = append(dst, `,"coalesced":`...)
		dst = strconv.AppendInt(dst, int64(r.Coalesced), 10)
	}
	if r.CaughtUp != "" {
		dst = append(dst, `,"caughtUp":`...)
		dst = rawobj.AppendString(dst, r.CaughtUp)
	}
	if len(r.Owners) > 0 {
		dst = appendOwners(append(dst, `,"owners":`...), r.Owners)
	}
	if r.Manager != "" {
		dst = append(dst, `,"manager":`...)
		dst = rawobj.AppendString(dst, r.Manager)
	}
	if r.Operation != "" {
		dst = append(dst, `,"operation":`...)
		dst = rawobj.AppendString(dst, r.Operation)
	}
	if r.Health != nil {
		dst = appendHealth(append(dst, `,"health":`...), r.Health)
	}
	if r.Changes != nil {
		dst = append(dst, `,"changes":[`...)
		for i := range r.Changes {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendOperation(dst, &r.Changes[i])
		}
		dst = append(dst, ']')
	}
	dst = append(dst, `,"object":`...)
	dst = appendRawJSON(dst, r.Object)
	if r.Call.OldObject != nil {
		dst = append(dst, `,"oldObject":`...)
		dst = appendRawJSON(dst, r.Call.OldObject)
	}
	return append(dst, '}')
}

// appendCall appends what a handler call's record has after its
// resourceVersion: "delta", then OnUpdate's "oldResourceVersion" or
// OnAdd's "isInInitialList".
func appendCall(dst []byte, r *Record) []byte {
	dst = append(dst, `,"delta":`...)
	dst = rawobj.AppendString(dst, r.Call.Delta)
	switch r.Type {
	case OnUpdate:
		dst = append(dst, `,"oldResourceVersion":`...)
		dst = rawobj.AppendString(dst, r.Call.OldResourceVersion)
	case OnAdd:
		if r.Call.IsInInitialList {
			dst = append(dst, `,"isInInitialList":true`...)
		} else {
			dst = append(dst, `,"isInInitialList":false`...)
		}
	}
	return dst
}

// appendRawJSON appends an already encoded JSON value: null when empty, and
// compacted when it spans lines, so that a record stays on one line.
func appendRawJSON(dst []byte, raw json.RawMessage) []byte {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return append(dst, "null"...)
	}
	if bytes.IndexByte(raw, '\n') < 0 && bytes.IndexByte(raw, '\r') < 0 {
		return append(dst, raw...)
	}
	buf := bytes.NewBuffer(dst)
	if err := json.Compact(buf, raw); err != nil {
		// Not JSON: keep the caller's bytes rather than lose them.
		return append(dst, raw...)
	}
	return buf.Bytes()
}

// appendOperation appends a diff operation exactly as diff.Operation's
// MarshalJSON writes it, {"op":"replace","path":"/data/key","old":"a","value":"b"}
// ("old" for replace and remove, "value" for add and replace, or
// "redacted":true and neither), but without allocating for scalar values.
// TestAppendOperationMatchesMarshalJSON keeps the two equal.
func appendOperation(dst []byte, op *diff.Operation) []byte {
	dst = append(dst, `{"op":`...)
	dst = rawobj.AppendString(dst, string(op.Op))
	dst = append(dst, `,"path":`...)
	dst = rawobj.AppendString(dst, op.Path)
	if op.Redacted {
		return append(dst, `,"redacted":true}`...)
	}
	withOld := op.Op == diff.OpReplace || op.Op == diff.OpRemove
	withValue := op.Op == diff.OpReplace || op.Op == diff.OpAdd
	if op.Op != diff.OpAdd && op.Op != diff.OpRemove && op.Op != diff.OpReplace {
		withOld, withValue = op.Old != nil, op.Value != nil
	}
	if withOld {
		dst = append(dst, `,"old":`...)
		dst = appendValue(dst, op.Old)
	}
	if withValue {
		dst = append(dst, `,"value":`...)
		dst = appendValue(dst, op.Value)
	}
	return append(dst, '}')
}

// appendValue appends a value decoded from JSON (nil, bool, float64, int64,
// json.Number, string, []any, map[string]any) as encoding/json would with
// HTML escaping off (map keys sorted). Anything else goes through
// encoding/json; a value it cannot encode (NaN, a channel) becomes null.
func appendValue(dst []byte, v any) []byte {
	switch v := v.(type) {
	case nil:
		return append(dst, "null"...)
	case string:
		return rawobj.AppendString(dst, v)
	case bool:
		return strconv.AppendBool(dst, v)
	case float64:
		return appendFloat(dst, v)
	case int64:
		return strconv.AppendInt(dst, v, 10)
	case int:
		return strconv.AppendInt(dst, int64(v), 10)
	case json.Number:
		if v == "" || !json.Valid([]byte(v)) {
			return append(dst, "null"...)
		}
		return append(dst, v...)
	case []any:
		dst = append(dst, '[')
		for i, e := range v {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendValue(dst, e)
		}
		return append(dst, ']')
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		dst = append(dst, '{')
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = rawobj.AppendString(dst, k)
			dst = append(dst, ':')
			dst = appendValue(dst, v[k])
		}
		return append(dst, '}')
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return append(dst, "null"...)
	}
	return append(dst, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
}

// appendFloat formats f as encoding/json does: like ES6, %f between 1e-6
// and 1e21, %e (with a short exponent) outside. NaN and ±Inf, which JSON
// cannot carry, become null.
func appendFloat(dst []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(dst, "null"...)
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		// Clean up e-09 to e-9.
		if n := len(dst); n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst
}
