package rawobj

// The first pass of Parse: validate one object, find its metadata and
// record which bytes to leave out (managedFields, and the apiVersion and
// kind SetGroupVersionKind replaces). build.go makes the Object.

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// objScan is the first pass of Parse: it validates one object and records
// where its metadata is and which bytes to drop, without allocating (except
// for more than 2 dropped spans, more than 4 managedFields entries or keys
// with escapes).
type objScan struct {
	scanner

	keepManagedFields bool
	allowMissingName  bool
	// lenient accepts objects without metadata (SetGroupVersionKind).
	lenient bool
	// dropTypeMeta removes the top-level apiVersion and kind members.
	dropTypeMeta bool
	// depth is the nesting level of the object: 1 at top level.
	depth int

	// start and end delimit the object: data[start] == '{', data[end-1] == '}'.
	start, end int
	// topKept: at least one top-level member is kept in the output.
	topKept bool

	apiVersion, kind       strRef
	hasAPIVersion, hasKind bool // the member is present (and kept)

	hasMetadata bool
	// metadatas counts the top-level metadata members.
	metadatas int
	// hasStatus: the top level has a status member (null included), the
	// last of which spans statusAt to statusEnd.
	hasStatus bool
	statusAt  int
	statusEnd int
	// hasOwners: metadata has an ownerReferences member (null included),
	// the last of which starts at ownersAt.
	hasOwners bool
	ownersAt  int

	namespace, name   strRef
	uid               strRef
	resourceVersion   strRef
	creationTimestamp strRef
	deletionTimestamp strRef
	generation        int64
	initialEventsEnd  bool
	managers          managerList
	// carry: build takes the managedFields summary from carried (an
	// Object's, see Object.managers), not from managers, as when the JSON
	// parsed again lacks the managedFields it was made from.
	carry   bool
	carried string

	// removed lists the byte ranges of data left out of the output.
	removed spanList
	// scratch holds unescaped keys.
	scratch []byte
}

// key consumes a member's key and colon (see scanner.memberKey).
func (p *objScan) key() (member, error) {
	m, scratch, err := p.memberKey(p.scratch)
	p.scratch = scratch
	return m, err
}

// parseObject scans the object after optional whitespace at pos.
func (p *objScan) parseObject() error {
	p.skipSpace()
	if p.peek() != '{' {
		return p.errNotObject()
	}
	p.start = p.pos
	p.escaped = false
	empty, err := p.objectStart(p.depth)
	if err != nil {
		return err
	}
	if !empty {
		r := remover{prevKeptEnd: -1}
		for {
			m, err := p.key()
			if err != nil {
				return err
			}
			remove := false
			switch string(m.key) {
			case "apiVersion":
				if p.dropTypeMeta {
					remove = true
					err = p.skipValue(p.depth)
				} else {
					p.hasAPIVersion = true
					p.apiVersion, err = p.stringValue("apiVersion")
				}
			case "kind":
				if p.dropTypeMeta {
					remove = true
					err = p.skipValue(p.depth)
				} else {
					p.hasKind = true
					p.kind, err = p.stringValue("kind")
				}
			case "metadata":
				p.metadatas++
				err = p.parseMetadata()
			case "status":
				p.hasStatus = true
				p.skipSpace()
				p.statusAt = p.pos
				err = p.skipValue(p.depth)
				p.statusEnd = p.pos
			default:
				err = p.skipValue(p.depth)
			}
			if err != nil {
				return err
			}
			end, err := p.next(&r, remove, m.keyStart)
			if err != nil {
				return err
			}
			if end {
				break
			}
		}
		p.topKept = r.prevKeptEnd >= 0
	}
	p.end = p.pos
	if p.lenient {
		return nil
	}
	if !p.hasMetadata {
		return ErrNoMetadata
	}
	if !p.allowMissingName && p.name.end == p.name.start {
		return ErrNoName
	}
	return nil
}

// errNotObject reports a value that should be an object.
func (p *objScan) errNotObject() error {
	if p.pos >= len(p.data) {
		return p.unexpected()
	}
	return fmt.Errorf("expected a JSON object at offset %d, found %s", p.offset(p.pos), quoteByte(p.data[p.pos]))
}

// remover tracks the members of one object for removing some of them.
// prevKeptEnd is the end offset of the last kept member's value, -1 while
// none has been kept.
type remover struct{ prevKeptEnd int }

// next consumes what follows a member's value (pos is just after it): ','
// and whitespace, or '}'. When remove is set it records the member for
// removal together with exactly one adjacent comma, so the output stays
// valid JSON:
//
//   - followed by ',': data[keyStart : next key) goes;
//   - last, after a kept member: data[end of that member's value : end of
//     this value) goes, which also covers removed members in between;
//   - last, nothing kept before: data[keyStart : end of value) goes (the
//     members before it were removed with their commas already).
func (p *objScan) next(r *remover, remove bool, keyStart int) (end bool, err error) {
	valueEnd := p.pos
	end, err = p.memberEnd()
	if err != nil {
		return false, err
	}
	switch {
	case !remove:
		r.prevKeptEnd = valueEnd
	case !end:
		p.removed.push(span{keyStart, p.pos})
	case r.prevKeptEnd >= 0:
		p.removed.dropAfter(r.prevKeptEnd)
		p.removed.push(span{r.prevKeptEnd, valueEnd})
	default:
		p.removed.push(span{keyStart, valueEnd})
	}
	return end, nil
}

// resetMeta forgets an earlier metadata member: like encoding/json, the
// last of repeated members wins.
func (p *objScan) resetMeta() {
	p.namespace, p.name, p.uid = strRef{}, strRef{}, strRef{}
	p.resourceVersion, p.creationTimestamp, p.deletionTimestamp = strRef{}, strRef{}, strRef{}
	p.generation = 0
	p.initialEventsEnd = false
	p.hasOwners = false
	p.managers.reset()
}

// parseMetadata scans the top-level metadata value at pos.
func (p *objScan) parseMetadata() error {
	if p.peek() != '{' {
		if p.pos >= len(p.data) {
			return p.unexpected()
		}
		return fmt.Errorf("metadata at offset %d is not an object", p.offset(p.pos))
	}
	p.resetMeta()
	p.hasMetadata = true
	depth := p.depth + 1
	empty, err := p.objectStart(depth)
	if err != nil || empty {
		return err
	}
	r := remover{prevKeptEnd: -1}
	for {
		m, err := p.key()
		if err != nil {
			return err
		}
		remove := false
		switch string(m.key) {
		case "namespace":
			p.namespace, err = p.stringValue("metadata.namespace")
		case "name":
			p.name, err = p.stringValue("metadata.name")
		case "uid":
			p.uid, err = p.stringValue("metadata.uid")
		case "resourceVersion":
			p.resourceVersion, err = p.stringValue("metadata.resourceVersion")
		case "creationTimestamp":
			p.creationTimestamp, err = p.stringValue("metadata.creationTimestamp")
		case "deletionTimestamp":
			p.deletionTimestamp, err = p.stringValue("metadata.deletionTimestamp")
		case "generation":
			p.generation, err = p.int64Value("metadata.generation")
		case "annotations":
			err = p.parseAnnotations(depth + 1)
		case "ownerReferences":
			p.hasOwners = true
			p.skipSpace()
			p.ownersAt = p.pos
			err = p.skipValue(depth)
		case "managedFields":
			remove = !p.keepManagedFields
			err = p.parseManagedFields(depth + 1)
		default:
			err = p.skipValue(depth)
		}
		if err != nil {
			return err
		}
		end, err := p.next(&r, remove, m.keyStart)
		if err != nil || end {
			return err
		}
	}
}

// parseAnnotations scans metadata.annotations (an object at nesting level
// depth, or null) at pos, looking only at the initial-events-end key.
func (p *objScan) parseAnnotations(depth int) error {
	p.initialEventsEnd = false
	switch p.peek() {
	case 'n':
		return p.scanLiteral("null")
	case '{':
	default:
		if p.pos >= len(p.data) {
			return p.unexpected()
		}
		return fmt.Errorf("metadata.annotations at offset %d is not an object", p.offset(p.pos))
	}
	empty, err := p.objectStart(depth)
	if err != nil || empty {
		return err
	}
	for {
		m, err := p.key()
		if err != nil {
			return err
		}
		if string(m.key) == metav1.InitialEventsAnnotationKey {
			var v strRef
			v, err = p.stringValue("annotation " + metav1.InitialEventsAnnotationKey)
			p.initialEventsEnd = err == nil && p.refEquals(v, "true")
		} else {
			err = p.skipValue(depth)
		}
		if err != nil {
			return err
		}
		if end, err := p.memberEnd(); err != nil || end {
			return err
		}
	}
}

// refEquals reports whether the decoded string r equals s.
func (p *objScan) refEquals(r strRef, s string) bool {
	raw := p.data[r.start:r.end]
	if r.flags&strEscaped == 0 {
		return string(raw) == s
	}
	p.scratch = appendUnescaped(p.scratch[:0], raw)
	return string(p.scratch) == s
}

// parseManagedFields scans metadata.managedFields (an array at nesting level
// depth, or null) at pos into p.managers.
func (p *objScan) parseManagedFields(depth int) error {
	p.managers.reset()
	switch p.peek() {
	case 'n':
		return p.scanLiteral("null")
	case '[':
	default:
		if p.pos >= len(p.data) {
			return p.unexpected()
		}
		return fmt.Errorf("metadata.managedFields at offset %d is not an array", p.offset(p.pos))
	}
	if err := p.checkDepth(depth); err != nil {
		return err
	}
	p.pos++
	p.skipSpace()
	if p.peek() == ']' {
		p.pos++
		return nil
	}
	for i := 0; ; i++ {
		p.skipSpace()
		if p.peek() != '{' {
			if p.pos >= len(p.data) {
				return p.unexpected()
			}
			return fmt.Errorf("metadata.managedFields[%d] at offset %d is not an object", i, p.offset(p.pos))
		}
		var e managerRef
		empty, err := p.objectStart(depth + 1)
		if err != nil {
			return err
		}
		for !empty {
			m, err := p.key()
			if err != nil {
				return err
			}
			switch string(m.key) {
			case "manager":
				e.manager, err = p.stringValue("metadata.managedFields[].manager")
			case "operation":
				e.operation, err = p.stringValue("metadata.managedFields[].operation")
			case "subresource":
				e.subresource, err = p.stringValue("metadata.managedFields[].subresource")
			case "time":
				e.time, err = p.stringValue("metadata.managedFields[].time")
			case "fieldsV1":
				p.skipSpace()
				start := p.pos
				if err = p.skipValue(depth + 1); err == nil {
					e.fieldsHash = fnv1a(p.data[start:p.pos])
				}
			default:
				err = p.skipValue(depth + 1)
			}
			if err != nil {
				return err
			}
			if empty, err = p.memberEnd(); err != nil {
				return err
			}
		}
		p.managers.push(e)
		p.skipSpace()
		switch p.peek() {
		case ',':
			p.pos++
		case ']':
			p.pos++
			return nil
		default:
			return p.unexpected()
		}
	}
}

// fnv1a is the 64-bit FNV-1a hash of b, without the allocation of
// hash/fnv.
func fnv1a(b []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range b {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h
}

// managerRef is a managedFields entry before build.
type managerRef struct {
	manager, operation, subresource, time strRef
	fieldsHash                            uint64
}

// span is a byte range data[start:end].
type span struct{ start, end int }

// spanList holds sorted, non-overlapping spans. The first ones live in
// inline; once more are needed, all of them live in more.
type spanList struct {
	inline [2]span
	n      int
	more   []span
}

func (l *spanList) len() int {
	if l.more != nil {
		return len(l.more)
	}
	return l.n
}

func (l *spanList) at(i int) span {
	if l.more != nil {
		return l.more[i]
	}
	return l.inline[i]
}

func (l *spanList) push(s span) {
	if l.more == nil && l.n < len(l.inline) {
		l.inline[l.n] = s
		l.n++
		return
	}
	if l.more == nil {
		l.more = append(make([]span, 0, 2*len(l.inline)), l.inline[:l.n]...)
	}
	l.more = append(l.more, s)
}

// dropAfter removes the spans that start after off.
func (l *spanList) dropAfter(off int) {
	if l.more != nil {
		for len(l.more) > 0 && l.more[len(l.more)-1].start > off {
			l.more = l.more[:len(l.more)-1]
		}
		return
	}
	for l.n > 0 && l.inline[l.n-1].start > off {
		l.n--
	}
}

// managerList holds managerRefs like spanList holds spans.
type managerList struct {
	inline [4]managerRef
	n      int
	more   []managerRef
}

func (l *managerList) len() int {
	if l.more != nil {
		return len(l.more)
	}
	return l.n
}

func (l *managerList) at(i int) *managerRef {
	if l.more != nil {
		return &l.more[i]
	}
	return &l.inline[i]
}

func (l *managerList) push(m managerRef) {
	if l.more == nil && l.n < len(l.inline) {
		l.inline[l.n] = m
		l.n++
		return
	}
	if l.more == nil {
		l.more = append(make([]managerRef, 0, 2*len(l.inline)), l.inline[:l.n]...)
	}
	l.more = append(l.more, m)
}

func (l *managerList) reset() {
	l.n = 0
	if l.more != nil {
		l.more = l.more[:0]
	}
}
