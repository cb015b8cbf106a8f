package rawobj

import (
	"fmt"
	"strings"
)

// oracleParseList is ParseList as it was before ParseListFrom, kept as the
// oracle of ParseList and ParseListFrom: it parses data in memory and
// parses the items again when apiVersion or kind come after them. It parses
// a list response body such as
//
//	{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"123","continue":"…"},"items":[{…},{…}]}
//
// Each item is parsed as by Parse with opts. An item that lacks apiVersion
// or kind gets the list's apiVersion and the list's kind without its "List"
// suffix, both in its fields and inserted as "apiVersion":"…","kind":"…",
// right after the item's '{', so every item's JSON is a complete object like
// a watch event's. The result does not alias data.
func oracleParseList(data []byte, opts ParseOptions) (*List, error) {
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
			l.Items, err = oracleParseItems(&s, opts, l.APIVersion, l.Kind)
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
		if l.Items, err = oracleParseItems(&s, opts, l.APIVersion, l.Kind); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// oracleParseItems parses the items array (or null) at s.pos, the value of a
// member of the top-level list object.
func oracleParseItems(s *scanner, opts ParseOptions, apiVersion, listKind string) ([]*Object, error) {
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
