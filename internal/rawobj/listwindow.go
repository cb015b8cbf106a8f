package rawobj

// The read window of ParseListFrom and ParseListEach: the listParser reads
// on until what the scanner is to look at next is buffered whole, so that
// the scanner, which sees the end of its data as the end of the input,
// decides as it would on the whole body.

import (
	"fmt"
	"io"
)

// listBufferSize is the first buffer of ParseListFrom; it grows by doubling
// when one value (an item, or another member of the list) does not fit.
const listBufferSize = 64 << 10

// more reads at least one more byte into the window, first dropping the
// consumed bytes or growing the buffer when it is full. It returns io.EOF
// at the end of the input, or the reader's error.
func (lp *listParser) more() error {
	if lp.eof {
		return io.EOF
	}
	if lp.rerr != nil {
		return lp.rerr
	}
	s := &lp.s
	end := len(s.data)
	if end == len(lp.buf) {
		if s.pos > 0 {
			end = copy(lp.buf, s.data[s.pos:])
			s.base += int64(s.pos)
			s.pos = 0
			s.data = lp.buf[:end]
		}
		if end == len(lp.buf) {
			nb := make([]byte, max(2*len(lp.buf), listBufferSize))
			copy(nb, s.data)
			lp.buf = nb
			s.data = nb[:end]
		}
	}
	for tries := 0; tries < 100; tries++ {
		n, err := lp.r.Read(lp.buf[end:])
		if n < 0 || n > len(lp.buf)-end {
			lp.rerr = fmt.Errorf("invalid read of %d bytes into %d: %w", n, len(lp.buf)-end, io.ErrShortBuffer)
			return lp.rerr
		}
		end += n
		s.data = lp.buf[:end]
		switch {
		case err == io.EOF:
			lp.eof = true
		case err != nil:
			lp.rerr = err
		}
		if n > 0 {
			return nil
		}
		if err != nil {
			return err
		}
	}
	lp.rerr = io.ErrNoProgress
	return lp.rerr
}

// skip consumes whitespace at s.pos, reading on until a byte that is not
// whitespace is buffered or the input ends.
func (lp *listParser) skip() error {
	s := &lp.s
	for {
		s.skipSpace()
		if s.pos < len(s.data) {
			return nil
		}
		if err := lp.more(); err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
	}
}

// space returns the index, relative to s.pos, of the first byte at or after
// s.pos+rel that is not whitespace, reading on until it is buffered; if the
// input ends first, the index of its end.
func (lp *listParser) space(rel int) (int, error) {
	s := &lp.s
	for {
		i := s.pos + rel
		for i < len(s.data) && isSpace(s.data[i]) {
			i++
		}
		rel = i - s.pos
		if i < len(s.data) {
			return rel, nil
		}
		if err := lp.more(); err != nil {
			if err == io.EOF {
				return rel, nil
			}
			return 0, err
		}
	}
}

// value reads on until the value at s.pos (after whitespace) is buffered
// whole: an object, array or string up to its closing bracket or quote, a
// number or literal up to and including the byte after it (which ends it).
// It only frames (as the Decoder does), the scanner validates. It returns
// the index, relative to s.pos, just past the object, array or string (of
// the byte after a number or literal), or of the end of the input if that
// comes first.
func (lp *listParser) value() (int, error) {
	s := &lp.s
	rel := 0
	if lp.eof {
		return len(s.data) - s.pos, nil // all of the input is there
	}
	if s.pos+rel >= len(s.data) {
		var err error
		if rel, err = lp.space(rel); err != nil || s.pos+rel >= len(s.data) {
			return rel, err
		}
	}
	var f frameScan
	scalar := false
	switch c := s.data[s.pos+rel]; {
	case c == '{' || c == '[' || c == '"':
	case c == '-' || '0' <= c && c <= '9' || c == 't' || c == 'f' || c == 'n':
		scalar = true
	default:
		return rel + 1, nil // not a value: the scanner fails on it
	}
	n := rel // s.data[s.pos+rel : s.pos+n] has been scanned
	for {
		chunk := s.data[s.pos+n:]
		var end int
		if scalar {
			end = scalarEnd(chunk)
		} else {
			end = f.scan(chunk)
		}
		if end >= 0 {
			return n + end, nil
		}
		n += len(chunk)
		if err := lp.more(); err != nil {
			if err == io.EOF {
				return n, nil
			}
			return 0, err
		}
	}
}

// member reads on until the member at s.pos (after whitespace) is buffered
// from its key to the first byte of its value, for memberKey.
func (lp *listParser) member() error {
	if err := lp.skip(); err != nil {
		return err
	}
	s := &lp.s
	if s.peek() != '"' {
		return nil // memberKey fails on it
	}
	end, err := lp.value()
	if err != nil {
		return err
	}
	colon, err := lp.space(end)
	if err != nil || s.pos+colon >= len(s.data) || s.data[s.pos+colon] != ':' {
		return err
	}
	_, err = lp.space(colon + 1)
	return err
}
