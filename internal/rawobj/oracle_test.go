package rawobj

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// meta is what Parse extracts, as computed by the oracle.
type meta struct {
	APIVersion, Kind, Namespace, Name, UID string
	ResourceVersion, CreationTimestamp     string
	DeletionTimestamp                      string
	Generation                             int64
	Managers                               []ManagedFieldsEntry
	InitialEventsEnd                       bool
}

// metaOf returns o's metadata for comparison with the oracle, which does
// not compute fieldsV1 hashes (TestFieldsHash covers them).
func metaOf(o *Object) meta {
	var managers []ManagedFieldsEntry
	if all := o.Managers(); all != nil {
		managers = make([]ManagedFieldsEntry, len(all))
		for i, e := range all {
			e.FieldsHash = 0
			managers[i] = e
		}
	}
	return meta{
		APIVersion: o.APIVersion, Kind: o.Kind, Namespace: o.Namespace, Name: o.Name, UID: o.UID,
		ResourceVersion: o.ResourceVersion, CreationTimestamp: o.CreationTimestamp,
		DeletionTimestamp: o.DeletionTimestamp, Generation: o.Generation,
		Managers: managers, InitialEventsEnd: o.InitialEventsEnd,
	}
}

// decodeJSON decodes data with encoding/json, numbers kept as json.Number
// so that no number is out of range and all compare exactly.
func decodeJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err == nil {
		return nil, fmt.Errorf("trailing data")
	}
	return v, nil
}

// oracleMeta extracts the metadata from an encoding/json decode of an
// object, the way Parse defines it.
func oracleMeta(obj map[string]any) meta {
	str := func(v any) string { s, _ := v.(string); return s }
	m := meta{APIVersion: str(obj["apiVersion"]), Kind: str(obj["kind"])}
	md, _ := obj["metadata"].(map[string]any)
	m.Namespace, m.Name, m.UID = str(md["namespace"]), str(md["name"]), str(md["uid"])
	m.ResourceVersion = str(md["resourceVersion"])
	m.CreationTimestamp, m.DeletionTimestamp = str(md["creationTimestamp"]), str(md["deletionTimestamp"])
	if n, ok := md["generation"].(json.Number); ok {
		m.Generation, _ = n.Int64()
	}
	if mf, ok := md["managedFields"].([]any); ok && len(mf) > 0 {
		for _, e := range mf {
			e, _ := e.(map[string]any)
			m.Managers = append(m.Managers, ManagedFieldsEntry{
				Manager: str(e["manager"]), Operation: str(e["operation"]),
				Subresource: str(e["subresource"]), Time: str(e["time"]),
			})
		}
	}
	ann, _ := md["annotations"].(map[string]any)
	m.InitialEventsEnd = str(ann[metav1.InitialEventsAnnotationKey]) == "true"
	return m
}

// withoutManagedFields returns obj (decoded) without metadata.managedFields.
func withoutManagedFields(obj map[string]any) map[string]any {
	if md, ok := obj["metadata"].(map[string]any); ok {
		delete(md, "managedFields")
	}
	return obj
}

// checkAgainstOracle verifies o, parsed from in with opts, against
// encoding/json: valid output JSON equal to the input minus managedFields
// (the input itself with KeepManagedFields) and the same metadata.
func checkAgainstOracle(t *testing.T, in []byte, opts ParseOptions, o *Object) {
	t.Helper()
	if !json.Valid(o.JSON) {
		t.Fatalf("output is not valid JSON:\n%s", o.JSON)
	}
	inV, err := decodeJSON(in)
	if err != nil {
		t.Fatalf("Parse accepted what encoding/json rejects (%v):\n%q", err, in)
	}
	inObj := inV.(map[string]any)
	want := oracleMeta(inObj)
	if got := metaOf(o); !reflect.DeepEqual(got, want) {
		t.Errorf("metadata mismatch\ngot  %+v\nwant %+v\ninput %q", got, want, in)
	}
	outV, err := decodeJSON(o.JSON)
	if err != nil {
		t.Fatalf("decoding output: %v\n%q", err, o.JSON)
	}
	if !opts.KeepManagedFields {
		inObj = withoutManagedFields(inObj)
	}
	if !reflect.DeepEqual(outV, any(inObj)) {
		t.Errorf("output JSON differs from input (minus managedFields)\nin  %q\nout %q", in, o.JSON)
	}
	if opts.KeepManagedFields && !bytes.Equal(o.JSON, bytes.TrimSpace(in)) {
		t.Errorf("with KeepManagedFields the JSON must be the input\nin  %q\nout %q", in, o.JSON)
	}
}
