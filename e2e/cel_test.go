package e2e

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestCELAsKubernetesWritesIt: --where, --until=cel= and --fail-when=cel=
// with the expressions of admission policies — optional fields above all —
// against a real API server.
func TestCELAsKubernetesWritesIt(t *testing.T) {
	ns := newNamespace(t)
	createCM(t, ns, "keep-1", nil, map[string]string{"k": "keep", "mem": "2Gi"})
	createCM(t, ns, "other", nil, map[string]string{"k": "other", "mem": "512Mi"})
	createCM(t, ns, "no-data", nil, nil)

	t.Run("where with optionals and the prefix", func(t *testing.T) {
		s := start(t, "cm", "-n", ns, `--where=cel=object.?data.k.orValue('') == 'keep'`,
			`--where=quantity(object.?data.mem.orValue('0')).isGreaterThan(quantity('1Gi'))`)
		s.expect("Replaced: keep-1")
		createCM(t, ns, "small", nil, map[string]string{"k": "keep", "mem": "1Mi"})
		createCM(t, ns, "keep-2", nil, map[string]string{"k": "keep", "mem": "1.5Gi"})
		// Only keep-2 follows: other, no-data and small are filtered out
		// (no-data without an error: the optional guards the absent field).
		s.expect("Added: keep-2")
	})

	t.Run("until with optionals", func(t *testing.T) {
		createCM(t, ns, "gate", nil, nil)
		s := start(t, "cm/gate", "-n", ns, `--until=cel='object.?data.?state.orValue("") == "open"'`, "-o", "name")
		s.expect("configmap/gate")
		updateCM(t, ns, "gate", "state", "ajar")
		s.expect("configmap/gate")
		updateCM(t, ns, "gate", "state", "open")
		if code := s.waitExit(30 * time.Second); code != 0 {
			t.Fatalf("exit %d; stderr: %s", code, s.stderr.String())
		}
		if got := s.stderr.String(); got != "configmap/gate condition met\n" {
			t.Errorf("stderr: %q", got)
		}
	})

	t.Run("fail-when with optionals", func(t *testing.T) {
		createCM(t, ns, "job", nil, nil)
		s := start(t, "cm/job", "-n", ns, "--until=delete",
			`--fail-when=cel='object.?data.state.orValue("") == "broken" && sets.contains(["job", "task"], [object.metadata.name])'`)
		s.expect("Replaced: job")
		updateCM(t, ns, "job", "state", "broken")
		if code := s.waitExit(30 * time.Second); code != 2 {
			t.Fatalf("exit %d; stderr: %s", code, s.stderr.String())
		}
		if got := s.stderr.String(); !strings.HasPrefix(got, "error: configmap/job matched --fail-when=cel=") {
			t.Errorf("stderr: %q", got)
		}
	})
}

// TestCELCostLimits: a runaway expression is refused before any request;
// one that runs away on an object at hand stops at the per-evaluation
// limit, with what was printed whole.
func TestCELCostLimits(t *testing.T) {
	ns := newNamespace(t)

	r := run(t, time.Minute, "cm", "-n", ns, "--where=object.data.all(k, object.data.all(j, k != j || true))")
	if r.code != 1 || r.stdout != "" || !strings.HasPrefix(r.stderr, "error: --where:1:1: estimated cost 105005002 exceeds the limit of 10000000") {
		t.Errorf("nested comprehensions: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}

	createCM(t, ns, "a-small", nil, map[string]string{"blob": "abba"})
	createCM(t, ns, "b-big", nil, map[string]string{"blob": strings.Repeat("ab", 400_000)})
	r = run(t, time.Minute, "cm", "-n", ns, "-o", "json", "--until-synced",
		`--where=[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(i, object.data.blob.matches('^(a|b)*$'))`)
	if r.code != 1 || !strings.HasPrefix(r.stderr, `error: --where: evaluating "[1, 2, 3`) ||
		!strings.Contains(r.stderr, "on configmap "+ns+"/b-big: operation cancelled: actual cost limit exceeded (the limit is 1000000 per evaluation") {
		t.Fatalf("a runaway evaluation: exit %d, stderr %q", r.code, r.stderr)
	}
	var names []string
	for _, line := range strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n") {
		var rec struct{ Name string }
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("a line of stdout is not whole JSON: %v: %.200q", err, line)
		}
		names = append(names, rec.Name)
	}
	if strings.Join(names, ",") != "a-small" {
		t.Errorf("printed %v, want a-small alone", names)
	}
}

// TestCELBadInput: every mistake is an error naming the flag and the
// position, before any request (the server here does not exist).
func TestCELBadInput(t *testing.T) {
	for _, tc := range []struct{ arg, want string }{
		{"--where=object.data.mem.quantityOf() == 1", "error: --where:1:27: undeclared reference to 'quantityOf'\n | object.data.mem.quantityOf() == 1\n | ..........................^\n"},
		{"--where=quantity(1) == quantity('1')", "error: --where:1:9: found no matching overload for 'quantity' applied to '(int)'"},
		{"--until=cel='object.('", "error: --until:1:8: Syntax error"},
		{"--where=name", "error: --where:1:1: the expression yields string, not bool"},
		{`--where=namespace == "x"`, "namespace is a reserved word in CEL: write object.metadata.namespace"},
		{"--fail-when=cel=object.data.all(k, object.data.all(j, k != j))", "error: --fail-when:1:1: estimated cost"},
	} {
		r := run(t, time.Minute, "cm", "--server=https://127.0.0.1:1", tc.arg)
		if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, tc.want) || !strings.HasPrefix(r.stderr, "error: ") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want %q", tc.arg, r.code, r.stdout, r.stderr, tc.want)
		}
	}
}
