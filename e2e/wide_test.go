package e2e

import (
	"regexp"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestWideCRDPrinterColumns: -o wide shows a CRD's additionalPrinterColumns
// as the server renders them, -o wide's (priority 1) included.
func TestWideCRDPrinterColumns(t *testing.T) {
	gvr := schema.GroupVersionResource{Group: "e2e.example.com", Version: "v1", Resource: "sprockets"}
	crdGVR := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "sprockets.e2e.example.com"},
		"spec": map[string]any{
			"group": gvr.Group, "scope": "Namespaced",
			"names": map[string]any{"plural": "sprockets", "singular": "sprocket", "kind": "Sprocket"},
			"versions": []any{map[string]any{
				"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
				"additionalPrinterColumns": []any{
					map[string]any{"name": "Teeth", "type": "integer", "jsonPath": ".spec.teeth"},
					map[string]any{"name": "Finish", "type": "string", "jsonPath": ".spec.finish", "priority": int64(1)},
				},
			}},
		},
	}}
	if _, err := testEnv.dynamic.Resource(crdGVR).Create(bg, crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ns := newNamespace(t)
	sprockets := testEnv.dynamic.Resource(gvr).Namespace(ns)
	s := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "e2e.example.com/v1", "kind": "Sprocket",
		"metadata": map[string]any{"name": "s1"}, "spec": map[string]any{"teeth": int64(42), "finish": "brass"},
	}}
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := sprockets.Create(bg, s, metav1.CreateOptions{})
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	r := run(t, time.Minute, "sprockets", "-n", ns, "-o", "wide", "--until-synced")
	want := regexp.MustCompile(`^TIME +DELTA +NAME +TEETH +FINISH +HEALTH\n\d\d:\d\d:\d\d +Replaced +s1 +42 +brass +Current\n$`)
	if r.code != 0 || !want.MatchString(r.stdout) || r.stderr != "" {
		t.Errorf("exit %d, stdout %q, stderr %q; want %s", r.code, r.stdout, r.stderr, want)
	}
	// JSON is unchanged by it: the object, no cells.
	r = run(t, time.Minute, "sprockets", "-n", ns, "-o", "json", "--until-synced")
	if r.code != 0 || strings.Contains(r.stdout, "cells") || !strings.Contains(r.stdout, `"teeth":42`) {
		t.Errorf("json: exit %d, stdout %q", r.code, r.stdout)
	}
}
