package recording

import (
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
// one — and returns how many bytes it cut off. A gzip recording cannot be
// cut (its members do not say their length): a torn one is an error.
func CutTorn(name string) (int64, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return 0, err
	}
	var keep int
	switch {
	case bytes.HasPrefix(data, zstdMagic):
		keep = wholeZstdFrames(data)
	case bytes.HasPrefix(data, gzipMagic):
		return 0, fmt.Errorf("%s ends torn and is gzip, which cannot be cut back to its last whole member: record to a new file (zstd, .zst, can be)", name)
	default:
		keep = bytes.LastIndexByte(data, '\n') + 1
	}
	if keep == len(data) {
		return 0, nil
	}
	if err := os.Truncate(name, int64(keep)); err != nil {
		return 0, err
	}
	return int64(len(data) - keep), nil
}

// wholeZstdFrames is the length of the longest prefix of data made of
// whole zstd frames (RFC 8878: a frame header, blocks up to the last one,
// and the content checksum when the header says so).
func wholeZstdFrames(data []byte) int {
	end := 0
	for {
		n, err := zstdFrameLen(data[end:])
		if err != nil {
			return end
		}
		end += n
	}
}

// zstdFrameLen is the length of the zstd frame data begins with; an error
// when data holds no whole frame.
func zstdFrameLen(data []byte) (int, error) {
	if len(data) < 5 || !bytes.HasPrefix(data, zstdMagic) {
		return 0, io.ErrUnexpectedEOF
	}
	descriptor := data[4]
	pos := 5
	singleSegment := descriptor&0x20 != 0
	if !singleSegment {
		pos++ // window descriptor
	}
	pos += [4]int{0, 1, 2, 4}[descriptor&0x03] // dictionary ID
	fcs := [4]int{0, 2, 4, 8}[descriptor>>6]
	if fcs == 0 && singleSegment {
		fcs = 1
	}
	pos += fcs
	for {
		if pos+3 > len(data) {
			return 0, io.ErrUnexpectedEOF
		}
		header := uint32(data[pos]) | uint32(data[pos+1])<<8 | uint32(data[pos+2])<<16
		pos += 3
		last, kind, size := header&1 != 0, (header>>1)&3, int(header>>3)
		switch kind {
		case 0, 2: // raw, compressed
			pos += size
		case 1: // RLE: one byte
			pos++
		default:
			return 0, errors.New("reserved block type")
		}
		if pos > len(data) {
			return 0, io.ErrUnexpectedEOF
		}
		if last {
			break
		}
	}
	if descriptor&0x04 != 0 {
		pos += 4 // content checksum
	}
	if pos > len(data) {
		return 0, io.ErrUnexpectedEOF
	}
	return pos, nil
}
