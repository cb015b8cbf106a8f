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
	if e := obj.MovedEntry(old); e != nil {
		return e.Manager, e.Operation
	}
	if e := obj.RewrittenEntry(old); e != nil {
		return e.Manager, e.Operation
	}
	return "", ""
}
