package replay

import (
	"bytes"
	"context"
	"errors"
	"io"
	"slices"
	"time"

	"github.com/kubectl-deltas/kubectl-deltas/internal/history/recording"
)

// A run that went on with a recording after a gap (recording.Gap) dates
// each change its watches caught up when its object says it was made,
// inside the gap, but writes it when the watch brings it: after the
// run's header, and after whatever of the run came first — the Heartbeat
// of its (empty) initial lists, one of its ticks, a record of another
// collection — all dated from the run's start on. Read in order, a
// window's edge (--at, --from, --to) met at such a later line would leave
// out the caught-up records after it that are dated before the edge: the
// state inside the gap, or just after it, would miss changes made before
// it. So a run's caught-up records are played in the order of their
// times as its Gap is played (takeCaughtUp), and at an edge met before
// that, or from standard input past the run's first live record, the
// rest of each run that began with a Gap from before the edge is
// searched for them, to the run's end: each object's caught-up records
// are in time (Recorder.caughtUpTime), but not those of different
// objects.

// caughtUpKey is in every caught-up record: a line without it is passed
// over unread.
var caughtUpKey = []byte(`"caughtUp":"`)

// takeCaughtUp takes, as pt's line ahead, the Gap a run begins with, is
// played, the caught-up records of that run, to be played next in the
// order of their times (recorded in the order their watches brought
// them, each at its own time, after lines dated later): a replay plays a
// run in time, so that its clock never goes back and every window's edge
// is met in order. From a file, the run is read to its end (the records
// taken are skipped when the part's reader comes to them); from standard
// input, which cannot be read twice, up to the run's first record that
// was not caught up (what is read ahead is held until played), so that
// the run is not held whole in memory: a caught-up record written after
// a live one is played where it was written.
func (p *Player) takeCaughtUp(pt *part) error {
	ahead := p.aheadOf(pt, true)
	defer ahead.done()
	var out []*recording.Line
	for {
		data, number, err := ahead.next()
		if data == nil || err != nil {
			pt.caughtUp = sortedByTime(out)
			return err
		}
		if recording.IsHeaderLine(data) {
			ahead.pass(data, number)
			break
		}
		if !bytes.Contains(data, caughtUpKey) {
			ahead.pass(data, number)
			if pt.reopen == nil && !recording.IsHeartbeatLine(data) {
				break
			}
			continue
		}
		l, err := recording.ParseLine(pt.r.Name(), number, data)
		if err != nil {
			return err
		}
		if l.CaughtUp == "" || l.Mark() {
			ahead.pass(data, number)
			continue
		}
		out = append(out, l)
		ahead.take(number)
	}
	pt.caughtUp = sortedByTime(out)
	return nil
}

// sortedByTime sorts lines by their times, stably: an object's records,
// never dated before each other, stay in order.
func sortedByTime(lines []*recording.Line) []*recording.Line {
	slices.SortStableFunc(lines, func(a, b *recording.Line) int { return a.Time.Compare(b.Time) })
	return lines
}

// caughtUpBefore returns the caught-up records dated t or earlier that a
// window's edge at t leaves behind: those past each part's line ahead, in
// the run it belongs to, when that run began with a Gap from t or before
// — and, unless keep, the line ahead itself (Play's edge has taken the
// line it stopped at). They come in the order of their times (and of the
// recordings). keep: the lines passed over are still to be played, and
// those returned are not played again; otherwise what was read is gone
// (nothing is played after the edge).
func (p *Player) caughtUpBefore(t time.Time, keep bool) ([]*recording.Line, error) {
	var out []*recording.Line
	for _, pt := range p.parts {
		lines, err := p.partCaughtUpBefore(pt, t, keep)
		if err != nil {
			return nil, err
		}
		out = append(out, lines...)
	}
	return sortedByTime(out), nil
}

// partCaughtUpBefore is caughtUpBefore of one part.
func (p *Player) partCaughtUpBefore(pt *part, t time.Time, keep bool) ([]*recording.Line, error) {
	if pt.ahead == nil || pt.gap == nil || pt.gap.From.After(t) {
		// No run ahead, or one whose caught-up records are all dated
		// after t (from its Gap's start on).
		return nil, nil
	}
	var out []*recording.Line
	switch l := pt.ahead; {
	case l.Header != nil, l.CaughtUp != "" && l.Time.After(t):
		return nil, nil
	case l.CaughtUp != "" && !keep:
		out, pt.ahead = append(out, l), nil
	}
	ahead := p.aheadOf(pt, keep)
	defer ahead.done()
	for {
		data, number, err := ahead.next()
		if data == nil || err != nil {
			return out, err
		}
		if recording.IsHeaderLine(data) {
			ahead.pass(data, number)
			return out, nil
		}
		if !bytes.Contains(data, caughtUpKey) {
			ahead.pass(data, number)
			continue
		}
		l, err := recording.ParseLine(pt.r.Name(), number, data)
		if err != nil {
			return nil, err
		}
		switch {
		case l.CaughtUp == "" || l.Mark(), l.Time.After(t):
			ahead.pass(data, number)
		default:
			out = append(out, l)
			ahead.take(number)
		}
	}
}

// lookahead reads the lines of a part past its line ahead (aheadOf).
type lookahead struct {
	// next is the next line (nil data at the end); pass is told of each
	// line not taken, take of each line taken; done ends the reading.
	next func() ([]byte, int, error)
	pass func(data []byte, number int)
	take func(number int)
	done func()
}

// aheadOf reads the lines of pt past its line ahead. keep, with a
// recording that opens again: a second reader reads them, and the lines
// taken are skipped when the part's own reader comes to them; keep
// without: the part's own reader, and the lines passed are queued to be
// read again; not keep: the part's own reader, and they are gone.
func (p *Player) aheadOf(pt *part, keep bool) lookahead {
	ahead := lookahead{
		next: func() ([]byte, int, error) { return p.readRaw(pt) },
		pass: func([]byte, int) {},
		take: func(int) {},
		done: func() {},
	}
	switch {
	case !keep:
		return ahead
	case pt.reopen == nil:
		var passed []rawLine
		ahead.pass = func(data []byte, number int) {
			passed = append(passed, rawLine{data: bytes.Clone(data), number: number})
		}
		ahead.done = func() { pt.queued = append(passed, pt.queued...) }
		return ahead
	}
	r, err := pt.reopen()
	if err != nil {
		ahead.next = func() ([]byte, int, error) { return nil, 0, err }
		return ahead
	}
	after := pt.ahead.Number
	ahead.next = func() ([]byte, int, error) {
		for {
			data, number, err := r.Next()
			var torn *recording.TornError
			switch {
			case errors.Is(err, io.EOF), errors.As(err, &torn):
				// The part's own reader warns of a torn end.
				return nil, 0, nil
			case err != nil:
				return nil, 0, err
			case number <= after || pt.skip[number]:
				continue
			}
			return data, number, nil
		}
	}
	ahead.take = func(number int) {
		if pt.skip == nil {
			pt.skip = map[int]bool{}
		}
		pt.skip[number] = true
	}
	ahead.done = func() { _ = r.Close() }
	return ahead
}

// feedCaughtUp plays lines, caught-up records returned by caughtUpBefore,
// as Play plays records: a relist's together.
func (p *Player) feedCaughtUp(ctx context.Context, lines []*recording.Line) {
	for len(lines) > 0 {
		n := 1
		for n < len(lines) && sameRelist(lines[0], lines[n]) {
			n++
		}
		p.feed(ctx, lines[:n])
		lines = lines[n:]
	}
}

// sameRelist reports whether l, a record that follows first, is of the
// same relist of the same collection: the records Play feeds together,
// as one list said them all when recorded.
func sameRelist(first, l *recording.Line) bool {
	return first.Relist() && l.Relist() && l.SameCollection(first)
}
