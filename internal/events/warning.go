// Package events reads the Kubernetes Events that explain an object: the
// latest Warning about it, asked once when a wait fails or times out.
package events

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kubectl-deltas/kubectl-deltas/internal/textsafe"
)

// Warning is a Warning Event about an object.
type Warning struct {
	Reason, Message string
	// Count is how many times it happened (series or count), at least 1.
	Count int
	// Last is when it last happened.
	Last time.Time
}

// String is the Warning for a terminal, its text escaped:
// "Warning FailedScheduling: 0/3 nodes are available: … (4 times)".
func (w Warning) String() string {
	s := fmt.Sprintf("Warning %s: %s", textsafe.String(w.Reason), textsafe.String(w.Message))
	if w.Count > 1 {
		s += fmt.Sprintf(" (%d times)", w.Count)
	}
	return s
}

// coreEvent is what LatestWarning reads of a core/v1 Event.
type coreEvent struct {
	Reason         string `json:"reason"`
	Message        string `json:"message"`
	Count          int    `json:"count"`
	FirstTimestamp string `json:"firstTimestamp"`
	LastTimestamp  string `json:"lastTimestamp"`
	EventTime      string `json:"eventTime"`
	Series         *struct {
		Count            int    `json:"count"`
		LastObservedTime string `json:"lastObservedTime"`
	} `json:"series"`
}

// last is when e last happened: the latest of its times.
func (e *coreEvent) last() time.Time {
	times := []string{e.FirstTimestamp, e.LastTimestamp, e.EventTime}
	if e.Series != nil {
		times = append(times, e.Series.LastObservedTime)
	}
	return latest(times)
}

// count is how many times e happened.
func (e *coreEvent) count() int {
	if e.Series != nil && e.Series.Count > e.Count {
		return e.Series.Count
	}
	return max(e.Count, 1)
}

// maxEvents bounds the one look-up: an object with more Warnings than
// this is judged on the first page the server returns.
const maxEvents = 500

// LatestWarning asks the server once, through the field selector core/v1
// Events offer, for the Warning Events whose involvedObject is the object
// uid in namespace ("" for a cluster-scoped object: every namespace), and
// returns the one that happened last; found is false when there is none.
func LatestWarning(ctx context.Context, client rest.Interface, namespace, uid string) (w Warning, found bool, err error) {
	req := client.Get().AbsPath("/api/v1/events")
	if namespace != "" {
		req = client.Get().AbsPath("/api/v1/namespaces", namespace, "events")
	}
	raw, err := req.Param("fieldSelector", "involvedObject.uid="+uid+",type=Warning").
		Param("limit", fmt.Sprint(maxEvents)).Do(ctx).Raw()
	if err != nil {
		return Warning{}, false, fmt.Errorf("listing the Warning events of %s: %w", uid, err)
	}
	var list struct {
		Items []coreEvent `json:"items"`
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		return Warning{}, false, fmt.Errorf("reading the Warning events of %s: %w", uid, err)
	}
	for i := range list.Items {
		e := &list.Items[i]
		if last := e.last(); !found || last.After(w.Last) {
			w = Warning{Reason: e.Reason, Message: e.Message, Count: e.count(), Last: last}
			found = true
		}
	}
	return w, found, nil
}
