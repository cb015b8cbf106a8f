package condition

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-deltas/kubectl-deltas/internal/cache"
	"github.com/kubectl-deltas/kubectl-deltas/internal/delta"
	"github.com/kubectl-deltas/kubectl-deltas/internal/events"
	"github.com/kubectl-deltas/kubectl-deltas/internal/health"
	"github.com/kubectl-deltas/kubectl-deltas/internal/informer"
	"github.com/kubectl-deltas/kubectl-deltas/internal/rawobj"
)

// fullPass is the reference the Waiter is held to: the waiter as it was
// before it counted, judging every condition on every object shown at
// every check, with nothing kept from one check to the next but the
// judges' own memory (transient failures, scheduling Events) and
// --stable-for's start.
type fullPass struct {
	until, untilAny, failWhen []*Condition
	stream                    Engine
	view                      map[string]map[string]*rawobj.Object
	judge                     *health.Judge
	now                       func() time.Time
	stableFor                 time.Duration
	holdingSince              time.Time
	reported                  health.Status
}

// fullObject is an object fullPass judges.
type fullObject struct {
	name string
	root bool
	t    informer.Target
	obj  *rawobj.Object
}

func (r *fullPass) handle(b informer.Batch) {
	t := b.Informer.Target()
	if t.Role == informer.RoleEvents {
		for _, it := range b.Items {
			e, err := events.Summarize(it.Object.JSON)
			if err != nil {
				continue
			}
			r.judge.NoteEvent(e.Subject.UID, e.Reason, e.Last)
			for _, c := range slices.Concat(r.until, r.untilAny, r.failWhen) {
				c.noteEvent(e.Subject.UID, e.Reason, e.Last)
			}
		}
		return
	}
	objects := r.view[t.ID()]
	if objects == nil {
		objects = map[string]*rawobj.Object{}
		r.view[t.ID()] = objects
	}
	for _, it := range b.Items {
		if it.Type == delta.Deleted {
			delete(objects, it.Key)
		} else {
			objects[it.Key] = it.Object
		}
	}
}

// objects are the objects of the stream's targets now; a named target's
// whether it exists or not.
func (r *fullPass) objects() []fullObject {
	var out []fullObject
	for _, t := range r.stream.Targets() {
		if t.Role == informer.RoleEvents {
			continue
		}
		if t.Name != "" {
			obj := r.view[t.ID()][t.Namespace+"/"+t.Name]
			out = append(out, fullObject{name: objectName(t, t.Name), root: t.Role.IsRoot(), t: t, obj: obj})
			continue
		}
		for _, obj := range r.view[t.ID()] {
			out = append(out, fullObject{name: objectName(t, obj.Name), root: t.Role.IsRoot(), t: t, obj: obj})
		}
	}
	return out
}

// holders are the names of the objects c holds for, and of those it does
// not, among objects (the roots alone with rootsOnly but on health).
func (r *fullPass) holders(t *testing.T, c *Condition, objects []fullObject, rootsOnly bool) (holding, not map[string]bool) {
	t.Helper()
	holding, not = map[string]bool{}, map[string]bool{}
	for _, o := range objects {
		if rootsOnly && !c.IsStatus() && !o.root {
			continue
		}
		v := targetVars(o.t, o.t.Namespace, o.t.Name)
		if o.obj != nil {
			v = targetVars(o.t, o.obj.Namespace, o.obj.Name)
			v.Object = o.obj.JSON
		}
		// Holds, not Judge: no kept verdicts, but health's own.
		var ok bool
		var err error
		if c.IsStatus() {
			ok, _, err = c.Judge(o.obj, v, r.now())
		} else {
			ok, err = c.Holds(v)
		}
		if err != nil {
			t.Fatalf("%s on %s: %v", c, o.name, err)
		}
		if ok {
			holding[o.name] = true
		} else {
			not[o.name] = true
		}
	}
	return holding, not
}

// expected is what a check must say.
type expected struct {
	stop bool
	// failed is the --fail-when that holds, and the objects it holds
	// for: the error names one of them.
	failed     string
	candidates map[string]bool
	// met are the root objects met, by name: all of them for --until,
	// one of them for --until-any.
	met    []string
	states []State
	// report is the worst health when it changed and the run goes on,
	// "" otherwise; reportable the objects that have it, of which there
	// are reportCount (an object two targets show counts twice).
	report      health.Status
	reportable  map[string]bool
	reportCount int
}

// check is what the Waiter's Check must find.
func (r *fullPass) check(t *testing.T) expected {
	t.Helper()
	all := r.objects()
	var roots []fullObject
	for _, o := range all {
		if o.root {
			roots = append(roots, o)
		}
	}
	rootNames := map[string]bool{}
	for _, o := range roots {
		rootNames[o.name] = true
	}
	// Every condition is judged on every object of its scope, whether
	// the run stops or not: the judges' memory of a transient failure
	// depends on every version they saw.
	var want expected
	held := false
	for _, c := range r.until {
		_, not := r.holders(t, c, all, true)
		held = held || len(not) > 0
		rootsHold := true
		for n := range not {
			rootsHold = rootsHold && !rootNames[n]
		}
		want.states = append(want.states, State{Text: "--until=" + c.String(), Holds: len(roots) > 0 && rootsHold || len(roots) == 0 && r.allDelete()})
	}
	anyMet := map[string]bool{}
	for _, c := range r.untilAny {
		holding, _ := r.holders(t, c, roots, true)
		want.states = append(want.states, State{Text: "--until-any=" + c.String(), Holds: len(holding) > 0})
		if len(anyMet) == 0 {
			anyMet = holding
		}
	}
	for _, c := range r.failWhen {
		holding, _ := r.holders(t, c, all, false)
		want.states = append(want.states, State{Text: "--fail-when=" + c.String(), Holds: len(holding) > 0})
		if want.failed == "" && len(holding) > 0 {
			want.failed, want.candidates, want.stop = c.String(), holding, true
		}
	}
	switch {
	case want.stop:
	case len(anyMet) > 0:
		want.stop, want.candidates = true, anyMet
	case len(r.until) > 0 && (len(roots) > 0 || r.allDelete()):
		if held {
			r.holdingSince = time.Time{}
			break
		}
		if r.stableFor > 0 {
			if r.holdingSince.IsZero() {
				r.holdingSince = r.now()
			}
			if r.now().Sub(r.holdingSince) < r.stableFor {
				break
			}
		}
		want.stop = true
		for _, o := range roots {
			want.met = append(want.met, o.name)
		}
		sort.Strings(want.met)
	}
	// Every object's health, judged at every check whether the run
	// stops or not: a transient failure lasts while its versions fail.
	byStatus := map[health.Status]map[string]bool{}
	count := map[health.Status]int{}
	var worst health.Status
	for i, o := range all {
		s := r.judge.At(o.obj, r.now()).Status
		if byStatus[s] == nil {
			byStatus[s] = map[string]bool{}
		}
		byStatus[s][o.name] = true
		count[s]++
		if i == 0 || worse(s) > worse(worst) {
			worst = s
		}
	}
	if !want.stop && len(all) > 0 && worst != r.reported {
		r.reported, want.report, want.reportable, want.reportCount = worst, worst, byStatus[worst], count[worst]
	}
	return want
}

func (r *fullPass) allDelete() bool {
	for _, c := range r.until {
		if !c.IsDelete() {
			return false
		}
	}
	return true
}

// podStates are the statuses the random streams give Pods: Current,
// unschedulable (Failed once the schedule window has passed), crash
// looping, pulling an image in vain (Failed once failAfter has passed),
// done, failed.
var podStates = []string{
	`{"phase":"Running","conditions":[{"type":"Ready","status":"True"}],"containerStatuses":[{"name":"c","ready":true,"restartCount":0,"state":{"running":{}}}]}`,
	`{"phase":"Pending","conditions":[{"type":"PodScheduled","status":"False","reason":"Unschedulable","message":"0/3 nodes are available"}]}`,
	`{"phase":"Running","containerStatuses":[{"name":"c","ready":false,"restartCount":3,"state":{"waiting":{"reason":"CrashLoopBackOff"}}}]}`,
	`{"phase":"Pending","containerStatuses":[{"name":"c","ready":false,"restartCount":0,"state":{"waiting":{"reason":"ImagePullBackOff","message":"back-off"}}}]}`,
	`{"phase":"Succeeded"}`,
	`{"phase":"Failed"}`,
}

// conditionPool are the conditions random runs draw from.
var conditionPool = []string{
	"status=Current", "status=Failed", "status=InProgress", "condition=Ready",
	"jsonpath={.metadata.labels.v}=2", "jsonpath={.status.phase}=Failed", "jsonpath={.metadata.labels.v}",
	"cel=object.metadata.labels.v == '2'", "cel=object.status.phase == 'Running'", "delete", "create",
}

// TestDifferentialAgainstTheFullPass: on random streams — Pods added,
// changed and deleted in a selected and a named root target and a member
// target that comes and goes, scheduling Events, the clock running over
// schedule windows and transient failures, with and without
// --stable-for — every check of the Waiter says what judging everything
// at every check says: whether the run stops, which --fail-when matched
// and for one of which objects, what was met, every condition's state,
// each change of the worst health and objects that have it; and a
// timeout names the same objects.
func TestDifferentialAgainstTheFullPass(t *testing.T) {
	for seed := range uint64(300) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { differentialRun(t, seed) })
	}
}

func differentialRun(t *testing.T, seed uint64) {
	rnd := rand.New(rand.NewPCG(seed, 56))
	pick := func(flag string, most int) ([]string, []*Condition, []*Condition) {
		var srcs []string
		for range rnd.IntN(most + 1) {
			srcs = append(srcs, conditionPool[rnd.IntN(len(conditionPool))])
		}
		return srcs, mustConditions(t, flag, srcs...), mustConditions(t, flag, srcs...)
	}
	untilSrc, until, refUntil := pick("--until", 2)
	anySrc, untilAny, refAny := pick("--until-any", 1)
	failSrc, failWhen, refFail := pick("--fail-when", 1)
	if len(until)+len(untilAny)+len(failWhen) == 0 {
		untilSrc, until, refUntil = []string{"status=Current"}, mustConditions(t, "--until", "status=Current"), mustConditions(t, "--until", "status=Current")
	}
	stableFor := time.Duration(rnd.IntN(2)) * 5 * time.Second
	t.Logf("--until=%q --until-any=%q --fail-when=%q --stable-for=%s", untilSrc, anySrc, failSrc, stableFor)

	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	engine := informer.New(informer.Config{NewListerWatcher: func(informer.Target) cache.ListerWatcher { return nil }}, nil)
	named := pods
	named.Name = "p-0"
	member := pods
	member.Role, member.Optional = informer.RoleScout, true
	eventsTarget := informer.Target{
		Resource: schema.GroupVersionResource{Version: "v1", Resource: "events"},
		Kind:     schema.GroupVersionKind{Version: "v1", Kind: "Event"},
		Role:     informer.RoleEvents, Namespace: "ns",
	}
	informers := map[string]*informer.Informer{}
	for _, tg := range []informer.Target{pods, named, eventsTarget} {
		inf, err := engine.Add(tg)
		if err != nil {
			t.Fatal(err)
		}
		informers[tg.ID()] = inf
	}
	memberInf, err := engine.Add(member)
	if err != nil {
		t.Fatal(err)
	}
	memberOn := true

	w := NewWaiter(until, untilAny, failWhen, &bytes.Buffer{})
	w.SetNow(clock)
	w.SetFailAfter(10 * time.Second)
	w.stableFor = stableFor
	var states []State
	w.ReportStates(func(s []State) { states = s })
	type reported struct {
		status health.Status
		names  []string
	}
	var reports []reported
	w.ReportChanges(func(s health.Status, cause []Held) {
		r := reported{status: s}
		for _, h := range cause {
			r.names = append(r.names, h.Name)
		}
		reports = append(reports, r)
	})
	sink := w.Sink(fakeStream{engine}, &discard{})
	ref := &fullPass{until: refUntil, untilAny: refAny, failWhen: refFail, stream: fakeStream{engine},
		view: map[string]map[string]*rawobj.Object{}, judge: health.NewJudge(), now: clock, stableFor: stableFor}
	ref.judge.SetFailAfter(10 * time.Second)
	for _, c := range slices.Concat(refUntil, refAny, refFail) {
		c.setFailAfter(10 * time.Second)
	}

	created := map[string]time.Time{}
	hand := func(inf *informer.Informer, items ...informer.Item) {
		b := informer.Batch{Informer: inf, Items: items}
		if _, err := sink.Handle(b); err != nil {
			t.Fatal(err)
		}
		ref.handle(b)
	}
	podItem := func(typ delta.Type, prefix string, n int) informer.Item {
		name := fmt.Sprintf("%s-%d", prefix, n)
		if _, ok := created[name]; !ok || typ == delta.Added {
			created[name] = now
		}
		status := podStates[rnd.IntN(len(podStates))]
		data := fmt.Sprintf(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":%q,"namespace":"ns","uid":%q,"resourceVersion":"%d","creationTimestamp":%q,"labels":{"v":"%d"}},"status":%s}`,
			name, name, rnd.IntN(1e6), created[name].Format(time.RFC3339), 1+rnd.IntN(2), status)
		o, err := rawobj.Parse([]byte(data), rawobj.ParseOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return informer.Item{Type: typ, Object: o, Key: "ns/" + name}
	}

	for step := range 60 {
		switch r := rnd.IntN(20); {
		case r < 10:
			// Pods of the selected root; p-0 is also the named one's.
			var items []informer.Item
			for range 1 + rnd.IntN(4) {
				typ := []delta.Type{delta.Added, delta.Updated, delta.Updated, delta.Deleted}[rnd.IntN(4)]
				items = append(items, podItem(typ, "p", rnd.IntN(6)))
			}
			hand(informers[pods.ID()], items...)
			for _, it := range items {
				if it.Key == "ns/p-0" {
					hand(informers[named.ID()], it)
				}
			}
		case r < 14 && memberOn:
			typ := []delta.Type{delta.Added, delta.Updated, delta.Deleted}[rnd.IntN(3)]
			hand(memberInf, podItem(typ, "m", rnd.IntN(4)))
		case r < 15:
			// The member target goes, or comes back with what it had.
			if memberOn {
				engine.Remove(member.ID())
			} else if memberInf, err = engine.Add(member); err != nil {
				t.Fatal(err)
			}
			memberOn = !memberOn
		case r < 17:
			reason := []string{"FailedScheduling", "TriggeredScaleUp", "Pulled"}[rnd.IntN(3)]
			subject := fmt.Sprintf("%s-%d", []string{"p", "m"}[rnd.IntN(2)], rnd.IntN(6))
			data := fmt.Sprintf(`{"apiVersion":"v1","kind":"Event","metadata":{"name":"e%d","namespace":"ns","uid":"e%d","resourceVersion":"1"},"involvedObject":{"apiVersion":"v1","kind":"Pod","namespace":"ns","name":%q,"uid":%q},"type":"Normal","reason":%q,"message":"m","lastTimestamp":%q}`,
				step, step, subject, subject, reason, now.Format(time.RFC3339))
			o, err := rawobj.Parse([]byte(data), rawobj.ParseOptions{})
			if err != nil {
				t.Fatal(err)
			}
			hand(informers[eventsTarget.ID()], informer.Item{Type: delta.Added, Object: o, Key: "ns/e"})
		default:
			now = now.Add(time.Duration(rnd.IntN(12000)) * time.Millisecond)
		}

		want := ref.check(t)
		reports = reports[:0]
		stop, err := w.Check()
		where := fmt.Sprintf("step %d at %s", step, now.Format("15:04:05.000"))
		if stop != want.stop {
			t.Fatalf("%s: stop %v (%v), the full pass says %v (%+v)", where, stop, err, want.stop, want)
		}
		var failed *FailedError
		switch {
		case want.failed != "":
			if !errors.As(err, &failed) || failed.Condition.String() != want.failed || !want.candidates[failed.Held.Name] {
				t.Fatalf("%s: %v; the full pass says --fail-when=%s holds for %v", where, err, want.failed, want.candidates)
			}
		case err != nil:
			t.Fatalf("%s: %v", where, err)
		case stop && want.met == nil:
			if met, _ := w.Met(); len(met) != 1 || !want.candidates[met[0].Name] {
				t.Fatalf("%s: --until-any met on %+v; the full pass says one of %v", where, met, want.candidates)
			}
		case stop:
			met, _ := w.Met()
			var names []string
			for _, h := range met {
				names = append(names, h.Name)
			}
			sort.Strings(names)
			if !slices.Equal(names, want.met) {
				t.Fatalf("%s: met on %v; the full pass says %v", where, names, want.met)
			}
		}
		if !slices.Equal(states, want.states) {
			t.Fatalf("%s: states %+v; the full pass says %+v", where, states, want.states)
		}
		switch {
		case want.report == "" && len(reports) > 0:
			t.Fatalf("%s: reported %+v; the full pass reports nothing", where, reports)
		case want.report != "" && (len(reports) != 1 || reports[0].status != want.report || len(reports[0].names) != min(maxReported, want.reportCount)):
			t.Fatalf("%s: reported %+v; the full pass reports %s for %v", where, reports, want.report, want.reportable)
		case want.report != "":
			for _, n := range reports[0].names {
				if !want.reportable[n] {
					t.Fatalf("%s: reported %s for %s; the full pass says %v", where, want.report, n, want.reportable)
				}
			}
		}
	}
	if len(until) == 0 {
		return
	}
	var timedOut *TimeoutError
	var got []string
	if err := w.TimedOut(); errors.As(err, &timedOut) {
		for _, h := range timedOut.Held {
			got = append(got, h.Name)
		}
	}
	if want := refTimedOut(t, ref); !slices.Equal(got, want) {
		t.Fatalf("a timeout names %v; the full pass says %v", got, want)
	}
}

// refTimedOut are the names of the objects fullPass finds holding
// --until up, as a timeout names them (in order).
func refTimedOut(t *testing.T, r *fullPass) []string {
	t.Helper()
	all := r.objects()
	notHolding := map[string]bool{}
	for _, c := range r.until {
		_, not := r.holders(t, c, all, true)
		for n := range not {
			notHolding[n] = true
		}
	}
	var names []string
	for n := range notHolding {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
