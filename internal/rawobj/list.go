package rawobj

import (
	"fmt"
	"strings"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// List is a list response (kind: XList) whose items are kept as JSON.
// Its strings never alias the data given to ParseList.
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
	s := scanner{data: data}
	s.skipSpace()
	if s.peek() != '{' {
		if s.pos >= len(data) {
			return nil, s.unexpected()
		}
		return nil, fmt.Errorf("expected a JSON object at offset %d, found %s", s.pos, quoteByte(data[s.pos]))
	}
	l := &List{}
	empty, err := s.objectStart(1)
	if err != nil {
		return nil, err
	}
	var scratch []byte
	// itemsAt is the offset of the last items value, -1 if none; the items
	// were parsed with itemsAPIVersion and itemsKind.
	itemsAt := -1
	var itemsAPIVersion, itemsKind string
	for !empty {
		var m member
		m, scratch, err = s.memberKey(scratch)
		if err != nil {
			return nil, err
		}
		switch string(m.key) {
		case "apiVersion":
			l.APIVersion, err = copyStringValue(&s, "apiVersion")
		case "kind":
			l.Kind, err = copyStringValue(&s, "kind")
		case "metadata":
			err = parseListMeta(&s, l)
		case "items":
			itemsAt = s.pos
			itemsAPIVersion, itemsKind = l.APIVersion, l.Kind
			l.Items, err = parseItems(&s, opts, l.APIVersion, l.Kind)
		default:
			err = s.skipValue(1)
		}
		if err != nil {
			return nil, err
		}
		if empty, err = s.memberEnd(); err != nil {
			return nil, err
		}
	}
	s.skipSpace()
	if s.pos < len(data) {
		return nil, s.syntaxError("unexpected " + quoteByte(data[s.pos]) + " after the object")
	}
	if itemsAt >= 0 && (itemsAPIVersion != l.APIVersion || itemsKind != l.Kind) {
		// apiVersion or kind came after items: parse them again to insert
		// the right ones. Servers send them first, so this is rare.
		s.pos = itemsAt
		if l.Items, err = parseItems(&s, opts, l.APIVersion, l.Kind); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// parseItems parses the items array (or null) at s.pos, the value of a
// member of the top-level list object.
func parseItems(s *scanner, opts ParseOptions, apiVersion, listKind string) ([]*Object, error) {
	const depth = 2 // of the array
	switch s.peek() {
	case 'n':
		return nil, s.scanLiteral("null")
	case '[':
	default:
		if s.pos >= len(s.data) {
			return nil, s.unexpected()
		}
		return nil, fmt.Errorf("items at offset %d is not an array", s.pos)
	}
	if err := s.checkDepth(depth); err != nil {
		return nil, err
	}
	s.pos++
	s.skipSpace()
	items := []*Object{}
	if s.peek() == ']' {
		s.pos++
		return items, nil
	}
	kind := ""
	if len(listKind) > len("List") && strings.HasSuffix(listKind, "List") {
		kind = listKind[:len(listKind)-len("List")]
	}
	tm := newTypeMeta(apiVersion, kind)
	for i := 0; ; i++ {
		p := objScan{
			scanner:           *s,
			keepManagedFields: opts.KeepManagedFields,
			allowMissingName:  opts.AllowMissingName,
			depth:             depth + 1,
		}
		if err := p.parseObject(); err != nil {
			return nil, fmt.Errorf("items[%d]: %w", i, err)
		}
		items = append(items, p.build(&tm))
		s.pos = p.pos
		s.skipSpace()
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
		return fmt.Errorf("metadata at offset %d is not an object", s.pos)
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
