package rawobj

// Framing: where a value that arrives in pieces ends, found by matching
// brackets and quotes (or, for a number or literal, by the byte after it)
// without validating the value: the scanner does that once the value is
// whole.

import (
	"encoding/binary"
	"math/bits"
)

// frameScan finds the end of an object, array or string by matching
// brackets outside strings and quotes (minding escapes), without
// validating anything else. Its state carries over from one scan call to
// the next, for values that arrive in pieces; the zero value is ready to
// scan a value from its first byte.
type frameScan struct {
	depth    int
	inString bool
	escaped  bool // the previous byte was a backslash in a string
}

// scan consumes b and returns the index just past the end of the value,
// or -1 if the value goes on after b.
func (f *frameScan) scan(b []byte) int {
	i := 0
	for i < len(b) {
		if f.escaped {
			f.escaped = false
			i++
			continue
		}
		if f.inString {
			i = skipStringBytes(b, i)
			if i == len(b) {
				return -1
			}
			if b[i] == '\\' {
				f.escaped = true
				i++
				continue
			}
			// b[i] == '"'
			f.inString = false
			i++
			if f.depth == 0 { // a top-level string
				return i
			}
			continue
		}
		switch b[i] {
		case '"':
			f.inString = true
		case '{', '[':
			f.depth++
		case '}', ']':
			f.depth--
			if f.depth <= 0 {
				return i + 1
			}
		}
		i++
	}
	return -1
}

// skipStringBytes returns the index of the first '"' or '\\' in b at or
// after i, or len(b) (i when i is past len(b)). It tests 8 bytes a step,
// slicing as it goes so that no load is bounds-checked.
func skipStringBytes(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	rest := b[i:]
	for len(rest) >= 8 {
		if m := quoteOrBackslash(binary.LittleEndian.Uint64(rest)); m != 0 {
			return len(b) - len(rest) + bits.TrailingZeros64(m)>>3
		}
		rest = rest[8:]
	}
	k := 0
	for k < len(rest) && rest[k] != '"' && rest[k] != '\\' {
		k++
	}
	return len(b) - len(rest) + k
}

// quoteOrBackslash returns a mask with the high bit set in the lowest
// byte of x (little-endian) that is a quote or a backslash, and maybe in
// bytes above it; 0 if none is. Each term is the classic test for a zero
// byte, exact in its lowest hit.
func quoteOrBackslash(x uint64) uint64 {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	q := x ^ (lo * '"')
	e := x ^ (lo * '\\')
	return ((q-lo)&^q | (e-lo)&^e) & hi
}

// scalarEnd returns the index of the first byte of b that ends a number or
// literal (whitespace, or a byte that starts or ends another value), or -1
// if the value goes on after b. Like frameScan, it only frames: the
// scanner rejects a malformed number or literal.
func scalarEnd(b []byte) int {
	for i, c := range b {
		if isSpace(c) || c == '{' || c == '}' || c == '[' || c == ']' || c == ',' || c == ':' || c == '"' {
			return i
		}
	}
	return -1
}
