package record

import "github.com/kubectl-deltas/kubectl-deltas/internal/rawobj"

// changeManager names the field manager of a change, from managedFields:
// the newest entry that is new or whose time moved; failing that (the same
// manager wrote twice within a second), the newest entry whose set of owned
// fields changed; failing that, for an object that did change, the single
// newest entry — unless the change is one the API server makes without
// touching managedFields (writtenUntracked): then no entry tells who made
// it. Empty when it cannot be told (no managedFields, or a tie).
func changeManager(old, obj *rawobj.Object) (manager, operation string) {
	if e := newestEntry(obj.Managers, func(e *rawobj.ManagedFieldsEntry) bool {
		prev := findEntry(old, e)
		return prev == nil || e.Time > prev.Time
	}); e != nil {
		return e.Manager, e.Operation
	}
	if e := newestEntry(obj.Managers, func(e *rawobj.ManagedFieldsEntry) bool {
		prev := findEntry(old, e)
		return prev != nil && e.FieldsHash != prev.FieldsHash
	}); e != nil {
		return e.Manager, e.Operation
	}
	if old != nil && (old.ResourceVersion == obj.ResourceVersion || writtenUntracked(old, obj)) {
		return "", ""
	}
	var newest *rawobj.ManagedFieldsEntry
	tie := false
	for i := range obj.Managers {
		e := &obj.Managers[i]
		switch {
		case newest == nil || e.Time > newest.Time:
			newest, tie = e, false
		case e.Time == newest.Time:
			tie = true
		}
	}
	if newest == nil || tie {
		return "", ""
	}
	return newest.Manager, newest.Operation
}

// newestEntry returns the entry with the latest time among those that
// match, nil if none does.
func newestEntry(entries []rawobj.ManagedFieldsEntry, match func(*rawobj.ManagedFieldsEntry) bool) *rawobj.ManagedFieldsEntry {
	var best *rawobj.ManagedFieldsEntry
	for i := range entries {
		e := &entries[i]
		if match(e) && (best == nil || e.Time > best.Time) {
			best = e
		}
	}
	return best
}

// findEntry returns old's entry for the same manager, operation and
// subresource as e, nil if none (or no old object).
func findEntry(old *rawobj.Object, e *rawobj.ManagedFieldsEntry) *rawobj.ManagedFieldsEntry {
	if old == nil {
		return nil
	}
	for i := range old.Managers {
		b := &old.Managers[i]
		if b.Manager == e.Manager && b.Operation == e.Operation && b.Subresource == e.Subresource {
			return b
		}
	}
	return nil
}

// writtenUntracked reports whether the change from old to obj is one the
// API server writes without a managedFields entry of the writer: a DELETE
// that sets or moves deletionTimestamp (graceful deletion), and a Pod's
// binding to a node (the binding subresource sets spec.nodeName, as the
// scheduler does). Naming the newest entry's manager for them would name
// whoever wrote last before, not who deleted or bound.
func writtenUntracked(old, obj *rawobj.Object) bool {
	if old.DeletionTimestamp != obj.DeletionTimestamp {
		return true
	}
	if obj.Kind != "Pod" || obj.APIVersion != "v1" {
		return false
	}
	return nodeName(old) == "" && nodeName(obj) != ""
}

// nodeName is the Pod o's spec.nodeName as JSON, "" when absent, null or
// unreadable.
func nodeName(o *rawobj.Object) string {
	spec, err := o.Members("spec")
	if err != nil || spec[0] == nil {
		return ""
	}
	name, err := rawobj.Members(spec[0], "nodeName")
	if err != nil || name[0] == nil || string(name[0]) == `""` {
		return ""
	}
	return string(name[0])
}
