package recording

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
)

// Append opens the recording name to add to it, with the compression its
// name asks for and a cut every CutInterval (until Close). A recording
// that ends torn (a recorder killed while writing) must be cut back to
// its last whole part first (CutTorn): what is added would otherwise stay
// unreadable behind the torn part.
func Append(name string) (*Writer, error) {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return nil, fmt.Errorf("cannot add to the recording: %w", err)
	}
	return startWriter(f, name)
}

// CutTorn cuts the recording name back to the end of its last whole part
// — the last newline of a plain recording, the last whole frame of a zstd
// one (found by reading the frames' headers, not their contents) — and
// returns how many bytes it cut off. A gzip recording cannot be cut (its
// members do not say their length): a torn one is an error.
func CutTorn(name string) (int64, error) {
	f, err := os.Open(name)
	if err != nil {
		return 0, err
	}
	defer func() { _ = f.Close() }()
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	head := make([]byte, len(zstdMagic))
	n, _ := io.ReadFull(f, head)
	var keep int64
	switch head = head[:n]; {
	case bytes.HasPrefix(head, zstdMagic):
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return 0, err
		}
		frames := frameOffsets(f)
		keep = frames[len(frames)-1]
	case bytes.HasPrefix(head, gzipMagic):
		return 0, fmt.Errorf("%s ends torn and is gzip, which cannot be cut back to its last whole member: record to a new file (zstd, .zst, can be)", name)
	default:
		data, err := os.ReadFile(name)
		if err != nil {
			return 0, err
		}
		keep = int64(bytes.LastIndexByte(data, '\n') + 1)
	}
	if keep == st.Size() {
		return 0, nil
	}
	if err := os.Truncate(name, keep); err != nil {
		return 0, err
	}
	return st.Size() - keep, nil
}

// frameOffsets are where the whole zstd frames of f begin, and, last,
// where they end: a torn last frame is left out.
func frameOffsets(f *os.File) []int64 {
	br := bufio.NewReaderSize(f, writeBuffer)
	offsets := []int64{0}
	var at int64
	for {
		n, err := skipZstdFrame(br)
		if err != nil {
			return offsets
		}
		at += n
		offsets = append(offsets, at)
	}
}

// skipZstdFrame reads one whole zstd frame from br (RFC 8878: a frame
// header, blocks up to the last one, and the content checksum when the
// header says so) and returns its length; an error when br holds no
// whole frame (its end, or a torn one).
func skipZstdFrame(br *bufio.Reader) (int64, error) {
	head, err := br.Peek(5)
	if err != nil || !bytes.HasPrefix(head, zstdMagic) {
		return 0, io.ErrUnexpectedEOF
	}
	descriptor := head[4]
	n := 5
	singleSegment := descriptor&0x20 != 0
	if !singleSegment {
		n++
	}
	n += [4]int{0, 1, 2, 4}[descriptor&0x03]
	fcs := [4]int{0, 2, 4, 8}[descriptor>>6]
	if fcs == 0 && singleSegment {
		fcs = 1
	}
	n += fcs
	if _, err := br.Discard(n); err != nil {
		return 0, io.ErrUnexpectedEOF
	}
	total := int64(n)
	for {
		bh, err := br.Peek(3)
		if err != nil {
			return 0, io.ErrUnexpectedEOF
		}
		header := uint32(bh[0]) | uint32(bh[1])<<8 | uint32(bh[2])<<16
		last, kind, size := header&1 != 0, (header>>1)&3, int(header>>3)
		skip := 3
		switch kind {
		case 0, 2:
			skip += size
		case 1:
			skip++
		default:
			return 0, errors.New("reserved block type")
		}
		if got, err := br.Discard(skip); err != nil || got != skip {
			return 0, io.ErrUnexpectedEOF
		}
		total += int64(skip)
		if last {
			break
		}
	}
	if descriptor&0x04 != 0 {
		if got, err := br.Discard(4); err != nil || got != 4 {
			return 0, io.ErrUnexpectedEOF
		}
		total += 4
	}
	return total, nil
}
