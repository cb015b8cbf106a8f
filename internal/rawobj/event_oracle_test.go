package rawobj

import (
	"errors"
	"fmt"
)

// ParseEvent parses a watch event frame, {"type":"…","object":{…}}, and
// returns its type and the raw bytes of its object, a sub-slice of frame
// (so valid as long as frame is): pass them to Parse, or for an ERROR event
// to json.Unmarshal into a metav1.Status. The type string does not alias
// frame.
//
// The frame's syntax is checked except inside an object or array value of
// "object": those bytes are only delimited (brackets matched outside
// strings), because Parse or json.Unmarshal validates them next and
// validating twice would cost a third of the time. opts is accepted for
// symmetry with Parse and is not used.
//
// ParseEvent was how watch events were parsed before parseEventObject did
// the work of ParseEvent and Parse in one pass; it is kept as the oracle of
// parseEventObject and Decoder.NextEvent in the tests.
func ParseEvent(frame []byte, opts ParseOptions) (eventType string, object []byte, err error) {
	_ = opts
	s := scanner{data: frame}
	s.skipSpace()
	if s.peek() != '{' {
		if s.pos >= len(frame) {
			return "", nil, s.unexpected()
		}
		return "", nil, fmt.Errorf("expected a JSON object at offset %d, found %s", s.offset(s.pos), quoteByte(frame[s.pos]))
	}
	empty, err := s.objectStart(1)
	if err != nil {
		return "", nil, err
	}
	var scratch []byte
	hasType := false
	for !empty {
		var m member
		m, scratch, err = s.memberKey(scratch)
		if err != nil {
			return "", nil, err
		}
		switch string(m.key) {
		case "type":
			if s.peek() != '"' {
				if s.pos >= len(frame) {
					return "", nil, s.unexpected()
				}
				return "", nil, fmt.Errorf("watch event type at offset %d is not a string", s.offset(s.pos))
			}
			var r strRef
			if r, err = s.stringValue("type"); err != nil {
				return "", nil, err
			}
			eventType = eventTypeString(frame[r.start:r.end], r.flags)
			hasType = true
		case "object":
			start := s.pos
			if err = s.delimitValue(); err != nil {
				return "", nil, err
			}
			object = frame[start:s.pos:s.pos]
		default:
			if err = s.skipValue(1); err != nil {
				return "", nil, err
			}
		}
		if empty, err = s.memberEnd(); err != nil {
			return "", nil, err
		}
	}
	s.skipSpace()
	if s.pos < len(frame) {
		return "", nil, s.syntaxError("unexpected " + quoteByte(frame[s.pos]) + " after the event")
	}
	if !hasType {
		return "", nil, errors.New("watch event has no type")
	}
	if object == nil {
		return "", nil, errors.New("watch event has no object")
	}
	return eventType, object, nil
}

// delimitValue consumes the value at pos: an object or array only up to its
// matching bracket (see frameScan), anything else validated by skipValue.
func (s *scanner) delimitValue() error {
	if c := s.peek(); c != '{' && c != '[' {
		return s.skipValue(1)
	}
	var f frameScan
	end := f.scan(s.data[s.pos:])
	if end < 0 {
		s.pos = len(s.data)
		return s.unexpected()
	}
	s.pos += end
	return nil
}
