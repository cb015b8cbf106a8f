package rawobj

import (
	"errors"
	"strings"
	"unsafe"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// Object is one Kubernetes object kept as JSON plus the metadata the cache
// needs. Objects made by Parse and ParseList satisfy these invariants:
//
//   - JSON is a valid JSON object: the input object byte for byte, except
//     that surrounding whitespace is dropped, metadata.managedFields is
//     removed unless ParseOptions.KeepManagedFields, and list items get
//     apiVersion and kind inserted when they lack them.
//   - The string fields equal what encoding/json decodes from JSON, and
//     Managers what it decodes from metadata.managedFields of the input.
//   - JSON, the strings and the managedFields summary share one
//     allocation, JSON first: JSON is read-only.
//
// An Object is not safe for concurrent mutation (SetGroupVersionKind); all
// other methods only read it.
type Object struct {
	// JSON is the object's JSON, compact or as sent. Read-only.
	JSON []byte

	APIVersion        string
	Kind              string
	Namespace         string
	Name              string
	UID               string
	ResourceVersion   string
	CreationTimestamp string // RFC 3339 text as sent, "" when absent or null
	Generation        int64
	DeletionTimestamp string // RFC 3339 text as sent, "" when absent or null

	// InitialEventsEnd is true iff
	// metadata.annotations["k8s.io/initial-events-end"] == "true".
	InitialEventsEnd bool

	// facts are what the parse learnt of the object beyond its fields;
	// ownersAt is, for a parsed object whose metadata.ownerReferences
	// value starts in JSON's first 64 KiB, that offset, 0 otherwise;
	// statusAt is, for a parsed object with a status, the offset in JSON
	// of its (last) status member's value, 0 otherwise. All in the room
	// beside InitialEventsEnd: the Object stays 192 bytes.
	facts    parseFacts
	ownersAt uint16
	statusAt uint32

	// Row is, for an object that came as a row of a server-side Table
	// (ParseList of a Table, a watch event of one), the row; nil
	// otherwise. A pointer, so that the objects of every other format do
	// not carry its fields (the Store holds one Object per object).
	Row *TableRow

	// managers summarises metadata.managedFields, also when the field was
	// removed from JSON: the entries' encoding (appendManager), "" for none.
	// Read it with Managers, MovedEntry and RewrittenEntry. The Store holds
	// an Object per object, so the summary is bytes in the object's one
	// allocation, not a slice of entries (72 bytes of string headers each).
	managers string
}

// parseFacts are what the parse learnt of an object, a bit each; 0 for an
// Object not made by this package.
type parseFacts uint8

const (
	// factParsed: made by this package (Parse, a list, a watch event), so
	// every field is derived from JSON and managers; SetGroupVersionKind
	// reads it.
	factParsed parseFacts = 1 << iota
	// factNoStatus: the top level of JSON has no status member
	// (WithoutStatus).
	factNoStatus
	// factNoOwners: its metadata has no ownerReferences member (OwnerUID).
	factNoOwners
	// factPlainMetadata: JSON has one metadata member and no string with an
	// escape, so that its keys read as written (validMetadata).
	factPlainMetadata
	// factStatusLast: the (last) status member, at statusAt, is the last
	// member of the top level: its value ends where the object's closing
	// brace and the white space before it begin (status).
	factStatusLast
)

// parsed: o was made by this package (factParsed).
func (o *Object) parsed() bool { return o.facts&factParsed != 0 }

// WithoutStatus reports that o has no status member, known without
// reading its JSON again: o was parsed by this package, whose scan of the
// top level saw no member "status" (a key decoding to it, escaped or not).
// false says nothing: o has a status, maybe null, or was not parsed here.
func (o *Object) WithoutStatus() bool { return o.facts&factNoStatus != 0 }

// Compile-time checks that Object is usable by the cache and by client-go.
var (
	_ runtime.Object    = (*Object)(nil)
	_ schema.ObjectKind = (*Object)(nil)
	_ interface {
		GetNamespace() string
		GetName() string
		GetResourceVersion() string
		GetUID() types.UID
		GetAnnotations() map[string]string
	} = (*Object)(nil)
)

// TableRow is an object's row of a server-side Table.
type TableRow struct {
	// Cells are the row's cells as sent: a JSON array, one value per
	// column of Columns. Read-only, its own allocation.
	Cells []byte
	// Columns are the Table's column definitions, shared by the rows of
	// one list; nil when the Table did not carry them (watch events after
	// the first). Read-only.
	Columns []TableColumn
}

// TableColumn is a column definition of a server-side Table
// (meta.k8s.io/v1 TableColumnDefinition), less its description.
type TableColumn struct {
	Name   string `json:"name"`
	Type   string `json:"type"`
	Format string `json:"format"`
	// Priority 0 columns are kubectl get's; higher ones are added by
	// kubectl get -o wide.
	Priority int32 `json:"priority"`
}

// ManagedFieldsEntry summarises one entry of metadata.managedFields; the
// fieldsV1 set itself is skipped, not decoded.
type ManagedFieldsEntry struct {
	Manager     string
	Operation   string
	Subresource string
	// Time is the RFC 3339 text as sent, "" when absent.
	Time string
	// FieldsHash is a hash (FNV-1a) of the entry's fieldsV1 JSON as sent, 0
	// when absent: it tells whether the set of owned fields changed when
	// Time did not move (same manager, same second).
	FieldsHash uint64
}

// ParseOptions tunes Parse and ParseList.
type ParseOptions struct {
	// KeepManagedFields keeps metadata.managedFields in Object.JSON. The
	// Managers summary is extracted either way.
	KeepManagedFields bool
	// AllowMissingName accepts objects without metadata.name, as in BOOKMARK
	// events, which carry only metadata.resourceVersion and annotations.
	AllowMissingName bool
}

// Parse scans data, which must hold one JSON object (surrounding whitespace
// allowed), validates it as JSON and extracts its metadata. The object must
// have a metadata object, and a metadata.name unless opts.AllowMissingName.
// The result does not alias data: data may be reused once Parse returns.
//
// The plugin itself parses objects as they stream (ParseListFrom,
// Decoder.NextEvent); Parse is the one-object form that the tests of this
// and other packages build objects with, and the reference the streaming
// parsers are fuzzed against.
func Parse(data []byte, opts ParseOptions) (*Object, error) {
	p := objScan{
		scanner:           scanner{data: data},
		keepManagedFields: opts.KeepManagedFields,
		allowMissingName:  opts.AllowMissingName,
		depth:             1,
	}
	if err := p.parseObject(); err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.pos < len(data) {
		return nil, p.syntaxError("unexpected " + quoteByte(data[p.pos]) + " after the object")
	}
	return p.build(nil), nil
}

// Errors for objects that are valid JSON but lack what Parse requires.
var (
	ErrNoMetadata = errors.New("object has no metadata")
	ErrNoName     = errors.New("object has no metadata.name")
)

// GetNamespace returns metadata.namespace ("" for cluster-scoped objects).
func (o *Object) GetNamespace() string { return o.Namespace }

// GetName returns metadata.name.
func (o *Object) GetName() string { return o.Name }

// GetResourceVersion returns metadata.resourceVersion.
func (o *Object) GetResourceVersion() string { return o.ResourceVersion }

// GetUID returns metadata.uid.
func (o *Object) GetUID() types.UID { return types.UID(o.UID) }

// GetAnnotations is partial: Parse does not decode annotations, so this
// returns only {"k8s.io/initial-events-end": "true"} when InitialEventsEnd
// is set, and nil otherwise. Decode JSON to see all annotations.
func (o *Object) GetAnnotations() map[string]string {
	if !o.InitialEventsEnd {
		return nil
	}
	return map[string]string{metav1.InitialEventsAnnotationKey: "true"}
}

// GetObjectKind returns o itself, whose GroupVersionKind is derived from
// APIVersion and Kind.
func (o *Object) GetObjectKind() schema.ObjectKind { return o }

// GroupVersionKind returns the group, version and kind of APIVersion and
// Kind.
func (o *Object) GroupVersionKind() schema.GroupVersionKind {
	return schema.FromAPIVersionAndKind(o.APIVersion, o.Kind)
}

// SetGroupVersionKind sets APIVersion and Kind and rewrites JSON to match:
// the top-level apiVersion and kind members are removed and, when not
// empty, inserted again at the start of the object. If JSON is not a valid
// JSON object (an Object not made by Parse), only the fields are set.
func (o *Object) SetGroupVersionKind(gvk schema.GroupVersionKind) {
	apiVersion, kind := gvk.ToAPIVersionAndKind()
	if apiVersion == o.APIVersion && kind == o.Kind {
		return
	}
	p := objScan{
		scanner:           scanner{data: o.JSON},
		keepManagedFields: true,
		dropTypeMeta:      true,
		lenient:           true,
		depth:             1,
	}
	if err := p.parseObject(); err == nil {
		tm := newTypeMeta(apiVersion, kind)
		if o.parsed() {
			// Every field but the managedFields summary (whose entries
			// may have been stripped from JSON) is derived from JSON, so
			// take them all from the new allocation, the summary carried
			// into it, and let the old one go.
			p.carry, p.carried = true, o.managers
			*o = *p.build(&tm)
		} else {
			// The other fields may have been set by hand: keep them.
			o.JSON = p.build(&tm).JSON
		}
	}
	o.APIVersion, o.Kind = apiVersion, kind
}

// DeepCopyObject returns DeepCopy.
func (o *Object) DeepCopyObject() runtime.Object { return o.DeepCopy() }

// DeepCopy returns a copy that shares no memory with o: JSON is copied,
// the strings that lie in it are moved to the copy's JSON, and the others
// (decoded strings, the managedFields summary, the apiVersion and kind a
// List gave its items) are copied. Not on any hot path: the plugin never
// copies objects.
func (o *Object) DeepCopy() *Object {
	if o == nil {
		return nil
	}
	c := *o
	if o.JSON != nil {
		c.JSON = append([]byte(nil), o.JSON...)
	}
	if o.Row != nil {
		c.Row = &TableRow{}
		if o.Row.Cells != nil {
			c.Row.Cells = append([]byte(nil), o.Row.Cells...)
		}
		if o.Row.Columns != nil {
			c.Row.Columns = append([]TableColumn(nil), o.Row.Columns...)
		}
	}
	mv := func(s string) string { return rebase(s, o.JSON, c.JSON) }
	c.APIVersion, c.Kind = mv(o.APIVersion), mv(o.Kind)
	c.Namespace, c.Name, c.UID = mv(o.Namespace), mv(o.Name), mv(o.UID)
	c.ResourceVersion = mv(o.ResourceVersion)
	c.CreationTimestamp, c.DeletionTimestamp = mv(o.CreationTimestamp), mv(o.DeletionTimestamp)
	c.managers = strings.Clone(o.managers)
	return &c
}

// rebase returns s moved from old to the same offset in cp (a copy of old)
// when s lies in old, and a copy of s otherwise.
func rebase(s string, old, cp []byte) string {
	if len(s) == 0 {
		return s
	}
	if len(old) == 0 {
		return strings.Clone(s)
	}
	p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
	base := uintptr(unsafe.Pointer(unsafe.SliceData(old)))
	if p < base || p-base >= uintptr(len(old)) || p-base+uintptr(len(s)) > uintptr(len(old)) {
		return strings.Clone(s)
	}
	off := int(p - base)
	return unsafe.String(&cp[off], len(s))
}
