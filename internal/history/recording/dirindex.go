package recording

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// DirIndex is what a recording directory's index says of its segments,
// read (LoadIndex) and, where it had to be, rebuilt from them.
type DirIndex struct {
	Dir      string
	Segments []Segment
	Infos    []SegmentInfo
	Entries  []IndexEntry
	// Whole is the length of the index file's entries that read; Rebuilt:
	// Entries are not all in the file (missing, torn, or leaving out a
	// segment).
	Whole   int64
	Rebuilt bool
}

// LoadIndex reads the index of the recording directory dir and checks it
// against its segments: the entries of a segment it leaves out (a
// recorder killed between beginning a segment and noting it, an index
// deleted) are read from the segment, with a note on warn; a torn last
// line is dropped, with a warning. newest: also read the newest segment
// again when the index does not say its whole length (its recorder was
// killed): a recorder that goes on needs its count of records and its
// checkpoints.
func LoadIndex(dir string, warn io.Writer, newest bool) (*DirIndex, error) {
	segs, err := ListSegments(dir)
	if err != nil {
		return nil, err
	}
	ix := &DirIndex{Dir: dir, Segments: segs}
	entries, whole, torn, err := ReadIndex(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if len(segs) > 0 {
			fmt.Fprintf(warn, "warning: %s has no %s: rebuilding it from its segments (it says where a look back starts; reading them takes a while)\n", dir, IndexName)
		}
	case err != nil:
		return nil, fmt.Errorf("cannot read the index of %s: %w", dir, err)
	case torn:
		fmt.Fprintf(warn, "warning: %s ends torn (its recorder was killed while writing it): its last entry is dropped, and read again from the segments where needed\n", filepath.Join(dir, IndexName))
		ix.Rebuilt = true
	}
	ix.Entries, ix.Whole = entries, whole
	infos := Infos(entries, segs)
	for i, info := range infos {
		// A segment the index leaves out, or the newest when a recorder
		// goes on and the index does not say its whole length.
		stale := newest && i == len(infos)-1 && !sizeIs(dir, info)
		if !info.Start.IsZero() && !stale {
			continue
		}
		more, err := IndexSegmentFile(dir, info.Name)
		if err != nil {
			return nil, err
		}
		kept := ix.Entries[:0:0]
		for _, e := range ix.Entries {
			if e.Segment != info.Name {
				kept = append(kept, e)
			}
		}
		kept = append(kept, more...)
		ix.Entries, ix.Rebuilt = kept, true
	}
	ix.Infos = Infos(ix.Entries, segs)
	return ix, nil
}

// sizeIs reports whether the index says the segment's whole length: its
// last mark's size is the file's.
func sizeIs(dir string, info SegmentInfo) bool {
	st, err := os.Stat(filepath.Join(dir, info.Name))
	return err == nil && st.Size() == info.Size
}

// Save writes the index again when it was rebuilt (the directory's lock
// held): a SIGKILL never leaves a recording that cannot be read fast
// again.
func (ix *DirIndex) Save() error {
	if !ix.Rebuilt {
		return nil
	}
	if err := WriteIndex(ix.Dir, ix.Entries); err != nil {
		return fmt.Errorf("rewriting the index of %s: %w", ix.Dir, err)
	}
	st, err := os.Stat(filepath.Join(ix.Dir, IndexName))
	if err != nil {
		return err
	}
	ix.Whole, ix.Rebuilt = st.Size(), false
	return nil
}
