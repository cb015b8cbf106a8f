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
	// Columns are the column definitions of a server-side Table (kind
	// Table, asked for with includeObject=Object), whose rows' objects are
	// Items, each with its Cells; nil for other lists.
	Columns []TableColumn
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
//
// The plugin reads lists as they stream (ParseListFrom, ParseListEach);
// ParseList, the whole-body form, is the reference they are tested and
// fuzzed against.
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
		case "columnDefinitions", "rows":
			err = lp.tableMember(string(m.key), l)
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
	lp.had = lp.had[:0]
	tm := newTypeMeta(apiVersion, itemKind(listKind))
	return lp.objects("items", func(i, depth int) (*Object, error) { return lp.item(i, &tm, depth) })
}

// objects parses the array (or null) at s.pos, the value of the top-level
// member name, whose first byte is buffered: each element, at nesting
// level depth, is parsed by parse into an object, which is handed to
// lp.each or collected.
func (lp *listParser) objects(name string, parse func(index, depth int) (*Object, error)) ([]*Object, error) {
	const depth = 2 // of the array
	s := &lp.s
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
		return nil, fmt.Errorf("%s at offset %d is not an array", name, s.offset(s.pos))
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
	for i := 0; ; i++ {
		o, err := parse(i, depth+1)
		if err != nil {
			return nil, fmt.Errorf("%s[%d]: %w", name, i, err)
		}
		if lp.each != nil {
			lp.handedOut++
			if err := lp.each(o); err != nil {
				return nil, fmt.Errorf("%s[%d]: %w", name, i, err)
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
