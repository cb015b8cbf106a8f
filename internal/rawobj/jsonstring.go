package rawobj

// The contents of JSON strings: decoded exactly as encoding/json decodes
// them, and quoted for the members ParseList inserts.

import (
	"encoding/binary"
	"math/bits"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// appendUnescaped appends the decoded content of a JSON string (without
// quotes, already validated by scanString) to dst, exactly as encoding/json
// decodes it: escapes resolved, invalid surrogates and invalid UTF-8 bytes
// replaced by U+FFFD. The result is at most 3*len(raw) bytes long.
func appendUnescaped(dst, raw []byte) []byte {
	for i := 0; i < len(raw); {
		// A run of ASCII without a backslash, the bulk of most strings
		// (a UID, a name), is appended as it is, in one copy.
		if j := plainASCIIRun(raw, i); j > i {
			dst = append(dst, raw[i:j]...)
			if i = j; i == len(raw) {
				break
			}
		}
		c := raw[i]
		switch {
		case c == '\\':
			switch raw[i+1] {
			case 'b':
				dst = append(dst, '\b')
			case 'f':
				dst = append(dst, '\f')
			case 'n':
				dst = append(dst, '\n')
			case 'r':
				dst = append(dst, '\r')
			case 't':
				dst = append(dst, '\t')
			case 'u':
				r := getu4(raw[i:])
				i += 6
				if utf16.IsSurrogate(r) {
					if r2 := getu4(raw[i:]); r2 >= 0 {
						if dec := utf16.DecodeRune(r, r2); dec != unicode.ReplacementChar {
							i += 6
							dst = utf8.AppendRune(dst, dec)
							continue
						}
					}
					r = unicode.ReplacementChar
				}
				dst = utf8.AppendRune(dst, r)
				continue
			default: // '"', '\\', '/'
				dst = append(dst, raw[i+1])
			}
			i += 2
		case c < utf8.RuneSelf:
			dst = append(dst, c)
			i++
		default:
			r, size := utf8.DecodeRune(raw[i:])
			dst = utf8.AppendRune(dst, r)
			i += size
		}
	}
	return dst
}

// plainASCIIRun is the end of the run of bytes of raw from i that are
// ASCII and not a backslash, 8 bytes a step while they last.
func plainASCIIRun(raw []byte, i int) int {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	for i+8 <= len(raw) {
		x := binary.LittleEndian.Uint64(raw[i:])
		b := x ^ (lo * '\\')
		if m := (x | (b-lo)&^b) & hi; m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
		i += 8
	}
	for i < len(raw) && raw[i] < utf8.RuneSelf && raw[i] != '\\' {
		i++
	}
	return i
}

// getu4 decodes \uXXXX at the start of b, or returns -1.
func getu4(b []byte) rune {
	if len(b) < 6 || b[0] != '\\' || b[1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range b[2:6] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

// AppendStringBytes is AppendString of the bytes s, which it does not
// keep: without making a string of them first.
func AppendStringBytes(dst, s []byte) []byte {
	return appendString(dst, unsafe.String(unsafe.SliceData(s), len(s)), false)
}

// AppendString appends s as a JSON string exactly as encoding/json writes it
// with HTML escaping off: \" \\ \b \f \n \r \t, other control characters as
// \u00XX, U+2028 and U+2029 escaped, invalid UTF-8 replaced by U+FFFD.
// (strconv.Quote is not JSON: it writes \x1b and \a.)
func AppendString(dst []byte, s string) []byte { return appendString(dst, s, false) }

// AppendScriptString is AppendString with < written \u003c besides: a
// JSON string that cannot end the HTML script element it is written in.
func AppendScriptString(dst []byte, s string) []byte { return appendString(dst, s, true) }

// AppendScriptStringBytes is AppendScriptString of the bytes s, which it
// does not keep.
func AppendScriptStringBytes(dst, s []byte) []byte {
	return appendString(dst, unsafe.String(unsafe.SliceData(s), len(s)), true)
}

// appendString is AppendString, and with lt AppendScriptString.
func appendString(dst []byte, s string, lt bool) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	b := unsafe.Slice(unsafe.StringData(s), len(s)) // s's bytes, read only
	for i := 0; i < len(s); {
		// Skip plain ASCII 8 bytes at a time; stop at the first byte to
		// escape or not ASCII.
		if i+8 <= len(s) {
			x := binary.LittleEndian.Uint64(b[i:])
			m := specialBytes(x) | x&0x8080808080808080
			if lt {
				m |= lessThanBytes(x)
			}
			if m == 0 {
				i += 8
				continue
			}
			i += bits.TrailingZeros64(m) >> 3
		}
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && (c != '<' || !lt) {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '<':
				dst = append(dst, `\u003c`...)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
