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

// TestWideInitialListIsOneTable: the initial list of -o wide and of
// -o custom-columns is laid out as kubectl get lays out a list — one
// header, every row aligned under it — however its names differ in
// length; a later row that widens a column gets the header again.
func TestWideInitialListIsOneTable(t *testing.T) {
	ns := newNamespace(t)
	long := "a-configmap-whose-name-is-longer-than-the-rest"
	for _, name := range []string{"a", long, "settings", "z"} {
		createCM(t, ns, name, map[string]string{"e2e-table": "yes"}, map[string]string{"k": "v"})
	}
	for _, output := range []string{"wide", "custom-columns=DELTA:.type,NAME:.name,RV:.resourceVersion"} {
		r := run(t, time.Minute, "cm", "-n", ns, "-l", "e2e-table=yes", "-o", output, "--until-synced")
		lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
		if r.code != 0 || len(lines) != 5 || strings.Count(r.stdout, "DELTA") != 1 || !strings.Contains(lines[0], "NAME") {
			t.Fatalf("-o %s: exit %d, stderr %q, want one header and 4 rows:\n%s", output, r.code, r.stderr, r.stdout)
		}
		at := strings.Index(lines[0], "NAME")
		for _, row := range lines[1:] {
			if at >= len(row) || row[at] == ' ' || row[at-1] != ' ' {
				t.Errorf("-o %s: a row's name does not start under NAME:\n%s", output, r.stdout)
			}
		}
	}

	s := start(t, "cm", "-n", ns, "-l", "e2e-table=yes", "-o", "wide")
	for range 5 {
		s.next(30 * time.Second) // the header and the list
	}
	createCM(t, ns, long+"-and-then-some", map[string]string{"e2e-table": "yes"}, nil)
	if h, row := s.next(30*time.Second), s.next(30*time.Second); !strings.HasPrefix(h, "TIME") || !strings.Contains(row, long+"-and-then-some") ||
		strings.Index(h, "DATA") != strings.Index(row, " 0 ")+1 {
		t.Errorf("a row that widens NAME: %q under %q, want it under its header again", row, h)
	}
}
