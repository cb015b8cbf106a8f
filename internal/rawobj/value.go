package rawobj

import (
	"strconv"
	"unicode/utf8"
	"unsafe"
)

// DecodeValue decodes one JSON value into what
// k8s.io/apimachinery/pkg/util/json.Unmarshal makes of it into an any —
// map[string]any, []any, string, int64 for an integer that fits, float64
// for any other number, bool, nil — in one pass of the scanner. It is the
// form unstructured content takes.
//
// Strings without escapes are not copied: they share data's memory, which
// must therefore not change while the value is in use. An Object's JSON,
// and anything cut out of it (Member), never changes.
func DecodeValue(data []byte) (any, error) {
	d := valueDecoder{scanner: scanner{data: data}}
	v, err := d.value(0)
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
// unescape keys.
type valueDecoder struct {
	scanner
	scratch []byte
}

// value decodes the value at pos; depth is the nesting level of its
// container (0 at top level).
func (d *valueDecoder) value(depth int) (any, error) {
	d.skipSpace()
	if d.pos >= len(d.data) {
		return nil, d.unexpected()
	}
	switch c := d.data[d.pos]; c {
	case '{':
		return d.object(depth + 1)
	case '[':
		return d.array(depth + 1)
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

// object decodes the object at pos, at nesting level depth.
func (d *valueDecoder) object(depth int) (map[string]any, error) {
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
		if m[d.key(mb)], err = d.value(depth); err != nil {
			return nil, err
		}
		if end, err := d.memberEnd(); err != nil || end {
			return m, err
		}
	}
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

// array decodes the array at pos, at nesting level depth.
func (d *valueDecoder) array(depth int) ([]any, error) {
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
		v, err := d.value(depth)
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
