package rawobj

// The second pass of Parse: one allocation holding the Object's JSON and
// the strings that cannot be sliced from it.

import (
	"encoding/binary"
	"math"
	"unicode/utf8"
	"unsafe"
)

// typeMeta is what ParseList inserts into items that lack apiVersion or
// kind: the values and their members as JSON text with a trailing comma.
type typeMeta struct {
	apiVersion, kind         string
	apiVersionJSON, kindJSON []byte
}

func newTypeMeta(apiVersion, kind string) typeMeta {
	tm := typeMeta{apiVersion: apiVersion, kind: kind}
	if apiVersion != "" {
		tm.apiVersionJSON = append(AppendString([]byte(`"apiVersion":`), apiVersion), ',')
	}
	if kind != "" {
		tm.kindJSON = append(AppendString([]byte(`"kind":`), kind), ',')
	}
	return tm
}

// builder is the second pass of Parse: it lays out the Object's single
// allocation as [output JSON | strings that cannot be sliced from it |
// the managedFields summary].
// It copies what it needs from the objScan rather than pointing to it, so
// that the objScan can stay on the stack.
type builder struct {
	data []byte
	buf  []byte
	// start is the offset of the object's '{' in data.
	start int
	// removed are the spans of data left out.
	removed spanList
	// prefix is the number of bytes inserted after the object's '{'.
	prefix int
	// extra is where the next out-of-JSON string goes in buf.
	extra int
}

// outOffset maps an offset in data inside the object, not in a removed
// span, to the output JSON.
func (b *builder) outOffset(x int) int {
	off := x - b.start + b.prefix
	for i, n := 0, b.removed.len(); i < n; i++ {
		s := b.removed.at(i)
		if s.end > x {
			break
		}
		off -= s.end - s.start
	}
	return off
}

// reserve returns how many bytes of buf beyond the JSON r, which lies in
// a kept part of the object, needs, and sets r.decode.
func reserve(data []byte, r *strRef) int {
	n := r.end - r.start
	if n == 0 {
		return 0
	}
	if r.flags&strEscaped != 0 || !utf8.Valid(data[r.start:r.end]) {
		r.decode = true
		return 3 * n // decoding never more than triples the length
	}
	return 0
}

// str returns the string r refers to, sliced from the output JSON when
// possible, else decoded into the extra part of buf.
func (b *builder) str(r strRef) string {
	n := r.end - r.start
	if n == 0 {
		return ""
	}
	if !r.decode {
		return unsafe.String(&b.buf[b.outOffset(r.start)], n)
	}
	// appendUnescaped stays within buf's capacity: reserve made room.
	m := len(appendUnescaped(b.buf[b.extra:b.extra], b.data[r.start:r.end]))
	s := unsafe.String(&b.buf[b.extra], m)
	b.extra += m
	return s
}

// build makes the Object from a successful scan. tm, if not nil, supplies
// apiVersion and kind for an object that lacks them. The allocation is
// [JSON | strings that cannot be sliced from it | managedFields summary].
func (p *objScan) build(tm *typeMeta) *Object {
	var pre1, pre2 []byte
	o := &Object{facts: factParsed}
	if !p.hasStatus {
		o.facts |= factNoStatus
	}
	if !p.hasOwners {
		o.facts |= factNoOwners
	}
	if p.metadatas == 1 && !p.escaped {
		o.facts |= factPlainMetadata
	}
	if tm != nil {
		if !p.hasAPIVersion && tm.apiVersion != "" {
			pre1 = tm.apiVersionJSON
			o.APIVersion = tm.apiVersion
		}
		if !p.hasKind && tm.kind != "" {
			pre2 = tm.kindJSON
			o.Kind = tm.kind
		}
	}
	prefix := len(pre1) + len(pre2)
	if prefix > 0 && !p.topKept {
		prefix-- // no member follows: drop the inserted trailing comma
	}

	removed := 0
	for i, n := 0, p.removed.len(); i < n; i++ {
		s := p.removed.at(i)
		removed += s.end - s.start
	}
	jsonLen := p.end - p.start - removed + prefix

	extra := 0
	d := p.data
	if o.APIVersion == "" {
		extra += reserve(d, &p.apiVersion)
	}
	if o.Kind == "" {
		extra += reserve(d, &p.kind)
	}
	extra += reserve(d, &p.namespace)
	extra += reserve(d, &p.name)
	extra += reserve(d, &p.uid)
	extra += reserve(d, &p.resourceVersion)
	extra += reserve(d, &p.creationTimestamp)
	extra += reserve(d, &p.deletionTimestamp)
	summary := p.reserveManagers()

	buf := make([]byte, jsonLen+extra+summary)
	buf[0] = '{'
	copy(buf[1+copy(buf[1:], pre1):], pre2)
	// When prefix dropped the trailing comma, the rest of the object (at
	// least its '}') overwrites it.
	w := 1 + prefix
	src := p.start + 1
	for i, n := 0, p.removed.len(); i < n; i++ {
		s := p.removed.at(i)
		w += copy(buf[w:], d[src:s.start])
		src = s.end
	}
	copy(buf[w:], d[src:p.end])

	b := builder{data: d, buf: buf, start: p.start, removed: p.removed, prefix: prefix, extra: jsonLen}
	o.JSON = buf[:jsonLen:jsonLen]
	if o.APIVersion == "" {
		o.APIVersion = b.str(p.apiVersion)
	}
	if o.Kind == "" {
		o.Kind = b.str(p.kind)
	}
	o.Namespace = b.str(p.namespace)
	o.Name = b.str(p.name)
	o.UID = b.str(p.uid)
	o.ResourceVersion = b.str(p.resourceVersion)
	o.CreationTimestamp = b.str(p.creationTimestamp)
	o.DeletionTimestamp = b.str(p.deletionTimestamp)
	o.Generation = p.generation
	o.InitialEventsEnd = p.initialEventsEnd
	if at := b.outOffset(p.statusAt); p.hasStatus && at > 0 && at <= math.MaxUint32 {
		o.statusAt = uint32(at)
		if end := b.outOffset(p.statusEnd); end > at && end < jsonLen && closesObject(o.JSON[end:]) {
			o.facts |= factStatusLast
		}
	}
	if at := b.outOffset(p.ownersAt); p.hasOwners && at > 0 && at <= math.MaxUint16 {
		o.ownersAt = uint16(at)
	}
	o.managers = p.appendManagers(buf[b.extra:b.extra:len(buf)])
	return o
}

// closesObject reports whether rest is JSON white space and one closing
// brace: what follows an object's last member's value.
func closesObject(rest []byte) bool {
	i := skipSpaceAt(rest, 0)
	return i == len(rest)-1 && rest[i] == '}'
}

// reserveManagers returns how many bytes the managedFields summary may
// take (appendManagers): an upper bound, exact for strings without
// escapes.
func (p *objScan) reserveManagers() int {
	if p.carry {
		return len(p.carried)
	}
	n := 0
	for i := 0; i < p.managers.len(); i++ {
		m := p.managers.at(i)
		for _, r := range [...]*strRef{&m.manager, &m.operation, &m.subresource, &m.time} {
			size := r.end - r.start
			if r.flags&strEscaped != 0 || !utf8.Valid(p.data[r.start:r.end]) {
				r.decode = true
				size *= 3 // decoding never more than triples the length
			}
			n += uvarintLen(size) + size
		}
		n += 8
	}
	return n
}

// appendManagers appends the managedFields summary to dst, whose capacity
// reserveManagers made sufficient, and returns it as a string sharing
// dst's memory ("" for none).
func (p *objScan) appendManagers(dst []byte) string {
	if p.carry {
		dst = append(dst, p.carried...)
	} else {
		for i := 0; i < p.managers.len(); i++ {
			m := p.managers.at(i)
			for _, r := range [...]strRef{m.manager, m.operation, m.subresource, m.time} {
				raw := p.data[r.start:r.end]
				if r.decode {
					p.scratch = appendUnescaped(p.scratch[:0], raw)
					raw = p.scratch
				}
				dst = binary.AppendUvarint(dst, uint64(len(raw)))
				dst = append(dst, raw...)
			}
			dst = binary.LittleEndian.AppendUint64(dst, m.fieldsHash)
		}
	}
	if len(dst) == 0 {
		return ""
	}
	return unsafe.String(unsafe.SliceData(dst), len(dst))
}
