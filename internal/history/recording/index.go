package recording

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// The index of a recording directory (index.jsonl) is JSON Lines, one
// IndexEntry each, appended as the recorder writes what it says — a
// segment begun, a checkpoint, the segment's progress, a gap — and
// handed to the operating system at once, after what it points at. It is
// what a look back needs to find the checkpoint to start at, and what
// the summary (kubectl deltas recording) says, without reading the
// segments. A torn last line (a recorder killed while writing it) is
// dropped; an index that is missing, or does not read, or leaves out a
// segment, is rebuilt from the segments (RebuildIndex).

// The kinds of index entries.
const (
	// IndexSegment: a segment begins (Offset 0: its header, then its
	// state — a checkpoint, or the run's initial lists).
	IndexSegment = "segment"
	// IndexCheckpoint: a checkpoint within a segment, at Offset (the
	// start of a zstd frame), of Objects objects, after Records records.
	IndexCheckpoint = "checkpoint"
	// IndexMark: the segment holds Records records, Size bytes, up to Time.
	IndexMark = "mark"
	// IndexGap: a run went on with the recording in the segment, after a
	// gap From to Time.
	IndexGap = "gap"
)

// IndexEntry is one line of a recording directory's index.
type IndexEntry struct {
	Kind    string    `json:"kind"`
	Segment string    `json:"segment"`
	Time    time.Time `json:"time"`
	// Offset is where a checkpoint begins in the segment's file.
	Offset int64 `json:"offset,omitempty"`
	// Records are the records in the segment before this point;
	// Objects, a checkpoint's (or a segment's state); Size, the segment's
	// bytes at a mark.
	Records int64 `json:"records"`
	Objects int   `json:"objects,omitempty"`
	Size    int64 `json:"size,omitempty"`
	// From is where a gap begins.
	From *time.Time `json:"from,omitempty"`
	// Targets are what a segment's header says was watched; Servers, the
	// API servers it names.
	Targets []Collection `json:"targets,omitempty"`
	Servers []APIServer  `json:"servers,omitempty"`
}

// ReadIndex reads the index of the recording directory dir: its entries,
// and whether its end is torn (a last line cut short, or one that does
// not read: the entries before it are returned, whole is the length
// they fill). A missing index is os.ErrNotExist.
func ReadIndex(dir string) (entries []IndexEntry, whole int64, torn bool, err error) {
	data, err := os.ReadFile(filepath.Join(dir, IndexName))
	if err != nil {
		return nil, 0, false, err
	}
	for len(data[whole:]) > 0 {
		rest := data[whole:]
		end := bytes.IndexByte(rest, '\n')
		if end < 0 {
			return entries, whole, true, nil
		}
		var e IndexEntry
		if err := json.Unmarshal(rest[:end], &e); err != nil || e.Segment == "" || e.Kind == "" {
			return entries, whole, true, nil
		}
		entries = append(entries, e)
		whole += int64(end) + 1
	}
	return entries, whole, false, nil
}

// indexWriter appends entries to a recording directory's index.
type indexWriter struct {
	f *os.File
}

// openIndex opens dir's index to append to it, cut back to whole (its
// entries that read) first.
func openIndex(dir string, whole int64) (*indexWriter, error) {
	name := filepath.Join(dir, IndexName)
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("cannot write the index: %w", err)
	}
	err = f.Truncate(whole)
	if err == nil {
		_, err = f.Seek(whole, io.SeekStart)
	}
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("cannot write the index %s: %w", name, err)
	}
	return &indexWriter{f: f}, nil
}

// add appends e in one write.
func (w *indexWriter) add(e IndexEntry) error {
	line, err := json.Marshal(e)
	if err != nil {
		return err
	}
	if _, err := w.f.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("writing the index %s: %w", w.f.Name(), err)
	}
	return nil
}

// sync makes what was added durable.
func (w *indexWriter) sync() error { return w.f.Sync() }

func (w *indexWriter) close() error {
	if w == nil || w.f == nil {
		return nil
	}
	err := w.f.Close()
	w.f = nil
	return err
}

// WriteIndex writes entries as dir's whole index, atomically: a reader
// sees the old index or the new one.
func WriteIndex(dir string, entries []IndexEntry) error {
	var buf bytes.Buffer
	for _, e := range entries {
		line, err := json.Marshal(e)
		if err != nil {
			return err
		}
		buf.Write(append(line, '\n'))
	}
	return writeAtomically(filepath.Join(dir, IndexName), func(f *os.File) error {
		_, err := f.Write(buf.Bytes())
		return err
	})
}

// writeAtomically writes the file name with write: to a dot file beside
// it, synced, then renamed over it, and the directory synced. A process
// killed meanwhile leaves the old file or the new one whole, and a dot
// file (CleanDir).
func writeAtomically(name string, write func(*os.File) error) error {
	tmp := filepath.Join(filepath.Dir(name), "."+filepath.Base(name)+".tmp")
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	err = write(f)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, name)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return syncDir(filepath.Dir(name))
}

// syncDir makes the directory's entries (a file made, renamed, removed)
// durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer func() { _ = d.Close() }()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return err
	}
	return nil
}

// SegmentInfo is what an index says of one segment.
type SegmentInfo struct {
	Segment
	// Start is when it began (its header's time); End its latest time
	// known; Records, the records it holds (as of End); Size its bytes
	// (as of End).
	Start, End time.Time
	Records    int64
	Size       int64
	// Checkpoints are where a look back can start in it: its start, then
	// each checkpoint.
	Checkpoints []IndexEntry
	// Gaps are the gaps of the runs that went on in it.
	Gaps []IndexEntry
	// Targets are what its header says was watched; Servers, the API
	// servers it names.
	Targets []Collection
	Servers []APIServer
}

// Infos are the segments segs as the index entries say them, in order;
// a segment without an entry has a zero Start (its entries must be read
// from it). Entries of segments that are not in segs are passed over
// (deleted).
func Infos(entries []IndexEntry, segs []Segment) []SegmentInfo {
	byName := map[string]int{}
	infos := make([]SegmentInfo, 0, len(segs))
	for i, s := range segs {
		byName[s.Name] = i
		infos = append(infos, SegmentInfo{Segment: s})
	}
	for _, e := range entries {
		i, found := byName[e.Segment]
		if !found {
			continue
		}
		info := &infos[i]
		switch e.Kind {
		case IndexSegment:
			info.Start, info.Targets, info.Servers = e.Time, e.Targets, e.Servers
			info.Checkpoints = append(info.Checkpoints, e)
		case IndexCheckpoint:
			info.Checkpoints = append(info.Checkpoints, e)
		case IndexGap:
			info.Gaps = append(info.Gaps, e)
		}
		if e.Time.After(info.End) {
			info.End = e.Time
		}
		info.Records = max(info.Records, e.Records)
		info.Size = max(info.Size, e.Size)
	}
	return infos
}

// IndexSegmentFile reads the segment name of dir through for its index
// entries: its start, its checkpoints (each a frame that begins with a
// checkpoint's Heartbeat), its gaps and a last mark (its records, size
// and latest time). A torn end is passed over: what is whole is indexed.
func IndexSegmentFile(dir, name string) ([]IndexEntry, error) {
	path := filepath.Join(dir, name)
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read the segment: %w", err)
	}
	defer func() { _ = f.Close() }()
	frames := frameOffsets(f)
	var out []IndexEntry
	var records int64
	var latest time.Time
	mark := IndexEntry{Kind: IndexMark, Segment: name}
	for i, off := range frames[:max(len(frames)-1, 0)] {
		size := frames[i+1] - off
		r, err := NewReader(path, io.NewSectionReader(f, off, size))
		if err != nil {
			return nil, err
		}
		n := 0 // the line's number in the frame
		for {
			data, _, err := r.Next()
			if err != nil {
				break
			}
			t, terr := lineTime(data)
			if terr == nil && t.After(latest) {
				latest = t
			}
			n++
			switch {
			case off == 0 && n == 1 && bytes.HasPrefix(data, headerPrefixBytes):
				var h Header
				if err := json.Unmarshal(data, &h); err != nil {
					_ = r.Close()
					return nil, fmt.Errorf("%s:1: a header that does not read: %w", path, err)
				}
				out = append(out, IndexEntry{Kind: IndexSegment, Segment: name, Time: h.Time, Targets: h.Targets, Servers: h.Servers})
			case (n == 1 || off == 0 && n == 2) && bytes.HasPrefix(data, heartbeatPrefixBytes) && bytes.Contains(data, checkpointKey):
				// A checkpoint begins its frame; a new segment's follows
				// its header.
				var h Heartbeat
				switch err := json.Unmarshal(data, &h); {
				case err != nil:
				case off == 0 && len(out) > 0:
					out[0].Objects = h.Checkpoint
				case off > 0:
					out = append(out, IndexEntry{Kind: IndexCheckpoint, Segment: name, Time: h.Time, Offset: off, Records: records, Objects: h.Checkpoint})
				}
			case bytes.HasPrefix(data, gapPrefixBytes):
				var g Gap
				if err := json.Unmarshal(data, &g); err == nil {
					from := g.From
					out = append(out, IndexEntry{Kind: IndexGap, Segment: name, Time: g.To, From: &from, Records: records})
				}
			case IsRecordLine(data):
				records++
			}
		}
		_ = r.Close()
	}
	if len(out) == 0 || out[0].Kind != IndexSegment {
		return nil, fmt.Errorf("%s: it does not begin with a %q line: not a segment of a recording of kubectl deltas", path, HeaderType)
	}
	mark.Time, mark.Records, mark.Size = latest, records, frames[len(frames)-1]
	return append(out, mark), nil
}

// Line prefixes, as a Recorder writes them.
var (
	headerPrefixBytes    = []byte(`{"type":"` + HeaderType + `"`)
	heartbeatPrefixBytes = []byte(`{"type":"` + HeartbeatType + `"`)
	gapPrefixBytes       = []byte(`{"type":"` + GapType + `"`)
	verdictPrefixBytes   = []byte(`{"type":"` + VerdictType + `"`)
	checkpointKey        = []byte(`"checkpoint":`)
)

// IsHeaderLine reports whether data, a line of a recording, is a run's
// header, as a Recorder writes it (its type first): where a run begins.
func IsHeaderLine(data []byte) bool { return bytes.HasPrefix(data, headerPrefixBytes) }

// IsHeartbeatLine reports whether data, a line of a recording, is a
// Heartbeat (a checkpoint's too), as a Recorder writes it.
func IsHeartbeatLine(data []byte) bool { return bytes.HasPrefix(data, heartbeatPrefixBytes) }

// IsRecordLine reports whether data, a line of a recording, is a record
// of a change: not a header, Heartbeat, Gap, Verdict or a checkpoint's
// object.
func IsRecordLine(data []byte) bool {
	for _, p := range [][]byte{headerPrefixBytes, heartbeatPrefixBytes, gapPrefixBytes, verdictPrefixBytes} {
		if bytes.HasPrefix(data, p) {
			return false
		}
	}
	return !IsCheckpointLine(data)
}

// IsCheckpointLine reports whether data is a checkpoint's record of an
// object (its "checkpoint" comes right after "initial", in its first
// bytes).
func IsCheckpointLine(data []byte) bool {
	head := data[:min(len(data), 128)]
	return bytes.Contains(head, checkpointRecordKey)
}

// checkpointRecordKey is in the first bytes of a checkpoint's record.
var checkpointRecordKey = []byte(`"initial":true,"checkpoint":true`)
