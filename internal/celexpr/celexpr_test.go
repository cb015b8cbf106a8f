package celexpr

import (
	"strings"
	"testing"
)

func TestCompileErrors(t *testing.T) {
	for _, tc := range []struct{ expr, want string }{
		{"object.(", `invalid --where CEL expression "object.("`},
		{`name + "x"`, "it yields string, not a bool"},
		{"unknown == 1", "undeclared reference to 'unknown'"},
	} {
		if _, err := Compile("--where", tc.expr); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Compile(%q) = %v, want an error containing %q", tc.expr, err, tc.want)
		}
	}
}

func TestEval(t *testing.T) {
	pod := []byte(`{"kind":"Pod","metadata":{"name":"web-1","labels":{"app":"web"}},"spec":{"replicas":3},"status":{"containerStatuses":[{"state":{"waiting":{"reason":"CrashLoopBackOff"}}}]}}`)
	old := []byte(`{"spec":{"replicas":2}}`)
	vars := Vars{Object: pod, OldObject: old, Type: "Updated", Kind: "Pod", Name: "web-1", Namespace: "ns"}
	for _, tc := range []struct {
		expr string
		vars Vars
		want bool
	}{
		{`deltaType == "Updated" && kind == "Pod"`, vars, true},
		{`object.spec.replicas > oldObject.spec.replicas`, vars, true},
		{`object.spec.replicas == 3`, vars, true},
		{`object.metadata.labels.app == "web"`, vars, true},
		{`name.startsWith("web-")`, vars, true},
		{`object.status.containerStatuses.exists(c, has(c.state.waiting) && c.state.waiting.reason == "CrashLoopBackOff")`, vars, true},
		{`object.status.phase == "Running"`, vars, false}, // no such key: false
		{`oldObject == null`, Vars{Object: pod}, true},
		{`object.spec.replicas > 1`, Vars{}, false}, // no object
	} {
		p, err := Compile("--where", tc.expr)
		if err != nil {
			t.Fatal(err)
		}
		got, err := p.Eval(tc.vars)
		if err != nil || got != tc.want {
			t.Errorf("%s: %v, %v; want %v", tc.expr, got, err, tc.want)
		}
	}
	p, _ := Compile("--where", "object.spec")
	if _, err := p.Eval(vars); err == nil || !strings.Contains(err.Error(), "not a bool") {
		t.Errorf("a dyn non-bool result: %v", err)
	}
}
