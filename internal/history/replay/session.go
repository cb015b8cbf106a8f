package replay

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-deltas/kubectl-deltas/internal/history/recording"
	"github.com/kubectl-deltas/kubectl-deltas/internal/informer"
	"github.com/kubectl-deltas/kubectl-deltas/internal/tree"
)

// OpenFiles opens the recordings files (stdin for "-") and reads their
// headers and initial lists, and their span to look in them through
// look. warn receives the replay's warnings. Close the Player when done.
func OpenFiles(files []string, look Window, stdin io.Reader, warn io.Writer) (*Player, error) {
	dirs, err := loadDirs(files, warn)
	if err != nil {
		return nil, err
	}
	// A look back into a directory starts at the checkpoint before it:
	// the window is read from the spans before the recordings open.
	var from, to time.Time
	windowed := look.Looking() && !slices.Contains(files, "-")
	if windowed {
		span, err := spanOf(files, dirs)
		if err != nil {
			return nil, err
		}
		look.kept = keptText(dirs)
		if from, to, err = look.Times(span, true); err != nil {
			return nil, err
		}
	}
	var readers []*recording.Reader
	closeAll := func() {
		for _, r := range readers {
			_ = r.Close()
		}
	}
	inferred := map[*recording.Reader]*recording.Header{}
	live := map[*recording.Reader]bool{}
	reopen := make([]func() (*recording.Reader, error), len(files))
	for i, name := range files {
		if ix := dirs[name]; ix != nil {
			start := ix.StartAt(from)
			r, err := recording.OpenDir(ix, start, warn)
			if err != nil {
				closeAll()
				return nil, fmt.Errorf("--replay: %w", err)
			}
			readers = append(readers, r)
			reopen[i] = func() (*recording.Reader, error) { return recording.OpenDir(ix, start, io.Discard) }
			if busy := recording.DirRecordedBy(name); busy != nil {
				live[r] = true
				fmt.Fprintf(warn, "info: %s is being recorded by %s: replaying what it holds so far (its recorder writes at least once a second)\n", name, busy.By())
			}
			continue
		}
		r, err := recording.Open(name, stdin)
		if err != nil {
			closeAll()
			return nil, fmt.Errorf("--replay: %w", err)
		}
		readers = append(readers, r)
		if name == "-" {
			continue
		}
		reopen[i] = func() (*recording.Reader, error) { return recording.Open(name, nil) }
		if busy := recording.RecordedBy(name); busy != nil {
			live[r] = true
			fmt.Fprintf(warn, "info: %s is being recorded by %s: replaying what it holds so far (its recorder writes at least once a second)\n", name, busy.By())
		}
		h, err := InferHeader(name)
		if err != nil {
			closeAll()
			return nil, err // it names the file and the line
		}
		if h != nil {
			inferred[r] = h
			fmt.Fprintf(warn, "info: %s has no %q line (-o json output, not --record's?): replayed as the types it holds, all named: %s\n", name, recording.HeaderType, describeHeader(h))
		}
	}
	p, err := open(warn, inferred, live, readers...)
	if err == nil {
		for i := range files {
			// A file is read again to look ahead (caughtUpBefore);
			// standard input queues what it reads ahead.
			p.parts[i].reopen = reopen[i]
		}
		// Each segment's header says what was watched as it began: --tree
		// finds types as it goes.
		for _, name := range files {
			if ix := dirs[name]; ix != nil {
				for _, info := range ix.Infos {
					if err == nil {
						err = p.addRoots(name, &recording.Header{Targets: info.Targets})
						p.noteCluster(info.Servers)
					}
				}
			}
		}
	}
	switch {
	case err != nil:
	case windowed:
		p.SetWindow(from, to)
	case look.Looking():
		err = p.windowOnStdin(look)
	}
	if err != nil {
		closeAll()
		return nil, err
	}
	return p, nil
}

// loadDirs reads the index of each recording directory of files.
func loadDirs(files []string, warn io.Writer) (map[string]*recording.DirIndex, error) {
	dirs := map[string]*recording.DirIndex{}
	for _, name := range files {
		if !recording.IsDir(name) {
			continue
		}
		ix, err := recording.LoadIndex(name, warn, false)
		if err != nil {
			return nil, fmt.Errorf("--replay: %w", err)
		}
		if len(ix.Segments) == 0 {
			return nil, fmt.Errorf("--replay: %s holds no segment: nothing recorded there yet", name)
		}
		saveIfFree(ix)
		dirs[name] = ix
	}
	return dirs, nil
}

// saveIfFree writes the index of a directory that had to be rebuilt,
// when no recorder holds it (the lock taken for the write): the next look
// back is fast again. Nothing is said when it cannot be.
func saveIfFree(ix *recording.DirIndex) {
	if !ix.Rebuilt {
		return
	}
	lock, err := recording.LockDir(ix.Dir)
	if err != nil {
		return
	}
	defer func() { _ = lock.Unlock() }()
	_ = ix.Save()
}

// spanOf is the span of the recordings files (none is standard input):
// a directory's from its index and its newest segment's tail, a file's
// read through.
func spanOf(files []string, dirs map[string]*recording.DirIndex) (recording.Span, error) {
	var span recording.Span
	for i, name := range files {
		var one recording.Span
		var err error
		if ix := dirs[name]; ix != nil {
			one, err = ix.Span()
		} else {
			var r *recording.Reader
			if r, err = recording.Open(name, nil); err != nil {
				return span, fmt.Errorf("--replay: %w", err)
			}
			one, err = recording.ReadSpan(r)
			_ = r.Close()
		}
		if err != nil {
			return span, err
		}
		if i == 0 || one.Start.Before(span.Start) {
			span.Start = one.Start
		}
		if i == 0 || one.End.After(span.End) {
			span.End = one.End
		}
	}
	return span, nil
}

// keptText says, for a look back outside the span, what a recording
// directory keeps when older segments are gone; "" when none is.
func keptText(dirs map[string]*recording.DirIndex) string {
	for name, ix := range dirs {
		if len(ix.Segments) > 0 && ix.Segments[0].Seq > 1 {
			return fmt.Sprintf("%s keeps segments %06d to %06d (older ones were deleted by --record-keep, or by hand)", name, ix.Segments[0].Seq, ix.Segments[len(ix.Segments)-1].Seq)
		}
	}
	return ""
}

// InferHeader reads the file name, when it does not begin with a
// Recording header — the records of -o json, a CI job's log — through for
// the collections its records are of, and returns the header a recording
// of them would have: each as a root, in its one namespace or in all;
// nil for a recording that has its header. Lines that are not records of
// objects (a Verdict) are passed over.
func InferHeader(name string) (*recording.Header, error) {
	r, err := recording.Open(name, nil)
	if err != nil {
		return nil, err
	}
	defer func() { _ = r.Close() }()
	type collection struct{ context, apiVersion, resource string }
	var h *recording.Header
	index := map[collection]int{}
	for {
		data, number, err := r.Next()
		var torn *recording.TornError
		if errors.Is(err, io.EOF) || errors.As(err, &torn) {
			break
		}
		if err != nil {
			return nil, err
		}
		l, err := recording.ParseLine(r.Name(), number, data)
		if err != nil {
			return nil, err
		}
		if number == 1 && l.Header != nil {
			return nil, nil
		}
		if h == nil {
			h = &recording.Header{Type: recording.HeaderType, Time: l.Time, Schema: recording.Schema}
		}
		if l.Header != nil || l.Mark() {
			continue
		}
		c := collection{l.Context, l.APIVersion, l.Resource}
		i, seen := index[c]
		if !seen {
			index[c] = len(h.Targets)
			h.Targets = append(h.Targets, recording.Collection{
				Context: l.Context, APIVersion: l.APIVersion, Kind: l.Kind, Resource: l.Resource, Namespace: l.Namespace, Role: informer.RoleRoot.String(),
			})
			continue
		}
		if h.Targets[i].Namespace != l.Namespace {
			h.Targets[i].Namespace = "" // in several: all of them
		}
	}
	if h == nil || len(h.Targets) == 0 {
		return nil, fmt.Errorf("%s: no record of an object: not a recording of kubectl deltas, nor its -o json output", name)
	}
	return h, nil
}

// describeHeader names the collections of h, for a message.
func describeHeader(h *recording.Header) string {
	ts := make([]informer.Target, 0, len(h.Targets))
	for _, t := range h.Targets {
		if target, err := targetOf(t); err == nil {
			ts = append(ts, target)
		}
	}
	return informer.Describe(ts)
}

// windowOnStdin reads --at, --from and --to when a recording comes from
// standard input, once it is open: its end is not known, and the span
// starts where the recordings began. (Without standard input OpenFiles
// reads the span before it opens them: spanOf.)
func (p *Player) windowOnStdin(look Window) error {
	from, to, err := look.Times(recording.Span{Start: p.began, End: p.clock.Now()}, false)
	if err != nil {
		return err
	}
	p.SetWindow(from, to)
	return nil
}

// Close closes the recordings.
func (p *Player) Close() error {
	var first error
	for _, pt := range p.parts {
		if err := pt.r.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// names are the recordings' names, for messages.
func (p *Player) names() string {
	names := make([]string, len(p.parts))
	for i, pt := range p.parts {
		names[i] = pt.r.Name()
	}
	return strings.Join(names, ", ")
}

// Contexts are the contexts the recording names, in order ("" for a
// recording of one cluster is left out).
func (p *Player) Contexts() []string {
	var out []string
	for _, t := range p.recorded {
		if t.Context != "" && !slices.Contains(out, t.Context) {
			out = append(out, t.Context)
		}
	}
	return out
}

// EngineOptions is what a replay plays of its recordings.
type EngineOptions struct {
	// Args are the types and names given; Namespace ("": all) and
	// Contexts (none: all) narrow them; Selector keeps the roots' objects
	// it selects ("": all).
	Args      []Asked
	Namespace string
	Contexts  []string
	Selector  string
	// Tree also plays, as owned types, every collection the recordings
	// watched (of the contexts), for --tree to find what the roots own:
	// their informers are there from the start, where a live tree's
	// scouts find them first, and the engine has the tree's indexers.
	Tree bool
	// Events also plays the recorded Events (--events), for the run's
	// join to watch (Player.Events): a recording made with --events holds
	// those it showed.
	Events bool
	// FIFO is the queue the recorded stream goes through again
	// (informer.Config.FIFO).
	FIFO informer.FIFO
}

// Engine picks the recorded collections of sel and returns the engine that
// plays them, its informers added, and its targets.
func (p *Player) Engine(sel EngineOptions, warn io.Writer) (*informer.Engine, []informer.Target, error) {
	ts, err := Pick(p.recorded, sel.Args, sel.Namespace, sel.Contexts, p.names())
	if err != nil {
		return nil, nil, err
	}
	var selector labels.Selector
	if sel.Selector != "" {
		if selector, err = labels.Parse(sel.Selector); err != nil {
			return nil, nil, fmt.Errorf("invalid --selector %q: %w", sel.Selector, err)
		}
	}
	if sel.Tree {
		for _, c := range p.collections {
			if len(sel.Contexts) == 0 || slices.Contains(sel.Contexts, c.Context) {
				c.Role = informer.RoleOwned
				ts = append(ts, c)
			}
		}
	}
	p.events = nil
	if sel.Events {
		for _, c := range p.eventCollections {
			if (len(sel.Contexts) == 0 || slices.Contains(sel.Contexts, c.Context)) &&
				(sel.Namespace == "" || c.Namespace == "" || c.Namespace == sel.Namespace) {
				p.events = append(p.events, c)
			}
		}
		if len(p.events) == 0 {
			return nil, nil, fmt.Errorf("--events: the recording %s holds no Events %s: record with --events to replay them", p.names(), where(sel.Namespace, sel.Contexts))
		}
	}
	if err := p.Select(append(slices.Clone(ts), p.events...), selector); err != nil {
		return nil, nil, err
	}
	cfg := informer.Config{NewListerWatcher: p.NewListerWatcher, Clock: p.Clock(), NewBackoff: p.NewBackoff, Dropped: p.dropped, FIFO: sel.FIFO}
	if sel.Tree {
		cfg.Indexers, cfg.KeepListed, cfg.Selects = tree.Indexers(), tree.KeepListedFromStart, p.selectsTarget
	}
	engine := informer.New(cfg, warn)
	for _, t := range ts {
		if _, err := engine.Add(t); err != nil {
			return nil, nil, err
		}
	}
	return engine, ts, nil
}

// OneNamespace is the namespace every recorded collection is in, when
// they are all in one; "" otherwise (or when one was watched in every
// namespace, or is cluster-scoped).
func (p *Player) OneNamespace() string {
	ns := ""
	for _, t := range p.watched {
		if t.Namespace == "" || (ns != "" && t.Namespace != ns) {
			return ""
		}
		ns = t.Namespace
	}
	return ns
}

// RecordedTree reports whether the recordings were made with --tree:
// their headers name --tree's scouts or owned types.
func (p *Player) RecordedTree() bool {
	return slices.ContainsFunc(p.watched, func(t informer.Target) bool {
		return t.Role == informer.RoleScout || t.Role == informer.RoleOwned
	})
}

// RecordedEvents reports whether the recordings hold Events (--events).
func (p *Player) RecordedEvents() bool { return len(p.eventCollections) > 0 }

// LeftOut says, in one phrase, what the recordings hold that sel does not
// play (picked, the roots it plays): other recorded roots, what the trees
// held without --tree, the Events without --events; "" when it plays it
// all.
func (p *Player) LeftOut(sel EngineOptions, picked []informer.Target) string {
	var roots []informer.Target
	for _, t := range p.recorded {
		if len(sel.Contexts) > 0 && !slices.Contains(sel.Contexts, t.Context) {
			continue
		}
		if !slices.ContainsFunc(picked, func(o informer.Target) bool { return coversTarget(o, t) }) {
			roots = append(roots, t)
		}
	}
	var parts []string
	if len(roots) > 0 {
		parts = append(parts, informer.Describe(roots)+" (give no type to replay every one)")
	}
	if !sel.Tree && p.RecordedTree() {
		parts = append(parts, "what its roots own (--tree)")
	}
	if !sel.Events && p.RecordedEvents() {
		parts = append(parts, "its Events (--events)")
	}
	return strings.Join(parts, "; ")
}

// coversTarget reports whether picked, a target a replay plays, is of
// the collection of t, a recorded one (a namespace or a name given narrows
// it, as asked).
func coversTarget(picked, t informer.Target) bool {
	return picked.Context == t.Context && picked.Resource == t.Resource
}

// ReadEnd reads the recording name through for where it ends. warn
// receives its warnings (a torn end).
func ReadEnd(name string, warn io.Writer) (*recording.End, error) {
	r, err := recording.Open(name, nil)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return readEnd(r, warn)
}

// ReadDirEnd reads the recording directory of ix for where it ends:
// from the newest checkpoint of its newest segment on, which holds the
// state there.
func ReadDirEnd(ix *recording.DirIndex, warn io.Writer) (*recording.End, error) {
	r, err := recording.OpenDir(ix, ix.Newest(), warn)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return readEnd(r, warn)
}

// readEnd is ReadEnd of the recording r.
func readEnd(r *recording.Reader, warn io.Writer) (*recording.End, error) {
	p, err := Open(warn, r)
	if err != nil {
		return nil, err
	}
	// The roots and the Events: their records are all of their state,
	// and they resume. --tree's scouts record nothing, and its owned
	// types only the objects in a tree: they list again, and the tree of
	// the run that goes on is told what those were (End.Members), read
	// here from each scout's type.
	var resumable []informer.Target
	for _, t := range p.watched {
		switch {
		case t.Role.IsRoot() || t.Role == informer.RoleEvents:
			resumable = append(resumable, t)
		case t.Role == informer.RoleScout, t.Role == informer.RoleOwned:
			// A scout's type, or one a header names as owned: a
			// directory's later segments say so of a type whose scout
			// found members as the segment began.
			t.Role = informer.RoleOwned
			resumable = addTarget(resumable, t)
		}
	}
	if err := p.Select(resumable, nil); err != nil {
		return nil, err
	}
	p.from = time.Unix(1<<40, 0) // past any record: read them all
	if err := p.fastForward(); err != nil {
		return nil, err
	}
	end := &recording.End{Recorded: p.recorded, Resumes: map[string]informer.Resumed{}, Targets: map[string]informer.Target{}, Last: p.lastLine, Torn: p.torn,
		Tree: p.RecordedTree(), Events: p.RecordedEvents()}
	if h := p.newest; h != nil {
		end.Servers, end.LabelSelector, end.FieldSelector = h.Servers, h.LabelSelector, h.FieldSelector
	}
	roots := map[string]bool{} // by context and UID
	for _, f := range p.feeds {
		if f.target.Role == informer.RoleOwned {
			continue
		}
		res := informer.Resumed{ResourceVersion: f.pos, Objects: f.state.items()}
		if f.pos != "" {
			res.Seen = f.seen
		}
		end.Resumes[f.target.ID()] = res
		end.Targets[f.target.ID()] = f.target
		if f.target.Role.IsRoot() {
			for _, obj := range res.Objects {
				roots[f.target.Context+"|"+obj.UID] = true
			}
		}
	}
	for _, f := range p.feeds {
		if f.target.Role != informer.RoleOwned {
			continue
		}
		for _, obj := range f.state.items() {
			if !roots[f.target.Context+"|"+obj.UID] {
				end.Members = append(end.Members, tree.Member{Target: f.target, Object: obj})
			}
		}
	}
	return end, nil
}
