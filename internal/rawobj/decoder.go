package rawobj

import (
	"errors"
	"fmt"
	"io"
)

// maxValueSize is the largest JSON value a Decoder returns: 64 MiB, far
// above the API server's own limits for a single object.
const maxValueSize = 64 << 20

// ErrValueTooLarge is wrapped by the error a Decoder returns for a value
// longer than maxValueSize.
var ErrValueTooLarge = errors.New("json value too large")

// initialBufferSize is a Decoder's first buffer; it grows by doubling.
const initialBufferSize = 32 << 10

// Decoder splits a stream of concatenated JSON values separated by optional
// whitespace (such as a Kubernetes JSON watch stream,
// {"type":"ADDED","object":{…}}\n{"type":"MODIFIED",…}\n…) into values.
// It finds where each value ends by framing it (see frameScan: strings
// with escaped quotes and brackets included), not by looking for newlines,
// and does not validate the value. NextEvent frames a watch event and
// validates and parses it, scanning most events once.
//
// A Decoder is not safe for concurrent use.
type Decoder struct {
	r io.Reader
	// buf[start:end] holds bytes read but not yet returned.
	buf        []byte
	start, end int
	// off is the stream offset of buf[0], for error messages.
	off int64
	// max is the largest value returned, maxValueSize but in tests.
	max int
	// readErr is an error from r that is reported once the bytes read with
	// it are used up.
	readErr error
	// err is sticky: after an error (io.EOF included), Next returns it
	// again.
	err error
}

// NewDecoder returns a Decoder reading from r.
func NewDecoder(r io.Reader) *Decoder {
	return &Decoder{r: r, max: maxValueSize}
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

// next frames the value after the whitespace at d.start (see Next).
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
		var end int
		if scalar {
			end = scalarEnd(chunk)
		} else {
			end = f.scan(chunk)
		}
		if end >= 0 {
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

// take returns the next n buffered bytes as a value.
func (d *Decoder) take(n int) ([]byte, error) {
	if n > d.max {
		return nil, d.tooLarge()
	}
	v := d.buf[d.start : d.start+n : d.start+n]
	d.start += n
	return v, nil
}

// tooLarge is the error for a value at d.start longer than d.max.
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
