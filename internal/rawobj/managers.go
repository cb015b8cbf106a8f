package rawobj

// MovedEntry returns the newest entry of o's managedFields that old lacks
// (same manager, operation and subresource) or whose time moved since old:
// the entry a change from old to o most likely wrote. nil when none moved
// (or o has none).
func (o *Object) MovedEntry(old *Object) *ManagedFieldsEntry {
	return o.newestEntry(func(e *ManagedFieldsEntry) bool {
		prev := old.entryLike(e)
		return prev == nil || e.Time > prev.Time
	})
}

// RewrittenEntry returns the newest entry of o's managedFields that old
// has too, at the same time, but whose set of owned fields changed: the
// writer of a change made within the second of its previous one. nil when
// none did.
func (o *Object) RewrittenEntry(old *Object) *ManagedFieldsEntry {
	return o.newestEntry(func(e *ManagedFieldsEntry) bool {
		prev := old.entryLike(e)
		return prev != nil && e.FieldsHash != prev.FieldsHash
	})
}

// newestEntry returns the entry with the latest time among those that
// match, nil if none does.
func (o *Object) newestEntry(match func(*ManagedFieldsEntry) bool) *ManagedFieldsEntry {
	var best *ManagedFieldsEntry
	for i := range o.Managers {
		e := &o.Managers[i]
		if match(e) && (best == nil || e.Time > best.Time) {
			best = e
		}
	}
	return best
}

// entryLike returns o's entry for the same manager, operation and
// subresource as e, nil if none (or o is nil).
func (o *Object) entryLike(e *ManagedFieldsEntry) *ManagedFieldsEntry {
	if o == nil {
		return nil
	}
	for i := range o.Managers {
		b := &o.Managers[i]
		if b.Manager == e.Manager && b.Operation == e.Operation && b.Subresource == e.Subresource {
			return b
		}
	}
	return nil
}
