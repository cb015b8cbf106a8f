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
