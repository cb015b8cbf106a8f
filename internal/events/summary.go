package events

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/kubectl-deltas/kubectl-deltas/internal/rawobj"
)

// Subject is the object an Event is about: its regarding (events.k8s.io)
// or involvedObject (core/v1).
type Subject struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace"`
	Name       string `json:"name"`
	UID        string `json:"uid"`
}

// Brief is what a line of text says of an Event: its subject, type,
// reason, message and how many times it happened.
type Brief struct {
	Subject Subject
	// Type is Normal or Warning (anything the writer chose, in fact).
	Type   string
	Reason string
	// Message is the note (events.k8s.io) or message (core/v1).
	Message string
	// Count is how many times it happened: series.count, or the
	// deprecated count, at least 1.
	Count int
	// Last is when it last happened, the latest of its times (zero when
	// it carries none).
	Last time.Time
}

// wireEvent is what Summarize reads of an Event of either API.
type wireEvent struct {
	Regarding      *Subject `json:"regarding"`
	InvolvedObject *Subject `json:"involvedObject"`
	Type           string   `json:"type"`
	Reason         string   `json:"reason"`
	Note           string   `json:"note"`
	Message        string   `json:"message"`
	Count          int      `json:"count"`
	DeprecatedCnt  int      `json:"deprecatedCount"`
	Series         *struct {
		Count            int    `json:"count"`
		LastObservedTime string `json:"lastObservedTime"`
	} `json:"series"`
	// The times of either API.
	EventTime               string `json:"eventTime"`
	FirstTimestamp          string `json:"firstTimestamp"`
	LastTimestamp           string `json:"lastTimestamp"`
	DeprecatedLastTimestamp string `json:"deprecatedLastTimestamp"`
}

// last is the latest of e's times.
func (e *wireEvent) last() time.Time {
	times := []string{e.EventTime, e.FirstTimestamp, e.LastTimestamp, e.DeprecatedLastTimestamp}
	if e.Series != nil {
		times = append(times, e.Series.LastObservedTime)
	}
	return latest(times)
}

// latest is the latest of times, RFC 3339 texts; those that do not parse
// (empty ones) are skipped. Zero when none parses.
func latest(times []string) time.Time {
	var last time.Time
	for _, s := range times {
		if t, err := time.Parse(time.RFC3339Nano, s); err == nil && t.After(last) {
			last = t
		}
	}
	return last
}

// Summarize reads an Event's JSON, of events.k8s.io/v1 or core/v1.
func Summarize(event []byte) (Brief, error) {
	var e wireEvent
	if err := json.Unmarshal(event, &e); err != nil {
		return Brief{}, fmt.Errorf("reading an event: %w", err)
	}
	s := Brief{Type: e.Type, Reason: e.Reason, Message: e.Note, Count: max(e.Count, e.DeprecatedCnt, 1), Last: e.last()}
	if s.Message == "" {
		s.Message = e.Message
	}
	if e.Series != nil {
		s.Count = max(s.Count, e.Series.Count)
	}
	switch {
	case e.Regarding != nil:
		s.Subject = *e.Regarding
	case e.InvolvedObject != nil:
		s.Subject = *e.InvolvedObject
	}
	return s, nil
}

// subjectOf is the subject of an Event, "" fields where it cannot be read
// (such an Event joins nothing). It runs for every Event of the watched
// namespaces not yet admitted: only the regarding (events.k8s.io) or
// involvedObject (core/v1) member is decoded, cut out by the scanner.
func subjectOf(event *rawobj.Object) Subject {
	members, err := event.Members("regarding", "involvedObject")
	if err != nil {
		return Subject{}
	}
	var s Subject
	for _, m := range members {
		if m != nil && string(m) != "null" {
			if json.Unmarshal(m, &s) != nil {
				return Subject{}
			}
			return s
		}
	}
	return s
}
