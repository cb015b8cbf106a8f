package rawobj

import (
	"encoding/json"
	"reflect"
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
