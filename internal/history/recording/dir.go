package recording

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// A recording directory (--record=DIR/) holds one recording in segments,
// each a recording of its own (zstd, written in frames cut at least once
// a second), named NNNNNN-YYYYMMDDTHHMMSSZ.jsonl.zst by its number and
// the time it began, beside an index (index.jsonl) and the lock file
// (lock). A segment begins with a header and a checkpoint — the state of
// everything recorded so far, marked so that a reader knows it for a
// state, not changes — so that each replays alone; the recorder adds a
// checkpoint within a segment every CheckpointRecords records, each in a
// frame of its own, so that a look back (--at, --from) starts at the
// last one before its time and plays a bounded number of records after
// it. The first segment of a recording begins with the run's initial
// lists instead: they are its state.
//
// Segment numbers go up by one: a number missing between two segments is
// a segment deleted by hand, which a replay says as a gap; the segments
// before the oldest are gone by retention (--record-keep) or by hand, and
// the recording keeps what remains.

// IndexName, LockName are the names of a recording directory's index and
// lock file; SegmentExt ends the name of each of its segments.
const (
	IndexName  = "index.jsonl"
	LockName   = "lock"
	SegmentExt = ".jsonl.zst"
)

// segmentTimeLayout is the time in a segment's name: UTC, to the second.
const segmentTimeLayout = "20060102T150405Z"

// Segment is one file of a recording directory.
type Segment struct {
	// Name is the file's name in the directory; Seq its number, from 1.
	Name string
	Seq  int
}

// SegmentName is the name of segment seq begun at start.
func SegmentName(seq int, start time.Time) string {
	return fmt.Sprintf("%06d-%s%s", seq, start.UTC().Format(segmentTimeLayout), SegmentExt)
}

// ParseSegmentName reads a segment's name; false for a name that is not
// one.
func ParseSegmentName(name string) (Segment, bool) {
	base, ok := strings.CutSuffix(name, SegmentExt)
	if !ok {
		return Segment{}, false
	}
	num, stamp, ok := strings.Cut(base, "-")
	if !ok || len(num) < 6 {
		return Segment{}, false
	}
	seq, err := strconv.Atoi(num)
	if err != nil || seq < 1 {
		return Segment{}, false
	}
	if _, err := time.Parse(segmentTimeLayout, stamp); err != nil {
		return Segment{}, false
	}
	return Segment{Name: name, Seq: seq}, true
}

// IsDir reports whether name asks for, or is, a recording directory: a
// path that ends in a separator, or an existing directory.
func IsDir(name string) bool {
	if name == "-" {
		return false
	}
	if strings.HasSuffix(name, "/") || strings.HasSuffix(name, string(filepath.Separator)) {
		return true
	}
	st, err := os.Stat(name)
	return err == nil && st.IsDir()
}

// SegmentDir reports whether the file name is a segment of a recording
// directory — a segment's name beside the directory's index — and which
// directory: recorded as a file of its own, it would get a second writer
// beside the directory's recorder, and the index would not say it.
func SegmentDir(name string) (string, bool) {
	if _, ok := ParseSegmentName(filepath.Base(name)); !ok {
		return "", false
	}
	dir := filepath.Dir(name)
	if _, err := os.Stat(filepath.Join(dir, IndexName)); err != nil {
		return "", false
	}
	return dir + string(filepath.Separator), true
}

// ListSegments lists the segments of the recording directory dir, by
// number. A file that belongs to no recording directory (other than a
// dot file) is an error naming it: dir holds something else.
func ListSegments(dir string) ([]Segment, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("cannot read the recording directory: %w", err)
	}
	var segs []Segment
	var others []string
	for _, e := range entries {
		name := e.Name()
		if seg, ok := ParseSegmentName(name); ok && e.Type().IsRegular() {
			segs = append(segs, seg)
			continue
		}
		if name == IndexName || name == LockName || strings.HasPrefix(name, ".") {
			continue
		}
		others = append(others, name)
	}
	if len(others) > 0 {
		if len(others) > 3 {
			others = append(others[:3], "…")
		}
		return nil, fmt.Errorf("%s holds %s, which no recording of kubectl deltas has: it is not a recording directory; give a new or empty directory (its segments are NNNNNN-YYYYMMDDTHHMMSSZ%s)", dir, strings.Join(others, ", "), SegmentExt)
	}
	slices.SortFunc(segs, func(a, b Segment) int { return a.Seq - b.Seq })
	return segs, nil
}

// LockDir takes the lock of the recording directory dir (its lock file,
// made when missing), as LockRecording does a file's; a *BusyError names
// dir when another recorder holds it.
func LockDir(dir string) (*Lock, error) {
	lock, err := LockRecording(filepath.Join(dir, LockName))
	var busy *BusyError
	if errors.As(err, &busy) {
		busy.Name = dir
	}
	return lock, err
}

// DirRecordedBy is RecordedBy of a recording directory: the recorder that
// holds its lock now, nil when none.
func DirRecordedBy(dir string) *BusyError {
	busy := RecordedBy(filepath.Join(dir, LockName))
	if busy != nil {
		busy.Name = dir
	}
	return busy
}

// PrepareDir makes dir, a directory asked for by --record=DIR/, ready to
// record into: made when missing (0700: it holds the cluster's objects);
// an error naming the fix when it is a file.
func PrepareDir(dir string) error {
	st, err := os.Stat(filepath.Clean(dir))
	switch {
	case err == nil && !st.IsDir():
		return fmt.Errorf("%s is a file, not a directory: give --record=%s to go on with that recording, or a directory that is not a file", dir, filepath.Clean(dir))
	case err == nil:
		return nil
	case errors.Is(err, os.ErrNotExist):
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("cannot make the recording directory: %w", err)
		}
		return nil
	}
	return fmt.Errorf("cannot use the recording directory: %w", err)
}
