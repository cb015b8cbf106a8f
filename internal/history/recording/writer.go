// Package recording keeps a stream's records in a file that outlives the
// process (--record) and reads them back (--replay): JSON Lines, plain,
// gzip (FILE.gz) or zstd (FILE.zst), readable by jq (after zcat or
// zstdcat).
//
// A recording is written in independent pieces: a compressed one as a
// series of complete gzip members or zstd frames, each ended at least once
// a second (Writer.Cut) and handed to the operating system at once, a
// plain one as its buffer flushed as often. A process killed at any moment,
// SIGKILL included, loses at most the last second, and leaves a file whose
// torn end — half a frame, half a line — the Reader drops with a warning,
// replaying everything before it.
package recording

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// CutInterval is how often a Writer ends its current frame (or flushes
// its buffer): the most a killed recorder loses.
const CutInterval = time.Second

// writeBuffer is the size of the buffer in front of the file or the
// compressor.
const writeBuffer = 64 << 10

// Compression is how a recording is stored.
type Compression int

const (
	// Plain is JSON Lines as they are.
	Plain Compression = iota
	// Gzip is a series of gzip members (FILE.gz).
	Gzip
	// Zstd is a series of zstd frames (FILE.zst).
	Zstd
)

// CompressionOf is the compression a file's name asks for: .zst is zstd,
// .gz gzip, anything else plain.
func CompressionOf(name string) Compression {
	switch {
	case strings.HasSuffix(name, ".zst"):
		return Zstd
	case strings.HasSuffix(name, ".gz"):
		return Gzip
	}
	return Plain
}

// frameWriter is a compressor whose output can be ended and begun again
// on the same file: gzip's and zstd's writers both have Close and Reset.
type frameWriter interface {
	io.Writer
	Close() error
	Reset(w io.Writer)
}

// Writer writes lines to a recording. Write is called from one goroutine
// (the sink's); Cut, from the Writer's own ticker or a test, may run at
// the same time: mu guards everything.
type Writer struct {
	// mu guards every field below.
	mu   sync.Mutex
	file *os.File
	// frame is the compressor; nil for Plain. open: a frame is begun
	// (frame was Reset onto the file since the last Close).
	frame frameWriter
	open  bool
	// buf buffers the lines in front of frame (or file, for Plain).
	buf *bufio.Writer
	// dirty: something was written since the last Cut.
	dirty bool
	// err is the first write error: every later call returns it.
	err error
	// size counts the bytes in the file: where the next frame begins
	// once the current one is cut (Offset).
	size *countingFile
	// stop ends the ticker goroutine; done is closed when it has.
	stop, done chan struct{}
}

// Create opens the recording name for writing, new or truncated, with the
// compression its name asks for, and starts cutting it every
// CutInterval (until Close). The error names the file. A new recording is
// created 0600, as kubectl writes a kubeconfig: it holds the cluster's
// objects (ConfigMap values, Pod env, Secrets with --show-secret-data).
// A file that exists keeps its mode.
func Create(name string) (*Writer, error) {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("cannot write the recording: %w", err)
	}
	return startWriter(f, name)
}

// startWriter is a Writer onto f, the recording name, cut every
// CutInterval until Close; f is closed if it cannot be.
func startWriter(f *os.File, name string) (*Writer, error) {
	w, err := newWriter(f, CompressionOf(name))
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	w.stop, w.done = make(chan struct{}), make(chan struct{})
	go w.cutEvery(CutInterval)
	return w, nil
}

// countingFile counts the bytes written to a file, from its size when
// opened.
type countingFile struct {
	f *os.File
	n int64
}

func (c *countingFile) Write(p []byte) (int, error) {
	n, err := c.f.Write(p)
	c.n += int64(n)
	return n, err
}

// newWriter is a Writer onto f that nothing cuts but its caller. A
// compressed one begins its first frame with its first Write.
func newWriter(f *os.File, c Compression) (*Writer, error) {
	out := &countingFile{f: f}
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		out.n = st.Size()
	}
	w := &Writer{file: f, size: out}
	switch c {
	case Gzip:
		gz, err := gzip.NewWriterLevel(out, gzip.BestSpeed)
		if err != nil {
			return nil, fmt.Errorf("starting gzip: %w", err)
		}
		w.frame = gz
	case Zstd:
		// One goroutine, the fastest level: the recorder runs beside the
		// stream and must not cost it more than a tenth.
		// A 64 KiB window: faster than the default 8 MiB and, on records,
		// smaller (the same kinds repeat within a few records; 4.8% of
		// 10,000 ConfigMaps' JSON against 5.4%), and a reader needs less.
		zw, err := zstd.NewWriter(out, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1), zstd.WithWindowSize(64<<10))
		if err != nil {
			return nil, fmt.Errorf("starting zstd: %w", err)
		}
		w.frame = zw
	}
	var under io.Writer = out
	if w.frame != nil {
		under = w.frame
	}
	w.buf = bufio.NewWriterSize(under, writeBuffer)
	return w, nil
}

// cutEvery cuts the recording every d until Close.
func (w *Writer) cutEvery(d time.Duration) {
	defer close(w.done)
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-t.C:
			_ = w.Cut()
		}
	}
}

// Write appends p, one or more whole lines, to the current frame. A frame
// is only ever cut between two Writes, so that frames end where lines do.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return 0, w.err
	}
	if w.frame != nil && !w.open {
		w.frame.Reset(w.size)
		w.open = true
	}
	n, err := w.buf.Write(p)
	if err != nil {
		w.err = w.fail(err)
		return n, w.err
	}
	w.dirty = true
	return n, nil
}

// Cut ends the current frame (a plain recording: flushes its buffer) if
// anything was written since the last Cut: what was written is in the
// file, whole, when it returns.
func (w *Writer) Cut() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.cutLocked()
}

// cutLocked is Cut with mu held.
func (w *Writer) cutLocked() error {
	if w.err != nil || !w.dirty {
		return w.err
	}
	if err := w.buf.Flush(); err != nil {
		w.err = w.fail(err)
		return w.err
	}
	if w.frame != nil {
		if err := w.frame.Close(); err != nil {
			w.err = w.fail(err)
			return w.err
		}
		w.open = false
	}
	w.dirty = false
	return nil
}

// CutAt cuts the recording (Cut) and returns its size: where the next
// Write begins a frame.
func (w *Writer) CutAt() (int64, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	err := w.cutLocked()
	return w.size.n, err
}

// Sync cuts the recording and has the system write it to the disk.
func (w *Writer) Sync() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.cutLocked(); err != nil {
		return err
	}
	if err := w.file.Sync(); err != nil {
		w.err = w.fail(err)
	}
	return w.err
}

// fail names a write error of the recording.
func (w *Writer) fail(err error) error {
	return fmt.Errorf("writing the recording %s: %w", w.file.Name(), err)
}

// Close ends the last frame and closes the file.
func (w *Writer) Close() error {
	if w.stop != nil {
		close(w.stop)
		<-w.done
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	// A frame is begun only by a Write, so that cutting ends every frame.
	err := w.cutLocked()
	if cerr := w.file.Close(); err == nil && cerr != nil {
		err = w.fail(cerr)
	}
	if w.err == nil {
		w.err = errors.New("the recording is closed")
	}
	return err
}
