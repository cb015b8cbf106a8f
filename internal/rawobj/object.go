// Package rawobj keeps Kubernetes objects as the JSON the API server sent and
// extracts only the metadata an informer cache needs, with a hand-written
// scanner instead of a full decode into map[string]any.
//
// Memory model: Parse copies what it keeps of its input into one new byte
// slice per object. Object.JSON is a prefix of that slice and the Object's
// string fields are sliced from it (unescaped copies of escaped strings, and
// the managedFields summary of a stripped object, live in the rest of it;
// the apiVersion and kind ParseList gives items that lack them are shared
// with the List). So an Object never aliases the caller's buffer, costs
// about the size of its JSON, and Object.JSON must be treated as read-only:
// writing to it would change the strings.
//
// Validation: everything Parse, ParseList, ParseListFrom, ParseListEach
// and ParseEventObject accept is valid JSON per encoding/json (json.Valid),
// including its nesting limit of 10000; strings are not checked for valid
// UTF-8 (as json.Valid), but extracted strings are decoded like
// encoding/json does (invalid UTF-8 becomes U+FFFD). Repeated keys behave
// as in encoding/json: the last one wins.
package rawobj

import (
	"errors"
	"fmt"
	"unicode/utf8"
	"unsafe"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// InitialEventsEndAnnotation is the annotation the API server sets to "true"
// on the BOOKMARK event that ends the initial events of a watch-list.
const InitialEventsEndAnnotation = metav1.InitialEventsAnnotationKey

// ManagedFieldsEntry summarises one entry of metadata.managedFields; the
// fieldsV1 set itself is skipped, not decoded.
type ManagedFieldsEntry struct {
	Manager     string
	Operation   string
	Subresource string
	// Time is the RFC 3339 text as sent, "" when absent.
	Time string
	// FieldsHash is a hash (FNV-1a) of the entry's fieldsV1 JSON as sent, 0
	// when absent: it tells whether the set of owned fields changed when
	// Time did not move (same manager, same second).
	FieldsHash uint64
}

// Object is one Kubernetes object kept as JSON plus the metadata the cache
// needs. Objects made by Parse and ParseList satisfy these invariants:
//
//   - JSON is a valid JSON object: the input object byte for byte, except
//     that surrounding whitespace is dropped, metadata.managedFields is
//     removed unless ParseOptions.KeepManagedFields, and list items get
//     apiVersion and kind inserted when they lack them.
//   - The string fields equal what encoding/json decodes from JSON (or from
//     the input, for the stripped managedFields).
//   - JSON and the strings share one allocation: JSON is read-only.
//
// An Object is not safe for concurrent mutation (SetGroupVersionKind); all
// other methods only read it.
type Object struct {
	// JSON is the object's JSON, compact or as sent. Read-only.
	JSON []byte

	APIVersion        string
	Kind              string
	Namespace         string
	Name              string
	UID               string
	ResourceVersion   string
	CreationTimestamp string // RFC 3339 text as sent, "" when absent or null
	Generation        int64
	DeletionTimestamp string // RFC 3339 text as sent, "" when absent or null

	// Managers summarises metadata.managedFields, also when the field was
	// removed from JSON.
	Managers []ManagedFieldsEntry

	// InitialEventsEnd is true iff
	// metadata.annotations["k8s.io/initial-events-end"] == "true".
	InitialEventsEnd bool

	// buf is the allocation JSON is a prefix of and the string fields point
	// into; nil for an Object not made by this package. Only DeepCopy reads
	// it, to move the strings to the copy's allocation.
	buf []byte
}

// Compile-time checks that Object is usable by the cache and by client-go.
var (
	_ runtime.Object    = (*Object)(nil)
	_ schema.ObjectKind = (*Object)(nil)
	_ interface {
		GetNamespace() string
		GetName() string
		GetResourceVersion() string
		GetUID() types.UID
		GetAnnotations() map[string]string
	} = (*Object)(nil)
)

// ParseOptions tunes Parse and ParseList.
type ParseOptions struct {
	// KeepManagedFields keeps metadata.managedFields in Object.JSON. The
	// Managers summary is extracted either way.
	KeepManagedFields bool
	// AllowMissingName accepts objects without metadata.name, as in BOOKMARK
	// events, which carry only metadata.resourceVersion and annotations.
	AllowMissingName bool
}

// GetNamespace returns metadata.namespace ("" for cluster-scoped objects).
func (o *Object) GetNamespace() string { return o.Namespace }

// GetName returns metadata.name.
func (o *Object) GetName() string { return o.Name }

// GetResourceVersion returns metadata.resourceVersion.
func (o *Object) GetResourceVersion() string { return o.ResourceVersion }

// GetUID returns metadata.uid.
func (o *Object) GetUID() types.UID { return types.UID(o.UID) }

// GetAnnotations is partial: Parse does not decode annotations, so this
// returns only {"k8s.io/initial-events-end": "true"} when InitialEventsEnd
// is set, and nil otherwise. Decode JSON to see all annotations.
func (o *Object) GetAnnotations() map[string]string {
	if !o.InitialEventsEnd {
		return nil
	}
	return map[string]string{InitialEventsEndAnnotation: "true"}
}

// GetObjectKind returns o itself, whose GroupVersionKind is derived from
// APIVersion and Kind.
func (o *Object) GetObjectKind() schema.ObjectKind { return o }

// GroupVersionKind returns the group, version and kind of APIVersion and
// Kind.
func (o *Object) GroupVersionKind() schema.GroupVersionKind {
	return schema.FromAPIVersionAndKind(o.APIVersion, o.Kind)
}

// SetGroupVersionKind sets APIVersion and Kind and rewrites JSON to match:
// the top-level apiVersion and kind members are removed and, when not
// empty, inserted again at the start of the object. If JSON is not a valid
// JSON object (an Object not made by Parse), only the fields are set.
func (o *Object) SetGroupVersionKind(gvk schema.GroupVersionKind) {
	apiVersion, kind := gvk.ToAPIVersionAndKind()
	if apiVersion == o.APIVersion && kind == o.Kind {
		return
	}
	p := objScan{
		scanner:           scanner{data: o.JSON},
		keepManagedFields: true,
		dropTypeMeta:      true,
		lenient:           true,
		depth:             1,
	}
	if err := p.parseObject(); err == nil {
		tm := newTypeMeta(apiVersion, kind)
		n := p.build(&tm)
		if o.buf != nil {
			// Made by Parse: every field but Managers (which may have been
			// stripped from JSON) is derived from JSON, so take them all from
			// the new allocation and let the old one go.
			n.Managers = o.Managers
			*o = *n
		} else {
			// The other fields may have been set by hand: keep them.
			o.JSON = n.JSON
		}
	}
	o.APIVersion, o.Kind = apiVersion, kind
}

// DeepCopyObject returns DeepCopy.
func (o *Object) DeepCopyObject() runtime.Object { return o.DeepCopy() }

// DeepCopy returns a copy that shares no memory with o's allocation: JSON
// and the strings that lived in it are moved to one new allocation. Strings
// from elsewhere (the apiVersion and kind a List gave its items) are shared,
// which is safe as strings are immutable.
func (o *Object) DeepCopy() *Object {
	if o == nil {
		return nil
	}
	c := *o
	old := o.buf
	if len(old) == 0 {
		c.buf = nil
		if o.JSON != nil {
			c.JSON = append([]byte(nil), o.JSON...)
		}
	} else {
		c.buf = append([]byte(nil), old...)
		if len(o.JSON) > 0 && unsafe.SliceData(o.JSON) == unsafe.SliceData(old) && len(o.JSON) <= len(old) {
			c.JSON = c.buf[:len(o.JSON):len(o.JSON)]
		} else if o.JSON != nil {
			c.JSON = append([]byte(nil), o.JSON...)
		}
	}
	mv := func(s string) string { return rebase(s, old, c.buf) }
	c.APIVersion, c.Kind = mv(o.APIVersion), mv(o.Kind)
	c.Namespace, c.Name, c.UID = mv(o.Namespace), mv(o.Name), mv(o.UID)
	c.ResourceVersion = mv(o.ResourceVersion)
	c.CreationTimestamp, c.DeletionTimestamp = mv(o.CreationTimestamp), mv(o.DeletionTimestamp)
	cp, managers := newObject(len(o.Managers))
	if o.Managers != nil {
		c.Managers = managers
		if managers == nil {
			c.Managers = []ManagedFieldsEntry{}
		}
		for i, m := range o.Managers {
			c.Managers[i] = ManagedFieldsEntry{
				Manager:     mv(m.Manager),
				Operation:   mv(m.Operation),
				Subresource: mv(m.Subresource),
				Time:        mv(m.Time),
				FieldsHash:  m.FieldsHash,
			}
		}
	}
	*cp = c
	return cp
}

// newObject allocates an Object and, in the same allocation when there are
// few, n ManagedFieldsEntry values: one allocation less per object. The
// returned slice has len and cap n (nil for 0).
func newObject(n int) (*Object, []ManagedFieldsEntry) {
	switch n {
	case 0:
		return new(Object), nil
	case 1:
		x := new(struct {
			o Object
			m [1]ManagedFieldsEntry
		})
		return &x.o, x.m[:]
	case 2:
		x := new(struct {
			o Object
			m [2]ManagedFieldsEntry
		})
		return &x.o, x.m[:]
	case 3:
		x := new(struct {
			o Object
			m [3]ManagedFieldsEntry
		})
		return &x.o, x.m[:]
	case 4:
		x := new(struct {
			o Object
			m [4]ManagedFieldsEntry
		})
		return &x.o, x.m[:]
	default:
		return new(Object), make([]ManagedFieldsEntry, n)
	}
}

// rebase returns s moved from old to the same offset in cp (a copy of old)
// when s lies in old, and s itself otherwise (strings are immutable, so
// sharing one that is not in old is still a deep copy).
func rebase(s string, old, cp []byte) string {
	if len(s) == 0 || len(old) == 0 {
		return s
	}
	p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
	base := uintptr(unsafe.Pointer(unsafe.SliceData(old)))
	if p < base || p-base >= uintptr(len(old)) {
		return s
	}
	off := int(p - base)
	return unsafe.String(&cp[off], len(s))
}

// Parse scans data, which must hold one JSON object (surrounding whitespace
// allowed), validates it as JSON and extracts its metadata. The object must
// have a metadata object, and a metadata.name unless opts.AllowMissingName.
// The result does not alias data: data may be reused once Parse returns.
func Parse(data []byte, opts ParseOptions) (*Object, error) {
	p := objScan{
		scanner:           scanner{data: data},
		keepManagedFields: opts.KeepManagedFields,
		allowMissingName:  opts.AllowMissingName,
		depth:             1,
	}
	if err := p.parseObject(); err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.pos < len(data) {
		return nil, p.syntaxError("unexpected " + quoteByte(data[p.pos]) + " after the object")
	}
	return p.build(nil), nil
}

// strRef locates a decoded string value in the scanned data: its content
// without quotes is data[start:end]. A zero strRef is "" (absent or null).
type strRef struct {
	start, end int
	flags      int // strEscaped or 0, from scanString
	// decode is set by build when the content must be decoded (escapes or
	// invalid UTF-8) rather than used as is.
	decode bool
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

	hasMetadata       bool
	namespace, name   strRef
	uid               strRef
	resourceVersion   strRef
	creationTimestamp strRef
	deletionTimestamp strRef
	generation        int64
	initialEventsEnd  bool
	managers          managerList

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

// errNotObject reports a value that should be an object.
func (p *objScan) errNotObject() error {
	if p.pos >= len(p.data) {
		return p.unexpected()
	}
	return fmt.Errorf("expected a JSON object at offset %d, found %s", p.offset(p.pos), quoteByte(p.data[p.pos]))
}

// parseObject scans the object after optional whitespace at pos.
func (p *objScan) parseObject() error {
	p.skipSpace()
	if p.peek() != '{' {
		return p.errNotObject()
	}
	p.start = p.pos
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
				err = p.parseMetadata()
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

// Errors for objects that are valid JSON but lack what Parse requires.
var (
	ErrNoMetadata = errors.New("object has no metadata")
	ErrNoName     = errors.New("object has no metadata.name")
)

// stringValue consumes a string or null at pos.
func (p *scanner) stringValue(what string) (strRef, error) {
	switch p.peek() {
	case '"':
		start := p.pos
		flags, err := p.scanString()
		if err != nil {
			return strRef{}, err
		}
		return strRef{start: start + 1, end: p.pos - 1, flags: flags}, nil
	case 'n':
		return strRef{}, p.scanLiteral("null")
	default:
		if p.pos >= len(p.data) {
			return strRef{}, p.unexpected()
		}
		return strRef{}, fmt.Errorf("%s at offset %d is not a string", what, p.offset(p.pos))
	}
}

// int64Value consumes an integer that fits int64, or null (0), at pos.
func (p *scanner) int64Value(what string) (int64, error) {
	c := p.peek()
	switch {
	case c == 'n':
		return 0, p.scanLiteral("null")
	case c == '-' || '0' <= c && c <= '9':
		start := p.pos
		if err := p.scanNumber(); err != nil {
			return 0, err
		}
		v, ok := parseInt64(p.data[start:p.pos])
		if !ok {
			return 0, fmt.Errorf("%s at offset %d is not a 64-bit integer", what, p.offset(start))
		}
		return v, nil
	default:
		if p.pos >= len(p.data) {
			return 0, p.unexpected()
		}
		return 0, fmt.Errorf("%s at offset %d is not a number", what, p.offset(p.pos))
	}
}

// parseInt64 parses a JSON number that is an integer in int64 range
// (no fraction, no exponent).
func parseInt64(b []byte) (int64, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 {
		return 0, false
	}
	const limit = uint64(1) << 63
	var u uint64
	for _, c := range b {
		if c < '0' || c > '9' || u > limit/10 {
			return 0, false
		}
		u = u*10 + uint64(c-'0')
		if u > limit {
			return 0, false
		}
	}
	if neg {
		return -int64(u), true // u == limit wraps to MinInt64, as wanted
	}
	if u == limit {
		return 0, false
	}
	return int64(u), true
}

// resetMeta forgets an earlier metadata member: like encoding/json, the
// last of repeated members wins.
func (p *objScan) resetMeta() {
	p.namespace, p.name, p.uid = strRef{}, strRef{}, strRef{}
	p.resourceVersion, p.creationTimestamp, p.deletionTimestamp = strRef{}, strRef{}, strRef{}
	p.generation = 0
	p.initialEventsEnd = false
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
		if string(m.key) == InitialEventsEndAnnotation {
			var v strRef
			v, err = p.stringValue("annotation " + InitialEventsEndAnnotation)
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

// typeMeta is what ParseList inserts into items that lack apiVersion or
// kind: the values and their members as JSON text with a trailing comma.
type typeMeta struct {
	apiVersion, kind         string
	apiVersionJSON, kindJSON []byte
}

func newTypeMeta(apiVersion, kind string) typeMeta {
	tm := typeMeta{apiVersion: apiVersion, kind: kind}
	if apiVersion != "" {
		tm.apiVersionJSON = append(appendQuoted([]byte(`"apiVersion":`), apiVersion), ',')
	}
	if kind != "" {
		tm.kindJSON = append(appendQuoted([]byte(`"kind":`), kind), ',')
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
