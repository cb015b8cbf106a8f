package rawobj

import "hash/maphash"

// Selection is Fields compiled for HashMember: each object's selected keys
// in a short slice, found by length and bytes rather than by hashing the
// key for a map. A Pod's status hashed for the health verdicts' cache
// (health.Judge) has some 40 members to look up, on every Pod of every
// list: the map lookups were a fifth of that hash.
//
// A Selection is read-only once made; nil selects everything.
type Selection struct {
	fields  Fields
	members []selectedMember
	// lengths has bit n set when a key of members is n bytes long, bit 63
	// for every length from 63 up: most keys a status has and the
	// selection does not are told apart by their length alone.
	lengths uint64
}

// selectedMember is a key Fields names and what it selects of its value
// (nil: all of it).
type selectedMember struct {
	key string
	sub *Selection
}

// Select compiles keep (nil: everything, a nil Selection).
func Select(keep Fields) *Selection {
	if keep == nil {
		return nil
	}
	s := &Selection{fields: keep, members: make([]selectedMember, 0, len(keep))}
	for key, sub := range keep {
		s.members = append(s.members, selectedMember{key: key, sub: Select(sub)})
		s.lengths |= 1 << min(len(key), 63)
	}
	return s
}

// Fields is what s was compiled from (nil for nil).
func (s *Selection) Fields() Fields {
	if s == nil {
		return nil
	}
	return s.fields
}

// lookup is the member of s named key, unescaped, and whether s selects
// it.
func (s *Selection) lookup(key []byte) (*Selection, bool) {
	if s.lengths&(1<<min(len(key), 63)) == 0 {
		return nil, false
	}
	for i := range s.members {
		if m := &s.members[i]; len(m.key) == len(key) && m.key == string(key) {
			return m.sub, true
		}
	}
	return nil, false
}

// selectionHash writes to a maphash.Hash through a buffer: the hash of a
// Pod's status is some 150 short writes, and a maphash.Hash's Write costs
// more per call than a copy. The sum depends on the bytes alone, not on
// how they are split into writes.
type selectionHash struct {
	h *maphash.Hash
	n int
	b [256]byte
}

func (w *selectionHash) write(p []byte) {
	if w.n+len(p) > len(w.b) {
		w.flush()
		if len(p) > len(w.b) {
			_, _ = w.h.Write(p)
			return
		}
	}
	w.n += copy(w.b[w.n:], p)
}

func (w *selectionHash) writeByte(c byte) {
	if w.n == len(w.b) {
		w.flush()
	}
	w.b[w.n] = c
	w.n++
}

func (w *selectionHash) flush() {
	_, _ = w.h.Write(w.b[:w.n])
	w.n = 0
}

// value writes what sel selects of the value at data[i], known to be
// valid JSON, as HashFields writes it (the same bytes), and returns the index
// just past it.
func (w *selectionHash) value(data []byte, i int, sel *Selection) (int, error) {
	if sel != nil && i < len(data) {
		switch data[i] {
		case '{':
			return w.members(data, i, sel)
		case '[':
			return w.elements(data, i, sel)
		}
	}
	end, err := skipValidValue(data, i)
	if err != nil || end == i {
		return 0, errNotValid
	}
	w.write(data[i:end])
	w.writeByte(0)
	return end, nil
}

// members is value for the object at data[i]: its members that sel
// selects, in order, each as its key, a colon and what its selection
// selects of its value, between braces.
func (w *selectionHash) members(data []byte, i int, sel *Selection) (int, error) {
	w.writeByte('{')
	if i = skipSpaceAt(data, i+1); i < len(data) && data[i] == '}' {
		w.writeByte('}')
		return i + 1, nil
	}
	for i < len(data) && data[i] == '"' {
		end, escaped := validStringEnd(data, i)
		if end == 0 {
			return 0, errNotValid
		}
		key := data[i+1 : end-1]
		if escaped {
			s := scanner{data: data, pos: i}
			if _, err := s.scanString(); err != nil {
				return 0, err // checked before appendUnescaped, which trusts it
			}
			key = appendUnescaped(nil, key)
		}
		// The separators are tested where they are when the JSON is
		// compact, as the apiserver writes it, before any space is
		// skipped.
		if i = end; i >= len(data) || data[i] != ':' {
			if i = skipSpaceAt(data, i); i >= len(data) || data[i] != ':' {
				return 0, errNotValid
			}
		}
		if i++; i < len(data) && data[i] <= ' ' {
			i = skipSpaceAt(data, i)
		}
		var err error
		if sub, ok := sel.lookup(key); ok {
			w.write(key)
			w.writeByte(':')
			i, err = w.value(data, i, sub)
		} else {
			i, err = skipValidValue(data, i)
		}
		if err != nil {
			return 0, err
		}
		if i < len(data) && data[i] <= ' ' {
			i = skipSpaceAt(data, i)
		}
		if i >= len(data) {
			break
		}
		switch data[i] {
		case ',':
			if i++; i < len(data) && data[i] <= ' ' {
				i = skipSpaceAt(data, i)
			}
		case '}':
			w.writeByte('}')
			return i + 1, nil
		default:
			return 0, errNotValid
		}
	}
	return 0, errNotValid
}

// elements is value for the array at data[i]: what sel selects of each
// element, separated by commas, between brackets. Its separators are
// stepped over as members steps over its own, written out in both: as
// one function (not inlined) they cost the Pods' replay 1% more
// instructions.
func (w *selectionHash) elements(data []byte, i int, sel *Selection) (int, error) {
	w.writeByte('[')
	if i = skipSpaceAt(data, i+1); i < len(data) && data[i] == ']' {
		w.writeByte(']')
		return i + 1, nil
	}
	for i < len(data) {
		var err error
		if i, err = w.value(data, i, sel); err != nil {
			return 0, err
		}
		if i = skipSpaceAt(data, i); i >= len(data) {
			break
		}
		switch data[i] {
		case ',':
			w.writeByte(',')
			i = skipSpaceAt(data, i+1)
		case ']':
			w.writeByte(']')
			return i + 1, nil
		default:
			return 0, errNotValid
		}
	}
	return 0, errNotValid
}
