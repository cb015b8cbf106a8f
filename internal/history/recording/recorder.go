package recording

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-deltas/kubectl-deltas/internal/cache"
	"github.com/kubectl-deltas/kubectl-deltas/internal/informer"
	"github.com/kubectl-deltas/kubectl-deltas/internal/printer"
	"github.com/kubectl-deltas/kubectl-deltas/internal/rawobj"
	"github.com/kubectl-deltas/kubectl-deltas/internal/tree"
)

// headerCollectionOf describes t for a recording's header.
func headerCollectionOf(t informer.Target) Collection {
	return Collection{
		Context: t.Context, APIVersion: t.Kind.GroupVersion().String(), Kind: t.Kind.Kind,
		Resource: t.Resource.Resource, Namespace: t.Namespace, Name: t.Name, Role: t.Role.String(),
		FieldSelector: t.FieldSelector,
	}
}

// Recorder writes the record of every delta a Sink is handed to a
// recording (--record), whatever the printed stream keeps of it: the
// delta types, the initial list, --where and --changed-only filter what is
// printed, not what is recorded, so that a replay can apply any of them
// later. A record carries what the run computes (health, owners, changes
// with --diff, context); Secrets are redacted unless --show-secret-data.
// Relisted objects that did not change are left out: they change nothing.
// It is used from the Sink's goroutine only.
type Recorder struct {
	fill Filler
	w    *Writer
	name string
	// lock is held from before the recording was read until Close: one
	// writer per recording.
	lock *Lock
	// end, when the recording goes on, is where it had stopped.
	end *End
	// created: the file did not exist before. begun: the header is
	// written. A recording created and never begun is removed on Close
	// (the run ended before it watched anything).
	created, begun bool
	rec            printer.Record
	buf            []byte
	// positions, if set, say where the run's collections stand for each
	// Heartbeat (the engine's Positions).
	positions func() []informer.Position
	// gap, when the recording goes on, is the time nothing recorded: from
	// its last line to this run's header. caughtUpUntil is, by collection
	// and key, the time of the last caught-up record of an object: an
	// object's records never go back in time (its changes' own times are
	// in seconds). Those of different objects come in the order their
	// watches bring them, each at its own time: a replay plays a run's
	// caught-up records in the order of their times.
	gap           *Gap
	caughtUpUntil map[string]time.Time
	// dir is set when the recording is a directory (--record=DIR/): its
	// segments, index and state (for checkpoints). nil for one file.
	dir *dirRecording
	// header is the run's header (Begin); targets, if set, are what the
	// engine watches now (a segment's header says them).
	header  Header
	targets func() []informer.Target
	// servers are the API servers the run watches (Watches), for its
	// header.
	servers []APIServer
}

// Filler fills the record of a delta of an informer watching t popped
// at now, and says whether to keep it (the record stage's Fill).
type Filler interface {
	Fill(rec *printer.Record, t informer.Target, it *informer.Item, now time.Time) (bool, error)
}

// End is where a recording ended, to go on from: read by the replay
// (replay.ReadEnd), which plays the recording through to know the state
// each collection ends in.
type End struct {
	// Recorded are the collections it recorded (its roots); Resumes, by
	// their IDs, the state each collection whose records are its whole
	// state (the roots, the Events) ends in, and its position.
	Recorded []informer.Target
	Resumes  map[string]informer.Resumed
	// Targets are, by their IDs, the collections of Resumes.
	Targets map[string]informer.Target
	// Members are, for a recording made with --tree, the objects its
	// roots owned as it ended (not the roots), each with the collection
	// it was recorded in (of role owned): a run that goes on finds them
	// anew (tree.New).
	Members []tree.Member
	// Servers are the API servers the newest header says were watched
	// (none in a recording made before they were noted).
	Servers []APIServer
	// Tree and Events: it was recorded with --tree (its header names
	// scouts or owned types), with --events (Events collections).
	Tree, Events bool
	// LabelSelector and FieldSelector are the newest header's.
	LabelSelector, FieldSelector string
	// Last is the time of its last line: the recorder was alive then.
	Last time.Time
	// Torn: the recording ends inside a line or a frame.
	Torn bool
}

// GoesOn reports whether name holds something a recorder would go on with
// rather than create: a regular file that is not empty.
func GoesOn(name string) bool {
	st, err := os.Stat(name)
	return err == nil && st.Mode().IsRegular() && st.Size() > 0
}

// NewRecorder creates the recording name (end nil) or goes on with it from
// end, where it stopped (GoesOn): the run's part is appended, and each
// collection it recorded resumes from there (Resume); a recording that
// ends torn is cut back to its last whole part first, with a warning on
// warn. lock is the recording's (LockRecording), taken before end was
// read; the Recorder keeps it until Close, and releases it at once when
// it fails here. fill fills each record. The Recorder writes nothing
// until Begin.
func NewRecorder(name string, lock *Lock, end *End, fill Filler, warn io.Writer) (*Recorder, error) {
	var w *Writer
	var err error
	if end != nil {
		w, err = resume(name, end, warn)
	} else {
		w, err = Create(name)
	}
	if err != nil {
		_ = lock.Unlock()
		return nil, fmt.Errorf("--record: %w", err)
	}
	return &Recorder{fill: fill, w: w, name: name, lock: lock, end: end, created: lock != nil && lock.Created}, nil
}

// resume opens the recording name to go on with it from end.
func resume(name string, end *End, warn io.Writer) (*Writer, error) {
	if end.Torn {
		cut, err := CutTorn(name)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(warn, "warning: --record: %s ended torn (its recorder was killed while writing): cut off its last %d bytes, the recording goes on from its last whole record\n", name, cut)
	}
	return Append(name)
}

// Resume is the engine's Config.Resume when the recording goes on: the
// state a recorded collection (a root, the Events) ends in, and its
// position — the newest Heartbeat's — from which its watch goes on;
// without one (a recording made before Heartbeats, or a relist after the
// last), the collection relists, and the relist says what changed. The
// collections of --tree's scouts and owned types list as usual.
func (r *Recorder) Resume(t informer.Target) (informer.Resumed, bool) {
	if r.end == nil {
		return informer.Resumed{}, false
	}
	res, ok := r.end.Resumes[t.ID()]
	return res, ok
}

// Members are the objects the roots of the recording this run goes on
// with owned as it ended (End.Members), for its tree; nil for a new
// recording, or no recorder.
func (r *Recorder) Members() []tree.Member {
	if r == nil || r.end == nil {
		return nil
	}
	return r.end.Members
}

// Begin writes the header of the run's part of the recording: now, the
// build's version, what is watched (targets) and with which selectors.
func (r *Recorder) Begin(targets []informer.Target, version, labelSelector, fieldSelector string) error {
	return r.BeginAt(time.Now(), targets, version, labelSelector, fieldSelector)
}

// BeginAt is Begin at the time now (a generator of recordings writes a
// day in seconds).
func (r *Recorder) BeginAt(now time.Time, targets []informer.Target, version, labelSelector, fieldSelector string) error {
	if err := r.sameRoots(targets); err != nil {
		return err
	}
	if err := r.sameTreeAndEvents(targets); err != nil {
		return err
	}
	if err := r.sameServers(); err != nil {
		return err
	}
	if err := r.sameSelectors(labelSelector, fieldSelector); err != nil {
		return err
	}
	h := Header{
		Type: HeaderType, Time: now.UTC(), Schema: Schema, Version: version,
		LabelSelector: labelSelector, FieldSelector: fieldSelector, Servers: r.servers,
	}
	for _, t := range targets {
		h.Targets = append(h.Targets, headerCollectionOf(t))
	}
	if err := r.writeLine(h); err != nil {
		return err
	}
	r.header = h
	if err := r.dir.begin(h); err != nil {
		return err
	}
	r.begun = true
	if r.end == nil || r.end.Last.IsZero() {
		return nil
	}
	// Nothing recorded from the recording's last line (its last
	// Heartbeat, at most HeartbeatInterval before its recorder stopped)
	// to now.
	from := r.end.Last
	if from.After(h.Time) {
		from = h.Time
	}
	r.gap = &Gap{Type: GapType, Time: h.Time, From: from, To: h.Time}
	r.caughtUpUntil = map[string]time.Time{}
	if err := r.writeLine(r.gap); err != nil {
		return err
	}
	return r.dir.gapped(*r.gap)
}

// Gap is the time the recording does not cover before this run's part,
// when it went on with one (after Begin); nil otherwise.
func (r *Recorder) Gap() *Gap { return r.gap }

// writeLine writes v, a line that is not a record, as JSON.
func (r *Recorder) writeLine(v any) error {
	line, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("--record: %w", err)
	}
	_, err = r.w.Write(append(line, '\n'))
	return err
}

// Verdict writes v, the Verdict that ends the run (with the logs it
// read of failing containers, which a replay has no cluster to ask for).
func (r *Recorder) Verdict(v *printer.Verdict) error {
	if !r.begun {
		return nil
	}
	_, err := r.w.Write(append(printer.AppendVerdictJSON(nil, v), '\n'))
	return err
}

// PositionsFrom has every Heartbeat say where the collections stand, as
// positions tells (the engine's Positions).
func (r *Recorder) PositionsFrom(positions func() []informer.Position) { r.positions = positions }

// Heartbeat writes a Heartbeat: the recorder is alive at now, and the
// collections stand where the positions say. Call it on the engine's
// goroutine (RunOptions.Tick, InitialOut), or after it ran.
func (r *Recorder) Heartbeat(now time.Time) error {
	if !r.begun {
		return nil
	}
	h := Heartbeat{Type: HeartbeatType, Time: now.UTC()}
	if r.positions != nil {
		for _, p := range r.positions() {
			h.Positions = append(h.Positions, Position{Collection: headerCollectionOf(p.Target), ResourceVersion: p.ResourceVersion})
		}
	}
	return r.writeLine(h)
}

// sameRoots checks that a run going on with a recording watches the roots
// it recorded, no more and no fewer: a root the recording lacks has no
// past to go on from, and one the run leaves out would seem, to a replay,
// to stop changing where the recording goes on.
func (r *Recorder) sameRoots(targets []informer.Target) error {
	if r.end == nil {
		return nil
	}
	var roots []informer.Target
	for _, t := range targets {
		if !t.Role.IsRoot() {
			continue
		}
		roots = append(roots, t)
		if !slices.ContainsFunc(r.end.Recorded, func(o informer.Target) bool { return o.ID() == t.ID() }) {
			return fmt.Errorf("--record: %s recorded %s; this run also watches %s, which it did not: record it to a new file, or watch what it recorded", r.name, informer.Describe(r.end.Recorded), informer.Describe([]informer.Target{t}))
		}
	}
	for _, o := range r.end.Recorded {
		if !slices.ContainsFunc(roots, func(t informer.Target) bool { return o.ID() == t.ID() }) {
			return fmt.Errorf("--record: %s recorded %s; this run does not watch %s, whose record would stop here without a word: record it to a new file, or watch what it recorded", r.name, informer.Describe(r.end.Recorded), informer.Describe([]informer.Target{o}))
		}
	}
	return nil
}

// sameTreeAndEvents refuses to go on with a recording made with --tree
// or --events without them, or made without them with them (sameFlag).
func (r *Recorder) sameTreeAndEvents(targets []informer.Target) error {
	if r.end == nil {
		return nil
	}
	tree := slices.ContainsFunc(targets, func(t informer.Target) bool { return t.Role == informer.RoleScout || t.Role == informer.RoleOwned })
	events := slices.ContainsFunc(targets, func(t informer.Target) bool { return t.Role == informer.RoleEvents })
	if err := sameFlag(r.name, "--tree", "what the roots own", r.end.Tree, tree); err != nil {
		return err
	}
	return sameFlag(r.name, "--events", "the Events", r.end.Events, events)
}

// sameFlag refuses a run that would go on with the recording name with
// or without flag (now) when it was recorded the other way (was): what
// flag records (what) would stop without a word, or begin where a replay
// does not look for it (a replay learns what a recording holds from its
// first header).
func sameFlag(name, flag, what string, was, now bool) error {
	switch {
	case was && !now:
		return fmt.Errorf("--record: %s was recorded with %s; this run does not watch %s, whose record would stop here without a word: add %s, or record to a new file", name, flag, what, flag)
	case !was && now:
		return fmt.Errorf("--record: %s was recorded without %s; this run also watches %s, which a replay of it would not find: drop %s, or record to a new file", name, flag, what, flag)
	}
	return nil
}

// Watches notes the API servers the run watches, for the header Begin
// writes. Call it before Begin.
func (r *Recorder) Watches(servers []APIServer) { r.servers = servers }

// sameServers refuses to go on with a recording of another cluster: the
// positions it ended at are another etcd's resourceVersions, and its
// objects would be said deleted, or changes missed, without a word. A
// context (or a plain run's one cluster) whose API server is not the one
// the recording's newest header names is an error; a recording or a run
// that does not say its servers is not checked.
func (r *Recorder) sameServers() error {
	if r.end == nil || len(r.end.Servers) == 0 || len(r.servers) == 0 {
		return nil
	}
	plain := len(r.end.Servers) == 1 && len(r.servers) == 1
	for _, now := range r.servers {
		for _, was := range r.end.Servers {
			if (plain || was.Context == now.Context) && was.URL != now.URL {
				return fmt.Errorf("--record: %s recorded the cluster at %s (%s); this run watches the one at %s (%s): record it to a new file, or watch the cluster it recorded", r.name, was.URL, contextName(was.Context), now.URL, contextName(now.Context))
			}
		}
	}
	return nil
}

// sameSelectors refuses to go on with a recording made with other
// selectors: the watch would go on from its positions with the new ones,
// and what they select that the old ones did not would never be seen,
// what they no longer select never said gone.
func (r *Recorder) sameSelectors(labelSelector, fieldSelector string) error {
	if r.end == nil {
		return nil
	}
	for _, s := range []struct{ flag, what, was, now string }{
		{"-l", "label selector", canonicalLabels(r.end.LabelSelector), canonicalLabels(labelSelector)},
		{"--field-selector", "field selector", canonicalFields(r.end.FieldSelector), canonicalFields(fieldSelector)},
	} {
		if s.was != s.now {
			return fmt.Errorf("--record: %s was recorded with %s; this run selects with %s: what it selects and the recording did not would never be seen: record it to a new file, or give the %s it was recorded with", r.name, selectorText(s.flag, s.what, s.was), selectorText(s.flag, s.what, s.now), s.what)
		}
	}
	return nil
}

// canonicalLabels is a label selector as the API server reads it (its
// requirements sorted), or as given when it does not parse.
func canonicalLabels(s string) string {
	if sel, err := labels.Parse(s); err == nil {
		return sel.String()
	}
	return s
}

// canonicalFields is canonicalLabels for a field selector.
func canonicalFields(s string) string {
	if sel, err := fields.ParseSelector(s); err == nil {
		return sel.String()
	}
	return s
}

// selectorText names a selector given with flag in a message.
func selectorText(flag, what, selector string) string {
	if selector == "" {
		return "no " + what
	}
	return fmt.Sprintf("%s %q", flag, selector)
}

// contextName names a kubeconfig context in a message.
func contextName(context string) string {
	if context == "" {
		return "no context"
	}
	return fmt.Sprintf("context %q", context)
}

// Record writes the records of items, deltas of an informer watching t
// popped at now.
func (r *Recorder) Record(t informer.Target, items []informer.Item, now time.Time) error {
	r.buf = r.buf[:0]
	for i := range items {
		keep, err := r.fill.Fill(&r.rec, t, &items[i], now)
		if err != nil {
			return err
		}
		if keep && items[i].CaughtUp && r.gap != nil {
			r.rec.Time, r.rec.CaughtUp = r.caughtUpTime(t.ID()+"|"+items[i].Key, &items[i])
			r.dir.caughtUp(now)
		}
		if keep {
			r.buf = append(printer.AppendJSON(r.buf, &r.rec), '\n')
			r.dir.recorded(&r.rec)
		}
	}
	if len(r.buf) == 0 {
		return nil
	}
	_, err := r.w.Write(r.buf) // one write a batch: a frame ends between batches
	return err
}

// caughtUpTime is when it, a change of the object id (its collection and
// key) caught up after the gap, was made, as its object says — bounded by
// the gap, and never before the object's previous caught-up record — and
// what said it ("gap" when the object does not: then the gap's end).
func (r *Recorder) caughtUpTime(id string, it *informer.Item) (time.Time, string) {
	at, source := objectTime(it)
	switch {
	case source == "" || !at.Before(r.gap.To):
		at, source = r.gap.To, "gap"
	case at.Before(r.gap.From):
		at = r.gap.From
	}
	if last := r.caughtUpUntil[id]; at.Before(last) {
		at = last
	}
	r.caughtUpUntil[id] = at
	return at, source
}

// objectTime is when the object of it says its change was made: a
// creation's creationTimestamp; a deletion's, and an update's that began
// a graceful one, when it was asked (deletionTimestamp less
// deletionGracePeriodSeconds: deletionTimestamp is when it is due); an
// update's newest managedFields entry that moved; source "" when it does
// not say.
func objectTime(it *informer.Item) (at time.Time, source string) {
	obj := it.Object
	if obj == nil || it.Tombstone {
		return time.Time{}, ""
	}
	var text string
	switch {
	case it.Type == cache.Deleted, it.Old != nil && it.Old.DeletionTimestamp == "" && obj.DeletionTimestamp != "":
		return deletionAsked(obj)
	case it.Old == nil:
		text, source = obj.CreationTimestamp, "creationTimestamp"
	default:
		if e := obj.MovedEntry(it.Old); e != nil {
			text, source = e.Time, "managedFields"
		}
	}
	if text == "" {
		return time.Time{}, ""
	}
	at, err := time.Parse(time.RFC3339Nano, text)
	if err != nil {
		return time.Time{}, ""
	}
	return at.UTC(), source
}

// deletionAsked is when obj's deletion was asked, as its metadata says:
// deletionTimestamp less deletionGracePeriodSeconds; source "" when it
// has no deletionTimestamp (deleted at once).
func deletionAsked(obj *rawobj.Object) (time.Time, string) {
	if obj.DeletionTimestamp == "" {
		return time.Time{}, ""
	}
	due, err := time.Parse(time.RFC3339Nano, obj.DeletionTimestamp)
	if err != nil {
		return time.Time{}, ""
	}
	var meta struct {
		DeletionGracePeriodSeconds int64 `json:"deletionGracePeriodSeconds"`
	}
	if data, err := obj.Member("metadata"); err == nil && data != nil {
		_ = json.Unmarshal(data, &meta)
	}
	return due.Add(-time.Duration(meta.DeletionGracePeriodSeconds) * time.Second).UTC(), "deletionTimestamp"
}

// Close ends the recording: a last Heartbeat, its last frame written and
// the file closed; a recording never begun is removed; then the lock is
// released. Nil-safe.
func (r *Recorder) Close() error {
	if r == nil {
		return nil
	}
	return r.CloseAt(time.Now())
}

// CloseAt is Close at the time now.
func (r *Recorder) CloseAt(now time.Time) error {
	if r.begun {
		_ = r.Heartbeat(now)
	}
	err := r.dir.close(r.w, now)
	if err == nil {
		err = r.w.Close()
	} else {
		_ = r.w.Close()
	}
	switch {
	case r.dir != nil:
		r.dir.unbegun()
	case r.created && !r.begun:
		_ = os.Remove(r.name)
	}
	if uerr := r.lock.Unlock(); err == nil {
		err = uerr
	}
	return err
}
