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
	i := skipSpaceAt(data, 0)
	if i >= len(data) || data[i] != '{' {
		return errNotValid
	}
	if i = skipSpaceAt(data, i+1); i < len(data) && data[i] == '}' {
		return nil
	}
	var scratch []byte
	for i < len(data) {
		if data[i] != '"' {
			return errNotValid
		}
		end, err := endOfValidString(data, i)
		if err != nil {
			return err
		}
		key := data[i+1 : end-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			s := scanner{data: data, pos: i}
			if _, err := s.scanString(); err != nil {
				return err // checked before appendUnescaped, which trusts it
			}
			scratch = appendUnescaped(scratch[:0], key)
			key = scratch
		}
		if i = skipSpaceAt(data, end); i >= len(data) || data[i] != ':' {
			return errNotValid
		}
		start := skipSpaceAt(data, i+1)
		if i, err = skipValidValue(data, start); err != nil {
			return err
		}
		fn(key, data[start:i])
		if i = skipSpaceAt(data, i); i >= len(data) {
			return errNotValid
		}
		switch data[i] {
		case ',':
			i = skipSpaceAt(data, i+1)
		case '}':
			if skipSpaceAt(data, i+1) != len(data) {
				return errNotValid
			}
			return nil
		default:
			return errNotValid
		}
	}
	return errNotValid
}

// skipSpaceAt is the index of the first byte of data at or after i that is
// not JSON white space (len(data) if none).
func skipSpaceAt(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// endOfValidString is the index just past the string that starts with the
// quote at data[i].
func endOfValidString(data []byte, i int) (int, error) {
	j := i + 1
	for {
		k := bytes.IndexByte(data[j:], '"')
		if k < 0 {
			return 0, errNotValid
		}
		j += k
		backslashes := 0
		for b := j - 1; b > i && data[b] == '\\'; b-- {
			backslashes++
		}
		if backslashes%2 == 0 {
			return j + 1, nil // not an escaped quote
		}
		j++
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

// EachDifferingMember walks the members of the JSON objects a and b, both
// known to be valid JSON (as for EachValidMember), side by side while they
// have the same keys, written alike, in the same order — as two versions
// of an object have — and calls fn with each member whose values are not
// the same bytes: its key with its escapes undone (as EachValidMember) and
// the two values. It reports whether the keys stayed together to the end;
// when they part (a key written otherwise, or in another place, one object
// with more members) it returns false at once, fn having been called for
// the members before that point: the caller must then compare the objects
// some other way.
//
// A member with the same bytes on both sides costs one scan of its value,
// on one side, and a comparison of bytes: a change of a few fields of a
// large object scans it about once.
func EachDifferingMember(a, b []byte, fn func(key, va, vb []byte)) (aligned bool, err error) {
	i, j := skipSpaceAt(a, 0), skipSpaceAt(b, 0)
	if i >= len(a) || a[i] != '{' || j >= len(b) || b[j] != '{' {
		return false, errNotValid
	}
	i, j = skipSpaceAt(a, i+1), skipSpaceAt(b, j+1)
	if i >= len(a) || j >= len(b) {
		return false, errNotValid
	}
	if a[i] == '}' || b[j] == '}' {
		return a[i] == b[j], nil
	}
	var scratch []byte
	for {
		if a[i] != '"' || b[j] != '"' {
			return false, errNotValid
		}
		end, err := endOfValidString(a, i)
		if err != nil {
			return false, err
		}
		n := end - i // the key with its quotes: the same bytes in b end where they do in a
		if j+n > len(b) || !bytes.Equal(a[i:end], b[j:j+n]) {
			return false, nil
		}
		keyAt, key := i, a[i+1:end-1]
		if i = skipSpaceAt(a, end); i >= len(a) || a[i] != ':' {
			return false, errNotValid
		}
		if j = skipSpaceAt(b, j+n); j >= len(b) || b[j] != ':' {
			return false, errNotValid
		}
		i, j = skipSpaceAt(a, i+1), skipSpaceAt(b, j+1)
		ea, err := skipValidValue(a, i)
		if err != nil {
			return false, err
		}
		// b's value is a's when it starts with a's bytes and ends there:
		// a JSON value's bytes say where it ends, but for a number, whose
		// next byte must then not continue it.
		eb := j + (ea - i)
		if eb > len(b) || !bytes.Equal(a[i:ea], b[j:eb]) || !endsValue(b, eb) {
			if eb, err = skipValidValue(b, j); err != nil {
				return false, err
			}
			if bytes.IndexByte(key, '\\') >= 0 {
				s := scanner{data: a, pos: keyAt}
				if _, err := s.scanString(); err != nil {
					return false, err // checked before appendUnescaped, which trusts it
				}
				scratch = appendUnescaped(scratch[:0], key)
				key = scratch
			}
			fn(key, a[i:ea], b[j:eb])
		}
		if i, j = skipSpaceAt(a, ea), skipSpaceAt(b, eb); i >= len(a) || j >= len(b) {
			return false, errNotValid
		}
		switch {
		case a[i] == '}' && b[j] == '}':
			return true, nil
		case a[i] == ',' && b[j] == ',':
			if i, j = skipSpaceAt(a, i+1), skipSpaceAt(b, j+1); i >= len(a) || j >= len(b) {
				return false, errNotValid
			}
		case (a[i] == ',' || a[i] == '}') && (b[j] == ',' || b[j] == '}'):
			return false, nil // one has more members
		default:
			return false, errNotValid
		}
	}
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
