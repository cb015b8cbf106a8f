package condition

import (
	"container/heap"
	"time"

	"github.com/kubectl-deltas/kubectl-deltas/internal/celexpr"
	"github.com/kubectl-deltas/kubectl-deltas/internal/health"
)

// tally is what one condition says of the objects in its scope, counted
// as they are judged (Waiter.count, Waiter.uncount): a check reads it in
// O(1).
type tally struct {
	// index is the condition's in Waiter.conds, and of its verdicts in
	// entry.verdicts.
	index int
	// rootsOnly: the condition is judged on the roots' objects alone
	// (--until and --until-any but on health); else on every object
	// shown, --tree's members included.
	rootsOnly bool
	// notHolding counts, by scope, the objects it does not hold for (an
	// error counts as not holding).
	notHolding [3]int
	// holding holds, by scope, the objects it holds for, when keepHolding
	// (--until-any, --fail-when: a check names one of them).
	keepHolding bool
	holding     [3]map[*entry]struct{}
	// erring holds the objects it could not be evaluated on.
	erring map[*entry]struct{}
}

// newTally is the empty tally of c, conds[index], which names the objects it holds for
// when keepHolding.
func newTally(index int, c *Condition, rootsOnly, keepHolding bool) *tally {
	t := &tally{index: index, rootsOnly: rootsOnly && !c.IsStatus(), keepHolding: keepHolding, erring: map[*entry]struct{}{}}
	if keepHolding {
		for s := range t.holding {
			t.holding[s] = map[*entry]struct{}{}
		}
	}
	return t
}

// applies reports whether the condition is judged on objects of scope s.
func (t *tally) applies(s scope) bool {
	return s == rootScope || s == memberScope && !t.rootsOnly
}

// add counts v, a verdict on e in scope s; remove takes it back.
func (t *tally) add(e *entry, s scope, v verdict) {
	switch {
	case v.err != nil:
		t.erring[e] = struct{}{}
		t.notHolding[s]++
	case !v.ok:
		t.notHolding[s]++
	case t.keepHolding:
		t.holding[s][e] = struct{}{}
	}
}

func (t *tally) remove(e *entry, s scope, v verdict) {
	switch {
	case v.err != nil:
		delete(t.erring, e)
		t.notHolding[s]--
	case !v.ok:
		t.notHolding[s]--
	case t.keepHolding:
		delete(t.holding[s], e)
	}
}

// notHoldingIn counts the objects in the condition's scope it does not
// hold for, of the roots alone with rootsOnly.
func (t *tally) notHoldingIn(rootsOnly bool) int {
	if rootsOnly || t.rootsOnly {
		return t.notHolding[rootScope]
	}
	return t.notHolding[rootScope] + t.notHolding[memberScope]
}

// anyHolding returns an object it holds for (of the roots alone with
// rootsOnly), nil if none; keepHolding only.
func (t *tally) anyHolding(rootsOnly bool) *entry {
	for s := rootScope; s <= memberScope; s++ {
		if s == memberScope && (rootsOnly || t.rootsOnly) {
			break
		}
		for e := range t.holding[s] {
			return e
		}
	}
	return nil
}

// anyErr returns the error of an object it could not be evaluated on (of
// the roots alone with rootsOnly), nil if none.
func (t *tally) anyErr(rootsOnly bool) error {
	for e := range t.erring {
		if e.tv.scope == rootScope || !rootsOnly {
			return e.verdicts[t.index].err
		}
	}
	return nil
}

// healthTally is ReportChanges' count of the objects shown by health.
type healthTally struct {
	count map[health.Status]int
	// with holds the objects of each status, to name some.
	with map[health.Status]map[*entry]struct{}
}

func (t *healthTally) add(e *entry, s health.Status) {
	t.count[s]++
	if t.with[s] == nil {
		t.with[s] = map[*entry]struct{}{}
	}
	t.with[s][e] = struct{}{}
}

func (t *healthTally) remove(e *entry, s health.Status) {
	t.count[s]--
	delete(t.with[s], e)
}

// worst is the worst status among the objects counted (see worse), false
// when none is.
func (t *healthTally) worst() (health.Status, bool) {
	var status health.Status
	found := false
	for s, n := range t.count {
		if n > 0 && (!found || worse(s) > worse(status)) {
			status, found = s, true
		}
	}
	return status, found
}

// due is an entry whose verdicts may change at a time: the first of its
// RecheckAts when it was pushed, for the object gen.
type due struct {
	at  time.Time
	e   *entry
	gen uint64
}

// dueHeap orders the due entries by time (container/heap).
type dueHeap []due

func (h dueHeap) Len() int           { return len(h) }
func (h dueHeap) Less(i, j int) bool { return h[i].at.Before(h[j].at) }
func (h dueHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *dueHeap) Push(x any)        { *h = append(*h, x.(due)) }
func (h *dueHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// dueAt has the check at or after at re-judge e. The heap keeps the
// times of objects that changed since, until they come; it is swept of
// them each time it has doubled, so that it stays within twice what is
// due.
func (w *Waiter) dueAt(e *entry, at time.Time) {
	heap.Push(&w.due, due{at: at, e: e, gen: e.gen})
	if len(w.due) < max(2*w.dueSwept, 1024) {
		return
	}
	live := w.due[:0]
	for _, d := range w.due {
		if d.gen == d.e.gen && !d.e.removed {
			live = append(live, d)
		}
	}
	clear(w.due[len(live):])
	w.due = live
	heap.Init(&w.due)
	w.dueSwept = len(w.due)
}

// popDue marks dirty the entries whose time has come at now; entries that
// changed or left since they were pushed are dropped.
func (w *Waiter) popDue(now time.Time) {
	for len(w.due) > 0 && !now.Before(w.due[0].at) {
		d := heap.Pop(&w.due).(due)
		if d.gen == d.e.gen && !d.e.removed {
			w.markDirty(d.e)
		}
	}
}

// judgeEntry judges e at now: the verdicts of the conditions that apply to its
// scope that it has not had yet for its object, or whose time has come;
// ReportChanges' health likewise. Each is counted in its tally.
func (w *Waiter) judgeEntry(e *entry, now time.Time) {
	s := e.tv.scope
	if s == outOfScope {
		return
	}
	if e.verdicts == nil {
		if len(w.conds) <= len(e.few) {
			e.verdicts = e.few[:len(w.conds)]
		} else {
			e.verdicts = make([]verdict, len(w.conds))
		}
	}
	var next time.Time
	var vars celexpr.Vars // made for the first condition that reads them
	for i, c := range w.conds {
		t := w.tallies[i]
		if !t.applies(s) {
			continue
		}
		v := &e.verdicts[i]
		if !v.judged || !v.recheckAt.IsZero() && !now.Before(v.recheckAt) {
			if v.counted {
				t.remove(e, s, *v)
			}
			if !c.IsStatus() && vars.Kind == "" {
				vars = e.vars()
			}
			ok, recheckAt, err := c.Judge(e.obj, vars, now)
			*v = verdict{judged: true, ok: ok, err: err, recheckAt: recheckAt}
		}
		if !v.counted {
			t.add(e, s, *v)
			v.counted = true
		}
		next = earlier(next, v.recheckAt)
	}
	if w.report != nil && w.judge {
		h := &e.health
		if !h.judged || !h.recheckAt.IsZero() && !now.Before(h.recheckAt) {
			if h.counted {
				w.healths.remove(e, h.status)
			}
			v := w.healthJudge.At(e.obj, now)
			*h = judged{judged: true, status: v.Status, recheckAt: v.RecheckAt}
		}
		if !h.counted {
			w.healths.add(e, h.status)
			h.counted = true
		}
		next = earlier(next, h.recheckAt)
	}
	if !next.IsZero() {
		w.dueAt(e, next)
	}
}

// earlier is the earlier of two times, zero meaning none.
func earlier(a, b time.Time) time.Time {
	if a.IsZero() || !b.IsZero() && b.Before(a) {
		return b
	}
	return a
}

// uncountAll takes what was said of e out of the tallies.
func (w *Waiter) uncountAll(e *entry) {
	s := e.tv.scope
	for i := range e.verdicts {
		if v := &e.verdicts[i]; v.counted {
			w.tallies[i].remove(e, s, *v)
			v.counted = false
		}
	}
	if e.health.counted {
		w.healths.remove(e, e.health.status)
		e.health.counted = false
	}
}

// refresh brings the tallies up to date at now: the targets, the entries
// whose time has come, the entries batches changed.
func (w *Waiter) refresh(now time.Time) {
	w.syncTargets()
	w.popDue(now)
	for _, e := range w.dirty {
		e.dirty = false
		if !e.removed {
			w.judgeEntry(e, now)
		}
	}
	clear(w.dirty)
	w.dirty = w.dirty[:0]
}
