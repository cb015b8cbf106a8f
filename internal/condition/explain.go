package condition

import (
	"context"
	"fmt"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kubectl-deltas/kubectl-deltas/internal/events"
	"github.com/kubectl-deltas/kubectl-deltas/internal/health"
	"github.com/kubectl-deltas/kubectl-deltas/internal/printer"
	"github.com/kubectl-deltas/kubectl-deltas/internal/textsafe"
)

// ExplainLimit bounds the look-ups that explain a failure or a timeout:
// the first ExplainLimit objects, within ExplainTimeout in all.
const (
	ExplainLimit   = 10
	ExplainTimeout = 5 * time.Second
)

// Explain adds to the objects that held the wait up their latest Warning
// event and, with findBlockers (the stream did not follow what they own:
// no --tree), what blocks each workload among them (blockers), with its
// own Warning, after it.
func (e *TimeoutError) Explain(clientOf func(context string) rest.Interface, findBlockers bool) {
	e.Held = explain(e.Held, clientOf, findBlockers, e.judge, e.logs)
}

// Explain adds to the object --fail-when held for its latest Warning
// event and, with findBlockers, what blocks it (see TimeoutError.Explain).
func (e *FailedError) Explain(clientOf func(context string) rest.Interface, findBlockers bool) {
	all := explain([]Held{e.Held}, clientOf, findBlockers, e.judge, e.logs)
	e.Held, e.Blockers = all[0], all[1:]
}

// ExplainFrom adds to the objects that held the wait up what the stream
// showed of them, where there is no cluster to ask (a replay): their
// latest Warning as shown tells it (Join.LatestWarning; nil without
// Events), and their failing containers' last log lines as logs tells
// them (the Verdicts the recording holds; nil for none).
func (e *TimeoutError) ExplainFrom(shown func(context, uid string) (events.Warning, bool), logs func(context, uid string) (printer.VerdictLogs, bool)) {
	for i := range e.Held {
		e.logs.fromStream(&e.Held[i], shown, logs)
	}
}

// ExplainFrom adds to the object --fail-when held for what the stream
// showed of it (see TimeoutError.ExplainFrom).
func (e *FailedError) ExplainFrom(shown func(context, uid string) (events.Warning, bool), logs func(context, uid string) (printer.VerdictLogs, bool)) {
	e.logs.fromStream(&e.Held, shown, logs)
}

// fromStream adds to h its latest Warning as shown tells it and the last
// f.lines of its logs as logs tells them (either nil: nothing), saying
// on f.warn why logs the recorded run could not read are missing.
func (f logFetch) fromStream(h *Held, shown func(context, uid string) (events.Warning, bool), logs func(context, uid string) (printer.VerdictLogs, bool)) {
	if shown != nil {
		if w, found := shown(h.Context, h.UID); found {
			h.Explained, h.Warning = w.String(), &w
		}
	}
	if logs == nil || f.lines <= 0 || h.UID == "" {
		return
	}
	l, found := logs(h.Context, h.UID)
	if !found {
		return
	}
	if len(l.Lines) > f.lines {
		l.Lines = l.Lines[len(l.Lines)-f.lines:]
	}
	h.Logs = &l
	if l.Unavailable != "" && f.warn != nil {
		fmt.Fprintf(f.warn, "info: no logs for %s: %s\n", h.Name, textsafe.OneLine(l.Unavailable))
	}
}

// explain looks up, each asked once of its object's cluster (clientOf its
// context; nil: none to ask, as in a replay), the latest Warning event
// of the objects held (events.LatestWarning), the last lines of their
// failing containers' logs (logs), and, with findBlockers, what
// blocks the workloads among them: at most ExplainLimit objects in all,
// within ExplainTimeout. What a look-up cannot find, or fails to, is left
// as it is: the failure is what the user needs to read, not a look-up's
// error.
func explain(held []Held, clientOf func(context string) rest.Interface, findBlockers bool, judge *health.Judge, logs logFetch) []Held {
	ctx, cancel := context.WithTimeout(context.Background(), ExplainTimeout)
	defer cancel()
	if judge == nil {
		judge = health.NewJudge()
	}
	out := make([]Held, 0, len(held))
	for _, h := range held {
		client := clientOf(h.Context)
		if len(out) >= ExplainLimit || client == nil {
			out = append(out, h)
			continue
		}
		warn(ctx, client, &h)
		logs.fetchLogs(ctx, client, &h)
		out = append(out, h)
		if !findBlockers {
			continue
		}
		found, err := blockers(ctx, client, &h, judge, ExplainLimit-len(out))
		if err != nil {
			continue
		}
		for i := range found {
			warn(ctx, client, &found[i])
			logs.fetchLogs(ctx, client, &found[i])
		}
		out = append(out, found...)
	}
	return out
}

// warn adds to h its latest Warning event, when it has one.
func warn(ctx context.Context, client rest.Interface, h *Held) {
	if h.UID == "" {
		return
	}
	if w, found, err := events.LatestWarning(ctx, client, h.Namespace, h.UID); err == nil && found {
		h.Explained, h.Warning = w.String(), &w
	}
}

// Verdict is the record that ends a JSON or YAML stream stopped by a
// condition: outcome (Met, Failed, TimedOut) at now, on condition, for
// the objects held.
func Verdict(outcome, condition string, held []Held, now time.Time) *printer.Verdict {
	return verdictOf(outcome, "", condition, held, now)
}

// Pending is the Verdict record of a change of the verdict on the objects
// waited on (Waiter.ReportChanges): their worst health, status, and the
// objects that have it.
func Pending(condition string, status health.Status, held []Held, now time.Time) *printer.Verdict {
	return verdictOf("Pending", string(status), condition, held, now)
}

func verdictOf(outcome, status, condition string, held []Held, now time.Time) *printer.Verdict {
	v := &printer.Verdict{Time: now, Outcome: outcome, Status: status, Condition: condition, Objects: []printer.VerdictObject{}}
	for _, h := range held {
		o := printer.VerdictObject{Context: h.Context, APIVersion: h.APIVersion, Kind: h.Kind, Namespace: h.Namespace, Name: h.ObjectName, UID: h.UID}
		if hv := h.Verdict; hv != nil {
			o.Health = &printer.Health{Status: string(hv.Status), Source: string(hv.Source), Reason: hv.Reason, Message: hv.Message}
			o.Container = hv.Container
		}
		o.Path = append(o.Path, h.Path...)
		if w := h.Warning; w != nil {
			o.Event = &printer.VerdictEvent{Type: "Warning", Reason: w.Reason, Message: w.Message, Count: w.Count, Time: w.Last}
		}
		o.Logs = h.Logs
		v.Objects = append(v.Objects, o)
	}
	return v
}
