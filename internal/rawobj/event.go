package rawobj

// The watch event envelope, {"type":"…","object":{…}}: NextEvent reads one
// from a stream, parseEventObject parses one frame.

import (
	"bytes"
	"errors"
	"fmt"
	"unicode/utf8"
)

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
// read whole but is not a valid watch event (parseEventObject's error): the
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
// parseEventObject does; status aliases the Decoder's buffer and is valid
// only until the next call. Offsets in errors count from the start of the
// stream. It returns the errors of Next, which are sticky, or an
// *EventError for an event that does not parse, which is not.
//
// The API server ends each event with a newline, and valid JSON has no raw
// newline inside a string. So NextEvent first tries the buffered bytes up
// to the next newline as the event: if parseEventObject accepts them, they
// are one whole object and whitespace, exactly the value Next would frame
// (Next ends an object at its closing brace), and the bytes are scanned
// once. Otherwise (no newline buffered yet, an event spread over lines, or
// anything invalid) it frames the value with Next and parses that, so
// values and errors are always what Next and parseEventObject decide.
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

// parseEventObject parses a watch event frame, {"type":"…","object":{…}},
// that starts at offset base of its input, and its object, in one pass:
// the whole frame is validated as JSON, and the object is parsed in place
// (when "type" comes first, as the API server sends it) rather than
// delimited first and parsed next. Depending on the type:
//
//   - ADDED, MODIFIED, DELETED: obj is the object parsed as by Parse with
//     opts; status is nil.
//   - BOOKMARK: the same, with AllowMissingName, as a bookmark's object
//     carries only metadata.resourceVersion and annotations.
//   - ERROR: status is the object's JSON (a metav1.Status to decode), a
//     sub-slice of frame; obj is nil.
//   - any other type is an error.
//
// eventType does not alias frame and is returned, when the frame has one,
// also with an error. Offsets in errors are base plus the index in frame.
//
// The result is what delimiting the object and then parsing it with Parse
// (or, for ERROR, checking that it is valid JSON) gives, except for the
// error messages and that the frame as a whole must be valid JSON:
// parseEventObject also rejects an invalid object value that a later
// "object" member replaces, and nesting counts from the frame.
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
