package stage

import "github.com/kubectl-deltas/kubectl-deltas/internal/rawobj"

// changeManager names the field manager of a change, from managedFields:
// the newest entry that is new or whose time moved; failing that (the same
// manager wrote twice within a second), the newest entry whose set of owned
// fields changed. Empty when no entry moved with the change: a write the
// API server records in no entry (a Pod bound to a node, a DELETE's
// deletionTimestamp), or one whose entry moved neither (the same manager,
// second and fields) — the newest entry would then name whoever wrote
// before, or a status writer that did not make this change.
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
	return "", ""
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
