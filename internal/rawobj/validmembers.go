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
