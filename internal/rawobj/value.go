package rawobj

import (
	"encoding/json"
	"hash/maphash"
	"strconv"
	"unicode/utf8"
	"unsafe"
)

// DecodeExact is DecodeFields of everything with every number kept as a
// json.Number, its text as written, as encoding/json's Decoder.UseNumber
// keeps it: diffing or encoding the value again changes no digit. Numbers
// share data's memory, as strings without escapes do.
func DecodeExact(data []byte) (any, error) {
	return decodeWhole(valueDecoder{scanner: scanner{data: data}, exact: true}, nil)
}

// DecodeValidFields is DecodeFields, or DecodeExact's numbers with
// exact, of data known to be valid JSON (an Object's, validated when it
// was parsed, or a member cut out of it): what keep does not select is
// skipped without being validated again, several times faster. On data
// that is not valid JSON it returns an error or a wrong value; it never
// panics and never reads past data.
func DecodeValidFields(data []byte, keep Fields, exact bool) (any, error) {
	return decodeWhole(valueDecoder{scanner: scanner{data: data}, exact: exact, valid: true}, keep)
}

// Fields selects what DecodeFields keeps of a JSON value: of an object,
// the members named, each with the Fields of its own value (nil: all of
// it); of an array, what the same Fields keep of each element. Anything
// else is skipped by the scanner, validated but never decoded.
type Fields map[string]Fields

// Keep has f keep path whole, and each member on the way to it; what f
// keeps whole already stays so.
func (f Fields) Keep(path ...string) {
	for i, name := range path {
		next, seen := f[name]
		switch {
		case seen && next == nil:
			return // kept whole already
		case i == len(path)-1:
			f[name] = nil
		case next == nil:
			next = Fields{}
			f[name] = next
		}
		f = next
	}
}

// DecodeFields decodes what keep selects (nil: everything) of one JSON
// value into what k8s.io/apimachinery/pkg/util/json.Unmarshal makes of it
// into an any — map[string]any, []any, string, int64 for an integer that
// fits, float64 for any other number, bool, nil — in one pass of the
// scanner. It is the form unstructured content takes.
//
// Strings without escapes are not copied: they share data's memory, which
// must therefore not change while the value is in use. An Object's JSON,
// and anything cut out of it (Member), never changes.
func DecodeFields(data []byte, keep Fields) (any, error) {
	return decodeWhole(valueDecoder{scanner: scanner{data: data}}, keep)
}

// decodeWhole decodes with d what keep selects of the one value of d's
// data, which nothing but space may follow.
func decodeWhole(d valueDecoder, keep Fields) (any, error) {
	v, err := d.value(0, keep)
	if err != nil {
		return nil, err
	}
	d.skipSpace()
	if d.pos != len(d.data) {
		return nil, d.unexpected()
	}
	return v, nil
}

// valueDecoder decodes values with its scanner; scratch is reused to
// unescape keys. exact keeps numbers as json.Number (DecodeExact); valid
// skips what is not kept without validating it (DecodeValidFields).
type valueDecoder struct {
	scanner
	scratch      []byte
	exact, valid bool
}

// value decodes what keep selects of the value at pos; depth is the
// nesting level of its container (0 at top level).
func (d *valueDecoder) value(depth int, keep Fields) (any, error) {
	d.skipSpace()
	if d.pos >= len(d.data) {
		return nil, d.unexpected()
	}
	switch c := d.data[d.pos]; c {
	case '{':
		return d.object(depth+1, keep)
	case '[':
		return d.array(depth+1, keep)
	case '"':
		return d.string()
	case 't':
		return true, d.scanLiteral("true")
	case 'f':
		return false, d.scanLiteral("false")
	case 'n':
		return nil, d.scanLiteral("null")
	default:
		if c != '-' && (c < '0' || c > '9') {
			return nil, d.unexpected()
		}
		start := d.pos
		if err := d.scanNumber(); err != nil {
			return nil, err
		}
		if d.exact {
			return json.Number(unsafe.String(&d.data[start], d.pos-start)), nil
		}
		if i, ok := parseInt64(d.data[start:d.pos]); ok {
			return i, nil
		}
		f, err := strconv.ParseFloat(unsafe.String(&d.data[start], d.pos-start), 64)
		if err != nil {
			return nil, &SyntaxError{Offset: d.offset(start), Msg: "number out of range"}
		}
		return f, nil
	}
}

// string decodes the string at pos as encoding/json does.
func (d *valueDecoder) string() (string, error) {
	start := d.pos
	flags, err := d.scanString()
	if err != nil {
		return "", err
	}
	raw := d.data[start+1 : d.pos-1]
	if len(raw) == 0 {
		return "", nil
	}
	if flags&strEscaped != 0 || !utf8.Valid(raw) {
		return string(appendUnescaped(nil, raw)), nil
	}
	return unsafe.String(&raw[0], len(raw)), nil
}

// object decodes what keep selects of the object at pos, at nesting level
// depth.
func (d *valueDecoder) object(depth int, keep Fields) (map[string]any, error) {
	empty, err := d.objectStart(depth)
	if err != nil {
		return nil, err
	}
	m := map[string]any{}
	if empty {
		return m, nil
	}
	for {
		var mb member
		if mb, d.scratch, err = d.memberKey(d.scratch); err != nil {
			return nil, err
		}
		if sub, ok := keep[string(mb.key)]; ok || keep == nil {
			if m[d.key(mb)], err = d.value(depth, sub); err != nil {
				return nil, err
			}
		} else if err := d.skip(depth); err != nil {
			return nil, err
		}
		if end, err := d.memberEnd(); err != nil || end {
			return m, err
		}
	}
}

// skip consumes the value at pos, which is not kept: validated, unless
// the data is known to be valid.
func (d *valueDecoder) skip(depth int) error {
	if !d.valid {
		return d.skipValue(depth)
	}
	d.skipSpace()
	end, err := skipValidValue(d.data, d.pos)
	if err != nil {
		return err
	}
	d.pos = end
	return nil
}

// key is mb's key as a string: sharing data's memory when it is the key as
// written, a copy when it was unescaped into scratch or is not valid UTF-8
// (replaced as encoding/json does).
func (d *valueDecoder) key(mb member) string {
	if len(mb.key) == 0 {
		return ""
	}
	if unsafe.SliceData(mb.key) != &d.data[mb.keyStart+1] {
		return string(mb.key)
	}
	if !utf8.Valid(mb.key) {
		return string(appendUnescaped(nil, mb.key))
	}
	return unsafe.String(&mb.key[0], len(mb.key))
}

// array decodes the array at pos, at nesting level depth, keeping what
// keep selects of each element.
func (d *valueDecoder) array(depth int, keep Fields) ([]any, error) {
	if err := d.checkDepth(depth); err != nil {
		return nil, err
	}
	d.pos++
	d.skipSpace()
	a := []any{}
	if d.peek() == ']' {
		d.pos++
		return a, nil
	}
	for {
		v, err := d.value(depth, keep)
		if err != nil {
			return nil, err
		}
		a = append(a, v)
		d.skipSpace()
		switch d.peek() {
		case ',':
			d.pos++
		case ']':
			d.pos++
			return a, nil
		default:
			return nil, d.unexpected()
		}
	}
}

// HashFields writes to h what keep selects of the JSON value in data (as
// DecodeFields would decode it), as written: the selected parts of two
// values whose texts are equal hash equally, so that a result computed
// from DecodeFields can be kept by the hash. Whitespace and member order
// count: equal values written differently may hash differently.
func HashFields(h *maphash.Hash, data []byte, keep Fields) error {
	d := valueDecoder{scanner: scanner{data: data}}
	if err := d.hash(h, 0, keep); err != nil {
		return err
	}
	d.skipSpace()
	if d.pos != len(d.data) {
		return d.unexpected()
	}
	return nil
}

// HashMember is HashFields of value with what sel was compiled from,
// value being a member's value cut out of o's JSON (Member, Members): of
// an object this package parsed, whose JSON was validated then, value is
// walked without being validated again, sel's keys are found without a
// map, and the same bytes are written to h.
func (o *Object) HashMember(h *maphash.Hash, value []byte, sel *Selection) error {
	if !o.parsed() || !within(value, o.JSON) {
		return HashFields(h, value, sel.Fields())
	}
	w := selectionHash{h: h}
	end, err := w.value(value, skipSpaceAt(value, 0), sel)
	w.flush()
	if err == nil && skipSpaceAt(value, end) != len(value) {
		err = errNotValid
	}
	return err
}

// within reports whether part lies in whole's memory.
func within(part, whole []byte) bool {
	if len(part) == 0 || len(whole) == 0 {
		return false
	}
	p, w := uintptr(unsafe.Pointer(unsafe.SliceData(part))), uintptr(unsafe.Pointer(unsafe.SliceData(whole)))
	return p >= w && p+uintptr(len(part)) <= w+uintptr(len(whole))
}

// hash writes what keep selects of the value at pos to h; depth is the
// nesting level of its container.
func (d *valueDecoder) hash(h *maphash.Hash, depth int, keep Fields) error {
	d.skipSpace()
	start := d.pos
	switch {
	case keep != nil && d.peek() == '{':
		return d.hashObject(h, depth+1, keep)
	case keep != nil && d.peek() == '[':
		return d.hashArray(h, depth+1, keep)
	}
	if err := d.skipValue(depth); err != nil {
		return err
	}
	_, _ = h.Write(d.data[start:d.pos])
	return h.WriteByte(0)
}

// hashObject is hash for the object at pos.
func (d *valueDecoder) hashObject(h *maphash.Hash, depth int, keep Fields) error {
	_ = h.WriteByte('{')
	empty, err := d.objectStart(depth)
	for !empty && err == nil {
		var mb member
		if mb, d.scratch, err = d.memberKey(d.scratch); err != nil {
			return err
		}
		if sub, ok := keep[string(mb.key)]; ok {
			_, _ = h.Write(mb.key)
			_ = h.WriteByte(':')
			err = d.hash(h, depth, sub)
		} else {
			err = d.skipValue(depth)
		}
		if err == nil {
			empty, err = d.memberEnd()
		}
	}
	_ = h.WriteByte('}')
	return err
}

// hashArray is hash for the array at pos, each element with keep.
func (d *valueDecoder) hashArray(h *maphash.Hash, depth int, keep Fields) error {
	if err := d.checkDepth(depth); err != nil {
		return err
	}
	_ = h.WriteByte('[')
	d.pos++
	d.skipSpace()
	if d.peek() == ']' {
		d.pos++
		return h.WriteByte(']')
	}
	for {
		if err := d.hash(h, depth, keep); err != nil {
			return err
		}
		d.skipSpace()
		switch d.peek() {
		case ',':
			d.pos++
			_ = h.WriteByte(',')
		case ']':
			d.pos++
			return h.WriteByte(']')
		default:
			return d.unexpected()
		}
	}
}
