//go:build faults

package e2e

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// The ledger is the oracle of the fault tests: it replays the JSON records
// kubectl deltas printed, applying each delta to a key → resourceVersion map
// (Replaced, Added, Updated and Sync set the key, Deleted removes it), and
// records every rule the stream broke on the way. At the end its state must
// equal what the server lists: nothing lost, nothing invented.
//
// The rules checked per record:
//   - every line is one complete JSON record with a known type;
//   - per key, resourceVersions only move forward;
//   - no resourceVersion is printed twice for a key, except by a Sync, a
//     Deleted tombstone (finalStateUnknown carries the last known state), or
//     — only when the run was asked --relist=all — a Replaced after a relist;
//     by default a relist must not re-print an unchanged object;
//   - an Updated or Deleted names an object the stream has shown (no
//     phantom), an Added one it has not (else a Deleted was lost);
//   - a tombstone carries the last printed state of the object (or null);
//   - initial records are Replaced and precede every change.

// deltaRecord is the part of the JSON record the ledger reads.
type deltaRecord struct {
	Type              string          `json:"type"`
	Initial           bool            `json:"initial"`
	Context           string          `json:"context"`
	Kind              string          `json:"kind"`
	Namespace         string          `json:"namespace"`
	Name              string          `json:"name"`
	UID               string          `json:"uid"`
	ResourceVersion   string          `json:"resourceVersion"`
	FinalStateUnknown bool            `json:"finalStateUnknown"`
	Coalesced         int             `json:"coalesced"`
	Owners            []recordOwner   `json:"owners"`
	Object            json.RawMessage `json:"object"`
}

// recordOwner is one link of a record's owners chain (--tree).
type recordOwner struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Name       string `json:"name"`
	UID        string `json:"uid"`
}

func (r *deltaRecord) key() string { return r.Namespace + "/" + r.Name }

// brief is a record as one short line, for failure messages.
func (r *deltaRecord) brief() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s rv=%s", r.Type, r.key(), r.ResourceVersion)
	if r.Initial {
		b.WriteString(" initial")
	}
	if r.FinalStateUnknown {
		b.WriteString(" finalStateUnknown")
	}
	if r.Coalesced > 0 {
		fmt.Fprintf(&b, " coalesced=%d", r.Coalesced)
	}
	return b.String()
}

// ledger replays a stream of records. Safe for concurrent use.
type ledger struct {
	mu sync.Mutex
	// relistAll: the run had --relist=all, so a relist may re-print
	// unchanged objects as Replaced.
	relistAll bool
	// state is key → resourceVersion of the objects the stream says exist.
	state map[string]string
	// printed is key → resourceVersions printed for it.
	printed map[string]map[string]bool
	// last is key → the highest resourceVersion printed for it.
	last map[string]uint64
	// records are all records, in order.
	records []deltaRecord
	// problems are the broken rules, with the record index.
	problems []string
	// relists counts records only a relist produces: non-initial
	// Replaced and tombstones.
	relists int
	// changes counts non-initial records; changedKeys are the keys they
	// were for. (The initial list is popped key by key: a change of an
	// object already popped may come out before the listed state of
	// another.)
	changes     int
	changedKeys map[string]bool
}

func newLedger(relistAll bool) *ledger {
	return &ledger{
		relistAll:   relistAll,
		state:       map[string]string{},
		printed:     map[string]map[string]bool{},
		last:        map[string]uint64{},
		changedKeys: map[string]bool{},
	}
}

// applyLine parses and applies one line of -o json output.
func (l *ledger) applyLine(line string) {
	var rec deltaRecord
	dec := json.NewDecoder(strings.NewReader(line))
	if err := dec.Decode(&rec); err != nil || dec.More() {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.problems = append(l.problems, fmt.Sprintf("line %d is not one JSON record (%v): %.200q", len(l.records)+len(l.problems), err, line))
		return
	}
	l.apply(rec)
}

func (l *ledger) problemf(rec *deltaRecord, format string, args ...any) {
	l.problems = append(l.problems, fmt.Sprintf("record %d (%s): %s", len(l.records), rec.brief(), fmt.Sprintf(format, args...)))
}

// apply applies one record.
func (l *ledger) apply(rec deltaRecord) {
	l.mu.Lock()
	defer l.mu.Unlock()
	defer func() { l.records = append(l.records, rec) }()

	key := rec.key()
	if rec.Name == "" {
		l.problemf(&rec, "no name")
		return
	}
	rv, err := strconv.ParseUint(rec.ResourceVersion, 10, 64)
	// A tombstone of an object never seen has no resourceVersion.
	unknownTombstone := rec.Type == "Deleted" && rec.FinalStateUnknown && string(rec.Object) == "null"
	if err != nil && !unknownTombstone {
		l.problemf(&rec, "resourceVersion %q is not a number", rec.ResourceVersion)
		return
	}
	if rec.Initial {
		if rec.Type != "Replaced" {
			l.problemf(&rec, "an initial record must be Replaced")
		}
		if l.changedKeys[key] {
			l.problemf(&rec, "an initial record after a change of the same object")
		}
	} else {
		l.changes++
		l.changedKeys[key] = true
	}
	if rec.Coalesced > 0 && rec.Type != "Updated" {
		l.problemf(&rec, "only Updated records may be coalesced")
	}
	if rec.Coalesced < 0 {
		l.problemf(&rec, "negative coalesced")
	}
	if (rec.Type == "Replaced" && !rec.Initial) || rec.FinalStateUnknown {
		l.relists++
	}
	_, present := l.state[key]
	dup := l.printed[key][rec.ResourceVersion]

	switch rec.Type {
	case "Replaced", "Added", "Updated", "Sync":
		switch {
		case dup && rec.Type == "Sync":
		case dup && rec.Type == "Replaced" && l.relistAll:
		case dup && rec.Type == "Replaced":
			l.problemf(&rec, "a relist re-printed an unchanged object (S4: only objects whose resourceVersion changed)")
		case dup:
			l.problemf(&rec, "resourceVersion %s printed twice for %s", rec.ResourceVersion, key)
		case rv < l.last[key]:
			l.problemf(&rec, "resourceVersion went back from %d", l.last[key])
		}
		switch {
		case rec.Type == "Added" && present:
			l.problemf(&rec, "Added for an object the stream already has (rv %s): its Deleted was lost", l.state[key])
		case (rec.Type == "Updated" || rec.Type == "Sync") && !present:
			l.problemf(&rec, "%s for an object the stream never showed (phantom)", rec.Type)
		}
		l.state[key] = rec.ResourceVersion
	case "Deleted":
		if !present {
			l.problemf(&rec, "Deleted for an object the stream does not have (phantom or twice deleted)")
		}
		if rec.FinalStateUnknown {
			if string(rec.Object) != "null" && present && rec.ResourceVersion != l.state[key] {
				l.problemf(&rec, "tombstone carries rv %s, the last printed state is rv %s", rec.ResourceVersion, l.state[key])
			}
		} else {
			switch {
			case dup:
				l.problemf(&rec, "resourceVersion %s printed twice for %s (a watch Deleted carries the deletion's rv)", rec.ResourceVersion, key)
			case rv < l.last[key]:
				l.problemf(&rec, "resourceVersion went back from %d", l.last[key])
			}
		}
		delete(l.state, key)
	default:
		l.problemf(&rec, "unknown type %q", rec.Type)
		return
	}
	if rec.ResourceVersion != "" {
		if l.printed[key] == nil {
			l.printed[key] = map[string]bool{}
		}
		l.printed[key][rec.ResourceVersion] = true
	}
	if rv > l.last[key] {
		l.last[key] = rv
	}
}

// historyRewritten forgets which resourceVersions were printed: the
// server's history is about to be rewritten (etcd restored from a
// snapshot), after which an object's resourceVersion may go back (it is
// restored) or repeat (without --bump-revision, new writes reuse the
// revisions of the lost ones). The state is kept.
func (l *ledger) historyRewritten() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.printed = map[string]map[string]bool{}
	l.last = map[string]uint64{}
}

// snapshot returns a copy of the state.
func (l *ledger) snapshot() map[string]string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return maps.Clone(l.state)
}

// count is the number of records applied.
func (l *ledger) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.records)
}

// recordsFrom returns a copy of the records from index i on.
func (l *ledger) recordsFrom(i int) []deltaRecord {
	l.mu.Lock()
	defer l.mu.Unlock()
	if i > len(l.records) {
		i = len(l.records)
	}
	return slices.Clone(l.records[i:])
}

// has reports whether some record matches.
func (l *ledger) has(match func(*deltaRecord) bool) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := range l.records {
		if match(&l.records[i]) {
			return true
		}
	}
	return false
}

// relistCount is the number of records only a relist produces.
func (l *ledger) relistCount() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.relists
}

// violations returns the broken rules so far.
func (l *ledger) violations() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.problems)
}

// tail renders the last n records, for failure messages.
func (l *ledger) tail(n int) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	start := max(0, len(l.records)-n)
	var b strings.Builder
	fmt.Fprintf(&b, "%d records", len(l.records))
	if start > 0 {
		fmt.Fprintf(&b, " (last %d)", n)
	}
	b.WriteString(":\n")
	for i := start; i < len(l.records); i++ {
		fmt.Fprintf(&b, "  %4d %s\n", i, l.records[i].brief())
	}
	return b.String()
}

// stateDiff lists how the ledger's state differs from the server's.
func stateDiff(printed, server map[string]string) []string {
	var out []string
	for k, rv := range server {
		got, ok := printed[k]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("%s (rv %s) exists on the server but not in the stream (lost)", k, rv))
		case got != rv:
			out = append(out, fmt.Sprintf("%s is at rv %s on the server, the stream's last word is rv %s (a change was lost)", k, rv, got))
		}
	}
	for k, rv := range printed {
		if _, ok := server[k]; !ok {
			out = append(out, fmt.Sprintf("%s (rv %s) is in the stream but not on the server (phantom: its Deleted was lost)", k, rv))
		}
	}
	sort.Strings(out)
	return out
}

// writeOp is one successful write of the writer.
type writeOp struct {
	// op is "create", "update" or "delete".
	op string
	// rv is the resourceVersion the server answered with (for a delete,
	// the deletion's, when known).
	rv string
}

// checkSequence compares the stream's non-initial records, per key, with
// the writes that were made: each write exactly once, in order (an Updated
// with coalesced N stands for N+1 consecutive updates, the last one's rv).
// Keys the writer never touched must have no change record (probes of
// waitWatchingJSON excepted).
func checkSequence(l *ledger, writes map[string][]writeOp) []string {
	l.mu.Lock()
	perKey := map[string][]deltaRecord{}
	for _, rec := range l.records {
		if !rec.Initial {
			perKey[rec.key()] = append(perKey[rec.key()], rec)
		}
	}
	l.mu.Unlock()

	var problems []string
	for key, recs := range perKey {
		if _, ok := writes[key]; !ok && !strings.Contains(key, "/probe-") {
			problems = append(problems, fmt.Sprintf("%s: %d records for an object nobody wrote, first %s", key, len(recs), recs[0].brief()))
		}
	}
	for key, ops := range writes {
		recs := perKey[key]
		i, j := 0, 0
		fail := func(format string, args ...any) {
			var seq []string
			for _, r := range recs {
				seq = append(seq, r.Type+"@"+r.ResourceVersion)
			}
			var w []string
			for _, o := range ops {
				w = append(w, o.op+"@"+o.rv)
			}
			problems = append(problems, fmt.Sprintf("%s: %s\n    writes:  %s\n    printed: %s", key, fmt.Sprintf(format, args...), strings.Join(w, " "), strings.Join(seq, " ")))
		}
		ok := true
		for i < len(ops) && ok {
			if j >= len(recs) {
				fail("write %d (%s rv %s) never printed", i, ops[i].op, ops[i].rv)
				ok = false
				break
			}
			rec := recs[j]
			switch op := ops[i]; op.op {
			case "create":
				if rec.Type != "Added" || rec.ResourceVersion != op.rv {
					fail("write %d (create rv %s) printed as %s", i, op.rv, rec.brief())
					ok = false
				}
				i++
			case "update":
				n := rec.Coalesced + 1
				if rec.Type != "Updated" || i+n > len(ops) {
					fail("write %d (update rv %s) printed as %s", i, op.rv, rec.brief())
					ok = false
					break
				}
				for _, o := range ops[i : i+n] {
					if o.op != "update" {
						fail("record %s folds writes that are not all updates", rec.brief())
						ok = false
						break
					}
				}
				if ok && rec.ResourceVersion != ops[i+n-1].rv {
					fail("write %d (update rv %s) printed as %s", i+n-1, ops[i+n-1].rv, rec.brief())
					ok = false
				}
				i += n
			case "delete":
				if rec.Type != "Deleted" || rec.FinalStateUnknown || (op.rv != "" && rec.ResourceVersion != op.rv) {
					fail("write %d (delete rv %s) printed as %s", i, op.rv, rec.brief())
					ok = false
				}
				i++
			}
			j++
		}
		if ok && j < len(recs) {
			fail("%d records more than writes, first %s", len(recs)-j, recs[j].brief())
		}
	}
	sort.Strings(problems)
	return problems
}

// unprinted lists the acknowledged creates and updates whose
// resourceVersion the stream never printed for their key. Without a relist
// every one must be printed (a re-watch resumes where the stream stopped);
// a relist may legitimately fold several writes into one Replaced, so
// callers only use this when ledger.relistCount() is 0.
func unprinted(l *ledger, writes map[string][]writeOp) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for key, ops := range writes {
		for i, op := range ops {
			if op.op != "delete" && !l.printed[key][op.rv] {
				out = append(out, fmt.Sprintf("%s: write %d (%s rv %s) was acknowledged but never printed", key, i, op.op, op.rv))
			}
		}
	}
	sort.Strings(out)
	return out
}
