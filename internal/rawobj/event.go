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
	e := eventScan{
		scanner:  scanner{data: frame, base: base},
		opts:     opts,
		objStart: -1,
		objEnd:   -1,
		parsed:   modeNone,
	}
	if err := e.scanEnvelope(); err != nil {
		return e.eventType, nil, nil, err
	}
	obj, status, err = e.result()
	return e.eventType, obj, status, err
}

// eventScan is the state of parseEventObject's single pass over a frame. It
// lives on parseEventObject's stack and its methods do not retain it, so
// that parsing an event allocates only what the parsed object needs.
//
// Invariants: eventType is "" while hasType is false. data[objStart:objEnd]
// is the last object value, both -1 while none. If parsed is not modeNone,
// p holds the successful in-place scan of that value in that mode.
type eventScan struct {
	scanner
	opts ParseOptions

	eventType string
	hasType   bool

	objStart, objEnd int
	parsed           int
	p                objScan
}

// scanEnvelope validates the frame as one JSON object followed by nothing
// but whitespace, handling its "type" and "object" members as they come
// and skipping (after validating) any other member.
func (e *eventScan) scanEnvelope() error {
	e.skipSpace()
	if e.peek() != '{' {
		if e.pos >= len(e.data) {
			return e.unexpected()
		}
		return fmt.Errorf("expected a JSON object at offset %d, found %s", e.offset(e.pos), quoteByte(e.data[e.pos]))
	}
	empty, err := e.objectStart(1)
	if err != nil {
		return err
	}
	var scratch []byte
	for !empty {
		var m member
		m, scratch, err = e.memberKey(scratch)
		if err != nil {
			return err
		}
		switch string(m.key) {
		case "type":
			err = e.scanType()
		case "object":
			err = e.scanObjectValue()
		default:
			err = e.skipValue(1)
		}
		if err != nil {
			return err
		}
		if empty, err = e.memberEnd(); err != nil {
			return err
		}
	}
	e.skipSpace()
	if e.pos < len(e.data) {
		return e.syntaxError("unexpected " + quoteByte(e.data[e.pos]) + " after the event")
	}
	return nil
}

// scanType reads the value of a "type" member, which must be a string, into
// eventType and sets hasType. A later "type" member replaces it.
func (e *eventScan) scanType() error {
	if e.peek() != '"' {
		if e.pos >= len(e.data) {
			return e.unexpected()
		}
		return fmt.Errorf("watch event type at offset %d is not a string", e.offset(e.pos))
	}
	r, err := e.stringValue("type")
	if err != nil {
		return err
	}
	e.eventType = eventTypeString(e.data[r.start:r.end], r.flags)
	e.hasType = true
	return nil
}

// scanObjectValue consumes the value of an "object" member and records it
// as the last object value. When the type is already known and calls for
// a parse, the value is parsed in place into p; otherwise (or when Parse
// would reject the value) it is only validated, and result decides.
func (e *eventScan) scanObjectValue() error {
	e.objStart, e.parsed = e.pos, modeNone
	mode := modeNone
	if e.hasType {
		mode = objectMode(e.eventType)
	}
	var err error
	if mode != modeNone && e.peek() == '{' {
		e.p = objScan{
			scanner:           e.scanner,
			keepManagedFields: e.opts.KeepManagedFields,
			allowMissingName:  e.opts.AllowMissingName || mode == modeBookmark,
			depth:             2,
		}
		switch err = e.p.parseObject(); {
		case err == nil:
			e.pos, e.parsed = e.p.pos, mode
		case isSyntaxError(err):
			return err
		default:
			// Valid JSON so far that Parse rejects; a later "type"
			// may make it a Status: validate the rest, decide at
			// the end.
			err = e.skipValue(1)
		}
	} else {
		err = e.skipValue(1)
	}
	if err != nil {
		return err
	}
	e.objEnd = e.pos
	return nil
}

// result returns parseEventObject's object or status once the whole frame
// has been scanned, parsing the object value again if it was not parsed in
// place in a mode that fits the final type.
func (e *eventScan) result() (obj *Object, status []byte, err error) {
	if !e.hasType {
		return nil, nil, errors.New("watch event has no type")
	}
	if e.objStart < 0 {
		return nil, nil, errors.New("watch event has no object")
	}
	if e.eventType == eventError {
		return nil, e.data[e.objStart:e.objEnd:e.objEnd], nil
	}
	mode := objectMode(e.eventType)
	if mode == modeNone {
		return nil, nil, fmt.Errorf("unknown watch event type %q", e.eventType)
	}
	// An object parsed as an ADDED's is also a valid BOOKMARK's; otherwise
	// (the object came first, or "type" changed after it) parse it now.
	if e.parsed == modeNone || e.parsed == modeBookmark && mode == modeObject {
		e.p = objScan{
			scanner:           scanner{data: e.data, pos: e.objStart, base: e.base},
			keepManagedFields: e.opts.KeepManagedFields,
			allowMissingName:  e.opts.AllowMissingName || mode == modeBookmark,
			depth:             2,
		}
		if err := e.p.parseObject(); err != nil {
			return nil, nil, err
		}
	}
	return e.p.build(nil), nil, nil
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
