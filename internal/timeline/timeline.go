// Package timeline draws a stream as one self-contained HTML page
// (--timeline=FILE.html): a time axis, one lane per object nested as the
// ownership tree nests, each lane coloured by the object's health over
// time, a mark for every delta and every Event about the object, the diff
// and the manager of each change on a click.
//
// A Timeline is handed the records the stream shows (Observe), each filled
// by its own record stage so that it carries health and changes whatever
// the run prints. Write renders the page: the data as one JSON document in
// the page's script element, the page's HTML, CSS and JavaScript inline
// (page.html, embedded), nothing fetched from anywhere. The file is
// replaced atomically (a temporary file in its directory, renamed), so
// that it can be opened, and reloaded, while the run goes on (Refresh).
//
// The page's data-* attributes are a contract for tests and scripts: see
// page.html and docs/timeline.md.
package timeline

import (
	"bytes"
	"encoding/json"
	"hash/maphash"
	"io"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/kubectl-deltas/kubectl-deltas/internal/diff"
	"github.com/kubectl-deltas/kubectl-deltas/internal/health"
	"github.com/kubectl-deltas/kubectl-deltas/internal/printer"
	"github.com/kubectl-deltas/kubectl-deltas/internal/rawobj"
	"github.com/kubectl-deltas/kubectl-deltas/internal/stage"
)

// Version is the version of the page's data document ("v"): 2 since a
// mark's changes may be its members that differ ("x"), for the page to
// make the operations of; 3 since they may be its two versions, as a
// patch of the one before ("p", "pb"); 4 since the version before may be
// a span of the page's bases element instead ("pr").
const Version = 4

// maxValueLen bounds a value in a change's text, in runes: longer than a
// terminal line's (the page wraps), short enough that a ConfigMap's
// payload does not fill it.
const maxValueLen = 240

// Timeline collects what a page shows. Observe is called from the sink's
// goroutine, Write from any; mu guards everything below it.
type Timeline struct {
	path    string
	command string
	now     func() time.Time

	// writing serializes Writes (the refresh's and the last): each uses
	// buf, and renames its own file over the page. Taken before mu.
	writing sync.Mutex

	mu sync.Mutex
	// lanes are the objects seen, in the order first seen; byUID finds an
	// object's lane by context and UID, byName the lanes made without a
	// UID by context, kind, namespace and name (byNameOnly).
	lanes  []*lane
	byUID  uidIndex
	byName map[nameKey]int
	// start and end are the times of the first and last record (zero
	// before any).
	start, end time.Time
	contexts   []string
	// gaps are the times the recording does not cover (NoteGap).
	gaps [][2]int64
	// judge re-judges the objects whose verdict changes with time alone.
	judge *health.Judge
	// unsettled are the lanes with marks waiting for their changes,
	// pending how many marks wait (settle), pendingBytes about how much
	// of the objects' JSON their changes keep.
	unsettled    []*lane
	pending      int
	pendingBytes int
	// attrs encodes the members marks repeat (appendMark).
	attrs markAttrs
	// raw holds a mark's raw changes until it is encoded (changesOf).
	raw []byte
	// hunks and patchBuf are a mark's patch while it is made and encoded
	// (patch); seed hashes the versions lanes know (versionHash).
	hunks    []hunk
	patchBuf []byte
	seed     maphash.Seed
	// maxBase is maxBaseBytes (tests raise it).
	maxBase int
	// bases are the versions chains of patches start from that the page
	// holds as written (mark.BaseAt, appendBase), one after the other:
	// the text of the page's bases element. A Write's snapshot of its
	// chunks stays what it was, and a long run never copies them to grow.
	bases chunkLog
	// laneArena, text and heads hold the lanes, their names and their
	// encoded heads (arena.go).
	laneArena laneArena
	text      textArena
	heads     chunkLog
	// log holds the lanes' encoded marks (lane.marks).
	log chunkLog
	// buf holds the data document while it is encoded and written, a
	// part at a time (flushSize), reused for the next; Write holds writing
	// while it uses it.
	buf []byte
	// dirty: something was observed since the last Write.
	dirty bool
	// created: the file did not exist before the run (ToTimeline);
	// begun: the stream started (Begin). A page created for a run that
	// never began is removed on Close.
	created, begun bool
}

type uidKey struct{ context, uid string }

// uidIndex finds a lane by context and UID. A UID is unique within a
// cluster and, but for one cluster's objects copied into another, across
// clusters: lanes are found by UID alone, in a map keyed by a string (Go's
// fast kind), and by context too only for a UID seen in a second context.
type uidIndex struct {
	byUID map[string]uidEntry
	// other are the lanes of a UID byUID has in another context.
	other map[uidKey]int
}

// uidEntry is a lane's index and context.
type uidEntry struct {
	lane    int
	context string
}

// get is the index of the lane of UID uid in context.
func (x *uidIndex) get(context, uid string) (int, bool) {
	e, ok := x.byUID[uid]
	if ok && e.context == context {
		return e.lane, true
	}
	if !ok || x.other == nil {
		return 0, false
	}
	i, ok := x.other[uidKey{context, uid}]
	return i, ok
}

// set makes i the lane of UID uid in context; the strings are kept.
func (x *uidIndex) set(context, uid string, i int) {
	if e, ok := x.byUID[uid]; !ok || e.context == context {
		x.byUID[uid] = uidEntry{lane: i, context: context}
		return
	}
	if x.other == nil {
		x.other = map[uidKey]int{}
	}
	x.other[uidKey{context, uid}] = i
}

type nameKey struct{ context, kind, namespace, name string }

// lane is one object's row: its identity, its owner, what happened to it.
type lane struct {
	// names are its context, apiVersion, kind, namespace, name and UID
	// (the page's ctx, av, kind, ns, name and uid), one after the other
	// in one string (setNames), the i-th ending at ends[i]:
	// one pointer for the collector to follow in every lane, not six.
	names  string
	ends   [laneNames]uint32
	Parent int `json:"parent"`
	// head is where its identity (context to UID), as the page's data
	// holds it, lies in the Timeline's heads: encoded when first written;
	// empty (end 0) until then, and when the UID is learnt.
	head logSpan
	// marks are where its deltas lie in the Timeline's mark log, each
	// encoded as the page's data holds it (appendMark) when observed,
	// joined by commas: a page written again and again while the run
	// goes on encodes each mark once, and the collector sees a few chunks
	// rather than a mark's strings, or a buffer per lane.
	marks []logSpan
	// pending are its marks waiting for their changes (settle), after
	// those in marks.
	pending []pendingMark
	// markHealth is the health of its latest mark that had one, at
	// markHealthAt (hasMarkHealth: some mark had one).
	markHealth    [3]string
	markHealthAt  int64
	hasMarkHealth bool
	Events        []event `json:"events"`
	// Health are the changes of its health that came with time alone, not
	// with a delta (an unschedulable Pod fails ScheduleWindow after its
	// creation): [time, status, reason, message] each.
	Health [][4]any `json:"health,omitempty"`
	// ownerUID is the UID of its controller (or first) owner, resolved to
	// Parent when the page is written: the owner may come later.
	ownerUID string
	// known is the version the page makes from the lane's latest mark
	// with a patch ("p", see patch), as its length and hash (versionHash):
	// the next change whose version before is those bytes is patched
	// against it without the text again ("pb"). Its bytes are not kept: a
	// replay keeps no object of its own after printing it. hasKnown is
	// false when there is none.
	known    versionHash
	hasKnown bool
	// recheck, when not nil, is the object as of its last delta, whose
	// verdict changes at recheckAt unless another delta comes first.
	recheck   *rawobj.Object
	recheckAt time.Time
	// logs, when not nil, are the last lines of its failing container's
	// log that the verdict read (NoteLogs).
	logs *printer.VerdictLogs
}

// mark is one delta of a lane (see page.html for the keys).
type mark struct {
	Time      int64       `json:"t"`
	Type      string      `json:"d"`
	Initial   bool        `json:"i,omitempty"`
	Manager   string      `json:"by,omitempty"`
	Operation string      `json:"op,omitempty"`
	Health    string      `json:"h,omitempty"`
	Reason    string      `json:"hr,omitempty"`
	Message   string      `json:"hm,omitempty"`
	Changes   [][2]string `json:"c,omitempty"`
	// Raw are its changes as the page's script computes them when the
	// mark is looked at (stage.Changes.AppendRaw), in place of Changes:
	// the JSON text of the members that differ, written as a string.
	Raw rawText `json:"x,omitempty"`
	// Patch are, in place of Changes and Raw, the hunks that make the
	// object's version after the change from the version before
	// (appendHunks, JSON); Base is the text of the version before, when
	// the page cannot make it from the lane's previous mark with a Patch.
	// The page diffs the two versions when the mark is looked at.
	Patch json.RawMessage `json:"p,omitempty"`
	Base  rawText         `json:"pb,omitempty"`
	// BaseAt is, in place of Base, where the text of the version before
	// lies in the page's bases element: [offset, length] (see patch).
	BaseAt  []int `json:"pr,omitempty"`
	Unknown bool  `json:"u,omitempty"`
}

// rawText is JSON text the page holds as a string (mark.Raw).
type rawText []byte

// MarshalJSON writes r as a JSON string, as appendMark does.
func (r rawText) MarshalJSON() ([]byte, error) { return rawobj.AppendStringBytes(nil, r), nil }

// UnmarshalJSON reads the JSON string MarshalJSON writes.
func (r *rawText) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return err
	}
	*r = rawText(s)
	return nil
}

// event is one Event about a lane's object.
type event struct {
	Time    int64  `json:"t"`
	Type    string `json:"type"`
	Reason  string `json:"reason"`
	Message string `json:"msg"`
	Count   int    `json:"n"`
}

// document is the page's data.
type document struct {
	Version   int      `json:"v"`
	Title     string   `json:"title"`
	Command   string   `json:"command"`
	Generated string   `json:"generated"`
	Live      bool     `json:"live"`
	Start     int64    `json:"start"`
	End       int64    `json:"end"`
	Contexts  []string `json:"contexts"`
	Lanes     []*lane  `json:"lanes"`
	// log holds the lanes' marks.
	log *chunkLog
	// Gaps are the times the recording does not cover, [from, to] in
	// Unix milliseconds (NoteGap).
	Gaps [][2]int64 `json:"gaps,omitempty"`
}

// New returns an empty Timeline that writes path. command is the command
// line the page names; now is the stream's clock (nil: time.Now), where a
// page written mid-run ends.
func New(path, command string, now func() time.Time) *Timeline {
	if now == nil {
		now = time.Now
	}
	return &Timeline{path: path, command: command, now: now, byUID: uidIndex{byUID: map[string]uidEntry{}}, byName: map[nameKey]int{}, seed: maphash.MakeSeed(), maxBase: maxBaseBytes}
}

// NoteGap has the page draw a time the recording does not cover, from
// to to: its recorder was not running (a recording's Gap). Safe from any
// goroutine.
func (t *Timeline) NoteGap(from, to time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	g := [2]int64{from.UnixMilli(), to.UnixMilli()}
	if !slices.Contains(t.gaps, g) {
		t.gaps = append(t.gaps, g)
		t.dirty = true
	}
}

// NoteLogs gives the lane of the object uid in the cluster of context the
// last lines of its failing container's log, as the verdict that ended
// the run read them; an object the page has no lane of is passed over.
// Safe from any goroutine.
func (t *Timeline) NoteLogs(context, uid string, logs printer.VerdictLogs) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if i, ok := t.byUID.get(context, uid); ok {
		t.lanes[i].logs = &logs
		t.dirty = true
	}
}

// Path is the page's file.
func (t *Timeline) Path() string { return t.path }

// Observe adds a record the stream shows: a delta of obj (nil for a
// deletion without a final state) or, for an Event record, an Event about
// its subject. rec must carry health where it applies, and its changes
// unless changes computes them: then they are computed with those of
// other marks, at the next write or once maxPending wait (settle), in one
// go rather than one by one as the stream trickles in.
func (t *Timeline) Observe(rec *printer.Record, obj *rawobj.Object, changes stage.Changes) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.start.IsZero() || rec.Time.Before(t.start) {
		t.start = rec.Time
	}
	if rec.Time.After(t.end) {
		t.end = rec.Time
	}
	if rec.Context != "" && !slices.Contains(t.contexts, rec.Context) {
		t.contexts = append(t.contexts, rec.Context)
	}
	t.dirty = true
	if rec.Event != nil {
		t.observeEvent(rec)
		return
	}
	l := t.laneOf(rec.Context, rec.APIVersion, rec.Kind, rec.Namespace, rec.Name, rec.UID)
	// What time alone changed of its health before this delta came.
	t.rejudge(l, rec.Time)
	if obj != nil {
		if owner := obj.OwnerUID(); owner != "" {
			l.ownerUID = owner
		}
	}
	m := mark{
		Time: rec.Time.UnixMilli(), Type: rec.Type, Initial: rec.Initial,
		Manager: rec.Manager, Operation: rec.Operation, Unknown: rec.FinalStateUnknown,
	}
	l.recheck = nil
	if h := rec.Health; h != nil && h.Status != "NotFound" {
		m.Health, m.Reason, m.Message = h.Status, h.Reason, h.Message
		if !h.RecheckAt.IsZero() && obj != nil {
			l.recheck, l.recheckAt = obj, h.RecheckAt
		}
	}
	if len(rec.Changes) > 0 {
		m.Changes = changesOf(rec.Changes)
	}
	if !changes.IsZero() {
		if old, now, ok := changes.Versions(); ok && t.patch(l, &m, old, now) {
			changes = stage.Changes{}
			if len(l.pending) > 0 {
				m.Patch = bytes.Clone(m.Patch) // t.patchBuf is reused
			}
		} else {
			l.hasKnown = false
		}
	}
	if rec.Type == "Deleted" {
		l.hasKnown = false
	}
	if changes.IsZero() && len(l.pending) == 0 {
		l.addMark(&m, &t.attrs, &t.log)
		return
	}
	// After the marks waiting for their changes, in order.
	l.noteHealth(&m)
	if len(l.pending) == 0 {
		t.unsettled = append(t.unsettled, l)
	}
	l.pending = append(l.pending, pendingMark{mark: m, changes: changes})
	if obj != nil {
		t.pendingBytes += 2 * len(obj.JSON) // the object and, about, the one before it
	}
	if t.pending++; t.pending >= maxPending || t.pendingBytes >= maxPendingBytes {
		t.settle()
	}
}

// maxPending and maxPendingBytes bound the marks waiting for their
// changes (settle) and the objects they keep: few, however long a replay
// and however large its objects.
const (
	maxPending      = 4096
	maxPendingBytes = 16 << 20
)

// pendingMark is a mark whose changes are computed when it is settled.
type pendingMark struct {
	mark    mark
	changes stage.Changes
}

// settle computes the changes of the marks waiting for them and adds
// them to their lanes' marks, in order.
func (t *Timeline) settle() {
	for _, l := range t.unsettled {
		for i := range l.pending {
			p := &l.pending[i]
			if !p.changes.IsZero() {
				t.setChanges(&p.mark, p.changes)
			}
			l.encodeMark(&p.mark, &t.attrs, &t.log)
			p.mark.Raw = nil
		}
		clear(l.pending) // let go of the objects
		l.pending = l.pending[:0]
	}
	clear(t.unsettled)
	t.unsettled, t.pending, t.pendingBytes = t.unsettled[:0], 0, 0
}

// setChanges gives m the changes it shows: the members that differ, raw,
// for the page's script to make its operations of when the mark is looked
// at, or, where only the Go diff can say (a Secret, an ignored path within
// a member), its operations. m.Raw is t.raw's memory, until the next call.
func (t *Timeline) setChanges(m *mark, changes stage.Changes) {
	raw, ok, err := changes.AppendRaw(t.raw[:0])
	if err == nil && ok {
		t.raw, m.Raw = raw, raw
		return
	}
	if err == nil {
		var ops []diff.Operation
		if ops, err = changes.Operations(); err == nil && len(ops) > 0 {
			m.Changes = changesOf(ops)
		}
	}
	if err != nil {
		m.Changes = [][2]string{{"error", "the changes could not be computed: " + err.Error()}}
	}
}

// patch gives m its change as the page diffs it: the hunks that make the
// version after (now) from the version before (old), and the text of the
// version before unless the page makes it from l's previous mark with a
// patch (as written, in the page's bases element, when it can lie in a
// script element as it is; else as a JSON string); and reports whether
// it could: the versions are ASCII (the page counts offsets in UTF-16
// units), the hunks few (maxPatchBytes), and the version before, when it
// must be written, small (maxBaseBytes). Two
// versions alike leave m without changes. m.Patch is t.patchBuf's memory,
// until the next call.
//
// A patch costs a comparison of the two versions' bytes, a word at a
// time, where the members that differ ("x") cost a walk of both; it is
// made for the changes of a type whose diff ignores no more than the
// paths every diff does (stage.Changes.Versions).
func (t *Timeline) patch(l *lane, m *mark, old, now []byte) bool {
	chained := l.hasKnown && l.known == t.hashOf(old)
	// asIs: the version before, unless chained, goes in the bases as
	// written (it is ASCII then too).
	asIs := !chained && len(old) <= t.maxBase && isScriptText(old)
	if !chained && !asIs && (len(old) > t.maxBase || !isASCII(old)) {
		return false
	}
	hunks, ok := diffBytes(t.hunks[:0], old, now)
	for _, h := range hunks {
		ok = ok && isASCII(h.ins)
	}
	if ok && len(hunks) > 0 {
		t.patchBuf = appendHunks(t.patchBuf[:0], hunks)
		m.Patch = t.patchBuf
		switch {
		case chained:
		case asIs:
			// As written, in the bases element: no escaping here, no
			// unescaping in the browser.
			m.BaseAt = []int{t.appendBase(old), len(old)}
		default:
			m.Base = old
		}
	}
	clear(hunks) // let go of now's bytes
	t.hunks = hunks[:0]
	if ok {
		l.known, l.hasKnown = t.hashOf(now), true
	}
	return ok
}

// versionHash identifies a version of an object by its JSON's length and
// 64-bit hash: two versions alike by both and yet different are a chance
// of one in 2^64 per change compared.
type versionHash struct {
	len  int
	hash uint64
}

// hashOf is version's versionHash, with t's seed.
func (t *Timeline) hashOf(version []byte) versionHash {
	return versionHash{len: len(version), hash: maphash.Bytes(t.seed, version)}
}

// addMark adds m to l's marks in log, its members encoded with attrs'.
func (l *lane) addMark(m *mark, attrs *markAttrs, log *chunkLog) {
	l.noteHealth(m)
	l.encodeMark(m, attrs, log)
}

// noteHealth keeps m's health as l's latest mark's, if it has one.
func (l *lane) noteHealth(m *mark) {
	if m.Health != "" {
		l.markHealth, l.markHealthAt, l.hasMarkHealth = [3]string{m.Health, m.Reason, m.Message}, m.Time, true
	}
}

// encodeMark appends m to log (appendMark) as l's latest mark: the span
// of l's marks grows when its last one ends where m begins, else m gets
// a span of its own.
func (l *lane) encodeMark(m *mark, attrs *markAttrs, log *chunkLog) {
	first := len(l.marks) == 0
	span := log.add(func(b []byte) []byte {
		if !first {
			b = append(b, ',')
		}
		return appendMark(b, m, attrs)
	})
	if n := len(l.marks); n > 0 && l.marks[n-1].chunk == span.chunk && l.marks[n-1].end == span.start {
		l.marks[n-1].end = span.end
		return
	}
	l.marks = append(l.marks, span)
}

// ObserveHidden takes a record the stream did not show (its filters kept
// it out): of an object that has a lane, a change of its health is still
// one, drawn on its band; nothing else of it is drawn.
func (t *Timeline) ObserveHidden(rec *printer.Record, obj *rawobj.Object) {
	if rec.Event != nil || rec.UID == "" || rec.Health == nil || rec.Health.Status == "NotFound" {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	i, ok := t.byUID.get(rec.Context, rec.UID)
	if !ok {
		return
	}
	l := t.lanes[i]
	t.rejudge(l, rec.Time)
	h := rec.Health
	if status, reason, message := l.lastHealth(); status == h.Status && reason == h.Reason && message == h.Message {
		return
	}
	l.Health = append(l.Health, [4]any{rec.Time.UnixMilli(), h.Status, h.Reason, h.Message})
	l.recheck = nil
	if !h.RecheckAt.IsZero() && obj != nil {
		l.recheck, l.recheckAt = obj, h.RecheckAt
	}
	if rec.Time.After(t.end) {
		t.end = rec.Time
	}
	t.dirty = true
}

// lastHealth is the latest health drawn on l: of its last mark that has
// one, or of a later change that came without a shown delta.
func (l *lane) lastHealth() (status, reason, message string) {
	var at int64 = -1 << 62
	if l.hasMarkHealth {
		status, reason, message, at = l.markHealth[0], l.markHealth[1], l.markHealth[2], l.markHealthAt
	}
	if n := len(l.Health); n > 0 {
		if h := l.Health[n-1]; h[0].(int64) >= at {
			status, _ = h[1].(string)
			reason, _ = h[2].(string)
			message, _ = h[3].(string)
		}
	}
	return status, reason, message
}

// observeEvent adds an Event record to its subject's lane.
func (t *Timeline) observeEvent(rec *printer.Record) {
	e := rec.Event
	if e.Kind == "" && e.Name == "" {
		return // an Event about nothing a lane can show
	}
	if rec.Type == "Deleted" {
		return // an Event expiring is not something that happened to its subject
	}
	l := t.laneOf(rec.Context, e.APIVersion, e.Kind, e.Namespace, e.Name, e.UID)
	l.Events = append(l.Events, event{Time: rec.Time.UnixMilli(), Type: e.Type, Reason: e.Reason, Message: e.Message, Count: e.Count})
}

// laneOf is the lane of an object, made when first seen: found by UID,
// or, without one, by name (the latest lane of that name).
func (t *Timeline) laneOf(context, apiVersion, kind, namespace, name, uid string) *lane {
	if uid != "" {
		if i, ok := t.byUID.get(context, uid); ok {
			return t.lanes[i]
		}
		// The lane of an Event's subject made before the subject was
		// seen, without a UID: the subject's now.
		if len(t.byName) > 0 {
			nk := nameKey{context: context, kind: kind, namespace: namespace, name: name}
			if i, ok := t.byName[nk]; ok && t.lanes[i].UID() == "" {
				delete(t.byName, nk)
				l := t.lanes[i]
				l.setNames(&t.text, l.Context(), l.APIVersion(), l.Kind(), l.Namespace(), l.Name(), uid)
				l.head = logSpan{}
				t.byUID.set(l.Context(), l.UID(), i)
				return l
			}
		}
	} else if i := t.byNameOnly(context, kind, namespace, name); i >= 0 {
		return t.lanes[i]
	}
	l := t.newLane(context, apiVersion, kind, namespace, name, uid)
	t.lanes = append(t.lanes, l)
	i := len(t.lanes) - 1
	if uid != "" {
		t.byUID.set(l.Context(), l.UID(), i)
	} else {
		t.byName[nameKey{context: l.Context(), kind: l.Kind(), namespace: l.Namespace(), name: l.Name()}] = i
	}
	return l
}

// newLane is the lane of an object so named, carved from t's arenas.
func (t *Timeline) newLane(context, apiVersion, kind, namespace, name, uid string) *lane {
	l := t.laneArena.alloc()
	l.Parent = -1
	l.setNames(&t.text, context, apiVersion, kind, namespace, name, uid)
	return l
}

// laneNames is how many names a lane has (lane.names).
const laneNames = 6

// setNames makes l's names these, copied into text: they may lie in the
// JSON of the object's first version, which the lane would otherwise keep
// for the whole run.
func (l *lane) setNames(text *textArena, context, apiVersion, kind, namespace, name, uid string) {
	names := [laneNames]string{context, apiVersion, kind, namespace, name, uid}
	l.names = text.join(names[:], l.ends[:])
}

// nameAt is l's i-th name (lane.names).
func (l *lane) nameAt(i int) string {
	start := uint32(0)
	if i > 0 {
		start = l.ends[i-1]
	}
	return l.names[start:l.ends[i]]
}

// Context, APIVersion, Kind, Namespace, Name and UID are l's names.
func (l *lane) Context() string    { return l.nameAt(0) }
func (l *lane) APIVersion() string { return l.nameAt(1) }
func (l *lane) Kind() string       { return l.nameAt(2) }
func (l *lane) Namespace() string  { return l.nameAt(3) }
func (l *lane) Name() string       { return l.nameAt(4) }
func (l *lane) UID() string        { return l.nameAt(5) }

// byNameOnly is the index of the latest lane of an object known by name
// only (a deletion without a final state, an Event naming no UID), -1 for
// none: rare, so the lanes with a UID are searched from the latest back
// rather than indexed by name.
func (t *Timeline) byNameOnly(context, kind, namespace, name string) int {
	if i, ok := t.byName[nameKey{context: context, kind: kind, namespace: namespace, name: name}]; ok {
		return i
	}
	for i := len(t.lanes) - 1; i >= 0; i-- {
		if l := t.lanes[i]; l.Name() == name && l.Namespace() == namespace && l.Kind() == kind && l.Context() == context {
			return i
		}
	}
	return -1
}

// rejudge adds to l the change of health that came with time alone by now,
// if any: its verdict at recheckAt.
func (t *Timeline) rejudge(l *lane, now time.Time) {
	for l.recheck != nil && !now.Before(l.recheckAt) {
		if t.judge == nil {
			t.judge = health.NewJudge()
		}
		at := l.recheckAt
		h := t.judge.At(l.recheck, at)
		l.Health = append(l.Health, [4]any{at.UnixMilli(), string(h.Status), h.Reason, h.Message})
		if h.RecheckAt.After(at) {
			l.recheckAt = h.RecheckAt
		} else {
			l.recheck = nil
		}
	}
}

// Begin marks the start of the stream: from now on, Close leaves a page,
// empty or not.
func (t *Timeline) Begin() {
	t.mu.Lock()
	t.begun = true
	t.mu.Unlock()
}

// Close writes the page of the ended stream; a page the run created and
// never began (it failed before watching anything) is removed instead.
func (t *Timeline) Close() error {
	t.mu.Lock()
	begun, created := t.begun, t.created
	t.mu.Unlock()
	if !begun && created {
		_ = os.Remove(t.path)
		return nil
	}
	return t.Write(false)
}

// Dirty reports whether something was observed since the last Write.
func (t *Timeline) Dirty() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.dirty
}

// writeData writes the page's JSON document to w as it encodes it: live
// when the stream goes on. Observe waits meanwhile. It returns the chunks
// of the bases the document's marks refer to ("pr"), to be written after
// it, in order: bytes that later Observes leave as they are.
func (t *Timeline) writeData(w io.Writer, live bool) ([][]byte, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.dirty = false
	t.settle()
	doc := document{
		Version: Version, Title: "kubectl deltas", Command: t.command,
		Generated: time.Now().UTC().Format(time.RFC3339Nano), Live: live,
		Contexts: t.contexts, Lanes: t.lanes, Gaps: t.gaps, log: &t.log,
	}
	if doc.Contexts == nil {
		doc.Contexts = []string{}
	}
	if doc.Lanes == nil {
		doc.Lanes = []*lane{}
	}
	if !t.start.IsZero() {
		doc.Start, doc.End = t.start.UnixMilli(), t.end.UnixMilli()
		if now := t.now(); now.After(t.end) {
			doc.End = now.UnixMilli() // the stream went on after its last record
		}
	}
	now := t.now()
	for _, l := range t.lanes {
		t.rejudge(l, now)
		l.Parent = -1
		if l.ownerUID == "" {
			continue
		}
		if i, ok := t.byUID.get(l.Context(), l.ownerUID); ok && t.lanes[i] != l {
			l.Parent = i
		}
	}
	breakCycles(t.lanes)
	flush := func(b []byte) ([]byte, error) {
		_, err := w.Write(b)
		return b[:0], err
	}
	b, err := encodeDocument(t.buf[:0], &doc, &t.heads, flush)
	if err == nil {
		_, err = flush(b)
	}
	t.buf = b[:0]
	return slices.Clone(t.bases.chunks), err
}

// appendBase appends text to t.bases and returns its offset in the text
// of the page's bases element: the bytes appended before it.
func (t *Timeline) appendBase(text []byte) int {
	at := t.bases.size
	t.bases.add(func(b []byte) []byte { return append(b, text...) })
	return at
}

// breakCycles cuts any owner chain that loops (ownerReferences a server
// would refuse, but a recording may hold anything): the page nests by
// Parent and must reach a root.
func breakCycles(lanes []*lane) {
	state := make([]uint8, len(lanes)) // 0 unseen, 1 on the current path, 2 done
	var path []int
	for i := range lanes {
		path = path[:0]
		j := i
		for j >= 0 && state[j] == 0 {
			state[j] = 1
			path = append(path, j)
			j = lanes[j].Parent
		}
		if j >= 0 && state[j] == 1 {
			lanes[j].Parent = -1 // j's chain comes back to j
		}
		for _, k := range path {
			state[k] = 2
		}
	}
}

// changesOf are the changes of a record as the page shows them.
func changesOf(ops []diff.Operation) [][2]string {
	out := make([][2]string, len(ops))
	for i := range ops {
		out[i] = [2]string{string(ops[i].Op), ops[i].Text(maxValueLen)}
	}
	return out
}
