package condition

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kubectl-deltas/kubectl-deltas/internal/events"
	"github.com/kubectl-deltas/kubectl-deltas/internal/health"
	"github.com/kubectl-deltas/kubectl-deltas/internal/printer"
	"github.com/kubectl-deltas/kubectl-deltas/internal/rawobj"
	"github.com/kubectl-deltas/kubectl-deltas/internal/textsafe"
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
	// Logs are the last lines of its failing container's log, when it is
	// a Pod whose container failed after it ran (logFetch).
	Logs *printer.VerdictLogs

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
	h.logLines(b, indent)
}

// logLines appends the lines of h's log, if any, under a line that says
// whose they are, each on a line indented by indent and two more spaces,
// control characters escaped.
func (h Held) logLines(b *strings.Builder, indent string) {
	if h.Logs == nil || len(h.Logs.Lines) == 0 {
		return
	}
	whose := "its current instance"
	if h.Logs.Previous {
		whose = "its previous instance"
	}
	fmt.Fprintf(b, "\n%slast %d lines of the log of container %s (%s):", indent, len(h.Logs.Lines), textsafe.String(h.Logs.Container), whose)
	for _, line := range h.Logs.Lines {
		b.WriteString("\n" + indent + "  " + textsafe.String(line))
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
	// judge judges the blockers; logs reads their failing containers'
	// logs.
	judge *health.Judge
	logs  logFetch
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
	e.Held.logLines(&b, "  ")
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
	// judge judges the blockers (Explain); logs reads their failing
	// containers' logs.
	judge *health.Judge
	logs  logFetch
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
		if h.Explained != "" && h.Logs == nil { // logs are each container's own
			i = slices.IndexFunc(groups, func(g []Held) bool {
				return g[0].Health == h.Health && g[0].Explained == h.Explained && g[0].Logs == nil
			})
		}
		if i < 0 {
			groups = append(groups, []Held{h})
			continue
		}
		groups[i] = append(groups[i], h)
	}
	return groups
}
