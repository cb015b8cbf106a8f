package condition

import (
	"context"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kubectl-deltas/kubectl-deltas/internal/events"
	"github.com/kubectl-deltas/kubectl-deltas/internal/printer"
)

// ExplainLimit bounds the look-ups that explain a failure or a timeout:
// the first ExplainLimit objects, within ExplainTimeout in all.
const (
	ExplainLimit   = 10
	ExplainTimeout = 5 * time.Second
)

// Explain adds to each held object its latest Warning event, asked once of
// its cluster's client (clientOf its context; nil: none to ask, as in a
// replay) with events.LatestWarning. An object without one, or whose
// look-up failed, stays as it is: the failure is what the user needs to
// read, not a look-up's error.
func Explain(held []*Held, clientOf func(context string) rest.Interface) {
	ctx, cancel := context.WithTimeout(context.Background(), ExplainTimeout)
	defer cancel()
	for i, h := range held {
		if i == ExplainLimit {
			break
		}
		if h.UID == "" {
			continue
		}
		client := clientOf(h.Context)
		if client == nil {
			continue
		}
		if w, found, err := events.LatestWarning(ctx, client, h.Namespace, h.UID); err == nil && found {
			h.Explained, h.Warning = w.String(), &w
		}
	}
}

// Verdict is the record that ends a JSON or YAML stream stopped by a
// condition: outcome (Met, Failed, TimedOut) at now, on condition, for
// the objects held.
func Verdict(outcome, condition string, held []*Held, now time.Time) *printer.Verdict {
	v := &printer.Verdict{Time: now, Outcome: outcome, Condition: condition, Objects: []printer.VerdictObject{}}
	for _, h := range held {
		o := printer.VerdictObject{Context: h.Context, APIVersion: h.APIVersion, Kind: h.Kind, Namespace: h.Namespace, Name: h.ObjectName, UID: h.UID}
		if hv := h.Verdict; hv != nil {
			o.Health = &printer.Health{Status: string(hv.Status), Source: string(hv.Source), Reason: hv.Reason, Message: hv.Message}
			o.Container = hv.Container
		}
		for _, p := range h.Path {
			o.Path = append(o.Path, printer.Owner{APIVersion: p.APIVersion, Kind: p.Kind, Name: p.Name, UID: p.UID})
		}
		if w := h.Warning; w != nil {
			o.Event = &printer.VerdictEvent{Type: "Warning", Reason: w.Reason, Message: w.Message, Count: w.Count, Time: w.Last}
		}
		v.Objects = append(v.Objects, o)
	}
	return v
}
