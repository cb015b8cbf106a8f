// Package live is --live: the stream shown as one view redrawn in place on
// a terminal instead of lines — a header (what is watched, the time, each
// condition and whether it holds now) over one row per object, nested by
// owner, with its health, its last delta and, with --events, its newest
// Warning.
//
// A View is the model: the record Sink hands it every record the stream
// shows (it is a stage.Observer), the waiter the conditions' states;
// Frame lays it out for a terminal's size (folding what is Current and
// quiet when it does not fit). A Screen draws the frames on the terminal:
// at most ten a second, only when something changed, each inside
// synchronized-output brackets.
package live

import (
	"slices"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/kubectl-deltas/kubectl-deltas/internal/condition"
	"github.com/kubectl-deltas/kubectl-deltas/internal/health"
	"github.com/kubectl-deltas/kubectl-deltas/internal/printer"
	"github.com/kubectl-deltas/kubectl-deltas/internal/rawobj"
	"github.com/kubectl-deltas/kubectl-deltas/internal/stage"
	"github.com/kubectl-deltas/kubectl-deltas/internal/textsafe"
)

// object is one row of the view: an object the stream showed.
type object struct {
	context, apiVersion, kind, namespace, name, uid string
	// ownerUID is its controller's (or first owner's) UID, "" for none.
	ownerUID string
	// health is its verdict as last judged; recheck, when not nil, is the
	// object to judge again at recheckAt (health that changes with time
	// alone, as an unschedulable Pod's).
	health    printer.Health
	judged    bool
	recheck   *rawobj.Object
	recheckAt time.Time
	// last is the type of its last delta, at lastAt; changes, with
	// --diff, the number of fields it changed.
	last    string
	lastAt  time.Time
	changes int
	deleted bool
	// warning is its newest Warning Event ("FailedScheduling: 0/3 nodes
	// are available…"), at warningAt.
	warning   string
	warningAt time.Time
	// logs are the last lines of its failing container's log the verdict
	// read (SetLogs); logsShown how many of the last the frame shows.
	logs      []string
	logsShown int
}

// View is the model of the live view. Observe and ObserveHidden are
// called on the Sink's goroutine, SetConditions on the engine's, Frame on
// the Screen's: mu guards everything below it.
type View struct {
	// title says what is watched: the command line's arguments, the
	// context, the namespace.
	title string
	// diff: --diff is on, rows say how many fields the last change
	// touched.
	diff bool

	mu         sync.Mutex
	objects    map[string]*object
	byUID      map[string]*object
	conditions []condition.State
	start      time.Time
	// changed is set by every change of the model, cleared by Frame.
	changed bool
	judge   *health.Judge
	// notes are what the run said on stderr that the view shows (Note).
	notes notes
	// replay: the view's clock is a recording's; the header says its
	// time.
	replay bool
}

// NewView returns an empty view titled title (what is watched); diff says
// whether rows show the size of each change (--diff).
func NewView(title string, diff bool) *View {
	return &View{
		title: title, diff: diff,
		objects: map[string]*object{}, byUID: map[string]*object{}, judge: health.NewJudge(),
		changed: true,
	}
}

// objectKey identifies an object across its changes (its UID may be
// unknown for a tombstone).
func objectKey(context, apiVersion, kind, namespace, name string) string {
	return context + "\x00" + apiVersion + "\x00" + kind + "\x00" + namespace + "\x00" + name
}

// Observe takes a record the stream shows (stage.Observer): rec is the
// printed record completed with health; obj its object (nil for a
// tombstone); changes computes its diff (called only with --diff).
func (v *View) Observe(rec *printer.Record, obj *rawobj.Object, changes stage.Changes) {
	n := len(rec.Changes) // computed already when the run prints diffs
	if v.diff && rec.Changes == nil && !changes.IsZero() && rec.Event == nil {
		if ops, err := changes.Operations(); err == nil {
			n = len(ops)
		}
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	v.changed = true
	if rec.Event != nil {
		v.observeEvent(rec)
		return
	}
	o := v.objectOf(rec)
	if len(v.notes.waiting) > 0 {
		v.notes.shown(rec.Name)
	}
	if obj != nil {
		if owner := obj.OwnerUID(); owner != "" {
			o.ownerUID = owner
		}
	}
	o.last, o.lastAt, o.changes = rec.Type, rec.Time, n
	o.deleted = rec.Type == "Deleted"
	o.recheck = nil
	if rec.Health != nil {
		o.health, o.judged = shownHealth(rec.Health), true
		if !rec.Health.RecheckAt.IsZero() && obj != nil {
			o.recheck, o.recheckAt = obj, rec.Health.RecheckAt
		}
	}
}

// ObserveHidden takes the health of a delta the run's filters keep from
// the stream (stage.Observer): the row's health follows it.
func (v *View) ObserveHidden(rec *printer.Record, obj *rawobj.Object) {
	if rec.Health == nil || rec.UID == "" {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	o, ok := v.byUID[rec.Context+"\x00"+rec.UID]
	if !ok {
		return
	}
	o.health, o.judged, o.recheck = shownHealth(rec.Health), true, nil
	if !rec.Health.RecheckAt.IsZero() && obj != nil {
		o.recheck, o.recheckAt = obj, rec.Health.RecheckAt
	}
	v.changed = true
}

// objectOf returns the row of rec's object, made on first sight. Called
// with mu held.
func (v *View) objectOf(rec *printer.Record) *object {
	key := objectKey(rec.Context, rec.APIVersion, rec.Kind, rec.Namespace, rec.Name)
	o, ok := v.objects[key]
	if !ok {
		// What others wrote is shown made safe for a terminal.
		o = &object{context: textsafe.String(rec.Context), apiVersion: rec.APIVersion, kind: textsafe.String(rec.Kind),
			namespace: textsafe.String(rec.Namespace), name: textsafe.String(rec.Name)}
		v.objects[key] = o
	}
	if rec.UID != "" && o.uid != rec.UID {
		if o.uid != "" {
			delete(v.byUID, rec.Context+"\x00"+o.uid)
		}
		o.uid = rec.UID
		v.byUID[rec.Context+"\x00"+rec.UID] = o
	}
	return o
}

// observeEvent notes a Warning Event under its subject. Called with mu
// held.
func (v *View) observeEvent(rec *printer.Record) {
	e := rec.Event
	if e.Type != "Warning" || e.UID == "" {
		return
	}
	o, ok := v.byUID[rec.Context+"\x00"+e.UID]
	if !ok {
		return
	}
	at := e.Last
	if at.IsZero() {
		at = rec.Time
	}
	if at.Before(o.warningAt) {
		return
	}
	o.warning, o.warningAt = textsafe.String(e.Reason+": "+textsafe.OneLine(e.Message)), at
}

// SetLogs gives the object uid in the cluster of context the last lines
// of its failing container's log, as the verdict that ended the run read
// them: the last frame shows them under it. An object not shown, or logs
// that could not be read, change nothing.
func (v *View) SetLogs(context, uid string, logs printer.VerdictLogs) {
	v.mu.Lock()
	defer v.mu.Unlock()
	o := v.byUID[context+"\x00"+uid]
	if o == nil || len(logs.Lines) == 0 {
		return
	}
	o.logs = logs.Lines
	v.changed = true
}

// SetConditions sets the conditions' states (the waiter's, after each
// check).
func (v *View) SetConditions(cs []condition.State) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if !slices.Equal(v.conditions, cs) {
		v.conditions = append(v.conditions[:0], cs...)
		v.changed = true
	}
}

// begin sets the time the view started at, the header's elapsed time
// counting from it.
func (v *View) begin(start time.Time) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.start = start
}

// Changed reports whether the view changed since the last Frame, or a
// health is due to change with time by now.
func (v *View) Changed(now time.Time) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.changed || v.notes.due(now) {
		return true
	}
	for _, o := range v.objects {
		if o.recheck != nil && !now.Before(o.recheckAt) {
			return true
		}
	}
	return false
}

// shownHealth is h as a row shows it: its reason and message, which
// objects' writers chose, made safe for a terminal.
func shownHealth(h *printer.Health) printer.Health {
	out := *h
	out.Reason, out.Message = textsafe.String(h.Reason), textsafe.String(h.Message)
	return out
}

// rejudge judges again the health of the rows whose health changes with
// time alone and is due by now. Called with mu held.
func (v *View) rejudge(now time.Time) {
	for _, o := range v.objects {
		for o.recheck != nil && !now.Before(o.recheckAt) {
			h := v.judge.At(o.recheck, o.recheckAt)
			o.health = shownHealth(&printer.Health{Status: string(h.Status), Reason: h.Reason, Message: h.Message})
			if h.RecheckAt.After(o.recheckAt) {
				o.recheckAt = h.RecheckAt
			} else {
				o.recheck = nil
			}
		}
	}
}

// sortedRows returns the rows in tree order: roots sorted by kind rank
// then name, each followed by its children, depth-first. depth gives each
// row's depth.
func sortedRows(objects map[string]*object, byUID map[string]*object) (rows []*object, depth map[*object]int, children map[*object][]*object) {
	children = map[*object][]*object{}
	var roots []*object
	for _, o := range objects {
		if p, ok := byUID[o.context+"\x00"+o.ownerUID]; ok && o.ownerUID != "" && p != o {
			children[p] = append(children[p], o)
		} else {
			roots = append(roots, o)
		}
	}
	less := func(a, b *object) bool {
		if a.context != b.context {
			return a.context < b.context
		}
		if ra, rb := kindRank(a.kind), kindRank(b.kind); ra != rb {
			return ra < rb
		}
		if a.kind != b.kind {
			return a.kind < b.kind
		}
		if a.namespace != b.namespace {
			return a.namespace < b.namespace
		}
		return a.name < b.name
	}
	sort.Slice(roots, func(i, j int) bool { return less(roots[i], roots[j]) })
	depth = map[*object]int{}
	seen := map[*object]bool{}
	var walk func(o *object, d int)
	walk = func(o *object, d int) {
		if seen[o] {
			return // an ownership cycle: shown once
		}
		seen[o] = true
		rows = append(rows, o)
		depth[o] = d
		kids := children[o]
		sort.Slice(kids, func(i, j int) bool { return less(kids[i], kids[j]) })
		for _, k := range kids {
			walk(k, d+1)
		}
	}
	for _, r := range roots {
		walk(r, 0)
	}
	for _, o := range objects { // left in a cycle with no root
		if !seen[o] {
			walk(o, 0)
		}
	}
	return rows, depth, children
}

// kindRank ranks the kinds of a rollout's tree as people read them.
func kindRank(kind string) int {
	switch kind {
	case "Namespace", "Node":
		return 0
	case "Deployment", "StatefulSet", "DaemonSet", "CronJob":
		return 1
	case "Job", "ReplicaSet":
		return 2
	case "Pod":
		return 3
	}
	return 4
}

// changesOf is how a row says the size of its last change.
func changesOf(n int) string {
	if n == 1 {
		return "1 field"
	}
	return strconv.Itoa(n) + " fields"
}
