package rawobj

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestOwnerReferences(t *testing.T) {
	cases := []struct {
		name string
		json string
	}{
		{"none", `{"metadata":{"name":"a"}}`},
		{"null", `{"metadata":{"name":"a","ownerReferences":null}}`},
		{"empty", `{"metadata":{"name":"a","ownerReferences":[]}}`},
		{"one", `{"kind":"Pod","metadata":{"name":"a","labels":{"ownerReferences":"x"},"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web-1","uid":"u1","controller":true,"blockOwnerDeletion":true}]},"spec":{"ownerReferences":[{"uid":"not-this"}]}}`},
		{"two, spaced", `{ "metadata" : { "ownerReferences" : [ {"apiVersion":"v1","kind":"ConfigMap","name":"c","uid":"u2"} , {"apiVersion":"batch/v1","kind":"Job","name":"j","uid":"u3"} ], "name" : "a" } }`},
		{"repeated: last wins", `{"metadata":{"name":"a","ownerReferences":[{"uid":"first","name":"f","kind":"K","apiVersion":"v1"}]},"metadata":{"name":"a","ownerReferences":[{"uid":"second","name":"s","kind":"K","apiVersion":"v1"}]}}`},
		{"escaped key", `{"metadata":{"name":"a","owner\u0052eferences":[{"uid":"esc","name":"e","kind":"K","apiVersion":"v1"}]}}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			obj, err := Parse([]byte(c.json), ParseOptions{})
			if err != nil {
				t.Fatal(err)
			}
			got, err := obj.OwnerReferences()
			if err != nil {
				t.Fatal(err)
			}
			var want struct {
				Metadata metav1.ObjectMeta `json:"metadata"`
			}
			if err := json.Unmarshal([]byte(c.json), &want); err != nil {
				t.Fatal(err)
			}
			refs := want.Metadata.OwnerReferences
			if len(refs) == 0 {
				refs = nil
			}
			if !reflect.DeepEqual(got, refs) {
				t.Errorf("OwnerReferences() = %+v, encoding/json says %+v", got, refs)
			}
		})
	}
}

func TestOwnerReferencesBadValue(t *testing.T) {
	obj, err := Parse([]byte(`{"metadata":{"name":"a","ownerReferences":{"uid":"x"}}}`), ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := obj.OwnerReferences(); err == nil {
		t.Fatal("an object as ownerReferences decoded without an error")
	}
}

func TestMember(t *testing.T) {
	o, err := Parse([]byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","labels":{"status":"x"}},"spec":{"a":[1,{"status":2}]},"status":{"phase":"Running"},"extra":null}`), ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, want string }{
		{"status", `{"phase":"Running"}`},
		{"spec", `{"a":[1,{"status":2}]}`},
		{"extra", ""},
		{"absent", ""},
	} {
		got, err := o.Member(tc.name)
		if err != nil || string(got) != tc.want {
			t.Errorf("Member(%q) = %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
	dup := &Object{JSON: []byte(`{"status":1, "status" : {"b":2} }`)}
	if got, err := dup.Member("status"); err != nil || string(got) != `{"b":2}` {
		t.Errorf("repeated member: %q, %v", got, err)
	}
	bad := &Object{JSON: []byte(`{"status":{"b":}`), Name: "bad"}
	if _, err := bad.Member("status"); err == nil || !strings.Contains(err.Error(), "status of bad") {
		t.Errorf("broken JSON: %v", err)
	}
}

// FuzzOwnerUID holds the reading of ownerReferences without decoding
// (validOwnerUID) to what encoding/json reads of them: the same UID
// wherever it answers.
func FuzzOwnerUID(f *testing.F) {
	for _, refs := range []string{
		`[]`, `null`, `[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web-1","uid":"rs-uid","controller":true,"blockOwnerDeletion":true}]`,
		`[{"uid":"a"},{"uid":"b","controller":true}]`, `[{"uid":"a","controller":false},{"uid":"b"}]`,
		`[{"uid":"a","controller":true,"controller":false},{"uid":"b","controller":true}]`,
		`[{"UID":"a"}]`, `[{"uid":"x\u0041"}]`, `[null,{"uid":"a"}]`, `[{"uid":1}]`, `[{"controller":"yes","uid":"a"}]`,
		`[{"uid":"a","Controller":true},{"uid":"b","controller":true}]`, `[{"name":null,"uid":null,"controller":null}]`, `{}`, `"x"`,
	} {
		f.Add(refs)
	}
	f.Fuzz(func(t *testing.T, refs string) {
		o, err := Parse([]byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","ownerReferences":`+refs+`}}`), ParseOptions{})
		if err != nil {
			return
		}
		got, ok := validOwnerUID(o.JSON, o.facts&factPlainMetadata != 0) // as OwnerUID reads it
		if slow, slowOK := validOwnerUID(o.JSON, false); slow != got || slowOK != ok {
			t.Fatalf("read knowing the metadata plain: %q (%v), without: %q (%v)", got, ok, slow, slowOK)
		}
		if o.ownersAt > 0 {
			if at, atOK := o.ownerUIDAt(); at != got || atOK != ok {
				t.Fatalf("read where the parse saw the references: %q (%v), from the top: %q (%v)", at, atOK, got, ok)
			}
		}
		if !ok {
			return
		}
		want := ""
		if refs, err := o.OwnerReferences(); err == nil && len(refs) > 0 {
			want = string(refs[0].UID)
			if r := ControllerOf(refs); r != nil {
				want = string(r.UID)
			}
		}
		if got != want {
			t.Fatalf("ownerReferences %s: read %q, encoding/json %q", refs, got, want)
		}
	})
}

// TestOwnerUIDReadsTheUsualFormWithoutDecoding: the references an API
// server writes are read by validOwnerUID itself.
func TestOwnerUIDReadsTheUsualFormWithoutDecoding(t *testing.T) {
	o, err := Parse([]byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","ownerReferences":[{"apiVersion":"v1","kind":"Node","name":"n","uid":"node-uid"},{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web-1","uid":"rs-uid","controller":true,"blockOwnerDeletion":true}]}}`), ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if uid, ok := validOwnerUID(o.JSON, false); !ok || uid != "rs-uid" || o.OwnerUID() != "rs-uid" {
		t.Fatalf("the controller's UID: %q, %v (OwnerUID %q)", uid, ok, o.OwnerUID())
	}
	// Every way it is parsed, the parse notes where the references are
	// (and where a status as the last member ends), and the reading from
	// there is the same.
	for name, o := range parsedEveryWay(t, `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","managedFields":[{"manager":"m"}],"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web-1","uid":"rs-uid","controller":true}]},"spec":{},"status":{"phase":"Running"} }`) {
		if o.ownersAt == 0 || o.facts&factStatusLast == 0 {
			t.Errorf("%s: ownersAt %d, status last %v: the parse did not note them", name, o.ownersAt, o.facts&factStatusLast != 0)
		}
		if uid, ok := o.ownerUIDAt(); !ok || uid != "rs-uid" {
			t.Errorf("%s: the references read where the parse saw them: %q, %v", name, uid, ok)
		}
		if status, err := o.Member("status"); err != nil || string(status) != `{"phase":"Running"}` {
			t.Errorf("%s: status %s (%v)", name, status, err)
		}
	}
}

// TestOwnerUIDOfRepeatedMetadata: the last metadata member is the one, as
// a decoder takes it, however the key is written.
func TestOwnerUIDOfRepeatedMetadata(t *testing.T) {
	for _, data := range []string{
		`{"metadata":{"name":"a","ownerReferences":[{"uid":"x"}]},"spec":{},"metadata":{"name":"a","ownerReferences":[{"uid":"y"}]}}`,
		`{"metadata":{"name":"a","ownerReferences":[{"uid":"x"}]},"spec":{},"meta\u0064ata":{"name":"a","ownerReferences":[{"uid":"y"}]}}`,
	} {
		o, err := Parse([]byte(data), ParseOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := o.OwnerUID(); got != "y" {
			t.Errorf("%s: owner %q, want the last metadata's, y", data, got)
		}
	}
}

func TestWithoutStatus(t *testing.T) {
	cases := []struct {
		body string
		want bool // the top level has no member a decoder reads as status
	}{
		{`,"data":{"status":"x"}`, true},
		{`,"spec":{"status":{}}`, true},
		{`,"Status":{}`, true},
		{`,"status":{}`, false},
		{`,"status":null`, false},
		{`,"st\u0061tus":{}`, false},
		{`,"status":{},"status":null`, false},
		{`,"status":null,"status" : {"phase":"Running","n":[1,{"a":"}"}]}`, false},
		{`, "status"	:	"a string" , "spec":{}`, false},
	}
	for _, c := range cases {
		data := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","managedFields":[{"manager":"m","operation":"Update"}]}` + c.body + `}`
		for name, o := range parsedEveryWay(t, data) {
			if got := o.WithoutStatus(); got != c.want {
				t.Errorf("%s of %s: WithoutStatus() = %v, want %v", name, data, got, c.want)
			}
			if c.want {
				if status, err := o.Members("status"); err != nil || status[0] != nil {
					t.Errorf("%s of %s: WithoutStatus but Members finds status %s (%v)", name, data, status, err)
				}
			}
			// Where the parse found status, it is what a scan finds.
			got, err := o.Members("status")
			want, werr := Members(o.JSON, "status")
			if err != nil || werr != nil || string(got[0]) != string(want[0]) {
				t.Errorf("%s of %s: status %s (%v), a scan finds %s (%v)", name, data, got[0], err, want[0], werr)
			}
		}
	}
	if (&Object{JSON: []byte(`{"metadata":{"name":"a"}}`)}).WithoutStatus() {
		t.Error("an Object made by hand says it has no status")
	}
}

// TestOwnerUIDOfParsedObjects: the parse notes whether metadata has
// ownerReferences, and OwnerUID answers as encoding/json reads them
// (the controller's UID, or else the first owner's; of metadata repeated,
// the last), through every way an object is parsed.
func TestOwnerUIDOfParsedObjects(t *testing.T) {
	for _, meta := range []string{
		`{"name":"a"}`,
		`{"name":"a","ownerReferences":null}`,
		`{"name":"a","ownerReferences":[{"apiVersion":"v1","kind":"K","name":"o","uid":"first"},{"apiVersion":"v1","kind":"K","name":"c","uid":"ctrl","controller":true}]}`,
		`{"name":"a","owner\u0052eferences":[{"apiVersion":"v1","kind":"K","name":"o","uid":"escaped"}]}`,
		`{"name":"a","labels":{"ownerReferences":"not these"}}`,
	} {
		for _, data := range []string{
			`{"apiVersion":"v1","kind":"ConfigMap","metadata":` + meta + `}`,
			`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","ownerReferences":[{"uid":"earlier","apiVersion":"v1","kind":"K","name":"x"}]},"metadata":` + meta + `}`,
		} {
			// A repeated metadata: the last, whole (as an Unstructured
			// decodes it; a struct would merge the two).
			var top map[string]json.RawMessage
			var meta metav1.ObjectMeta
			if err := json.Unmarshal([]byte(data), &top); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(top["metadata"], &meta); err != nil {
				t.Fatal(err)
			}
			want := ""
			if refs := meta.OwnerReferences; len(refs) > 0 {
				want = string(refs[0].UID)
				if c := ControllerOf(refs); c != nil {
					want = string(c.UID)
				}
			}
			for name, o := range parsedEveryWay(t, data) {
				if got := o.OwnerUID(); got != want {
					t.Errorf("%s of %s: OwnerUID() = %q, encoding/json reads %q", name, data, got, want)
				}
			}
		}
	}
}

// parsedEveryWay is the object data as each way of this package parses it
// makes it: Parse, an item of a list, the object of a watch event, a
// DeepCopy and one retyped (SetGroupVersionKind).
func parsedEveryWay(t *testing.T, data string) map[string]*Object {
	t.Helper()
	parsed, err := Parse([]byte(data), ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	list, err := ParseList([]byte(`{"apiVersion":"v1","kind":"ConfigMapList","metadata":{},"items":[`+data+`]}`), ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, event, _, err := NewDecoder(strings.NewReader(`{"type":"MODIFIED","object":` + data + `}`)).NextEvent(ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	retyped := parsed.DeepCopy()
	retyped.SetGroupVersionKind(retyped.GroupVersionKind())
	return map[string]*Object{"Parse": parsed, "a list's item": list.Items[0], "a watch event's": event, "DeepCopy": parsed.DeepCopy(), "retyped": retyped}
}
