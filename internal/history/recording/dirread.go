package recording

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// OpenDir opens the recording directory ix.Dir to read as one recording,
// from start (a segment and an offset in it: its beginning, or a
// checkpoint) to the end of its newest segment. What a continuous
// recorder wrote to begin each segment — its header, its checkpoint —
// is passed over (it says nothing new), except where the reading starts:
// there the segment's header comes first and the checkpoint's records
// are the initial lists. A segment missing before another (deleted by
// hand) is said: the next segment's header, then a Gap from the last
// line read to it, and its checkpoint's records, as a relist, say what
// changed meanwhile. warn receives a warning for each.
func OpenDir(ix *DirIndex, start Start, warn io.Writer) (*Reader, error) {
	i := 0
	for i < len(ix.Segments) && ix.Segments[i].Name != start.Segment {
		i++
	}
	if i == len(ix.Segments) {
		return nil, fmt.Errorf("%s: no segment %s to read from", ix.Dir, start.Segment)
	}
	c := &dirCursor{dir: ix.Dir, segs: ix.Segments[i:], offset: start.Offset, warn: warn}
	return &Reader{name: ix.Dir, dir: c}, nil
}

// Start is where a reading of a recording directory begins: a segment,
// and an offset in it (0, or a checkpoint's).
type Start struct {
	Segment string
	Offset  int64
	// Time is the checkpoint's (or the segment's start).
	Time time.Time
}

// StartAt is where a look back at t begins: the latest checkpoint (or
// segment start) at or before t; the oldest segment's start for a zero t
// or one before it.
func (ix *DirIndex) StartAt(t time.Time) Start {
	var best Start
	for _, info := range ix.Infos {
		for _, cp := range info.Checkpoints {
			if best.Segment == "" || (!t.IsZero() && !cp.Time.After(t)) {
				best = Start{Segment: info.Name, Offset: cp.Offset, Time: cp.Time}
			}
		}
	}
	if best.Segment == "" && len(ix.Segments) > 0 {
		best = Start{Segment: ix.Segments[0].Name}
	}
	return best
}

// Newest is where the newest checkpoint of the newest segment begins:
// where a recorder that goes on reads the recording's end from.
func (ix *DirIndex) Newest() Start {
	if len(ix.Infos) == 0 {
		return Start{}
	}
	last := ix.Infos[len(ix.Infos)-1]
	s := Start{Segment: last.Name}
	if n := len(last.Checkpoints); n > 0 {
		s.Offset, s.Time = last.Checkpoints[n-1].Offset, last.Checkpoints[n-1].Time
	}
	return s
}

// Span is the time the directory keeps: from its oldest segment's start
// to its newest line (read from the newest segment's last checkpoint
// on: the index says where that is).
func (ix *DirIndex) Span() (Span, error) {
	if len(ix.Infos) == 0 {
		return Span{}, fmt.Errorf("%s holds no segment: nothing recorded", ix.Dir)
	}
	s := Span{Start: ix.Infos[0].Start}
	for _, info := range ix.Infos {
		if info.End.After(s.End) {
			s.End = info.End
		}
	}
	tail, err := OpenDir(ix, ix.Newest(), io.Discard)
	if err != nil {
		return s, err
	}
	defer func() { _ = tail.Close() }()
	end, err := ReadSpan(tail)
	if err != nil {
		return s, err
	}
	if end.End.After(s.End) {
		s.End = end.End
	}
	if s.Start.IsZero() {
		s.Start = end.Start
	}
	return s, nil
}

// dirCursor reads the segments of a recording directory as one
// recording (Reader.dir).
type dirCursor struct {
	dir  string
	segs []Segment
	// offset is where the first segment is read from.
	offset int64
	warn   io.Writer
	// i is the segment read; cur its reader (nil before it is opened).
	i   int
	cur *Reader
	// pending are lines to hand out before reading on.
	pending [][]byte
	// keepCheckpoint: the checkpoint being read is where the reading
	// starts (or follows a missing segment): its records are handed out.
	// dropHeader: the segment's first line is the header of a segment
	// that goes on from the one before.
	keepCheckpoint, dropHeader, gapNext bool
	// latest is the latest time of a line handed out: where a gap after
	// a missing segment begins.
	latest time.Time
}

func (c *dirCursor) next() ([]byte, error) {
	for {
		if len(c.pending) > 0 {
			line := c.pending[0]
			c.pending = c.pending[1:]
			return line, nil
		}
		if c.cur == nil {
			if c.i >= len(c.segs) {
				return nil, io.EOF
			}
			if err := c.open(); err != nil {
				return nil, err
			}
			continue // what open queued comes first
		}
		line, _, err := c.cur.Next()
		var torn *TornError
		switch {
		case errors.Is(err, io.EOF):
			c.closeSegment()
			continue
		case errors.As(err, &torn):
			if c.i == len(c.segs)-1 {
				torn.Name = filepath.Join(c.dir, c.segs[c.i].Name)
				return nil, torn
			}
			fmt.Fprintf(c.warn, "warning: %v; the next segment goes on\n", torn)
			c.closeSegment()
			continue
		case err != nil:
			return nil, err
		}
		if c.dropHeader {
			c.dropHeader = false
			if IsHeaderLine(line) {
				continue
			}
		}
		if IsCheckpointLine(line) {
			if !c.keepCheckpoint {
				continue
			}
		} else if !IsHeaderLine(line) && !IsHeartbeatLine(line) {
			c.keepCheckpoint = false
		}
		if c.gapNext {
			// The header of the segment after a missing one: a Gap, from
			// the last line read to it, follows it.
			c.gapNext = false
			var h Header
			if err := json.Unmarshal(line, &h); err == nil {
				gap, _ := json.Marshal(Gap{Type: GapType, Time: h.Time, From: c.latestBefore(h.Time), To: h.Time})
				c.pending = append(c.pending, gap)
			}
		}
		if t, err := lineTime(line); err == nil && t.After(c.latest) {
			c.latest = t
		}
		return line, nil
	}
}

// latestBefore is the latest time handed out, or t when none was before
// it.
func (c *dirCursor) latestBefore(t time.Time) time.Time {
	if c.latest.IsZero() || c.latest.After(t) {
		return t
	}
	return c.latest
}

// open opens segment c.i: from c.offset for the first (its header
// first, read apart), from its start for the others.
func (c *dirCursor) open() error {
	seg := c.segs[c.i]
	path := filepath.Join(c.dir, seg.Name)
	first := c.i == 0
	if first && c.offset > 0 {
		header, err := firstLine(path)
		if err != nil {
			return err
		}
		c.pending = append(c.pending, header)
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("cannot read the segment: %w", err)
	}
	if first && c.offset > 0 {
		if _, err := f.Seek(c.offset, io.SeekStart); err != nil {
			_ = f.Close()
			return fmt.Errorf("cannot read the segment %s: %w", path, err)
		}
	}
	r, err := NewReader(path, f)
	if err != nil {
		_ = f.Close()
		return err
	}
	r.closers = append(r.closers, f.Close)
	c.cur = r
	switch {
	case first:
		c.keepCheckpoint = true
	case seg.Seq == c.segs[c.i-1].Seq+1:
		c.dropHeader, c.keepCheckpoint = true, false
	default:
		fmt.Fprintf(c.warn, "warning: %s: %s — the segments numbered %d to %d are missing (deleted by hand?): what they held is a gap, and what changed in it is replayed as a relist\n",
			c.dir, missingRange(c.segs[c.i-1].Seq+1, seg.Seq-1), c.segs[c.i-1].Seq+1, seg.Seq-1)
		c.keepCheckpoint, c.gapNext = true, true
	}
	return nil
}

// missingRange names the segments from a to b.
func missingRange(a, b int) string {
	if a == b {
		return fmt.Sprintf("segment %06d is missing", a)
	}
	return fmt.Sprintf("segments %06d to %06d are missing", a, b)
}

// closeSegment closes the segment read, and goes to the next.
func (c *dirCursor) closeSegment() {
	if c.cur != nil {
		_ = c.cur.Close()
		c.cur = nil
	}
	c.i++
}

func (c *dirCursor) close() error {
	if c.cur != nil {
		err := c.cur.Close()
		c.cur = nil
		return err
	}
	return nil
}

// firstLine is the first line of the recording path: a segment's header.
func firstLine(path string) ([]byte, error) {
	r, err := Open(path, nil)
	if err != nil {
		return nil, err
	}
	defer func() { _ = r.Close() }()
	line, _, err := r.Next()
	if err != nil {
		return nil, fmt.Errorf("%s: no whole first line: %w", path, err)
	}
	return append([]byte(nil), line...), nil
}
