package condition

import (
	"context"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kubectl-deltas/kubectl-deltas/internal/events"
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
			h.Explained = w.String()
		}
	}
}
