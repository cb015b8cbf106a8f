// Package diff computes field-level differences between two versions of a
// Kubernetes object, as RFC 6902 JSON Patch operations that also carry the
// old value.
package diff

// Op is the kind of a JSON Patch operation.
type Op string

// The operations a diff emits.
const (
	OpAdd     Op = "add"
	OpRemove  Op = "remove"
	OpReplace Op = "replace"
)

// Operation is one RFC 6902 operation plus the value it overwrites.
//
// JSON form: {"op":"replace","path":"/spec/replicas","old":1,"value":3}.
// "old" is present for replace and remove, "value" for add and replace
// (a JSON null value is written as null, not omitted).
type Operation struct {
	Op Op
	// Path is an RFC 6901 JSON pointer ("/metadata/labels/app.kubernetes.io~1name").
	Path string
	// Old is the value before the change (replace, remove), decoded from
	// JSON: nil, bool, float64/int64/json.Number, string, []any, map[string]any.
	Old any
	// Value is the value after the change (add, replace).
	Value any
	// Redacted is set when Old and Value were withheld (Secret data); text
	// output shows "(changed)" and JSON carries neither value.
	Redacted bool
}
