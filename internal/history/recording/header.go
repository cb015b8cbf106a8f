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
	Type          string       `json:"type"`
	Time          time.Time    `json:"time"`
	Schema        string       `json:"schema"`
	Version       string       `json:"version"`
	LabelSelector string       `json:"labelSelector,omitempty"`
	FieldSelector string       `json:"fieldSelector,omitempty"`
	Targets       []Collection `json:"targets"`
	// Servers are the API servers the run watched, each with its
	// kubeconfig context — a plain run's one current context too, though
	// its records name none. A recorder that goes on with the recording
	// refuses another server for a context, or for its one cluster.
	// Recordings made before they were noted have none.
	Servers []APIServer `json:"servers,omitempty"`
}

// APIServer is the API server a run watched through a kubeconfig
// context: its URL (never credentials).
type APIServer struct {
	Context string `json:"context,omitempty"`
	URL     string `json:"url"`
}

// Collection is one collection a run watched, as its records name it
// (a header's "targets").
type Collection struct {
	Context    string `json:"context,omitempty"`
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Resource   string `json:"resource"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name,omitempty"`
	// Role is what the run watched it for: root (named or selected),
	// scout and owned (--tree), events (--events).
	Role string `json:"role"`
	// FieldSelector is the collection's own field selector: the Events
	// of one named object (--events).
	FieldSelector string `json:"fieldSelector,omitempty"`
}

// HeartbeatType is the type of the line a recorder writes every
// HeartbeatInterval while it runs, once the initial lists are out, and
// as it ends: it was alive then, and this is where each collection
// stands.
const HeartbeatType = "Heartbeat"

// HeartbeatInterval is how often a running recorder writes a Heartbeat:
// the most by which a Gap can start before the recorder stopped.
const HeartbeatInterval = 5 * time.Second

// Heartbeat says the recorder was alive at Time, and where the record of
// each collection stands: every change of it up to its resourceVersion
// is in the lines above. A collection with changes still on their way to
// the recording is left out. A recorder that goes on with the recording
// resumes each collection from its newest position.
type Heartbeat struct {
	Type string    `json:"type"`
	Time time.Time `json:"time"`
	// Checkpoint, on the Heartbeat that begins a checkpoint, is how many
	// objects' records follow it: the state of everything recorded.
	Checkpoint int        `json:"checkpoint,omitempty"`
	Positions  []Position `json:"positions,omitempty"`
}

// Position is where the record of one collection stands.
type Position struct {
	Collection
	ResourceVersion string `json:"resourceVersion"`
}

// GapType is the type of the line that follows the header of a run that
// went on with a recording: nothing was recorded From its last sign of
// life (a Heartbeat, or any line) To this run's start. The changes made
// meanwhile come after it as the watch or a relist caught them up, with
// the time their objects give (a record's "caughtUp").
const GapType = "Gap"

// Gap is a time the recording does not cover.
type Gap struct {
	Type string    `json:"type"`
	Time time.Time `json:"time"`
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
}
