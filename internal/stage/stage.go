// Package stage is the record stage: it turns the deltas an informer pops
// into the records that printers print. It applies the delta filters
// (--types, --watch-only, --relist, --changed-only), redacts Secrets,
// computes field-level diffs and names the field manager of each change.
// RecordSink feeds the records of a running informer.Engine to a printer.
package stage

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/kubectl-deltas/kubectl-deltas/internal/cache"
	"github.com/kubectl-deltas/kubectl-deltas/internal/celexpr"
	"github.com/kubectl-deltas/kubectl-deltas/internal/delta"
	"github.com/kubectl-deltas/kubectl-deltas/internal/diff"
	"github.com/kubectl-deltas/kubectl-deltas/internal/events"
	"github.com/kubectl-deltas/kubectl-deltas/internal/health"
	"github.com/kubectl-deltas/kubectl-deltas/internal/informer"
	"github.com/kubectl-deltas/kubectl-deltas/internal/printer"
	"github.com/kubectl-deltas/kubectl-deltas/internal/rawobj"
)

// Options select which deltas become records and what the records carry.
type Options struct {
	// Types are the delta types printed; nil or empty means all.
	Types []cache.DeltaType
	// WatchOnly drops the deltas of the initial list.
	WatchOnly bool
	// RelistAll keeps Replaced deltas of objects a relist found unchanged.
	RelistAll bool
	// ShowSecretData keeps the values of Secrets.
	ShowSecretData bool
	// Diff configures field-level diffs.
	Diff DiffOptions
	// Where keeps only the deltas for which every expression is true
	// (--where); Secrets are seen redacted.
	Where []*celexpr.Program
	// Health judges every object handed out (record.Health); FailAfter
	// is how long a transient failure lasts before it counts as Failed.
	Health    bool
	FailAfter time.Duration
	// Rows gives records the server-side Table row their object came with
	// (-o wide).
	Rows bool
	// Handler makes each record the ResourceEventHandler call its delta
	// is (--handler): OnAdd, OnUpdate or OnDelete, as client-go's
	// processDeltas calls them. Every call is kept, a relist's unchanged
	// objects too (a handler is called for them).
	Handler bool
}

// Stage turns popped deltas into records. It keeps no state between
// deltas and is safe for concurrent use.
type Stage struct {
	types          map[cache.DeltaType]bool
	watchOnly      bool
	relistAll      bool
	showSecretData bool
	diff           *differ
	where          []*celexpr.Program
	// judge judges every kept record's object (Options.Health); nil
	// without.
	judge *health.Judge
	// rows: Options.Rows.
	rows bool
	// handler: Options.Handler.
	handler bool
	// columnsOf and columns are the last Table columns seen and their
	// printer form: the rows of a list or a watch share one slice of
	// columns, converted once. Only the sink's goroutine calls Fill.
	columnsOf []rawobj.TableColumn
	columns   []printer.Column
}

// NewStage checks o and returns its Stage.
func NewStage(o Options) (*Stage, error) {
	differ, err := NewDiffer(o.Diff)
	if err != nil {
		return nil, err
	}
	d := differ.d
	s := &Stage{
		types:          map[cache.DeltaType]bool{},
		watchOnly:      o.WatchOnly,
		showSecretData: o.ShowSecretData,
		diff:           d,
		where:          o.Where,
		rows:           o.Rows,
		handler:        o.Handler,
		relistAll:      o.RelistAll || o.Handler,
	}
	if o.Health {
		s.judge = health.NewJudge()
		s.judge.SetFailAfter(o.FailAfter)
	}
	types := o.Types
	if len(types) == 0 {
		types = delta.Types()
	}
	for _, t := range types {
		s.types[t] = true
	}
	return s, nil
}

// ParseTypes reads delta type names, case-insensitively, as --types takes
// them.
func ParseTypes(names []string) ([]cache.DeltaType, error) {
	var out []cache.DeltaType
	for _, name := range names {
		name = strings.TrimSpace(name)
		found := false
		for _, t := range delta.Types() {
			if strings.EqualFold(name, string(t)) {
				out = append(out, t)
				found = true
			}
		}
		if !found {
			return nil, fmt.Errorf("invalid --types value %q: must be one or more of %s", name, TypeList())
		}
	}
	return out, nil
}

// TypeList is the delta types for help and error texts:
// "Added,Updated,Deleted,Replaced,Sync".
func TypeList() string {
	return strings.Join(TypeNames(), ",")
}

// TypeNames is the delta types' names, for shell completion.
func TypeNames() []string {
	types := delta.Types()
	names := make([]string, 0, len(types))
	for _, t := range types {
		names = append(names, string(t))
	}
	return names
}

// Fill describes it, a delta of an informer watching t, as rec: as the
// type the engine decided it is shown as (it.Type, it.Initial). keep is
// false when the filters drop the delta; rec is then meaningless.
func (s *Stage) Fill(rec *printer.Record, t informer.Target, it *informer.Item, now time.Time) (keep bool, err error) {
	keep, err = s.fill(rec, t, it, now)
	if keep && s.rows && it.Object != nil && it.Object.Row != nil {
		rec.Row = &printer.Row{Columns: s.columnsFor(it.Object.Row.Columns), Cells: it.Object.Row.Cells}
	}
	switch {
	case !keep || err != nil:
	case t.Role == informer.RoleEvents:
		// An Event explains an object; it has no health of its own, but
		// may change its subject's.
		if rec.Event, err = eventOf(it); err == nil {
			s.noteEvent(rec.Event)
		}
	case s.judge != nil:
		rec.Health = s.healthOf(it, now)
	}
	return keep && err == nil, err
}

// fill is Fill but for the health, which only kept records need.
func (s *Stage) fill(rec *printer.Record, t informer.Target, it *informer.Item, now time.Time) (keep bool, err error) {
	if !s.types[it.Type] || (s.watchOnly && it.Initial) || (it.Unchanged && !s.relistAll) {
		return false, nil
	}
	*rec = printer.Record{
		Type:              string(it.Type),
		Time:              now,
		Initial:           it.Initial,
		Context:           t.Context,
		APIVersion:        t.Kind.GroupVersion().String(),
		Kind:              t.Kind.Kind,
		Resource:          t.Resource.Resource,
		FinalStateUnknown: it.Tombstone,
		Coalesced:         it.Delta.Coalesced,
	}
	for _, o := range it.Owners {
		rec.Owners = append(rec.Owners, printer.Owner{APIVersion: o.APIVersion, Kind: o.Kind, Name: o.Name, UID: string(o.UID)})
	}
	secret := isSecret(t) && !s.showSecretData
	if s.handler {
		if err := s.call(rec, it, secret); err != nil {
			return false, err
		}
	}
	if it.Object == nil {
		rec.Namespace, rec.Name, _ = cache.SplitMetaNamespaceKey(it.Key)
		rec.Object = json.RawMessage("null")
		return s.matches(rec, it, secret)
	}
	obj := it.Object
	rec.Namespace, rec.Name = obj.Namespace, obj.Name
	rec.UID, rec.ResourceVersion = obj.UID, obj.ResourceVersion
	if it.Type != cache.Deleted {
		rec.Manager, rec.Operation = changeManager(it.Old, obj)
	}
	if rec.Object, err = shownJSON(obj, secret); err != nil {
		return false, err
	}
	if keep, err := s.matches(rec, it, secret); !keep || err != nil {
		return false, err
	}
	if s.diff.applies(it) {
		changes, err := s.diff.compute(it.Old, obj, secret)
		if err != nil {
			return false, err
		}
		if s.diff.changedOnly && it.Type == cache.Updated && len(changes) == 0 {
			return false, nil
		}
		if s.diff.show {
			rec.Changes = changes
		}
	}
	return true, nil
}

// call makes rec the handler call of it, as client-go's processDeltas
// makes one of a delta: a deletion is OnDelete (of the tombstone, when
// the final state is unknown); any other delta OnUpdate when the Store
// had the key (it.Old), else OnAdd with isInInitialList. The old object
// goes into the record with --diff.
func (s *Stage) call(rec *printer.Record, it *informer.Item, secret bool) (err error) {
	rec.Call = printer.HandlerCall{Delta: string(it.Delta.Type)}
	switch {
	case it.Delta.Type == cache.Deleted:
		rec.Type = printer.OnDelete
	case it.Old != nil:
		rec.Type = printer.OnUpdate
		rec.Call.OldResourceVersion = it.Old.ResourceVersion
		if s.diff.show {
			rec.Call.OldObject, err = shownJSON(it.Old, secret)
		}
	default:
		rec.Type = printer.OnAdd
		rec.Call.IsInInitialList = it.InInitialList
	}
	return err
}

// Complete adds to rec, the record another Stage's Fill kept of it (a
// delta of an informer watching t), what this Stage gives and rec lacks:
// health when this Stage judges, now; changes when it diffs, as a
// function that computes them when called (nil when rec has them or
// there are none to compute), so that an observer that draws them later
// computes them in one go (the --timeline page, at its next write). A
// Secret is redacted as this Stage says; both stages must agree on it.
func (s *Stage) Complete(rec *printer.Record, t informer.Target, it *informer.Item) (later Changes) {
	if t.Role == informer.RoleEvents {
		// An Event has no health, and its changes say nothing; it may
		// change its subject's health.
		s.noteEvent(rec.Event)
		return Changes{}
	}
	if rec.Health == nil && s.judge != nil {
		rec.Health = s.healthOf(it, rec.Time)
	}
	if rec.Changes != nil || !s.diff.show || !s.diff.applies(it) {
		return Changes{}
	}
	return Differ{d: s.diff}.Changes(it.Old, it.Object, isSecret(t) && !s.showSecretData)
}

// Changes are the changes of a delta (Stage.Complete), computed when they
// are asked for, from any goroutine; the zero Changes has none to compute.
// It holds the delta's two objects until then.
type Changes struct {
	d        *differ
	old, obj *rawobj.Object
	secret   bool
}

// Differ makes the Changes of deltas diffed with one set of options, as a
// Stage with those options hands them to its observer.
type Differ struct{ d *differ }

// NewDiffer returns a Differ diffing with o (a Stage's, NewStage).
func NewDiffer(o DiffOptions) (Differ, error) {
	d, err := newDiffer(o)
	return Differ{d: d}, err
}

// Changes are the changes from old to obj (a Secret's when secret).
func (d Differ) Changes(old, obj *rawobj.Object, secret bool) Changes {
	return Changes{d: d.d, old: old, obj: obj, secret: secret}
}

// IsZero reports whether c has no changes to compute.
func (c Changes) IsZero() bool { return c.d == nil }

// Operations computes the changes, as --diff prints them.
func (c Changes) Operations() ([]diff.Operation, error) {
	return c.d.compute(c.old, c.obj, c.secret)
}

// AppendRaw appends to dst, for a reader that computes the operations
// itself (the timeline page's script), the members that differ between
// the two objects, undecoded: a JSON array of ["~", path, old, new],
// ["+", path, new] and ["-", path, old] entries, path the keys from the
// object's root (a member that is an object on both sides is walked into,
// never handed over), the values as they are in the objects, the ignored
// paths left out. Nothing is appended when nothing differs. ok is false,
// and dst returned as it was, when only Operations can say: a Secret's
// changes (its values are not copied anywhere), or an ignored path inside
// a member that differs.
//
// Handing over the values costs a walk of the two objects and no
// decoding: the operations of a delta nobody looks at are never made.
func (c Changes) AppendRaw(dst []byte) (out []byte, ok bool, err error) {
	return c.d.appendRaw(dst, c.old, c.obj, c.secret)
}

// Versions are the two objects' JSON, for a reader that diffs them whole
// as Operations does, given the paths every diff leaves out
// (metadata.resourceVersion and metadata.managedFields, alwaysIgnoredPaths);
// ok is false when only Operations can say: a Secret's changes, or a diff
// that ignores more (--ignore-path, --status=false, --changed-only's
// metadata.generation). The bytes are the objects': read-only.
func (c Changes) Versions() (old, obj []byte, ok bool) {
	if c.d == nil || c.secret || !c.d.onlyAlways {
		return nil, nil, false
	}
	return c.old.JSON, c.obj.JSON, true
}

// HealthOf is the health of it's object (a delta of an informer watching
// t) at now, nil when this Stage does not judge, for an Event, and for a
// deletion.
func (s *Stage) HealthOf(t informer.Target, it *informer.Item, now time.Time) *printer.Health {
	if s.judge == nil || t.Role == informer.RoleEvents || it.Object == nil || it.Type == cache.Deleted {
		return nil
	}
	return s.healthOf(it, now)
}

// columnsFor is cols in the printer's form, converted once for all the
// rows that share them.
func (s *Stage) columnsFor(cols []rawobj.TableColumn) []printer.Column {
	if len(cols) > 0 && len(cols) == len(s.columnsOf) && &cols[0] == &s.columnsOf[0] {
		return s.columns
	}
	out := make([]printer.Column, len(cols))
	for i, c := range cols {
		out[i] = printer.Column{Name: c.Name, Format: c.Format, Priority: c.Priority}
	}
	s.columnsOf, s.columns = cols, out
	return out
}

// eventOf is what human output says of an Event record.
func eventOf(it *informer.Item) (*printer.Event, error) {
	if it.Object == nil {
		return &printer.Event{}, nil
	}
	e, err := events.Summarize(it.Object.JSON)
	if err != nil {
		return nil, err
	}
	return &printer.Event{
		APIVersion: e.Subject.APIVersion, Kind: e.Subject.Kind, Namespace: e.Subject.Namespace, Name: e.Subject.Name, UID: e.Subject.UID,
		Type: e.Type, Reason: e.Reason, Message: e.Message, Count: e.Count, Last: e.Last,
	}, nil
}

// noteEvent tells this Stage's judge, if it has one, of the Event e of
// an Event record (health.Judge.NoteEvent).
func (s *Stage) noteEvent(e *printer.Event) {
	if s.judge != nil && e != nil {
		s.judge.NoteEvent(e.UID, e.Reason, e.Last)
	}
}

// healthOf is the health of it's object as handed out at now (the
// stream's time): NotFound for a deletion, whatever its final state said.
func (s *Stage) healthOf(it *informer.Item, now time.Time) *printer.Health {
	h := health.Gone()
	if it.Type != cache.Deleted {
		h = s.judge.At(it.Object, now)
	}
	return &printer.Health{Status: string(h.Status), Source: string(h.Source), Reason: h.Reason, Message: h.Message, RecheckAt: h.RecheckAt}
}

// Diffs reports whether records carry diffs (--diff).
func (s *Stage) Diffs() bool { return s.diff.show }

// matches evaluates --where on a filled record: every expression must be
// true. The object is the record's (redacted for a Secret), the old object
// the Store's previous state (redacted likewise).
func (s *Stage) matches(rec *printer.Record, it *informer.Item, secret bool) (bool, error) {
	if len(s.where) == 0 {
		return true, nil
	}
	v := celexpr.Vars{
		Type: rec.Type, Kind: rec.Kind, APIVersion: rec.APIVersion, Resource: rec.Resource,
		Namespace: rec.Namespace, Name: rec.Name,
	}
	if it.Object != nil {
		v.Object = rec.Object
	}
	switch {
	case rec.Call.OldObject != nil:
		v.OldObject = rec.Call.OldObject // shown already (--handler --diff)
	case it.Old != nil:
		var err error
		if v.OldObject, err = shownJSON(it.Old, secret); err != nil {
			return false, err
		}
	}
	return celexpr.All(s.where, v)
}
