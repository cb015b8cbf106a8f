package rawobj

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"unicode/utf8"
)

// DefaultMaxValueSize is the largest JSON value a Decoder returns unless
// SetMaxValueSize says otherwise: 64 MiB, far above the API server's own
// limits for a single object.
const DefaultMaxValueSize = 64 << 20

// ErrValueTooLarge is wrapped by the error a Decoder returns for a value
// longer than its maximum size.
var ErrValueTooLarge = errors.New("json value too large")

// initialBufferSize is a Decoder's first buffer; it grows by doubling.
const initialBufferSize = 32 << 10

// Decoder splits a stream of concatenated JSON values separated by optional
// whitespace (such as a Kubernetes JSON watch stream,
// {"type":"ADDED","object":{…}}\n{"type":"MODIFIED",…}\n…) into values.
// It finds where each value ends by scanning it (strings with escaped
// quotes and brackets included), not by looking for newlines, but it does
// not validate the value: ParseEventObject does that. NextEvent does both, scanning most events once.
//
// A Decoder is not safe for concurrent use.
type Decoder struct {
	r io.Reader
	// buf[start:end] holds bytes read but not yet returned.
	buf        []byte
	start, end int
	// off is the stream offset of buf[0], for error messages.
	off int64
	// max is the largest value returned.
	max int
	// readErr is an error from r that is reported once the bytes read with
	// it are used up.
	readErr error
	// err is sticky: after an error (io.EOF included), Next returns it
	// again.
	err error
}

// NewDecoder returns a Decoder reading from r with a maximum value size of
// DefaultMaxValueSize.
func NewDecoder(r io.Reader) *Decoder {
	return &Decoder{r: r, max: DefaultMaxValueSize}
}

// SetMaxValueSize sets the largest value Next returns; a longer value is an
// error wrapping ErrValueTooLarge. n <= 0 restores DefaultMaxValueSize.
func (d *Decoder) SetMaxValueSize(n int) {
	if n <= 0 {
		n = DefaultMaxValueSize
	}
	d.max = n
}

// Next returns the next JSON value of the stream, without surrounding
// whitespace. The slice aliases the Decoder's buffer and is valid only until
// the next call of Next: Parse it (which copies) or copy it before calling
// Next again.
//
// Next returns io.EOF when the stream ends cleanly between values,
// io.ErrUnexpectedEOF when it ends inside a value, a *SyntaxError for a
// byte that cannot start a value, an error wrapping ErrValueTooLarge, or
// the reader's error. Errors are sticky.
func (d *Decoder) Next() ([]byte, error) {
	if d.err != nil {
		return nil, d.err
	}
	v, err := d.next()
	if err != nil {
		d.err = err
		return nil, err
	}
	return v, nil
}

// skipSpace skips the whitespace between values, reading on until a byte
// that is not whitespace is buffered. io.EOF is a clean end.
func (d *Decoder) skipSpace() error {
	for {
		for d.start < d.end && isSpace(d.buf[d.start]) {
			d.start++
		}
		if d.start < d.end {
			return nil
		}
		if err := d.fill(); err != nil {
			return err
		}
	}
}

func (d *Decoder) next() ([]byte, error) {
	if err := d.skipSpace(); err != nil {
		return nil, err
	}

	first := d.buf[d.start]
	switch first {
	case '}', ']', ',', ':':
		return nil, &SyntaxError{Offset: d.off + int64(d.start), Msg: "unexpected " + quoteByte(first)}
	}
	// The scan state survives fill, which may move the buffered bytes:
	// n counts the bytes of the value scanned so far, from d.start.
	n := 0
	var f frameScan
	scalar := first != '{' && first != '[' && first != '"'
	for {
		chunk := d.buf[d.start+n : d.end]
		if scalar {
			// A number or literal ends before whitespace or a byte that
			// starts or ends another value.
			for i, c := range chunk {
				if isSpace(c) || c == '{' || c == '}' || c == '[' || c == ']' || c == ',' || c == ':' || c == '"' {
					return d.take(n + i)
				}
			}
		} else if end := f.scan(chunk); end >= 0 {
			return d.take(n + end)
		}
		n += len(chunk)
		if n > d.max {
			return nil, d.tooLarge()
		}
		if err := d.fill(); err != nil {
			if err != io.EOF {
				return nil, err
			}
			if scalar {
				return d.take(n) // a number or literal may end the stream
			}
			return nil, io.ErrUnexpectedEOF
		}
	}
}

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
// after i, or len(b).
func skipStringBytes(b []byte, i int) int {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	for i+8 <= len(b) {
		x := binary.LittleEndian.Uint64(b[i:])
		q := x ^ (lo * '"')
		e := x ^ (lo * '\\')
		if m := ((q-lo)&^q | (e-lo)&^e) & hi; m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
		i += 8
	}
	for i < len(b) && b[i] != '"' && b[i] != '\\' {
		i++
	}
	return i
}

// take returns the next n buffered bytes as a value.
func (d *Decoder) take(n int) ([]byte, error) {
	if n > d.max {
		return nil, d.tooLarge()
	}
	v := d.buf[d.start : d.start+n : d.start+n]
	d.start += n
	return v, nil
}

func (d *Decoder) tooLarge() error {
	return fmt.Errorf("json value at offset %d is longer than %d bytes: %w", d.off+int64(d.start), d.max, ErrValueTooLarge)
}

// fill reads more bytes into buf[end:], first moving the unconsumed bytes
// to the front (which invalidates the last value returned) and growing buf
// when it is full. It returns the reader's error only when no bytes came
// with it.
func (d *Decoder) fill() error {
	if d.readErr != nil {
		err := d.readErr
		d.readErr = nil
		return err
	}
	if d.start > 0 {
		copy(d.buf, d.buf[d.start:d.end])
		d.off += int64(d.start)
		d.end -= d.start
		d.start = 0
	}
	if d.end == len(d.buf) {
		size := 2 * len(d.buf)
		if size < initialBufferSize {
			size = initialBufferSize
		}
		// One byte over max is enough to tell a value is too large.
		if limit := d.max + 1; size > limit && limit > d.end {
			size = limit
		}
		nb := make([]byte, size)
		copy(nb, d.buf[:d.end])
		d.buf = nb
	}
	for tries := 0; tries < 100; tries++ {
		n, err := d.r.Read(d.buf[d.end:])
		if n < 0 || n > len(d.buf)-d.end {
			return fmt.Errorf("invalid read of %d bytes into %d: %w", n, len(d.buf)-d.end, io.ErrShortBuffer)
		}
		d.end += n
		if n > 0 {
			d.readErr = err
			return nil
		}
		if err != nil {
			return err
		}
	}
	return io.ErrNoProgress
}

// Watch event types, returned as constants so that parsing an event does
// not allocate for them.
const (
	eventAdded    = "ADDED"
	eventModified = "MODIFIED"
	eventDeleted  = "DELETED"
	eventBookmark = "BOOKMARK"
	eventError    = "ERROR"
)

// EventError is the error Decoder.NextEvent returns for an event that was
// read whole but is not a valid watch event (ParseEventObject's error): the
// stream is intact, the next call returns the next event.
type EventError struct {
	// Type is the event's type if the frame had one, else "".
	Type string
	Err  error
}

// Error returns Err's message.
func (e *EventError) Error() string { return e.Err.Error() }

// Unwrap returns Err.
func (e *EventError) Unwrap() error { return e.Err }

// NextEvent reads the next watch event of the stream and parses it as
// ParseEventObject does; status aliases the Decoder's buffer and is valid
// only until the next call. Offsets in errors count from the start of the
// stream. It returns the errors of Next, which are sticky, or an
// *EventError for an event that does not parse, which is not.
//
// The API server ends each event with a newline, and valid JSON has no raw
// newline inside a string. So NextEvent first tries the buffered bytes up
// to the next newline as the event: if ParseEventObject accepts them, they
// are one whole object and whitespace, exactly the value Next would frame
// (Next ends an object at its closing brace), and the bytes are scanned
// once. Otherwise (no newline buffered yet, an event spread over lines, or
// anything invalid) it frames the value with Next and parses that, so
// values and errors are always what Next and ParseEventObject decide.
func (d *Decoder) NextEvent(opts ParseOptions) (eventType string, obj *Object, status []byte, err error) {
	if d.err != nil {
		return "", nil, nil, d.err
	}
	if err := d.skipSpace(); err != nil {
		d.err = err
		return "", nil, nil, err
	}
	if i := bytes.IndexByte(d.buf[d.start:d.end], '\n'); i >= 0 && i <= d.max {
		line := d.buf[d.start : d.start+i : d.start+i]
		eventType, obj, status, err = parseEventObject(line, d.off+int64(d.start), opts)
		if err == nil {
			d.start += i + 1
			return eventType, obj, status, nil
		}
	}
	frame, err := d.Next()
	if err != nil {
		return "", nil, nil, err
	}
	// take left d.start just past the frame, and fill does not run again
	// until the next call, so the frame's stream offset is:
	off := d.off + int64(d.start-len(frame))
	eventType, obj, status, err = parseEventObject(frame, off, opts)
	if err != nil {
		return "", nil, nil, &EventError{Type: eventType, Err: err}
	}
	return eventType, obj, status, nil
}

// Parse modes of an event's object.
const (
	modeNone     = iota // not parsed: no type yet, ERROR or unknown type
	modeObject          // ADDED, MODIFIED, DELETED: as Parse with opts
	modeBookmark        // BOOKMARK: as Parse with AllowMissingName
)

// objectMode returns how the object of an event of type t is parsed.
func objectMode(t string) int {
	switch t {
	case eventAdded, eventModified, eventDeleted:
		return modeObject
	case eventBookmark:
		return modeBookmark
	}
	return modeNone
}

// isSyntaxError reports whether err is a *SyntaxError (the input is not
// JSON), as opposed to valid JSON that is not what Parse wants.
func isSyntaxError(err error) bool {
	_, ok := err.(*SyntaxError)
	return ok
}

// ParseEventObject parses a watch event frame, {"type":"…","object":{…}},
// and its object in one pass: the whole frame is validated as JSON, and the
// object is parsed in place (when "type" comes first, as the API server
// sends it) rather than delimited first and parsed next. Depending on the
// type:
//
//   - ADDED, MODIFIED, DELETED: obj is the object parsed as by Parse with
//     opts (and with AllowMissingName for BOOKMARK, whose object has no
//     name); status is nil.
//   - ERROR: status is the object's JSON (a metav1.Status to decode), a
//     sub-slice of frame; obj is nil.
//   - any other type is an error.
//
// eventType does not alias frame and is returned, when the frame has one,
// also with an error. Offsets in errors count from the start of frame.
//
// The result is what delimiting the object and then parsing it with Parse
// (or, for ERROR, checking that it is valid JSON) gives, except for the
// error messages and that the frame as a whole must be valid JSON:
// ParseEventObject also rejects an invalid object value that a later
// "object" member replaces, and nesting counts from the frame.
func ParseEventObject(frame []byte, opts ParseOptions) (eventType string, obj *Object, status []byte, err error) {
	return parseEventObject(frame, 0, opts)
}

// parseEventObject is ParseEventObject for a frame at offset base of its
// input.
func parseEventObject(frame []byte, base int64, opts ParseOptions) (eventType string, obj *Object, status []byte, err error) {
	s := scanner{data: frame, base: base}
	s.skipSpace()
	if s.peek() != '{' {
		if s.pos >= len(frame) {
			return "", nil, nil, s.unexpected()
		}
		return "", nil, nil, fmt.Errorf("expected a JSON object at offset %d, found %s", s.offset(s.pos), quoteByte(frame[s.pos]))
	}
	empty, err := s.objectStart(1)
	if err != nil {
		return "", nil, nil, err
	}
	var scratch []byte
	hasType := false
	// frame[objStart:objEnd] is the last object value, -1 while none. If
	// parsed is not modeNone, p holds its successful in-place scan in
	// that mode.
	objStart, objEnd := -1, -1
	parsed := modeNone
	var p objScan
	for !empty {
		var m member
		m, scratch, err = s.memberKey(scratch)
		if err != nil {
			return eventType, nil, nil, err
		}
		switch string(m.key) {
		case "type":
			if s.peek() != '"' {
				if s.pos >= len(frame) {
					return eventType, nil, nil, s.unexpected()
				}
				return eventType, nil, nil, fmt.Errorf("watch event type at offset %d is not a string", s.offset(s.pos))
			}
			var r strRef
			if r, err = s.stringValue("type"); err != nil {
				return eventType, nil, nil, err
			}
			eventType = eventTypeString(frame[r.start:r.end], r.flags)
			hasType = true
		case "object":
			objStart, parsed = s.pos, modeNone
			mode := modeNone
			if hasType {
				mode = objectMode(eventType)
			}
			if mode != modeNone && s.peek() == '{' {
				p = objScan{
					scanner:           s,
					keepManagedFields: opts.KeepManagedFields,
					allowMissingName:  opts.AllowMissingName || mode == modeBookmark,
					depth:             2,
				}
				switch err = p.parseObject(); {
				case err == nil:
					s.pos, parsed = p.pos, mode
				case isSyntaxError(err):
					return eventType, nil, nil, err
				default:
					// Valid JSON so far that Parse rejects; a later "type"
					// may make it a Status: validate the rest, decide at
					// the end.
					err = s.skipValue(1)
				}
			} else {
				err = s.skipValue(1)
			}
			if err != nil {
				return eventType, nil, nil, err
			}
			objEnd = s.pos
		default:
			if err = s.skipValue(1); err != nil {
				return eventType, nil, nil, err
			}
		}
		if empty, err = s.memberEnd(); err != nil {
			return eventType, nil, nil, err
		}
	}
	s.skipSpace()
	if s.pos < len(frame) {
		return eventType, nil, nil, s.syntaxError("unexpected " + quoteByte(frame[s.pos]) + " after the event")
	}
	if !hasType {
		return "", nil, nil, errors.New("watch event has no type")
	}
	if objStart < 0 {
		return eventType, nil, nil, errors.New("watch event has no object")
	}
	if eventType == eventError {
		return eventType, nil, frame[objStart:objEnd:objEnd], nil
	}
	mode := objectMode(eventType)
	if mode == modeNone {
		return eventType, nil, nil, fmt.Errorf("unknown watch event type %q", eventType)
	}
	// An object parsed as an ADDED's is also a valid BOOKMARK's; otherwise
	// (the object came first, or "type" changed after it) parse it now.
	if parsed == modeNone || parsed == modeBookmark && mode == modeObject {
		p = objScan{
			scanner:           scanner{data: frame, pos: objStart, base: base},
			keepManagedFields: opts.KeepManagedFields,
			allowMissingName:  opts.AllowMissingName || mode == modeBookmark,
			depth:             2,
		}
		if err := p.parseObject(); err != nil {
			return eventType, nil, nil, err
		}
	}
	return eventType, p.build(nil), nil, nil
}

// eventTypeString returns the decoded type, without allocating for the
// known ones.
func eventTypeString(raw []byte, flags int) string {
	if flags != 0 || !utf8.Valid(raw) {
		return string(appendUnescaped(nil, raw))
	}
	switch string(raw) {
	case eventAdded:
		return eventAdded
	case eventModified:
		return eventModified
	case eventDeleted:
		return eventDeleted
	case eventBookmark:
		return eventBookmark
	case eventError:
		return eventError
	}
	return string(raw)
}
