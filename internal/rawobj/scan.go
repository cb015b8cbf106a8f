package rawobj

// The JSON scanner: it validates JSON as encoding/json does and reads the
// few values Parse extracts (strings, int64), without allocating.

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"strconv"
	"unicode/utf8"
)

// maxDepth is the deepest nesting of objects and arrays that is accepted, the
// same limit encoding/json applies, so that every value this package accepts
// can also be decoded with encoding/json.
const maxDepth = 10000

// SyntaxError reports input that is not valid JSON (RFC 8259). Offset is the
// byte offset of the problem in the data given to Parse or ParseList, or in
// the stream read by ParseListFrom, ParseListEach or a Decoder.
type SyntaxError struct {
	Offset int64
	Msg    string
}

// Error returns "invalid JSON at offset N: what".
func (e *SyntaxError) Error() string {
	return "invalid JSON at offset " + strconv.FormatInt(e.Offset, 10) + ": " + e.Msg
}

// strEscaped is the flag scanString returns for a string that contains a
// backslash escape. Bytes >= 0x80 are not tracked: whoever needs a string
// decoded checks utf8.Valid, as encoding/json replaces invalid UTF-8.
const strEscaped = 1

// scanner walks JSON in data. pos is the index of the next byte to look at;
// every method leaves pos just after what it consumed, or at the offending
// byte when it returns an error. A scanner never modifies data.
type scanner struct {
	data []byte
	pos  int
	// base is the offset of data[0] in the input (non-zero when data is a
	// window of a stream): error messages report base+index.
	base int64
	// escaped: a string scanned (scanString) had an escape.
	escaped bool
}

// offset returns the input offset of data[i], for error messages.
func (s *scanner) offset(i int) int64 {
	return s.base + int64(i)
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\n' || c == '\r' || c == '\t'
}

// skipSpace advances pos over JSON whitespace.
func (s *scanner) skipSpace() {
	d, i := s.data, s.pos
	if i < len(d) && d[i] > ' ' {
		return // the common case in compact JSON
	}
	for i < len(d) && isSpace(d[i]) {
		i++
	}
	s.pos = i
}

// peek returns the byte at pos, or 0 at the end of data (a NUL byte in data
// is never valid there either, and unexpected tells both apart).
func (s *scanner) peek() byte {
	if s.pos < len(s.data) {
		return s.data[s.pos]
	}
	return 0
}

// syntaxError returns a *SyntaxError for the byte at pos.
func (s *scanner) syntaxError(msg string) error {
	return &SyntaxError{Offset: s.offset(s.pos), Msg: msg}
}

// unexpected reports the byte at pos (or the end of input) as unexpected.
func (s *scanner) unexpected() error {
	if s.pos >= len(s.data) {
		return s.syntaxError("unexpected end of input")
	}
	return s.syntaxError("unexpected " + quoteByte(s.data[s.pos]))
}

// quoteByte renders c for an error message: ']' or byte 0xff.
func quoteByte(c byte) string {
	if c < utf8.RuneSelf {
		return strconv.QuoteRune(rune(c))
	}
	return fmt.Sprintf("byte 0x%02x", c)
}

// expect consumes c after optional whitespace.
func (s *scanner) expect(c byte) error {
	s.skipSpace()
	if s.peek() != c {
		return s.unexpected()
	}
	s.pos++
	return nil
}

// scanString consumes the string starting at pos (which holds '"') and
// returns its flags (strEscaped or 0). The content is data[start+1:pos-1].
func (s *scanner) scanString() (flags int, err error) {
	d, i := s.data, s.pos+1
	for {
		// Skip plain bytes, 8 at a time, then one at a time near the end.
		for i+8 <= len(d) {
			if m := specialBytes(binary.LittleEndian.Uint64(d[i:])); m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				break
			}
			i += 8
		}
		for i < len(d) && d[i] >= 0x20 && d[i] != '"' && d[i] != '\\' {
			i++
		}
		if i >= len(d) {
			s.pos = len(d)
			return 0, s.unexpected()
		}
		switch c := d[i]; c {
		case '"':
			s.pos = i + 1
			return flags, nil
		case '\\':
			flags |= strEscaped
			s.escaped = true
			if i+1 >= len(d) {
				s.pos = len(d)
				return 0, s.unexpected()
			}
			switch d[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				for j := i + 2; j < i+6; j++ {
					if j >= len(d) {
						s.pos = len(d)
						return 0, s.unexpected()
					}
					if !isHex(d[j]) {
						s.pos = j
						return 0, s.syntaxError("invalid character " + quoteByte(d[j]) + " in \\u escape")
					}
				}
				i += 6
			default:
				s.pos = i + 1
				return 0, s.syntaxError("invalid escape " + quoteByte(d[i+1]) + " in string")
			}
		default: // c < 0x20
			s.pos = i
			return 0, s.syntaxError("invalid control character " + quoteByte(c) + " in string")
		}
	}
}

// strRef locates a decoded string value in the scanned data: its content
// without quotes is data[start:end]. A zero strRef is "" (absent or null).
type strRef struct {
	start, end int
	flags      int // strEscaped or 0, from scanString
	// decode is set by build when the content must be decoded (escapes or
	// invalid UTF-8) rather than used as is.
	decode bool
}

// specialBytes returns a mask with the high bit set in (at least) the
// lowest byte of x that is '"', '\\' or a control character (< 0x20), and
// 0 if there is none. Borrows may flag bytes above the lowest hit too, so
// only the lowest set bit is meaningful: callers use TrailingZeros64.
// Its terms, like those of lessThanBytes, quoteOrBackslash and
// plainASCIIRun, are written out: made of a shared one-byte test, it is
// no longer inlined, and a replay -o json costs 2% more instructions.
func specialBytes(x uint64) uint64 {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	q := x ^ (lo * '"')
	b := x ^ (lo * '\\')
	return ((x-lo*0x20) & ^x | (q-lo) & ^q | (b-lo) & ^b) & hi
}

// lessThanBytes is specialBytes for '<': the high bit set in (at least)
// the lowest byte of x that is '<', 0 if none is.
func lessThanBytes(x uint64) uint64 {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	l := x ^ (lo * '<')
	return (l - lo) &^ l & hi
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// scanNumber consumes a number per the JSON grammar
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?; pos holds '-' or a digit.
func (s *scanner) scanNumber() error {
	d, i := s.data, s.pos
	if d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && '1' <= d[i] && d[i] <= '9':
		i++
		for i < len(d) && '0' <= d[i] && d[i] <= '9' {
			i++
		}
	default:
		s.pos = i
		return s.unexpected()
	}
	if i < len(d) && d[i] == '.' {
		i++
		if i >= len(d) || d[i] < '0' || d[i] > '9' {
			s.pos = i
			return s.unexpected()
		}
		for i < len(d) && '0' <= d[i] && d[i] <= '9' {
			i++
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if i >= len(d) || d[i] < '0' || d[i] > '9' {
			s.pos = i
			return s.unexpected()
		}
		for i < len(d) && '0' <= d[i] && d[i] <= '9' {
			i++
		}
	}
	s.pos = i
	return nil
}

// scanLiteral consumes lit (true, false or null) at pos.
func (s *scanner) scanLiteral(lit string) error {
	for j := 0; j < len(lit); j++ {
		if s.pos >= len(s.data) || s.data[s.pos] != lit[j] {
			return s.unexpected()
		}
		s.pos++
	}
	return nil
}

// skipValue validates and consumes one value after optional whitespace.
// depth is the nesting level of the enclosing container (0 at top level).
func (s *scanner) skipValue(depth int) error {
	s.skipSpace()
	if s.pos >= len(s.data) {
		return s.unexpected()
	}
	switch c := s.data[s.pos]; c {
	case '{':
		return s.skipObject(depth + 1)
	case '[':
		return s.skipArray(depth + 1)
	case '"':
		_, err := s.scanString()
		return err
	case 't':
		return s.scanLiteral("true")
	case 'f':
		return s.scanLiteral("false")
	case 'n':
		return s.scanLiteral("null")
	default:
		if c == '-' || '0' <= c && c <= '9' {
			return s.scanNumber()
		}
		return s.unexpected()
	}
}

// checkDepth fails when a container at nesting level depth is too deep.
func (s *scanner) checkDepth(depth int) error {
	if depth > maxDepth {
		return &SyntaxError{Offset: s.offset(s.pos), Msg: "exceeded max depth"}
	}
	return nil
}

// skipObject consumes the object at pos ('{'), which is at nesting level
// depth.
func (s *scanner) skipObject(depth int) error {
	if err := s.checkDepth(depth); err != nil {
		return err
	}
	s.pos++
	s.skipSpace()
	if s.peek() == '}' {
		s.pos++
		return nil
	}
	for {
		if s.peek() != '"' {
			return s.unexpected()
		}
		if _, err := s.scanString(); err != nil {
			return err
		}
		if err := s.expect(':'); err != nil {
			return err
		}
		if err := s.skipValue(depth); err != nil {
			return err
		}
		s.skipSpace()
		switch s.peek() {
		case ',':
			s.pos++
			s.skipSpace()
		case '}':
			s.pos++
			return nil
		default:
			return s.unexpected()
		}
	}
}

// skipArray consumes the array at pos ('['), which is at nesting level depth.
func (s *scanner) skipArray(depth int) error {
	if err := s.checkDepth(depth); err != nil {
		return err
	}
	s.pos++
	s.skipSpace()
	if s.peek() == ']' {
		s.pos++
		return nil
	}
	for {
		if err := s.skipValue(depth); err != nil {
			return err
		}
		s.skipSpace()
		switch s.peek() {
		case ',':
			s.pos++
		case ']':
			s.pos++
			return nil
		default:
			return s.unexpected()
		}
	}
}

// member is an object member whose key has been consumed.
type member struct {
	// keyStart is the offset of the key's opening quote.
	keyStart int
	// key is the key's content without quotes, unescaped when it had
	// escapes (then it aliases the scratch buffer, not data).
	key []byte
}

// objectStart consumes '{' at pos (after whitespace) at nesting level depth
// and reports whether the object is empty (then '}' is consumed too).
func (s *scanner) objectStart(depth int) (empty bool, err error) {
	s.skipSpace()
	if s.peek() != '{' {
		return false, s.unexpected()
	}
	if err := s.checkDepth(depth); err != nil {
		return false, err
	}
	s.pos++
	s.skipSpace()
	if s.peek() == '}' {
		s.pos++
		return true, nil
	}
	return false, nil
}

// memberKey consumes a member's key and the colon; pos is left at the value
// (whitespace skipped). scratch is reused to unescape keys with escapes.
func (s *scanner) memberKey(scratch []byte) (member, []byte, error) {
	if s.peek() != '"' {
		return member{}, scratch, s.unexpected()
	}
	m := member{keyStart: s.pos}
	flags, err := s.scanString()
	if err != nil {
		return member{}, scratch, err
	}
	m.key = s.data[m.keyStart+1 : s.pos-1]
	if flags&strEscaped != 0 {
		scratch = appendUnescaped(scratch[:0], m.key)
		m.key = scratch
	}
	if err := s.expect(':'); err != nil {
		return member{}, scratch, err
	}
	s.skipSpace()
	return m, scratch, nil
}

// memberEnd consumes the ',' or '}' after a member's value and reports
// whether the object ended. After a ',' the whitespace is skipped too, so pos
// is at the next key.
func (s *scanner) memberEnd() (end bool, err error) {
	s.skipSpace()
	switch s.peek() {
	case ',':
		s.pos++
		s.skipSpace()
		return false, nil
	case '}':
		s.pos++
		return true, nil
	default:
		return false, s.unexpected()
	}
}

// stringValue consumes a string or null at pos.
func (s *scanner) stringValue(what string) (strRef, error) {
	switch s.peek() {
	case '"':
		start := s.pos
		flags, err := s.scanString()
		if err != nil {
			return strRef{}, err
		}
		return strRef{start: start + 1, end: s.pos - 1, flags: flags}, nil
	case 'n':
		return strRef{}, s.scanLiteral("null")
	default:
		if s.pos >= len(s.data) {
			return strRef{}, s.unexpected()
		}
		return strRef{}, fmt.Errorf("%s at offset %d is not a string", what, s.offset(s.pos))
	}
}

// int64Value consumes an integer that fits int64, or null (0), at pos.
func (s *scanner) int64Value(what string) (int64, error) {
	c := s.peek()
	switch {
	case c == 'n':
		return 0, s.scanLiteral("null")
	case c == '-' || '0' <= c && c <= '9':
		start := s.pos
		if err := s.scanNumber(); err != nil {
			return 0, err
		}
		v, ok := parseInt64(s.data[start:s.pos])
		if !ok {
			return 0, fmt.Errorf("%s at offset %d is not a 64-bit integer", what, s.offset(start))
		}
		return v, nil
	default:
		if s.pos >= len(s.data) {
			return 0, s.unexpected()
		}
		return 0, fmt.Errorf("%s at offset %d is not a number", what, s.offset(s.pos))
	}
}

// parseInt64 parses a JSON number that is an integer in int64 range
// (no fraction, no exponent).
func parseInt64(b []byte) (int64, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 {
		return 0, false
	}
	const limit = uint64(1) << 63
	var u uint64
	for _, c := range b {
		if c < '0' || c > '9' || u > limit/10 {
			return 0, false
		}
		u = u*10 + uint64(c-'0')
		if u > limit {
			return 0, false
		}
	}
	if neg {
		return -int64(u), true // u == limit wraps to MinInt64, as wanted
	}
	if u == limit {
		return 0, false
	}
	return int64(u), true
}
