package live

import (
	"regexp"
	"slices"
	"strings"
	"time"
)

// recoveredFor is how long the view says an outage is over.
const recoveredFor = 5 * time.Second

// notes are what the run said on stderr that the view shows while it
// holds (the lines themselves are held, and written below the last
// frame): the outages going on, the named objects waited for, and the
// end of an outage, for a moment. Guarded by View.mu.
type notes struct {
	// outages are the warnings of failing watches, oldest first, each
	// until the recovery of its cluster (its context prefix) is said.
	outages []note
	// waiting are the named objects not found yet, until one of the name
	// is shown.
	waiting []note
	// recovered is the last recovery said, shown until recoveredUntil.
	recovered      string
	recoveredUntil time.Time
}

// note is one line of the run's stderr, without its "warning: " or
// "info: " and made safe for the terminal (the run made it so), and when
// the view learnt of it.
type note struct {
	text  string
	since time.Time
	// key is the cluster's context prefix of an outage, the object's
	// name of a wait.
	key string
}

// notFound is the subject of "configmaps "ready" not found …: waiting
// for it to be created".
var notFound = regexp.MustCompile(`"([^"]*)" not found`)

// Note takes a line the run wrote to stderr while the view is drawn: a
// watch failing (warning: …; retrying), its recovery (info: … connection
// restored, is back), or a named object waited for (info: … waiting for
// it …) are shown in the view; the rest is only held.
func (v *View) Note(line string, now time.Time) {
	line = strings.TrimRight(line, "\r\n")
	v.mu.Lock()
	defer v.mu.Unlock()
	switch {
	case strings.HasPrefix(line, "warning: ") && strings.Contains(line, "retrying"):
		text := strings.TrimPrefix(line, "warning: ")
		v.notes.outages = append(v.notes.outages, note{text: text, since: now, key: contextOf(text)})
	case strings.HasPrefix(line, "info: ") && (strings.Contains(line, "connection restored") || strings.Contains(line, " is back after ")):
		text := strings.TrimPrefix(line, "info: ")
		key := contextOf(text)
		v.notes.outages = slices.DeleteFunc(v.notes.outages, func(n note) bool { return n.key == key })
		v.notes.recovered, v.notes.recoveredUntil = text, now.Add(recoveredFor)
	case strings.HasPrefix(line, "info: ") && strings.Contains(line, "waiting for it to "):
		text := strings.TrimPrefix(line, "info: ")
		name := ""
		if m := notFound.FindStringSubmatch(text); m != nil {
			name = m[1]
		}
		v.notes.waiting = append(v.notes.waiting, note{text: text, since: now, key: name})
	default:
		return
	}
	v.changed = true
}

// contextOf is the context prefix a message of one cluster of several
// begins with (textsafe.ContextPrefix: `context "prod": `), "" for one
// cluster.
func contextOf(text string) string {
	if !strings.HasPrefix(text, `context "`) {
		return ""
	}
	if i := strings.Index(text, `": `); i > 0 {
		return text[:i+3]
	}
	return ""
}

// shown notes that an object named name is shown: it is no longer waited
// for. Called with mu held.
func (n *notes) shown(name string) {
	n.waiting = slices.DeleteFunc(n.waiting, func(w note) bool { return w.key == name })
}

// lines are the notes as the view shows them at now under the header,
// each cut to width, its mark coloured as color says.
func (n *notes) lines(now time.Time, width int, color bool) []string {
	var out []string
	for _, o := range n.outages {
		out = append(out, marked(color, "Failed", "! ", "since "+o.since.UTC().Format("15:04:05")+": "+o.text, width))
	}
	for _, w := range n.waiting {
		out = append(out, marked(color, "InProgress", "… ", w.text, width))
	}
	if n.recovered != "" && now.Before(n.recoveredUntil) {
		out = append(out, marked(color, "Current", "✓ ", n.recovered, width))
	}
	return out
}

// marked is mark then text, cut to width, the mark painted as status.
func marked(color bool, status, mark, text string, width int) string {
	line := fit(mark+text, width)
	rest, ok := strings.CutPrefix(line, mark)
	if !ok {
		return line
	}
	return paint(color, status, mark) + rest
}

// due reports whether the notes shown change at now with time alone (a
// recovery said long enough).
func (n *notes) due(now time.Time) bool {
	return n.recovered != "" && !now.Before(n.recoveredUntil)
}
