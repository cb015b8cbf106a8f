package live

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kubectl-deltas/kubectl-deltas/internal/textsafe"
)

// quietFor is how long a Current subtree must have been still before it
// may be folded into one row.
const quietFor = 3 * time.Second

// row is one line of the table under the header: an object, a Warning
// under it, or a fold.
type row struct {
	name, health, last, message string
	// status colours health; warning marks a Warning line, log a line of
	// a failing container's log.
	status       string
	warning, log bool
}

// Log lines under a blocker: the last one under each, more when it is
// the only one.
const (
	logLinesEach = 1
	logLinesOnly = 5
)

// showLogs sets how many of its log lines each object shows: the last
// logLinesEach, or logLinesOnly when one object alone has logs.
func (v *View) showLogs() {
	var with []*object
	for _, o := range v.objects {
		if len(o.logs) > 0 {
			with = append(with, o)
		}
	}
	each := logLinesEach
	if len(with) == 1 {
		each = logLinesOnly
	}
	for _, o := range with {
		o.logsShown = min(len(o.logs), each)
	}
}

// Frame lays the view out for a terminal of width × height at now: the
// header, then a row per object nested by owner, each object's newest
// Warning under it. When the rows do not fit, the Current subtrees that
// stopped changing fold into one row each with a count — never a row that
// is Failed or InProgress, nor its ancestors — and what still does not fit
// is cut, with a count. color colours the health as --color says. It
// clears the view's changed mark.
func (v *View) Frame(width, height int, now time.Time, color bool) []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.changed = false
	v.rejudge(now)
	width, height = max(width, 20), max(height, 3)

	lines := []string{fit(v.titleLine(now, width), width)}
	for _, c := range v.conditions {
		state := "not yet"
		switch {
		case c.Holds && strings.HasPrefix(c.Text, "--fail-when"):
			state = paint(color, "Failed", "holds")
		case c.Holds:
			state = paint(color, "Current", "holds")
		case strings.HasPrefix(c.Text, "--fail-when"):
			state = "no"
		}
		lines = append(lines, fitPainted("  "+c.Text+": ", state, width))
	}
	if v.notes.due(now) {
		v.notes.recovered = ""
	}
	lines = append(lines, v.notes.lines(now, width, color)...)
	room := height - len(lines) - 1 // the column heads
	v.showLogs()
	return append(lines, v.table(foldToFit(v.rows(now), room), width, color, now)...)
}

// titleLine is the first line: what is watched, and for how long — in a
// replay, at which time of the recording too. The time is kept whatever
// the width: what is watched is what gets cut.
func (v *View) titleLine(now time.Time, width int) string {
	clock := "elapsed " + age(now.Sub(v.start))
	if v.replay {
		clock = "at " + now.UTC().Format("2006-01-02 15:04:05Z") + "  " + clock
	}
	title := "kubectl deltas " + v.title
	room := width - utf8.RuneCountInString(clock) - 2
	if room < 1 {
		return fit(clock, width)
	}
	title = fit(title, room)
	return title + strings.Repeat(" ", width-utf8.RuneCountInString(title)-utf8.RuneCountInString(clock)) + clock
}

// node is an object with what folding needs to know of its subtree.
type node struct {
	o     *object
	depth int
	// size is the number of objects in its subtree, itself included;
	// quiet: the whole subtree is Current (or not judged), has no
	// Warning, and stopped changing quietFor ago.
	size  int
	quiet bool
	// end is the index, in the tree order, after its subtree.
	end int
}

// rows returns the objects in tree order as nodes. Called with mu held.
func (v *View) rows(now time.Time) []node {
	order, depth, children := sortedRows(v.objects, v.byUID)
	index := make(map[*object]int, len(order))
	for i, o := range order {
		index[o] = i
	}
	nodes := make([]node, len(order))
	for i := len(order) - 1; i >= 0; i-- {
		o := order[i]
		n := node{o: o, depth: depth[o], size: 1, end: i + 1,
			quiet: (!o.judged || o.health.Status == "Current") && o.warning == "" && now.Sub(o.lastAt) >= quietFor}
		for _, k := range children[o] {
			if j, ok := index[k]; ok && j > i {
				n.size += nodes[j].size
				n.quiet = n.quiet && nodes[j].quiet
				n.end = max(n.end, nodes[j].end)
			}
		}
		nodes[i] = n
	}
	return nodes
}

// shown is a node as the table shows it: an object, or a fold of count
// quiet objects (their kinds listed) at depth.
type shown struct {
	n     node
	fold  int
	kinds []string
}

// foldToFit returns the lines of nodes that fit in room lines (their
// Warnings count): first as they are; else with runs of quiet siblings
// folded into one line each, the deepest runs first, then the largest;
// and what still does not fit cut, the last line saying how many objects
// it leaves out.
func foldToFit(nodes []node, room int) []shown {
	out := make([]shown, 0, len(nodes))
	for _, n := range nodes {
		out = append(out, shown{n: n})
	}
	for linesOf(out) > room {
		// Runs of quiet siblings (same depth, consecutive subtrees) not
		// folded yet, at every depth: each run is measured once, from its
		// first sibling.
		best, bestLen := -1, 0
		counted := make([]bool, len(out))
		for i := range out {
			if counted[i] || out[i].fold > 0 || !out[i].n.quiet {
				continue
			}
			j, count := i, 0
			for j < len(out) && out[j].fold == 0 && out[j].n.quiet && out[j].n.depth == out[i].n.depth {
				counted[j] = true
				count += subtreeLines(out, j)
				j = skipSubtree(out, j)
			}
			// The deepest run first (a ReplicaSet's Pods before the
			// Deployment above them: the roots stay in view), then the
			// largest.
			if count > 1 && (best < 0 || out[i].n.depth > out[best].n.depth || out[i].n.depth == out[best].n.depth && count > bestLen) {
				best, bestLen = i, count
			}
		}
		if best < 0 {
			break
		}
		out = foldRun(out, best)
	}
	if linesOf(out) <= room {
		return out
	}
	return cut(out, room)
}

// linesOf counts the lines the shown rows take.
func linesOf(rows []shown) int {
	n := 0
	for _, r := range rows {
		n++
		if r.fold == 0 && r.n.o.warning != "" {
			n++
		}
		if r.fold == 0 {
			n += r.n.o.logsShown
		}
	}
	return n
}

// skipSubtree returns the index after the subtree of rows[i] (the rows
// deeper than it that follow it).
func skipSubtree(rows []shown, i int) int {
	j := i + 1
	for j < len(rows) && rows[j].n.depth > rows[i].n.depth {
		j++
	}
	return j
}

// subtreeLines is the number of lines the subtree of rows[i] takes.
func subtreeLines(rows []shown, i int) int { return linesOf(rows[i:skipSubtree(rows, i)]) }

// foldRun folds the run of quiet siblings that starts at rows[i] into one
// row.
func foldRun(rows []shown, i int) []shown {
	depth := rows[i].n.depth
	j := i
	f := shown{n: rows[i].n}
	for j < len(rows) && rows[j].fold == 0 && rows[j].n.quiet && rows[j].n.depth == depth {
		end := skipSubtree(rows, j)
		for _, r := range rows[j:end] {
			f.fold++
			f.kinds = appendKind(f.kinds, r.n.o.kind)
		}
		j = end
	}
	return append(rows[:i:i], append([]shown{f}, rows[j:]...)...)
}

func appendKind(kinds []string, kind string) []string {
	for _, k := range kinds {
		if k == kind {
			return kinds
		}
	}
	return append(kinds, kind)
}

// cut keeps what fits in room lines, the last saying how many objects
// were left out.
func cut(rows []shown, room int) []shown {
	if room < 1 {
		return nil
	}
	var out []shown
	used := 0
	for i, r := range rows {
		need := linesOf(rows[i : i+1])
		if used+need > room-1 {
			left := 0
			for _, rest := range rows[i:] {
				left += max(rest.fold, 1)
			}
			return append(out, shown{n: node{depth: 0}, fold: -left})
		}
		out = append(out, r)
		used += need
	}
	return out
}

// table renders the shown rows under column heads, aligned.
func (v *View) table(rows []shown, width int, color bool, now time.Time) []string {
	var cells []row
	for _, s := range rows {
		indent := strings.Repeat("  ", s.n.depth)
		switch {
		case s.fold < 0:
			cells = append(cells, row{name: fmt.Sprintf("… %d more not shown: a taller terminal shows them", -s.fold)})
			continue
		case s.fold > 0:
			cells = append(cells, row{name: indent + fmt.Sprintf("… %d %s Current, quiet", s.fold, plural(s.fold, s.kinds)), status: "Current"})
			continue
		}
		o := s.n.o
		r := row{name: indent + strings.ToLower(o.kind) + "/" + o.name}
		if o.context != "" {
			r.name = indent + o.context + " " + strings.ToLower(o.kind) + "/" + o.name
		}
		if o.judged {
			r.health, r.status = o.health.Status, o.health.Status
			r.message = o.health.Message
			if o.health.Reason != "" && o.health.Status != "Current" {
				r.message = o.health.Reason + ": " + r.message
			}
		}
		if o.deleted {
			r.health, r.status = "Deleted", "Terminating"
		}
		if o.last != "" {
			r.last = o.last + " " + age(now.Sub(o.lastAt))
		}
		if v.diff && o.last == "Updated" && o.changes > 0 {
			r.message = strings.TrimSpace(changesOf(o.changes) + "  " + r.message)
		}
		cells = append(cells, r)
		if o.warning != "" {
			cells = append(cells, row{name: indent + "  ⚠ Warning " + o.warning, warning: true})
		}
		for _, line := range o.logs[len(o.logs)-o.logsShown:] {
			cells = append(cells, row{name: indent + "  │ " + textsafe.String(line), log: true})
		}
	}
	nameW := utf8.RuneCountInString("OBJECT")
	for _, c := range cells {
		if c.warning || c.log || c.health == "" && c.last == "" {
			continue
		}
		nameW = max(nameW, utf8.RuneCountInString(c.name))
	}
	nameW = min(nameW, max(width*2/5, 20))
	const healthW, lastW = 11, 14
	out := []string{fit(pad("OBJECT", nameW)+" "+pad("HEALTH", healthW)+" "+pad("LAST", lastW)+" MESSAGE", width)}
	for _, c := range cells {
		if c.warning || c.log || c.health == "" && c.last == "" && c.message == "" {
			line := fit(c.name, width)
			if c.warning {
				line = paint(color, "Failed", line)
			}
			out = append(out, line)
			continue
		}
		head := pad(fit(c.name, nameW), nameW) + " "
		rest := " " + pad(c.last, lastW) + " " + c.message
		line := head + pad(c.health, healthW) + rest
		if utf8.RuneCountInString(line) > width {
			line = fit(line, width)
			out = append(out, line) // cut: no colour, so that the cut stays exact
			continue
		}
		out = append(out, head+paint(color, c.status, pad(c.health, healthW))+rest)
	}
	return out
}

// plural names a fold's kinds: "Pods", or "objects" for several kinds.
func plural(n int, kinds []string) string {
	if len(kinds) != 1 {
		return "objects"
	}
	k := strings.ToLower(kinds[0])
	if n == 1 {
		return k
	}
	return k + "s"
}

// age says a duration as a live view does: 4s, 2m05s, 1h03m.
func age(d time.Duration) string {
	d = max(d, 0)
	switch {
	case d < time.Minute:
		return strconv.Itoa(int(d/time.Second)) + "s"
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d/time.Minute), int(d%time.Minute/time.Second))
	}
	return fmt.Sprintf("%dh%02dm", int(d/time.Hour), int(d%time.Hour/time.Minute))
}

// pad pads s with spaces to width runes.
func pad(s string, width int) string {
	if n := utf8.RuneCountInString(s); n < width {
		return s + strings.Repeat(" ", width-n)
	}
	return s
}

// fit cuts s to width runes, ending with … when cut.
func fit(s string, width int) string {
	if utf8.RuneCountInString(s) <= width {
		return s
	}
	r := []rune(s)
	return string(r[:width-1]) + "…"
}

// fitPainted is prefix then a painted word, cut to width (unpainted when
// it does not fit whole).
func fitPainted(prefix, painted string, width int) string {
	plain := stripANSI(painted)
	if utf8.RuneCountInString(prefix)+utf8.RuneCountInString(plain) > width {
		return fit(prefix+plain, width)
	}
	return prefix + painted
}

// stripANSI removes SGR sequences.
func stripANSI(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b {
			for i < len(s) && s[i] != 'm' {
				i++
			}
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// paint colours s as status says, when color is on: kstatus' colours as
// the text output uses them.
func paint(color bool, status, s string) string {
	if !color {
		return s
	}
	code := ""
	switch status {
	case "Current":
		code = "32"
	case "InProgress":
		code = "33"
	case "Failed":
		code = "31"
	case "Terminating":
		code = "35"
	case "Unknown", "NotFound":
		code = "90"
	}
	if code == "" {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}
