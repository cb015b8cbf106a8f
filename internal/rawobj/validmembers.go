package rawobj

import (
	"bytes"
	"errors"
)

// errNotValid is what the walkers of valid JSON return on data that is not.
var errNotValid = errors.New("not valid JSON")

// EachValidMember is EachMember for data already known to be valid JSON
// (an Object's JSON, validated when it was parsed): it finds the members
// without validating their values, several times faster. On data that is
// not valid JSON it returns an error or wrong members; it never panics
// and never reads past data.
func EachValidMember(data []byte, fn func(key, value []byte)) error {
	return eachValidMember(data, func(key, value []byte) bool {
		fn(key, value)
		return false
	})
}

// eachValidMember is EachValidMember with an end: it stops, with no
// error, once fn returns true.
func eachValidMember(data []byte, fn func(key, value []byte) (stop bool)) error {
	end, stop, err := walkValidMembers(data, skipSpaceAt(data, 0), func(key []byte, at int) (int, bool, error) {
		end, err := skipValidValue(data, at)
		if err != nil {
			return 0, false, err
		}
		return end, fn(key, data[at:end]), nil
	})
	if err == nil && !stop && skipSpaceAt(data, end) != len(data) {
		err = errNotValid
	}
	return err
}

// walkValidMembers walks the members of the object at data[i], known to
// be valid JSON: value is called with each key (unescaped) and the index
// of its value, and returns the index just past that value, or stop to
// end the walk there. It returns the index just past the object.
func walkValidMembers(data []byte, i int, value func(key []byte, at int) (end int, stop bool, err error)) (end int, stop bool, err error) {
	if i >= len(data) || data[i] != '{' {
		return 0, false, errNotValid
	}
	if i = skipSpaceAt(data, i+1); i < len(data) && data[i] == '}' {
		return i + 1, false, nil
	}
	var scratch []byte
	for i < len(data) {
		if data[i] != '"' {
			return 0, false, errNotValid
		}
		end, err := endOfValidString(data, i)
		if err != nil {
			return 0, false, err
		}
		key := data[i+1 : end-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			s := scanner{data: data, pos: i}
			if _, err := s.scanString(); err != nil {
				return 0, false, err // checked before appendUnescaped, which trusts it
			}
			scratch = appendUnescaped(scratch[:0], key)
			key = scratch
		}
		if i = skipSpaceAt(data, end); i >= len(data) || data[i] != ':' {
			return 0, false, errNotValid
		}
		if i, stop, err = value(key, skipSpaceAt(data, i+1)); err != nil || stop {
			return i, stop, err
		}
		if i = skipSpaceAt(data, i); i >= len(data) {
			return 0, false, errNotValid
		}
		switch data[i] {
		case ',':
			i = skipSpaceAt(data, i+1)
		case '}':
			return i + 1, false, nil
		default:
			return 0, false, errNotValid
		}
	}
	return 0, false, errNotValid
}

// skipSpaceAt is the index of the first byte of data at or after i that is
// not JSON white space (len(data) if none), data being valid JSON, as for
// every caller: between its tokens the only bytes up to ' ' are white
// space, so one comparison a byte finds the end.
func skipSpaceAt(data []byte, i int) int {
	for i < len(data) && data[i] <= ' ' {
		i++
	}
	return i
}

// endOfValidString is the index just past the string that starts with the
// quote at data[i], known to be valid JSON (validStringEnd).
func endOfValidString(data []byte, i int) (int, error) {
	end, _ := validStringEnd(data, i)
	if end == 0 {
		return 0, errNotValid
	}
	return end, nil
}

// validStringEnd is the index just past the string that starts with the
// quote at data[i], and whether it has an escape; 0 for a string without
// its end. In valid JSON a string ends at the first quote that no
// backslash escapes, and no control character lies inside (one that does
// is stepped over, as any other byte): it finds each quote or backslash
// with skipStringBytes, and steps over an escape's backslash and the
// byte after it (a quote or a backslash escaped, or the u of a \uXXXX
// whose hex digits are neither).
func validStringEnd(data []byte, i int) (end int, escaped bool) {
	for j := i + 1; ; j += 2 {
		if j = skipStringBytes(data, j); j >= len(data) {
			return 0, false
		}
		if data[j] == '"' {
			return j + 1, escaped
		}
		escaped = true
	}
}

// skipValidValue is the index just past the JSON value that starts at
// data[i].
func skipValidValue(data []byte, i int) (int, error) {
	depth := 0
	for i < len(data) {
		switch data[i] {
		case '"':
			end, err := endOfValidString(data, i)
			if err != nil {
				return 0, err
			}
			if i = end; depth == 0 {
				return i, nil
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return i, nil // the end of a number, true, false or null
			}
			if depth--; depth == 0 {
				return i + 1, nil
			}
		case ',', ' ', '\t', '\n', '\r':
			if depth == 0 {
				return i, nil // the end of a number, true, false or null
			}
		}
		i++
	}
	if depth == 0 {
		return i, nil
	}
	return 0, errNotValid
}

// endsValue reports whether a JSON value may end just before data[i]: at
// the end of data, white space, a comma or a closing bracket.
func endsValue(data []byte, i int) bool {
	if i >= len(data) {
		return true
	}
	switch data[i] {
	case ' ', '\t', '\n', '\r', ',', '}', ']':
		return true
	}
	return false
}

// MemberDiffKind says what a MemberDiff is.
type MemberDiffKind uint8

const (
	// DiffValues is a member whose values differ (A and B), not both
	// objects.
	DiffValues MemberDiffKind = iota
	// DiffEnter is a member that is an object on both sides, with different
	// bytes; the findings up to the matching DiffLeave are its members'.
	DiffEnter
	// DiffLeave ends what a DiffEnter began.
	DiffLeave
	// DiffObjects is a member that is an object on both sides whose keys part
	// ways (A and B): it must be compared some other way.
	DiffObjects
)

// MemberDiff is one finding of DiffMembers. Key is the member's key as
// written, between its quotes (Escaped: with escapes, to be undone as a
// decoder would); A and B are its values where the kind has them.
type MemberDiff struct {
	Kind    MemberDiffKind
	Escaped bool
	Key     []byte
	A, B    []byte
}

// DiffMembers appends to dst what differs between the JSON objects a and
// b, both known to be valid JSON (as for EachValidMember), walked side by
// side while their keys come alike, written alike, in the same order — as
// two versions of an object have — and walked into where a member is an
// object on both sides: one scan finds the members that differ at every
// depth. A member with the same bytes on both sides costs a scan of its
// value on one side and a comparison of bytes. aligned is false
// when the keys of a and b themselves part ways: dst is then returned as
// it came. Below them, objects whose keys part ways are DiffObjects.
func DiffMembers(dst []MemberDiff, a, b []byte) (out []MemberDiff, aligned bool, err error) {
	i, j := skipSpaceAt(a, 0), skipSpaceAt(b, 0)
	n := len(dst)
	out, _, _, aligned, err = diffObjects(dst, a, i, b, j)
	if err != nil || !aligned {
		return dst[:n], false, err
	}
	return out, true, nil
}

// diffObjects appends the findings of the objects at a[i] and b[j] and
// returns the indexes just past them; aligned as DiffMembers says (the
// findings appended are then to be dropped, and ea, eb not set).
func diffObjects(dst []MemberDiff, a []byte, i int, b []byte, j int) (out []MemberDiff, ea, eb int, aligned bool, err error) {
	if i >= len(a) || a[i] != '{' || j >= len(b) || b[j] != '{' {
		return dst, 0, 0, false, errNotValid
	}
	i, j = skipSpaceAt(a, i+1), skipSpaceAt(b, j+1)
	if i >= len(a) || j >= len(b) {
		return dst, 0, 0, false, errNotValid
	}
	if a[i] == '}' || b[j] == '}' {
		return dst, i + 1, j + 1, a[i] == b[j], nil
	}
	for {
		if a[i] != '"' || b[j] != '"' {
			return dst, 0, 0, false, errNotValid
		}
		end, err := endOfValidString(a, i)
		if err != nil {
			return dst, 0, 0, false, err
		}
		n := end - i // the key with its quotes: the same bytes in b end where they do in a
		if j+n > len(b) || !bytes.Equal(a[i:end], b[j:j+n]) {
			return dst, 0, 0, false, nil
		}
		key := a[i+1 : end-1]
		escaped := bytes.IndexByte(key, '\\') >= 0
		if escaped {
			s := scanner{data: a, pos: i}
			if _, err := s.scanString(); err != nil {
				return dst, 0, 0, false, err // checked before a caller undoes the escapes
			}
		}
		if i = skipSpaceAt(a, end); i >= len(a) || a[i] != ':' {
			return dst, 0, 0, false, errNotValid
		}
		if j = skipSpaceAt(b, j+n); j >= len(b) || b[j] != ':' {
			return dst, 0, 0, false, errNotValid
		}
		i, j = skipSpaceAt(a, i+1), skipSpaceAt(b, j+1)
		if i >= len(a) || j >= len(b) {
			return dst, 0, 0, false, errNotValid
		}
		var va, vb int // where the values end
		if a[i] == '{' && b[j] == '{' {
			// Walked into at once: its members are scanned once, not
			// skipped first and read again.
			at := len(dst)
			dst = append(dst, MemberDiff{Kind: DiffEnter, Key: key, Escaped: escaped})
			var inner bool
			if dst, va, vb, inner, err = diffObjects(dst, a, i, b, j); err != nil {
				return dst, 0, 0, false, err
			}
			switch {
			case !inner:
				dst = dst[:at]
				if va, err = skipValidValue(a, i); err != nil {
					return dst, 0, 0, false, err
				}
				if vb, err = skipValidValue(b, j); err != nil {
					return dst, 0, 0, false, err
				}
				dst = append(dst, MemberDiff{Kind: DiffObjects, Key: key, Escaped: escaped, A: a[i:va], B: b[j:vb]})
			case len(dst) == at+1:
				dst = dst[:at] // nothing differs inside
			default:
				dst = append(dst, MemberDiff{Kind: DiffLeave})
			}
		} else {
			if va, err = skipValidValue(a, i); err != nil {
				return dst, 0, 0, false, err
			}
			// b's value is a's when it starts with a's bytes and ends there.
			vb = j + (va - i)
			if vb > len(b) || !bytes.Equal(a[i:va], b[j:vb]) || !endsValue(b, vb) {
				if vb, err = skipValidValue(b, j); err != nil {
					return dst, 0, 0, false, err
				}
				dst = append(dst, MemberDiff{Kind: DiffValues, Key: key, Escaped: escaped, A: a[i:va], B: b[j:vb]})
			}
		}
		if i, j = skipSpaceAt(a, va), skipSpaceAt(b, vb); i >= len(a) || j >= len(b) {
			return dst, 0, 0, false, errNotValid
		}
		switch {
		case a[i] == '}' && b[j] == '}':
			return dst, i + 1, j + 1, true, nil
		case a[i] == ',' && b[j] == ',':
			if i, j = skipSpaceAt(a, i+1), skipSpaceAt(b, j+1); i >= len(a) || j >= len(b) {
				return dst, 0, 0, false, errNotValid
			}
		case (a[i] == ',' || a[i] == '}') && (b[j] == ',' || b[j] == '}'):
			return dst, 0, 0, false, nil // one has more members
		default:
			return dst, 0, 0, false, errNotValid
		}
	}
}

// AppendUnescapedKey appends the key of a MemberDiff with its escapes
// undone, as a decoder reads it.
func AppendUnescapedKey(dst []byte, d *MemberDiff) []byte {
	if !d.Escaped {
		return append(dst, d.Key...)
	}
	return appendUnescaped(dst, d.Key)
}
