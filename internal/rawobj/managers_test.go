package rawobj

import (
	"reflect"
	"strings"
	"testing"
	"unsafe"
)

// TestObjectFootprint holds the Store's cost of an object: the Object is
// 192 bytes (a Go size class) and parsing one, whatever its managedFields,
// allocates it and one buffer for its JSON, decoded strings and
// managedFields summary (keys with escapes take a scratch buffer besides).
func TestObjectFootprint(t *testing.T) {
	if got, want := unsafe.Sizeof(Object{}), uintptr(192); got > want {
		t.Errorf("an Object takes %d bytes, want at most %d", got, want)
	}
	for _, tc := range realistic {
		if strings.Contains(tc.json, `\`) {
			continue
		}
		data := []byte(tc.json)
		if got := testing.AllocsPerRun(20, func() { _, _ = Parse(data, ParseOptions{}) }); got != 2 {
			t.Errorf("%s: Parse allocates %v times, want 2", tc.name, got)
		}
	}
}

// TestManagersRoundTrip: what SetManagers is given, Managers returns,
// strings of any length and FieldsHash included.
func TestManagersRoundTrip(t *testing.T) {
	tests := []struct {
		name    string
		entries []ManagedFieldsEntry
	}{
		{"none", nil},
		{"empty entry", []ManagedFieldsEntry{{}}},
		{"two", []ManagedFieldsEntry{
			{Manager: "kubectl", Operation: "Update", Time: "2024-01-01T00:00:00Z", FieldsHash: 1<<63 | 42},
			{Manager: "kubelet", Operation: "Update", Subresource: "status", Time: "2024-01-01T00:00:01Z", FieldsHash: 7},
		}},
		{"long strings", []ManagedFieldsEntry{{Manager: strings.Repeat("m", 300), Operation: "Apply", Subresource: strings.Repeat("s", 20000), Time: "t"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var o Object
			o.SetManagers(tc.entries)
			if got := o.Managers(); !reflect.DeepEqual(got, tc.entries) {
				t.Errorf("got %+v, want %+v", got, tc.entries)
			}
		})
	}
}

// TestChangedEntries: MovedEntry and RewrittenEntry name the entry a
// change wrote.
func TestChangedEntries(t *testing.T) {
	entry := func(manager, sub, time string, hash uint64) ManagedFieldsEntry {
		return ManagedFieldsEntry{Manager: manager, Operation: "Update", Subresource: sub, Time: time, FieldsHash: hash}
	}
	obj := func(entries ...ManagedFieldsEntry) *Object {
		o := &Object{}
		o.SetManagers(entries)
		return o
	}
	a1, a2 := entry("a", "", "2024-01-01T00:00:01Z", 1), entry("a", "", "2024-01-01T00:00:02Z", 1)
	a1h := entry("a", "", "2024-01-01T00:00:01Z", 2)
	s1 := entry("a", "status", "2024-01-01T00:00:03Z", 1)
	b5 := entry("b", "", "2024-01-01T00:00:05Z", 1)
	tests := []struct {
		name             string
		old, obj         *Object
		moved, rewritten string // the entries' managers/subresources, "" for nil
	}{
		{"no old: the newest", nil, obj(a1, b5, s1), "b", ""},
		{"none moved", obj(a1, b5), obj(a1, b5), "", ""},
		{"time moved", obj(a1, b5), obj(a2, b5), "a", ""},
		{"a new entry", obj(a1), obj(a1, s1), "a/status", ""},
		{"same second, other fields", obj(a1, b5), obj(a1h, b5), "", "a"},
		{"no entries", obj(a1), obj(), "", ""},
	}
	name := func(e *ManagedFieldsEntry) string {
		switch {
		case e == nil:
			return ""
		case e.Subresource != "":
			return e.Manager + "/" + e.Subresource
		}
		return e.Manager
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := name(tc.obj.MovedEntry(tc.old)); got != tc.moved {
				t.Errorf("MovedEntry: got %q, want %q", got, tc.moved)
			}
			if got := name(tc.obj.RewrittenEntry(tc.old)); got != tc.rewritten {
				t.Errorf("RewrittenEntry: got %q, want %q", got, tc.rewritten)
			}
		})
	}
}
