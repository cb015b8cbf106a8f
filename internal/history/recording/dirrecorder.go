package recording

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kubectl-deltas/kubectl-deltas/internal/informer"
	"github.com/kubectl-deltas/kubectl-deltas/internal/printer"
	"github.com/kubectl-deltas/kubectl-deltas/internal/rawobj"
)

// DirPolicy is how a recording directory grows and shrinks: a segment
// ends past SegmentBytes or SegmentAge (one of them is set); whole old
// segments are deleted past KeepBytes or KeepAge (zero: kept).
type DirPolicy struct {
	SegmentBytes int64
	SegmentAge   time.Duration
	KeepBytes    int64
	KeepAge      time.Duration
	// CheckpointRecords is the records between two checkpoints; zero:
	// CheckpointRecords.
	CheckpointRecords int64
}

// DefaultSegmentAge is how long a segment grows by default: a day-long
// run is 24 segments, each a look back can start at, and retention by
// age deletes an hour at a time.
const DefaultSegmentAge = time.Hour

// markEvery is how often, at most, the index notes how far the newest
// segment has got (a mark, on a Heartbeat): what the summary says of it
// is at most this old while it is recorded.
const markEvery = time.Minute

// positionsPatience is how long a checkpoint (and the rotation and
// retention that need one) waits for a moment that suits it: past it, a
// collection whose watch is down — a cluster of several unreachable for
// hours — does not hold the segment open and the disk filling; the
// checkpoint is written with the positions known, and a recorder going
// on from it relists that collection (a relist says what changed).
const positionsPatience = 5 * time.Minute

// catchUpQuiet is how long after its last caught-up record a run that
// went on with a recording may write a checkpoint: a look back that
// starts at a checkpoint does not look for the caught-up records of a
// gap before it, so none may come after one.
const catchUpQuiet = 30 * time.Second

// dirRecording is the part of a Recorder that records into a directory.
// It is used from the recorder's goroutine only (the engine's).
type dirRecording struct {
	path   string
	policy DirPolicy
	index  *indexWriter
	state  *recordedState
	// seg is the segment written; segStart when it began; records the
	// records it holds; sinceCheckpoint those since its last checkpoint
	// (or its start).
	seg             Segment
	segStart        time.Time
	records         int64
	sinceCheckpoint int64
	// created: seg was made by this run (and is removed if it never
	// begins); begun: its entry is in the index.
	created, begun bool
	// lastMark is when the index last noted the segment's progress;
	// lastCaughtUp when a caught-up record was last written; unready
	// since when no tick has suited a checkpoint (zero: the last did).
	lastMark, lastCaughtUp, unready time.Time
}

// NewDirRecorder records into the recording directory dir (its lock
// held, its index read and saved): a new recording (end nil: its first
// segment is made) or the same going on from end in its newest segment.
func NewDirRecorder(dir string, lock *Lock, ix *DirIndex, end *End, policy DirPolicy, fill Filler, warn io.Writer) (*Recorder, error) {
	d := &dirRecording{path: dir, policy: policy, state: newRecordedState()}
	if d.policy.CheckpointRecords <= 0 {
		d.policy.CheckpointRecords = CheckpointRecords
	}
	if d.policy.SegmentBytes <= 0 && d.policy.SegmentAge <= 0 {
		d.policy.SegmentAge = DefaultSegmentAge
	}
	fail := func(err error) (*Recorder, error) {
		_ = d.index.close()
		_ = lock.Unlock()
		return nil, fmt.Errorf("--record: %w", err)
	}
	var err error
	if d.index, err = openIndex(dir, ix.Whole); err != nil {
		return fail(err)
	}
	var w *Writer
	if end == nil || len(ix.Infos) == 0 {
		now := time.Now()
		d.seg = Segment{Name: SegmentName(1, now), Seq: 1}
		d.segStart, d.created = now, true
		if w, err = Create(filepath.Join(dir, d.seg.Name)); err != nil {
			return fail(err)
		}
	} else {
		last := ix.Infos[len(ix.Infos)-1]
		d.seg, d.segStart, d.records, d.begun = last.Segment, last.Start, last.Records, true
		if n := len(last.Checkpoints); n > 0 {
			d.sinceCheckpoint = last.Records - last.Checkpoints[n-1].Records
		}
		if w, err = resume(filepath.Join(dir, d.seg.Name), end, warn); err != nil {
			return fail(err)
		}
		for id, res := range end.Resumes {
			if t, ok := end.Targets[id]; ok {
				d.state.seed(t, res.Objects)
			}
		}
		for _, m := range end.Members {
			d.state.seed(m.Target, []*rawobj.Object{m.Object})
		}
	}
	return &Recorder{fill: fill, w: w, name: dir, lock: lock, end: end, created: d.created, dir: d}, nil
}

// begin notes the run's header h: a new segment's entry in the index.
func (d *dirRecording) begin(h Header) error {
	if d == nil || d.begun {
		return nil
	}
	d.begun, d.segStart = true, h.Time
	if err := d.index.add(IndexEntry{Kind: IndexSegment, Segment: d.seg.Name, Time: h.Time, Targets: h.Targets, Servers: h.Servers}); err != nil {
		return err
	}
	return d.index.sync()
}

// gapped notes that the run went on after g.
func (d *dirRecording) gapped(g Gap) error {
	if d == nil {
		return nil
	}
	// What the watches catch up comes as the run begins: no checkpoint
	// before it is in.
	d.lastCaughtUp = g.To
	from := g.From
	return d.index.add(IndexEntry{Kind: IndexGap, Segment: d.seg.Name, Time: g.To, From: &from, Records: d.records})
}

// recorded notes rec, a record written.
func (d *dirRecording) recorded(rec *printer.Record) {
	if d == nil {
		return
	}
	d.state.apply(rec)
	d.records++
	d.sinceCheckpoint++
}

// caughtUp notes a caught-up record written at now.
func (d *dirRecording) caughtUp(now time.Time) {
	if d != nil {
		d.lastCaughtUp = now
	}
}

// Tick is the recorder's turn on the engine's goroutine, every
// HeartbeatInterval: a Heartbeat, then, for a directory, a new segment
// when the policy says, or a checkpoint every CheckpointRecords records,
// or a mark of the segment's progress in the index.
func (r *Recorder) Tick(now time.Time) error {
	if err := r.Heartbeat(now); err != nil || r.dir == nil || !r.begun {
		return err
	}
	d := r.dir
	positions := r.positionsNow()
	suits := now.Sub(d.lastCaughtUp) >= catchUpQuiet && !d.state.behind(positions) && r.everyPosition(positions)
	switch {
	case suits:
		d.unready = time.Time{}
	case d.unready.IsZero():
		d.unready = now
	}
	ready := suits || now.Sub(d.unready) >= positionsPatience
	size, err := r.w.CutAt()
	if err != nil {
		return err
	}
	switch {
	case ready && d.due(size, now):
		return r.rotate(now)
	case ready && d.sinceCheckpoint >= max(d.policy.CheckpointRecords, CheckpointsPerObject*int64(d.state.len())):
		return r.checkpoint(now)
	case now.Sub(d.lastMark) >= markEvery:
		d.lastMark = now
		return d.index.add(IndexEntry{Kind: IndexMark, Segment: d.seg.Name, Time: now.UTC(), Records: d.records, Size: size})
	}
	return nil
}

// due reports whether the segment, size bytes long, ends at now.
func (d *dirRecording) due(size int64, now time.Time) bool {
	if d.policy.SegmentBytes > 0 {
		return size >= d.policy.SegmentBytes
	}
	return now.Sub(d.segStart) >= d.policy.SegmentAge
}

// everyPosition reports whether positions say where every collection a
// recorder resumes stands (the roots, the Events): a checkpoint is where
// a recorder that goes on reads the recording's end from, and one
// without a collection's position would have it relist, its steps while
// nothing recorded lost, where the recording knew them.
func (r *Recorder) everyPosition(positions []Position) bool {
	if r.targets == nil {
		return true
	}
	want := 0
	for _, t := range r.targets() {
		if t.Role.IsRoot() || t.Role == informer.RoleEvents {
			want++
		}
	}
	return len(positions) >= want
}

// positionsNow are the positions a Heartbeat would say now.
func (r *Recorder) positionsNow() []Position {
	var out []Position
	if r.positions != nil {
		for _, p := range r.positions() {
			out = append(out, Position{Collection: headerCollectionOf(p.Target), ResourceVersion: p.ResourceVersion})
		}
	}
	return out
}

// checkpoint writes a checkpoint into the segment, in a frame of its
// own, and notes it in the index once it is in the file.
func (r *Recorder) checkpoint(now time.Time) error {
	d := r.dir
	offset, err := r.w.CutAt()
	if err != nil {
		return err
	}
	if err := d.state.writeCheckpoint(r.w, now, r.positionsNow()); err != nil {
		return err
	}
	if _, err := r.w.CutAt(); err != nil {
		return err
	}
	d.sinceCheckpoint = 0
	return d.index.add(IndexEntry{Kind: IndexCheckpoint, Segment: d.seg.Name, Time: now.UTC(), Offset: offset, Records: d.records, Objects: d.state.len()})
}

// rotate ends the segment and begins the next, whose header and
// checkpoint are written whole under a dot name and renamed into place:
// a recorder killed at any point leaves the old segment whole and the
// new one whole or absent. Then the retention policy deletes what it
// says.
func (r *Recorder) rotate(now time.Time) error {
	d := r.dir
	if err := r.w.Sync(); err != nil {
		return err
	}
	size := r.w.size.n
	if err := d.index.add(IndexEntry{Kind: IndexMark, Segment: d.seg.Name, Time: now.UTC(), Records: d.records, Size: size}); err != nil {
		return err
	}
	next := Segment{Name: SegmentName(d.seg.Seq+1, now), Seq: d.seg.Seq + 1}
	h := r.header
	h.Time = now.UTC()
	if r.targets != nil {
		h.Targets = h.Targets[:0:0]
		for _, t := range r.targets() {
			h.Targets = append(h.Targets, headerCollectionOf(t))
		}
	}
	path := filepath.Join(d.path, next.Name)
	if err := writeSegmentStart(path, h, d.state, now, r.positionsNow()); err != nil {
		return err
	}
	w, err := Append(path)
	if err != nil {
		return err
	}
	_ = r.w.Close()
	r.w = w
	d.seg, d.segStart, d.records, d.sinceCheckpoint, d.lastMark = next, now, 0, 0, now
	if err := d.index.add(IndexEntry{Kind: IndexSegment, Segment: next.Name, Time: h.Time, Targets: h.Targets, Servers: h.Servers, Objects: d.state.len()}); err != nil {
		return err
	}
	if err := d.index.sync(); err != nil {
		return err
	}
	return r.retain(now)
}

// writeSegmentStart writes a new segment's header and checkpoint to a
// dot file beside path, synced, and renames it to path.
func writeSegmentStart(path string, h Header, state *recordedState, now time.Time, positions []Position) error {
	header, err := json.Marshal(h)
	if err != nil {
		return err
	}
	err = writeAtomically(path, func(f *os.File) error {
		w, err := newWriter(f, Zstd)
		if err == nil {
			_, err = w.Write(append(header, '\n'))
		}
		if err == nil {
			err = state.writeCheckpoint(w, now, positions)
		}
		if err == nil {
			_, err = w.CutAt() // the file is synced and closed after
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("beginning the segment %s: %w", path, err)
	}
	return nil
}

// retain deletes the oldest segments while the policy says the
// recording keeps too much — never the newest — and rewrites the index
// without them. The oldest kept segment begins with a checkpoint: the
// window that remains is whole.
func (r *Recorder) retain(now time.Time) error {
	d := r.dir
	if d.policy.KeepBytes <= 0 && d.policy.KeepAge <= 0 {
		return nil
	}
	segs, err := ListSegments(d.path)
	if err != nil {
		return err
	}
	entries, _, _, err := ReadIndex(d.path)
	if err != nil {
		return err
	}
	infos := Infos(entries, segs)
	var total int64
	sizes := make([]int64, len(segs))
	for i, s := range segs {
		if st, err := os.Stat(filepath.Join(d.path, s.Name)); err == nil {
			sizes[i] = st.Size()
			total += sizes[i]
		}
	}
	drop := 0
	for drop < len(segs)-1 {
		tooBig := d.policy.KeepBytes > 0 && total > d.policy.KeepBytes
		// A segment is past the age kept when the next one began before
		// it: everything it holds is older.
		tooOld := d.policy.KeepAge > 0 && !infos[drop+1].Start.IsZero() && now.Sub(infos[drop+1].Start) > d.policy.KeepAge
		if !tooBig && !tooOld {
			break
		}
		total -= sizes[drop]
		drop++
	}
	if drop == 0 {
		return nil
	}
	gone := map[string]bool{}
	for _, s := range segs[:drop] {
		gone[s.Name] = true
	}
	var kept []IndexEntry
	for _, e := range entries {
		if !gone[e.Segment] {
			kept = append(kept, e)
		}
	}
	// The index first: it never names a segment that is not there.
	if err := d.index.close(); err != nil {
		return err
	}
	if err := WriteIndex(d.path, kept); err != nil {
		return fmt.Errorf("rewriting the index of %s: %w", d.path, err)
	}
	for _, s := range segs[:drop] {
		if err := os.Remove(filepath.Join(d.path, s.Name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("deleting the segment %s past --record-keep: %w", s.Name, err)
		}
	}
	_ = syncDir(d.path)
	st, err := os.Stat(filepath.Join(d.path, IndexName))
	if err != nil {
		return err
	}
	d.index, err = openIndex(d.path, st.Size())
	return err
}

// close ends the directory's part: a last mark of the segment in the
// index (after w is cut), the index synced and closed. A segment made by
// a run that never began is removed after w is closed (unbegun).
func (d *dirRecording) close(w *Writer, now time.Time) error {
	if d == nil {
		return nil
	}
	defer func() { _ = d.index.close() }()
	if !d.begun {
		return nil
	}
	size, err := w.CutAt()
	if err != nil {
		return err
	}
	if err := d.index.add(IndexEntry{Kind: IndexMark, Segment: d.seg.Name, Time: now.UTC(), Records: d.records, Size: size}); err != nil {
		return err
	}
	return d.index.sync()
}

// unbegun removes the segment a run that never began made (its writer
// closed).
func (d *dirRecording) unbegun() {
	if d != nil && d.created && !d.begun {
		_ = os.Remove(filepath.Join(d.path, d.seg.Name))
	}
}

// TargetsFrom has each new segment's header say what targets says is
// watched then (the engine's Targets: --tree adds types as it finds
// them).
func (r *Recorder) TargetsFrom(targets func() []informer.Target) { r.targets = targets }

// CleanDir removes what a recorder killed while beginning a segment or
// rewriting the index left: its dot files. Call it with the lock held.
func CleanDir(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") && strings.HasSuffix(e.Name(), ".tmp") {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}
