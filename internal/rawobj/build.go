package rawobj

// The second pass of Parse: one allocation holding the Object's JSON and
// the strings that cannot be sliced from it.

import (
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
// allocation as [output JSON | strings that cannot be sliced from it].
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

// reserve returns how many bytes of buf beyond the JSON r needs and sets
// r.decode. inJSON: r lies in a part of the object that is kept.
func reserve(data []byte, r *strRef, inJSON bool) int {
	n := r.end - r.start
	if n == 0 {
		return 0
	}
	if r.flags&strEscaped != 0 || !utf8.Valid(data[r.start:r.end]) {
		r.decode = true
		return 3 * n // decoding never more than triples the length
	}
	if inJSON {
		return 0
	}
	return n
}

// str returns the string r refers to, sliced from the output JSON when
// possible, else decoded or copied into the extra part of buf.
func (b *builder) str(r strRef, inJSON bool) string {
	n := r.end - r.start
	if n == 0 {
		return ""
	}
	if inJSON && !r.decode {
		return unsafe.String(&b.buf[b.outOffset(r.start)], n)
	}
	raw := b.data[r.start:r.end]
	var m int
	if r.decode {
		// appendUnescaped stays within buf's capacity: reserve made room.
		m = len(appendUnescaped(b.buf[b.extra:b.extra], raw))
	} else {
		m = copy(b.buf[b.extra:], raw)
	}
	s := unsafe.String(&b.buf[b.extra], m)
	b.extra += m
	return s
}

// build makes the Object from a successful scan. tm, if not nil, supplies
// apiVersion and kind for an object that lacks them.
func (p *objScan) build(tm *typeMeta) *Object {
	var pre1, pre2 []byte
	nm := p.managers.len()
	o, managers := newObject(nm)
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
		extra += reserve(d, &p.apiVersion, true)
	}
	if o.Kind == "" {
		extra += reserve(d, &p.kind, true)
	}
	extra += reserve(d, &p.namespace, true)
	extra += reserve(d, &p.name, true)
	extra += reserve(d, &p.uid, true)
	extra += reserve(d, &p.resourceVersion, true)
	extra += reserve(d, &p.creationTimestamp, true)
	extra += reserve(d, &p.deletionTimestamp, true)
	for i := 0; i < nm; i++ {
		m := p.managers.at(i)
		extra += reserve(d, &m.manager, p.keepManagedFields)
		extra += reserve(d, &m.operation, p.keepManagedFields)
		extra += reserve(d, &m.subresource, p.keepManagedFields)
		extra += reserve(d, &m.time, p.keepManagedFields)
	}

	buf := make([]byte, jsonLen+extra)
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
	o.buf = buf
	if o.APIVersion == "" {
		o.APIVersion = b.str(p.apiVersion, true)
	}
	if o.Kind == "" {
		o.Kind = b.str(p.kind, true)
	}
	o.Namespace = b.str(p.namespace, true)
	o.Name = b.str(p.name, true)
	o.UID = b.str(p.uid, true)
	o.ResourceVersion = b.str(p.resourceVersion, true)
	o.CreationTimestamp = b.str(p.creationTimestamp, true)
	o.DeletionTimestamp = b.str(p.deletionTimestamp, true)
	o.Generation = p.generation
	o.InitialEventsEnd = p.initialEventsEnd
	if nm > 0 {
		o.Managers = managers
		for i := range managers {
			m := p.managers.at(i)
			managers[i] = ManagedFieldsEntry{
				Manager:     b.str(m.manager, p.keepManagedFields),
				Operation:   b.str(m.operation, p.keepManagedFields),
				Subresource: b.str(m.subresource, p.keepManagedFields),
				Time:        b.str(m.time, p.keepManagedFields),
				FieldsHash:  m.fieldsHash,
			}
		}
	}
	return o
}
