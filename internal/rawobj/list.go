package rawobj

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// List is a list response (kind: XList) whose items are kept as JSON.
// Its strings never alias the data given to ParseList or read by
// ParseListFrom.
type List struct {
	APIVersion string
	Kind       string // e.g. "ConfigMapList"

	ResourceVersion    string
	Continue           string
	RemainingItemCount *int64
	SelfLink           string

	// Items are the list's items in order. Each has its own allocation
	// (see Object), so keeping one item does not keep the others alive, and
	// each one's JSON includes apiVersion and kind (see ParseList).
	Items []*Object
}

// Compile-time checks that List is usable by client-go.
var (
	_ runtime.Object       = (*List)(nil)
	_ metav1.ListInterface = (*List)(nil)
	_ schema.ObjectKind    = (*List)(nil)
	_ interface {
		EachListItem(func(runtime.Object) error) error
	} = (*List)(nil)
)

// ParseList parses a list response body such as
//
//	{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"123","continue":"…"},"items":[{…},{…}]}
//
// Each item is parsed as by Parse with opts. An item that lacks apiVersion
// or kind gets the list's apiVersion and the list's kind without its "List"
// suffix, both in its fields and inserted as "apiVersion":"…","kind":"…",
// right after the item's '{', so every item's JSON is a complete object like
// a watch event's. The result does not alias data.
func ParseList(data []byte, opts ParseOptions) (*List, error) {
	lp := listParser{s: scanner{data: data}, eof: true, opts: opts}
	return lp.parse()
}

// ParseListFrom is ParseList reading the body from r as it arrives: each
// item is parsed (which copies it, see Parse) as soon as it has been read,
// so that besides the result only a buffer is held (64 KiB, or about twice
// the largest item if that is bigger than 32 KiB), not the whole body, and
// parsing overlaps the transfer. It reads r to its end (io.EOF), as it must
// check that only whitespace follows the list.
//
// For any data, ParseListFrom(bytes.NewReader(data), opts) returns what
// ParseList(data, opts) returns, errors and their offsets (counted from
// the first byte read) included, however r splits its reads. An error of r
// other than io.EOF ends the parse with an error that wraps it.
func ParseListFrom(r io.Reader, opts ParseOptions) (*List, error) {
	lp := listParser{r: r, opts: opts}
	return lp.parse()
}

// ErrNotStreamable is wrapped by the error ParseListEach returns for a list
// that can only be parsed whole (see ParseListEach).
var ErrNotStreamable = errors.New("the list cannot be parsed as it streams")

// ParseListEach is ParseListFrom handing each item to each as soon as it
// is parsed, in order, instead of collecting them: the List it returns has
// no Items, and only the buffer is held. An error of each ends the parse
// and is returned wrapped. Items are typed by the apiVersion and kind that
// precede them, as API servers send lists; a list whose apiVersion or kind
// comes only after its items, which would change items already handed
// out, is an error, and so is a second items member.
func ParseListEach(r io.Reader, opts ParseOptions, each func(*Object) error) (*List, error) {
	lp := listParser{r: r, opts: opts, each: each}
	return lp.parse()
}

// listBufferSize is the first buffer of ParseListFrom; it grows by doubling
// when one value (an item, or another member of the list) does not fit.
const listBufferSize = 64 << 10

// Bits of the entries of listParser.had.
const (
	hadAPIVersion = 1 << iota
	hadKind
	hadBits = iota // the item's index is shifted by hadBits
)

// listParser parses a list from a window of its input. Invariants:
//
//   - s.data is the window: buf[:len(s.data)] when reading from r, the whole
//     input when r is nil; s.base is the input offset of s.data[0].
//   - Bytes before s.pos have been consumed: more may drop them, which
//     invalidates slices of s.data (such as a member key) and moves s.pos.
//     Nothing refers to them across a call of more.
//   - The scanner's methods run only on bytes that are buffered whole (see
//     space, value and item), so that their result (and error offsets) are
//     what they would be on the whole input.
type listParser struct {
	s scanner
	// r is the input, nil if s.data holds all of it.
	r   io.Reader
	buf []byte
	// eof: s.data ends where the input ends.
	eof bool
	// rerr is the reader's error (other than io.EOF), returned by every
	// later call of more.
	rerr error

	opts    ParseOptions
	scratch []byte
	// each, if not nil, takes every item as it is parsed (ParseListEach);
	// items then collects nothing. handedOut counts the items each took.
	each      func(*Object) error
	handedOut int
	// had lists the items of the last items member that had their own
	// apiVersion or kind, in order, as index<<hadBits | hadAPIVersion |
	// hadKind, to give the others the list's apiVersion and kind if those
	// come after the items (see retype). Items from the API server have
	// neither, so it stays empty.
	had []uint64
}

// more reads at least one more byte into the window, first dropping the
// consumed bytes or growing the buffer when it is full. It returns io.EOF
// at the end of the input, or the reader's error.
func (lp *listParser) more() error {
	if lp.eof {
		return io.EOF
	}
	if lp.rerr != nil {
		return lp.rerr
	}
	s := &lp.s
	end := len(s.data)
	if end == len(lp.buf) {
		if s.pos > 0 {
			end = copy(lp.buf, s.data[s.pos:])
			s.base += int64(s.pos)
			s.pos = 0
			s.data = lp.buf[:end]
		}
		if end == len(lp.buf) {
			nb := make([]byte, max(2*len(lp.buf), listBufferSize))
			copy(nb, s.data)
			lp.buf = nb
			s.data = nb[:end]
		}
	}
	for tries := 0; tries < 100; tries++ {
		n, err := lp.r.Read(lp.buf[end:])
		if n < 0 || n > len(lp.buf)-end {
			lp.rerr = fmt.Errorf("invalid read of %d bytes into %d: %w", n, len(lp.buf)-end, io.ErrShortBuffer)
			return lp.rerr
		}
		end += n
		s.data = lp.buf[:end]
		switch {
		case err == io.EOF:
			lp.eof = true
		case err != nil:
			lp.rerr = err
		}
		if n > 0 {
			return nil
		}
		if err != nil {
			return err
		}
	}
	lp.rerr = io.ErrNoProgress
	return lp.rerr
}

// skip consumes whitespace at s.pos, reading on until a byte that is not
// whitespace is buffered or the input ends.
func (lp *listParser) skip() error {
	s := &lp.s
	for {
		s.skipSpace()
		if s.pos < len(s.data) {
			return nil
		}
		if err := lp.more(); err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
	}
}

// space returns the index, relative to s.pos, of the first byte at or after
// s.pos+rel that is not whitespace, reading on until it is buffered; if the
// input ends first, the index of its end.
func (lp *listParser) space(rel int) (int, error) {
	s := &lp.s
	for {
		i := s.pos + rel
		for i < len(s.data) && isSpace(s.data[i]) {
			i++
		}
		rel = i - s.pos
		if i < len(s.data) {
			return rel, nil
		}
		if err := lp.more(); err != nil {
			if err == io.EOF {
				return rel, nil
			}
			return 0, err
		}
	}
}

// value reads on until the value at s.pos (after whitespace) is buffered
// whole: an object, array or string up to its closing bracket or quote, a
// number or literal up to and including the byte after it (which ends it).
// It only frames (as the Decoder does), the scanner validates. It returns
// the index, relative to s.pos, just past the object, array or string (of
// the byte after a number or literal), or of the end of the input if that
// comes first.
func (lp *listParser) value() (int, error) {
	s := &lp.s
	rel := 0
	if lp.eof {
		return len(s.data) - s.pos, nil // all of the input is there
	}
	if s.pos+rel >= len(s.data) {
		var err error
		if rel, err = lp.space(rel); err != nil || s.pos+rel >= len(s.data) {
			return rel, err
		}
	}
	var f frameScan
	scalar := false
	switch c := s.data[s.pos+rel]; {
	case c == '{' || c == '[' || c == '"':
	case c == '-' || '0' <= c && c <= '9' || c == 't' || c == 'f' || c == 'n':
		scalar = true
	default:
		return rel + 1, nil // not a value: the scanner fails on it
	}
	n := rel // s.data[s.pos+rel : s.pos+n] has been scanned
	for {
		chunk := s.data[s.pos+n:]
		if scalar {
			for i, c := range chunk {
				if isSpace(c) || c == '{' || c == '}' || c == '[' || c == ']' || c == ',' || c == ':' || c == '"' {
					return n + i, nil
				}
			}
		} else if end := f.scan(chunk); end >= 0 {
			return n + end, nil
		}
		n += len(chunk)
		if err := lp.more(); err != nil {
			if err == io.EOF {
				return n, nil
			}
			return 0, err
		}
	}
}

// member reads on until the member at s.pos (after whitespace) is buffered
// from its key to the first byte of its value, for memberKey.
func (lp *listParser) member() error {
	if err := lp.skip(); err != nil {
		return err
	}
	s := &lp.s
	if s.peek() != '"' {
		return nil // memberKey fails on it
	}
	end, err := lp.value()
	if err != nil {
		return err
	}
	colon, err := lp.space(end)
	if err != nil || s.pos+colon >= len(s.data) || s.data[s.pos+colon] != ':' {
		return err
	}
	_, err = lp.space(colon + 1)
	return err
}

// parse parses the list, the same way whether all of the input is in s.data
// or it is read as it goes.
func (lp *listParser) parse() (*List, error) {
	s := &lp.s
	if err := lp.skip(); err != nil {
		return nil, err
	}
	if s.peek() != '{' {
		if s.pos >= len(s.data) {
			return nil, s.unexpected()
		}
		return nil, fmt.Errorf("expected a JSON object at offset %d, found %s", s.offset(s.pos), quoteByte(s.data[s.pos]))
	}
	// objectStart looks at the first byte after '{' that is not whitespace.
	if _, err := lp.space(1); err != nil {
		return nil, err
	}
	l := &List{}
	empty, err := s.objectStart(1)
	if err != nil {
		return nil, err
	}
	// hasItems: there was an items member; its items were parsed with
	// itemsAPIVersion and itemsKind.
	hasItems := false
	var itemsAPIVersion, itemsKind string
	for !empty {
		if err := lp.member(); err != nil {
			return nil, err
		}
		var m member
		m, lp.scratch, err = s.memberKey(lp.scratch)
		if err != nil {
			return nil, err
		}
		// m.key may lie in s.data: it is not used once value or items
		// may have read on.
		switch string(m.key) {
		case "apiVersion":
			if _, err = lp.value(); err == nil {
				l.APIVersion, err = copyStringValue(s, "apiVersion")
			}
		case "kind":
			if _, err = lp.value(); err == nil {
				l.Kind, err = copyStringValue(s, "kind")
			}
		case "metadata":
			if _, err = lp.value(); err == nil {
				err = parseListMeta(s, l)
			}
		case "items":
			if lp.handedOut > 0 {
				// ParseList keeps the last items member; those of the
				// first are gone.
				return nil, fmt.Errorf("%w: the list has a second items member at offset %d after its items were handed out", ErrNotStreamable, s.offset(s.pos))
			}
			hasItems = true
			itemsAPIVersion, itemsKind = l.APIVersion, l.Kind
			l.Items, err = lp.items(l.APIVersion, l.Kind)
		default:
			if _, err = lp.value(); err == nil {
				err = s.skipValue(1)
			}
		}
		if err != nil {
			return nil, err
		}
		if _, err := lp.space(0); err != nil {
			return nil, err
		}
		if empty, err = s.memberEnd(); err != nil {
			return nil, err
		}
	}
	if err := lp.skip(); err != nil {
		return nil, err
	}
	if s.pos < len(s.data) {
		return nil, s.syntaxError("unexpected " + quoteByte(s.data[s.pos]) + " after the object")
	}
	if hasItems && (itemsAPIVersion != l.APIVersion || itemsKind != l.Kind) {
		// apiVersion or kind came after items. Servers send them first,
		// so this is rare.
		if lp.handedOut > 0 {
			// Fine if every item handed out had its own members where
			// the list's changed (custom resources: their lists come
			// with the members sorted, kind after items, and every item
			// has its own apiVersion and kind).
			if !lp.handedOutKeepTypes(itemsAPIVersion, itemsKind, l) {
				return nil, fmt.Errorf("%w: the list's apiVersion %q and kind %q follow its items, which were typed %q and %q when they were handed out", ErrNotStreamable, l.APIVersion, l.Kind, itemsAPIVersion, itemsKind)
			}
			return l, nil
		}
		if err := lp.retype(l, itemsAPIVersion, itemsKind); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// itemKind is the kind of the items of a list of kind listKind: listKind
// without its "List" suffix, "" if it has none.
func itemKind(listKind string) string {
	if len(listKind) > len("List") && strings.HasSuffix(listKind, "List") {
		return listKind[:len(listKind)-len("List")]
	}
	return ""
}

// items parses the items array (or null) at s.pos, the value of a member of
// the top-level list object, whose first byte is buffered.
func (lp *listParser) items(apiVersion, listKind string) ([]*Object, error) {
	const depth = 2 // of the array
	s := &lp.s
	lp.had = lp.had[:0]
	switch s.peek() {
	case 'n':
		if _, err := lp.value(); err != nil {
			return nil, err
		}
		return nil, s.scanLiteral("null")
	case '[':
	default:
		if s.pos >= len(s.data) {
			return nil, s.unexpected()
		}
		return nil, fmt.Errorf("items at offset %d is not an array", s.offset(s.pos))
	}
	if err := s.checkDepth(depth); err != nil {
		return nil, err
	}
	s.pos++
	if err := lp.skip(); err != nil {
		return nil, err
	}
	items := []*Object{}
	if s.peek() == ']' {
		s.pos++
		return items, nil
	}
	tm := newTypeMeta(apiVersion, itemKind(listKind))
	for i := 0; ; i++ {
		o, err := lp.item(i, &tm, depth+1)
		if err != nil {
			return nil, fmt.Errorf("items[%d]: %w", i, err)
		}
		if lp.each != nil {
			lp.handedOut++
			if err := lp.each(o); err != nil {
				return nil, fmt.Errorf("items[%d]: %w", i, err)
			}
		} else {
			items = append(items, o)
		}
		if err := lp.skip(); err != nil {
			return nil, err
		}
		switch s.peek() {
		case ',':
			s.pos++
		case ']':
			s.pos++
			return items, nil
		default:
			return nil, s.unexpected()
		}
	}
}

// item parses item number index at s.pos (after whitespace), at nesting
// level depth.
//
// It first reads on until half a buffer is ahead (or the input ends), then
// parses what is buffered. A success is final: parseObject stops at the
// item's closing '}' and never looks past it, so more input cannot change
// the result. A failure may only mean that the item goes on past the
// buffered bytes (parseObject sees the end of its data as the end of the
// input, and a number may end there): then the item is framed whole and
// parsed again, which is final as parseObject never looks past the frame
// (the frame of an object is where parseObject would end it or fail
// before). So an item smaller than half a buffer is scanned once, a bigger
// one about three times.
func (lp *listParser) item(index int, tm *typeMeta, depth int) (*Object, error) {
	if err := lp.skip(); err != nil {
		return nil, err
	}
	for !lp.eof && len(lp.s.data)-lp.s.pos < listBufferSize/2 {
		if err := lp.more(); err != nil && err != io.EOF {
			return nil, err
		}
	}
	for final := lp.eof; ; final = true {
		p := objScan{
			scanner:           lp.s,
			keepManagedFields: lp.opts.KeepManagedFields,
			allowMissingName:  lp.opts.AllowMissingName,
			depth:             depth,
		}
		err := p.parseObject()
		if err == nil {
			lp.s.pos = p.pos
			if p.hasAPIVersion || p.hasKind {
				had := uint64(index) << hadBits
				if p.hasAPIVersion {
					had |= hadAPIVersion
				}
				if p.hasKind {
					had |= hadKind
				}
				lp.had = append(lp.had, had)
			}
			return p.build(tm), nil
		}
		if final {
			return nil, err
		}
		if _, err := lp.value(); err != nil {
			return nil, err
		}
	}
}

// handedOutKeepTypes reports whether retype would leave every item handed
// out to each as it is: whether each had its own apiVersion where the
// list's apiVersion differs from itemsAPIVersion, and its own kind where
// the items' kind differs.
func (lp *listParser) handedOutKeepTypes(itemsAPIVersion, itemsListKind string, l *List) bool {
	old := newTypeMeta(itemsAPIVersion, itemKind(itemsListKind))
	tm := newTypeMeta(l.APIVersion, itemKind(l.Kind))
	kept := 0
	for _, had := range lp.had {
		if keepsType(had, &old, &tm) {
			kept++
		}
	}
	return kept == lp.handedOut
}

// keepsType reports whether an item typed with old stays as it is when
// retyped with tm, had telling (as an entry of listParser.had, or 0) which
// of apiVersion and kind it had of its own: its own members are kept, and
// the inserted ones only change where old and tm differ.
func keepsType(had uint64, old, tm *typeMeta) bool {
	return (had&hadAPIVersion != 0 || old.apiVersion == tm.apiVersion) && (had&hadKind != 0 || old.kind == tm.kind)
}

// retype gives the items of l the apiVersion and kind that l has now, as
// ParseList would have if they had come before the items: the items were
// parsed with the list's apiVersion and kind itemsAPIVersion and
// itemsListKind, and lp.had tells which items had their own.
func (lp *listParser) retype(l *List, itemsAPIVersion, itemsListKind string) error {
	old := newTypeMeta(itemsAPIVersion, itemKind(itemsListKind))
	tm := newTypeMeta(l.APIVersion, itemKind(l.Kind))
	had := lp.had
	for i, o := range l.Items {
		var flags uint64
		if len(had) > 0 && had[0]>>hadBits == uint64(i) {
			flags, had = had[0], had[1:]
		}
		if keepsType(flags, &old, &tm) {
			continue // the same members are inserted
		}
		n, err := retypeItem(o, flags&hadAPIVersion != 0, flags&hadKind != 0, &old, &tm, lp.opts.KeepManagedFields)
		if err != nil {
			return fmt.Errorf("items[%d]: %w", i, err)
		}
		l.Items[i] = n
	}
	return nil
}

// retypeItem returns item o, built with old, as if it had been built with
// tm from the same input. o.JSON is the input object (minus the
// managedFields when !keepManagedFields) with old's members inserted after
// its '{' where it lacked its own (hasAPIVersion, hasKind); they kept their
// trailing comma, as the item's metadata member follows. So o.JSON without
// them is parsed again with tm. The managedFields summary that was taken
// from members no longer in o.JSON is carried over into the new
// allocation.
func retypeItem(o *Object, hasAPIVersion, hasKind bool, old, tm *typeMeta, keepManagedFields bool) (*Object, error) {
	inserted := 0
	if !hasAPIVersion {
		inserted += len(old.apiVersionJSON)
	}
	if !hasKind {
		inserted += len(old.kindJSON)
	}
	if 1+inserted > len(o.JSON) {
		return nil, errors.New("internal error: the item lacks the members inserted into it")
	}
	rest := o.JSON[1+inserted:]
	carry := !keepManagedFields && len(o.Managers) > 0
	size := 1 + len(rest)
	if carry {
		for _, m := range o.Managers {
			size += len(m.Manager) + len(m.Operation) + len(m.Subresource) + len(m.Time)
		}
	}
	data := make([]byte, 1, size)
	data[0] = '{'
	data = append(data, rest...)
	p := objScan{
		scanner:           scanner{data: data},
		keepManagedFields: keepManagedFields,
		allowMissingName:  true, // the item parsed with the caller's options
		depth:             1,
	}
	if err := p.parseObject(); err != nil {
		return nil, fmt.Errorf("internal error: the item does not parse again: %w", err)
	}
	if carry {
		// Decoded strings (valid UTF-8, no escapes) after the JSON, copied
		// by build like the strings of stripped managedFields.
		ref := func(v string) strRef {
			start := len(data)
			data = append(data, v...)
			return strRef{start: start, end: len(data)}
		}
		p.managers.reset()
		for _, m := range o.Managers {
			p.managers.push(managerRef{
				manager:     ref(m.Manager),
				operation:   ref(m.Operation),
				subresource: ref(m.Subresource),
				time:        ref(m.Time),
				fieldsHash:  m.FieldsHash,
			})
		}
		p.data = data
	}
	return p.build(tm), nil
}

// parseListMeta parses the list's metadata (an object or null) at s.pos.
// Like encoding/json, a repeated member overwrites the earlier one.
func parseListMeta(s *scanner, l *List) error {
	const depth = 2
	switch s.peek() {
	case 'n':
		return s.scanLiteral("null")
	case '{':
	default:
		if s.pos >= len(s.data) {
			return s.unexpected()
		}
		return fmt.Errorf("metadata at offset %d is not an object", s.offset(s.pos))
	}
	empty, err := s.objectStart(depth)
	if err != nil {
		return err
	}
	var scratch []byte
	for !empty {
		var m member
		m, scratch, err = s.memberKey(scratch)
		if err != nil {
			return err
		}
		switch string(m.key) {
		case "resourceVersion":
			l.ResourceVersion, err = copyStringValue(s, "metadata.resourceVersion")
		case "continue":
			l.Continue, err = copyStringValue(s, "metadata.continue")
		case "selfLink":
			l.SelfLink, err = copyStringValue(s, "metadata.selfLink")
		case "remainingItemCount":
			l.RemainingItemCount = nil
			if s.peek() == 'n' {
				err = s.scanLiteral("null")
				break
			}
			var n int64
			if n, err = s.int64Value("metadata.remainingItemCount"); err == nil {
				l.RemainingItemCount = &n
			}
		default:
			err = s.skipValue(depth)
		}
		if err != nil {
			return err
		}
		if empty, err = s.memberEnd(); err != nil {
			return err
		}
	}
	return nil
}

// copyStringValue consumes a string or null at s.pos and returns a decoded
// copy that does not alias s.data.
func copyStringValue(s *scanner, what string) (string, error) {
	r, err := s.stringValue(what)
	if err != nil {
		return "", err
	}
	raw := s.data[r.start:r.end]
	if r.flags&strEscaped != 0 || !utf8.Valid(raw) {
		return string(appendUnescaped(nil, raw)), nil
	}
	return string(raw), nil
}

// GetObjectKind returns l itself.
func (l *List) GetObjectKind() schema.ObjectKind { return l }

// GroupVersionKind returns the group, version and kind of APIVersion and
// Kind.
func (l *List) GroupVersionKind() schema.GroupVersionKind {
	return schema.FromAPIVersionAndKind(l.APIVersion, l.Kind)
}

// SetGroupVersionKind sets APIVersion and Kind (the items are unchanged).
func (l *List) SetGroupVersionKind(gvk schema.GroupVersionKind) {
	l.APIVersion, l.Kind = gvk.ToAPIVersionAndKind()
}

// DeepCopyObject returns DeepCopy.
func (l *List) DeepCopyObject() runtime.Object { return l.DeepCopy() }

// DeepCopy returns a copy of l and of its items that shares no memory
// with l.
func (l *List) DeepCopy() *List {
	if l == nil {
		return nil
	}
	c := *l
	if l.RemainingItemCount != nil {
		n := *l.RemainingItemCount
		c.RemainingItemCount = &n
	}
	if l.Items != nil {
		c.Items = make([]*Object, len(l.Items))
		for i, o := range l.Items {
			c.Items[i] = o.DeepCopy()
		}
	}
	return &c
}

// EachListItem calls fn with each item in order and stops at the first
// error, which it returns.
func (l *List) EachListItem(fn func(runtime.Object) error) error {
	for _, o := range l.Items {
		if err := fn(o); err != nil {
			return err
		}
	}
	return nil
}

// GetResourceVersion returns metadata.resourceVersion.
func (l *List) GetResourceVersion() string { return l.ResourceVersion }

// SetResourceVersion sets metadata.resourceVersion.
func (l *List) SetResourceVersion(v string) { l.ResourceVersion = v }

// GetSelfLink returns metadata.selfLink (no longer sent by servers).
func (l *List) GetSelfLink() string { return l.SelfLink }

// SetSelfLink sets metadata.selfLink.
func (l *List) SetSelfLink(v string) { l.SelfLink = v }

// GetContinue returns metadata.continue.
func (l *List) GetContinue() string { return l.Continue }

// SetContinue sets metadata.continue.
func (l *List) SetContinue(c string) { l.Continue = c }

// GetRemainingItemCount returns metadata.remainingItemCount (nil if absent).
func (l *List) GetRemainingItemCount() *int64 { return l.RemainingItemCount }

// SetRemainingItemCount sets metadata.remainingItemCount.
func (l *List) SetRemainingItemCount(c *int64) { l.RemainingItemCount = c }
