package recording

import "time"

// HeaderType is the type of the line that opens each run's part of a
// recording: not a delta, what was watched.
const HeaderType = "Recording"

// Schema is the version of the records a recording holds: the JSON record
// of -o json (schema v1), and Header.
const Schema = "v1"

// Header opens each run's part of a recording: when it began, which build
// wrote it, what was watched (a type with no objects has no records, but
// was watched) and with which selectors.
type Header struct {
	Type          string    `json:"type"`
	Time          time.Time `json:"time"`
	Schema        string    `json:"schema"`
	Version       string    `json:"version"`
	LabelSelector string    `json:"labelSelector,omitempty"`
	FieldSelector string    `json:"fieldSelector,omitempty"`
	Targets       []Target  `json:"targets"`
}

// Target is one collection a run watched, as its records name it.
type Target struct {
	Context    string `json:"context,omitempty"`
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Resource   string `json:"resource"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name,omitempty"`
	// Role is what the run watched it for: root (named or selected),
	// scout and owned (--tree), events (--events).
	Role string `json:"role"`
}
