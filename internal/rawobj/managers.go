package rawobj

import (
	"encoding/binary"
	"unsafe"
)

// The managedFields summary of an Object (Object.managers) is, for each
// entry in order, its Manager, Operation, Subresource and Time, each as a
// uvarint length and the string's bytes, then its FieldsHash as 8 bytes
// little-endian: about 40 bytes an entry where a ManagedFieldsEntry takes
// 72 and its strings. Only this package writes it (appendManagers,
// SetManagers), so it is always well formed.

// Managers returns the summary of metadata.managedFields, nil when the
// object has none. Its strings share the object's memory; the slice is
// new.
func (o *Object) Managers() []ManagedFieldsEntry {
	var out []ManagedFieldsEntry
	for enc := o.managers; enc != ""; {
		var e ManagedFieldsEntry
		e, enc = nextManager(enc)
		out = append(out, e)
	}
	return out
}

// SetManagers replaces the summary of metadata.managedFields (JSON is left
// as it is), as when an object is rebuilt from a record that names its
// manager.
func (o *Object) SetManagers(entries []ManagedFieldsEntry) {
	var enc []byte
	for i := range entries {
		enc = appendManager(enc, &entries[i])
	}
	o.managers = ""
	if len(enc) > 0 {
		o.managers = unsafe.String(unsafe.SliceData(enc), len(enc))
	}
}

// appendManager appends the encoding of e to dst.
func appendManager(dst []byte, e *ManagedFieldsEntry) []byte {
	for _, s := range [...]string{e.Manager, e.Operation, e.Subresource, e.Time} {
		dst = binary.AppendUvarint(dst, uint64(len(s)))
		dst = append(dst, s...)
	}
	return binary.LittleEndian.AppendUint64(dst, e.FieldsHash)
}

// nextManager decodes the first entry of a non-empty summary and returns
// it and the rest. The entry's strings share enc's memory.
func nextManager(enc string) (e ManagedFieldsEntry, rest string) {
	e.Manager, enc = nextString(enc)
	e.Operation, enc = nextString(enc)
	e.Subresource, enc = nextString(enc)
	e.Time, enc = nextString(enc)
	for i := 7; i >= 0; i-- {
		e.FieldsHash = e.FieldsHash<<8 | uint64(enc[i])
	}
	return e, enc[8:]
}

// nextString decodes a uvarint length and that many bytes.
func nextString(enc string) (s, rest string) {
	n, i := 0, 0
	for shift := 0; ; shift += 7 {
		b := enc[i]
		i++
		n |= int(b&0x7f) << shift
		if b < 0x80 {
			break
		}
	}
	return enc[i : i+n], enc[i+n:]
}

// uvarintLen is the length of the uvarint encoding of n.
func uvarintLen(n int) int {
	l := 1
	for ; n >= 0x80; n >>= 7 {
		l++
	}
	return l
}

// MovedEntry returns the newest entry of o's managedFields that old lacks
// (same manager, operation and subresource) or whose time moved since old:
// the entry a change from old to o most likely wrote. nil when none moved
// (or o has none). Small enough to be inlined, so that the entry stays on
// the caller's stack.
func (o *Object) MovedEntry(old *Object) *ManagedFieldsEntry {
	if e, ok := o.newestEntry(old, false); ok {
		return &e
	}
	return nil
}

// RewrittenEntry returns the newest entry of o's managedFields that old
// has too, at the same time, but whose set of owned fields changed: the
// writer of a change made within the second of its previous one. nil when
// none did.
func (o *Object) RewrittenEntry(old *Object) *ManagedFieldsEntry {
	if e, ok := o.newestEntry(old, true); ok {
		return &e
	}
	return nil
}

// newestEntry returns the entry of o with the latest time among those that
// moved since old (MovedEntry) or, when rewritten, were rewritten
// (RewrittenEntry); false if none did.
func (o *Object) newestEntry(old *Object, rewritten bool) (best ManagedFieldsEntry, found bool) {
	for enc := o.managers; enc != ""; {
		var e ManagedFieldsEntry
		e, enc = nextManager(enc)
		prev, had := old.entryLike(&e)
		match := !had || e.Time > prev.Time
		if rewritten {
			match = had && e.FieldsHash != prev.FieldsHash
		}
		if match && (!found || e.Time > best.Time) {
			best, found = e, true
		}
	}
	return best, found
}

// entryLike returns o's entry for the same manager, operation and
// subresource as e, false if none (or o is nil).
func (o *Object) entryLike(e *ManagedFieldsEntry) (ManagedFieldsEntry, bool) {
	if o == nil {
		return ManagedFieldsEntry{}, false
	}
	for enc := o.managers; enc != ""; {
		var b ManagedFieldsEntry
		b, enc = nextManager(enc)
		if b.Manager == e.Manager && b.Operation == e.Operation && b.Subresource == e.Subresource {
			return b, true
		}
	}
	return ManagedFieldsEntry{}, false
}
