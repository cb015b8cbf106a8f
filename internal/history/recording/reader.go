package recording

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// Magic numbers of the compressed forms: a recording is read by what it
// holds, whatever its name (standard input has none).
var (
	gzipMagic = []byte{0x1f, 0x8b}
	zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}
)

// TornError is a recording that ends inside a line or a compressed frame:
// a recorder killed while writing. Everything before Line was read.
type TornError struct {
	// Name is the recording; Line the number of the first line not read
	// whole.
	Name string
	Line int
	// Err is what the decompressor said, nil for a last line without its
	// newline.
	Err error
}

func (e *TornError) Error() string {
	why := "the last line is cut short"
	if e.Err != nil {
		why = fmt.Sprintf("the last frame is cut short (%v)", e.Err)
	}
	return fmt.Sprintf("%s:%d: %s, as when the recorder was killed while writing: the records before it were read", e.Name, e.Line, why)
}

func (e *TornError) Unwrap() error { return e.Err }

// Reader reads the lines of a recording, decompressed. It is used from
// one goroutine.
type Reader struct {
	name string
	br   *bufio.Reader
	// closers release the decompressor and the file, in order.
	closers []func() error
	// line is the number of the last line returned.
	line int
	// end is what ends the reading once the lines are out: io.EOF or a
	// *TornError.
	end error
	// dir, for a recording directory, reads its segments as one
	// recording (br is then unused).
	dir *dirCursor
}

// Open opens the recording name ("-" reads stdin), plain, gzip or zstd
// by its first bytes.
func Open(name string, stdin io.Reader) (*Reader, error) {
	in := stdin
	var closers []func() error
	shown := name
	if name == "-" {
		shown = "standard input"
	} else {
		f, err := os.Open(name)
		if err != nil {
			return nil, fmt.Errorf("cannot read the recording: %w", err)
		}
		in, closers = f, append(closers, f.Close)
	}
	r, err := NewReader(shown, in)
	if err != nil {
		for _, c := range closers {
			_ = c()
		}
		return nil, err
	}
	r.closers = append(r.closers, closers...)
	return r, nil
}

// NewReader reads the recording in, named name in errors.
func NewReader(name string, in io.Reader) (*Reader, error) {
	peek := bufio.NewReaderSize(in, writeBuffer)
	head, err := peek.Peek(len(zstdMagic))
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("reading the recording %s: %w", name, err)
	}
	r := &Reader{name: name}
	switch {
	case bytes.HasPrefix(head, zstdMagic):
		d, err := zstd.NewReader(peek, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true))
		if err != nil {
			return nil, fmt.Errorf("%s: not a zstd stream: %w", name, err)
		}
		r.br = bufio.NewReaderSize(d.IOReadCloser(), writeBuffer)
		r.closers = append(r.closers, func() error { d.Close(); return nil })
	case bytes.HasPrefix(head, gzipMagic):
		d, err := gzip.NewReader(peek)
		if err != nil {
			return nil, fmt.Errorf("%s: not a gzip stream: %w", name, err)
		}
		r.br = bufio.NewReaderSize(d, writeBuffer)
		r.closers = append(r.closers, d.Close)
	default:
		r.br = peek
	}
	return r, nil
}

// Name is the recording's name in messages ("standard input" for "-").
func (r *Reader) Name() string { return r.name }

// Next returns the next line, without its newline, and its number (from
// 1). The slice is valid until the next call. At the end it returns
// io.EOF, or a *TornError when the recording ends inside a line or a
// frame; any other error is the file's.
func (r *Reader) Next() ([]byte, int, error) {
	if r.end != nil {
		return nil, r.line, r.end
	}
	if r.dir != nil {
		line, err := r.dir.next()
		if err == nil {
			r.line++
			return line, r.line, nil
		}
		var torn *TornError
		if errors.As(err, &torn) {
			torn.Line = r.line + 1
		}
		r.end = err
		return nil, r.line, r.end
	}
	line, err := r.readLine()
	switch {
	case err == nil:
		r.line++
		return line, r.line, nil
	case errors.Is(err, io.EOF) && len(line) == 0:
		r.end = io.EOF
	case errors.Is(err, io.EOF):
		r.end = &TornError{Name: r.name, Line: r.line + 1}
	case isTruncated(err):
		r.end = &TornError{Name: r.name, Line: r.line + 1, Err: err}
	default:
		r.end = fmt.Errorf("reading the recording %s at line %d: %w", r.name, r.line+1, err)
	}
	return nil, r.line, r.end
}

// readLine reads up to a newline, however long the line.
func (r *Reader) readLine() ([]byte, error) {
	line, err := r.br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		long := append([]byte(nil), line...)
		for errors.Is(err, bufio.ErrBufferFull) {
			line, err = r.br.ReadSlice('\n')
			long = append(long, line...)
		}
		line = long
	}
	if err != nil {
		return line, err
	}
	return line[:len(line)-1], nil
}

// isTruncated reports whether err is a decompressor's word for a stream
// that stops inside a frame.
func isTruncated(err error) bool {
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, zstd.ErrMagicMismatch) ||
		errors.Is(err, zstd.ErrBlockTooSmall) || errors.Is(err, gzip.ErrChecksum) || errors.Is(err, gzip.ErrHeader) ||
		errors.Is(err, zstd.ErrCRCMismatch)
}

// Close releases the decompressor and the file.
func (r *Reader) Close() error {
	var first error
	if r.dir != nil {
		first = r.dir.close()
	}
	for _, c := range r.closers {
		if err := c(); err != nil && first == nil {
			first = err
		}
	}
	r.closers = nil
	return first
}
