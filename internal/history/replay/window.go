package replay

import (
	"fmt"
	"strings"
	"time"

	"github.com/kubectl-deltas/kubectl-deltas/internal/history/recording"
)

// ParseTime reads the TIME of --at, --from and --to: RFC 3339
// (2026-11-26T10:40:00Z), a time of day in UTC on the recording's first
// day (10:40, 10:40:30), a duration after the recording's start (+5m) or
// before its end (-5m). span is what the recording covers; hasEnd says
// whether its end is known (not for standard input). flag names the flag
// in errors.
func ParseTime(flag, s string, span recording.Span, hasEnd bool) (time.Time, error) {
	s = strings.TrimSpace(s)
	switch {
	case strings.HasPrefix(s, "+"), strings.HasPrefix(s, "-"):
		d, err := time.ParseDuration(s[1:])
		if err != nil {
			return time.Time{}, fmt.Errorf("invalid %s %q: a duration after the recording's start (+5m) or before its end (-5m): %w", flag, s, err)
		}
		if s[0] == '+' {
			return span.Start.Add(d), nil
		}
		if !hasEnd {
			return time.Time{}, fmt.Errorf("invalid %s %q: the end of a recording read from standard input is not known: give a time, or a duration after its start (+5m)", flag, s)
		}
		return span.End.Add(-d), nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	for _, layout := range []string{"15:04", "15:04:05"} {
		if clock, err := time.Parse(layout, s); err == nil {
			day := span.Start.UTC()
			return time.Date(day.Year(), day.Month(), day.Day(), clock.Hour(), clock.Minute(), clock.Second(), clock.Nanosecond(), time.UTC), nil
		}
	}
	return time.Time{}, fmt.Errorf("invalid %s %q: give a time (2026-11-26T10:40:00Z, or 10:40 UTC on the recording's first day), or a duration after the recording's start (+5m) or before its end (-5m)", flag, s)
}

// SetWindow makes the replay start at from — the state of the recording
// at that time as its initial lists, stamped with that time — and end at
// to. A zero time leaves that side as recorded. Call it before Select.
func (p *Player) SetWindow(from, to time.Time) {
	p.from, p.to = from, to
}

// fastForward applies the records up to p.from to the feeds' states
// without handing anything out; next then returns the first record after
// it. A header or a Gap goes by whatever its time (the caught-up records
// after them may come before it), unless the Gap begins after p.from:
// then it is played, and warned of. The caught-up records dated up to
// p.from that lie past the line it stops at are applied too
// (caughtUpBefore), and not played again.
func (p *Player) fastForward() error {
	for {
		l := p.peek()
		switch {
		case l == nil:
			return nil
		case l.Gap != nil && l.Gap.From.After(p.from), l.Header == nil && l.Gap == nil && l.Time.After(p.from):
			caughtUp, err := p.caughtUpBefore(p.from, !p.to.Equal(p.from))
			for _, l := range caughtUp {
				p.applyBefore(l)
			}
			return err
		case l.Gap != nil:
			p.passGap(*l.Gap)
		case l.Header != nil:
		case l.Heartbeat != nil:
			p.sawHeartbeat(l)
		case l.Verdict:
			p.noteLogs(l)
		default:
			p.applyBefore(l)
		}
		if p.lastLine.Before(l.Time) {
			p.lastLine = l.Time
		}
		if _, err := p.next(); err != nil {
			return err
		}
	}
}

// applyBefore applies l, a record before the replay's start, to the
// states of the feeds it belongs to.
func (p *Player) applyBefore(l *recording.Line) {
	for _, f := range p.feedsOf(l) {
		f.saw(l)
		if l.Type != recording.SyncType {
			f.apply(l, p.selects(l.Object))
		}
	}
}

// warnInGap warns when the replay starts inside a gap: the state then is
// not known for sure.
func (p *Player) warnInGap() {
	for _, g := range p.gaps {
		if !p.from.Before(g.From) && p.from.Before(g.To) {
			fmt.Fprintf(p.warn, "warning: %s is inside a gap of the recording, from %s to %s, when its recorder was not running: the state shown is not known for sure (what was recorded before, and the changes caught up after the gap that their objects date before %s)\n",
				gapTime(p.from), gapTime(g.From), gapTime(g.To), gapTime(p.from))
		}
	}
}

// peek is the line next would return, left in place.
func (p *Player) peek() *recording.Line {
	if first := p.earliest(); first != nil {
		return first.ahead
	}
	return nil
}

// Window is where a replay looks in its recordings: the state at At, or
// the part From to To, each as ParseTime reads it; all empty for the
// whole recording.
type Window struct {
	At, From, To string
	// kept, when a recording directory lost its oldest segments, says
	// what it keeps, for a time outside it.
	kept string
}

// Looking reports whether a window of the recording is asked for.
func (f Window) Looking() bool { return f.At != "" || f.From != "" || f.To != "" }

// Times reads --at, --from and --to against the recording's span
// (hasEnd: its end is known): the times the replay starts and stops at,
// zero for as recorded. A time outside the span is an error saying it.
func (f Window) Times(span recording.Span, hasEnd bool) (from, to time.Time, err error) {
	parse := func(flag, s string) (time.Time, error) {
		if s == "" {
			return time.Time{}, nil
		}
		t, err := ParseTime(flag, s, span, hasEnd)
		if err != nil {
			return t, err
		}
		switch {
		case t.Before(span.Start) && f.kept != "":
			return t, fmt.Errorf("%s %s is before what the recording keeps: it spans %s; %s", flag, t.UTC().Format(time.RFC3339Nano), spanText(span, hasEnd), f.kept)
		case t.Before(span.Start):
			return t, fmt.Errorf("%s %s is before the recording's start: it spans %s", flag, t.UTC().Format(time.RFC3339Nano), spanText(span, hasEnd))
		case hasEnd && t.After(span.End):
			return t, fmt.Errorf("%s %s is after the recording's end: it spans %s", flag, t.UTC().Format(time.RFC3339Nano), spanText(span, hasEnd))
		}
		return t, nil
	}
	if f.At != "" {
		at, err := parse("--at", f.At)
		return at, at, err
	}
	if from, err = parse("--from", f.From); err != nil {
		return from, to, err
	}
	if to, err = parse("--to", f.To); err != nil {
		return from, to, err
	}
	if !from.IsZero() && !to.IsZero() && to.Before(from) {
		return from, to, fmt.Errorf("--to %s is before --from %s", to.UTC().Format(time.RFC3339Nano), from.UTC().Format(time.RFC3339Nano))
	}
	return from, to, nil
}

// spanText is a span as errors say it.
func spanText(span recording.Span, hasEnd bool) string {
	if !hasEnd {
		return "from " + span.Start.UTC().Format(time.RFC3339Nano) + " (its end is not known on standard input)"
	}
	return span.String()
}
