package recording

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"time"
)

// Span is the time a recording covers: from its header to its latest
// line.
type Span struct{ Start, End time.Time }

func (s Span) String() string {
	return s.Start.UTC().Format(time.RFC3339Nano) + " to " + s.End.UTC().Format(time.RFC3339Nano)
}

// ReadSpan reads the recording r through, for its span: the time of its
// first line (the header) and the latest of its whole lines — not always
// its last: the changes a run caught up after a gap, dated inside it,
// may be the last lines of a recorder killed right after. It parses only
// the time of each line.
func ReadSpan(r *Reader) (Span, error) {
	var s Span
	var torn *TornError
	for {
		data, number, err := r.Next()
		if errors.Is(err, io.EOF) || errors.As(err, &torn) {
			if s.Start.IsZero() {
				return s, fmt.Errorf("%s: no line with a time: not a recording of kubectl deltas", r.Name())
			}
			return s, nil
		}
		if err != nil {
			return s, err
		}
		t, err := lineTime(data)
		if err != nil {
			return s, fmt.Errorf("%s:%d: %w", r.Name(), number, err)
		}
		if s.Start.IsZero() {
			s.Start = t
		}
		if t.After(s.End) {
			s.End = t
		}
	}
}

// timeKey is how the time of a record or header begins: its second field.
var timeKey = []byte(`"time":"`)

// lineTime is the time of a line, read without decoding the line.
func lineTime(data []byte) (time.Time, error) {
	i := bytes.Index(data, timeKey)
	if i < 0 {
		return time.Time{}, errors.New(`not a record of kubectl deltas: no "time"`)
	}
	rest := data[i+len(timeKey):]
	end := bytes.IndexByte(rest, '"')
	if end < 0 {
		return time.Time{}, errors.New(`not a record of kubectl deltas: "time" is not a string`)
	}
	t, err := time.Parse(time.RFC3339Nano, string(rest[:end]))
	if err != nil {
		return time.Time{}, fmt.Errorf("not a record of kubectl deltas: %w", err)
	}
	return t, nil
}
