package condition

import (
	"slices"
	"strings"

	"github.com/kubectl-deltas/kubectl-deltas/internal/events"
	"github.com/kubectl-deltas/kubectl-deltas/internal/health"
	"github.com/kubectl-deltas/kubectl-deltas/internal/printer"
	"github.com/kubectl-deltas/kubectl-deltas/internal/rawobj"
)

// Held is an object a condition held, or did not hold, for: what messages
// say of it.
type Held struct {
	// Name is "deployment.apps/web" (with its context's name, for
	// several clusters).
	Name string
	// Context, Namespace and UID locate it, for looking up what explains
	// it (its Events); UID is "" for an object that does not exist.
	Context, Namespace, UID string
	// Health is its health ("Failed (PodUnschedulable): Pod could not be
	// scheduled"), control characters escaped; "" when not judged.
	Health string
	// Explained is more that was found about it (its latest Warning
	// event), a line, added by whoever could look it up; Warning is that
	// event.
	Explained string
	Warning   *events.Warning

	// For the Verdict record: its apiVersion, kind and name; its health
	// (nil when not judged); its controllers from the waited-on object
	// down (Path).
	APIVersion, Kind, ObjectName string
	Verdict                      *health.Health
	Path                         []printer.Owner
	// obj is the object, for looking up what blocks it (blockers).
	obj *rawobj.Object
}

// lines appends what is said of h to b: its name and health, and its
// explanation on a line of its own, indented by indent.
func (h Held) lines(b *strings.Builder, indent string) {
	b.WriteString(h.Name)
	if h.Health != "" {
		b.WriteString(": " + h.Health)
	}
	if h.Explained != "" {
		b.WriteString("\n" + indent + h.Explained)
	}
}

// allDelete reports whether every --until is delete: then no object at all

// FailedError is a --fail-when that held.
type FailedError struct {
	Condition *Condition
	// Held is the object it held for; Blockers what blocks it, when
	// looked up (Explain).
	Held     Held
	Blockers []Held
	// judge judges the blockers.
	judge *health.Judge
}

// All is the object the condition held for, then what blocks it.
func (e *FailedError) All() []Held { return append([]Held{e.Held}, e.Blockers...) }

func (e *FailedError) Error() string {
	var b strings.Builder
	b.WriteString(e.Held.Name + " matched --fail-when=" + e.Condition.String())
	if e.Held.Health != "" {
		b.WriteString(": " + e.Held.Health)
	}
	if e.Held.Explained != "" {
		b.WriteString("\n  " + e.Held.Explained)
	}
	for _, h := range e.Blockers {
		b.WriteString("\n  ")
		h.lines(&b, "    ")
	}
	return b.String()
}

// TimeoutError is --timeout running out while waiting: kubectl wait's
// message, and the objects that held the conditions up.
type TimeoutError struct {
	// Waited names what was waited on: "deployments/web".
	Waited string
	Held   []Held
	// SourceEnded: not a --timeout, the end of a replayed recording.
	SourceEnded bool
	// judge judges the blockers (Explain).
	judge *health.Judge
}

func (e *TimeoutError) Error() string {
	var b strings.Builder
	if e.SourceEnded {
		b.WriteString("the recording ended before the condition was met on " + e.Waited)
	} else {
		b.WriteString("timed out waiting for the condition on " + e.Waited)
	}
	for _, group := range sameExplanation(e.Held) {
		b.WriteString("\n  ")
		h := group[0]
		for _, o := range group[1:] {
			h.Name += ", " + o.Name
		}
		h.lines(&b, "    ")
	}
	return b.String()
}

// sameExplanation groups held, in order, so that objects with the same
// health and the same explanation (a Warning, as the scheduler's
// FailedScheduling for every Pod of a rollout) are said once, with all
// their names.
func sameExplanation(held []Held) [][]Held {
	var groups [][]Held
	for _, h := range held {
		i := -1
		if h.Explained != "" {
			i = slices.IndexFunc(groups, func(g []Held) bool { return g[0].Health == h.Health && g[0].Explained == h.Explained })
		}
		if i < 0 {
			groups = append(groups, []Held{h})
			continue
		}
		groups[i] = append(groups[i], h)
	}
	return groups
}
