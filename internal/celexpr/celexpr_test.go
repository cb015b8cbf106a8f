package celexpr

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestCompileErrors(t *testing.T) {
	for _, tc := range []struct{ name, expr, want string }{
		{"syntax", "object.(", "--where:1:8: Syntax error"},
		{"unknown variable", "unknown == 1", "--where:1:1: undeclared reference to 'unknown'"},
		{"unknown function", "object.data.mem.quantityOf() == 1", "--where:1:27: undeclared reference to 'quantityOf'"},
		{"wrong type", "quantity(1) == quantity('1')", "--where:1:9: found no matching overload for 'quantity' applied to '(int)'"},
		{"mixed list", "[1, 'a'].size() == 2", "--where:1:5: expected type 'int' but found 'string'"},
		{"non-bool", `name + "x"`, `--where:1:1: the expression yields string, not bool`},
		{"non-bool optional", `object.?spec`, `yields optional_type(dyn), not bool (test it with .hasValue(), or compare .orValue(DEFAULT))`},
		{"reserved word", `namespace == "x"`, "namespace is a reserved word in CEL: write object.metadata.namespace"},
		{"bad regex literal", `name.matches('[')`, "--where:1:14: invalid matches argument"},
		{"nested comprehensions", `object.data.all(k, object.data.all(j, k != j || true))`,
			"--where:1:1: estimated cost 105005002 exceeds the limit of 10000000"},
		{"every pair of containers", `object.spec.containers.all(c, object.spec.containers.exists_one(d, c.name == d.name))`,
			"exceeds the limit of 10000000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Compile("--where", tc.expr)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Compile(%q) = %v, want an error containing %q", tc.expr, err, tc.want)
			}
			if !strings.Contains(err.Error(), "\n | ") {
				t.Errorf("the error does not quote the expression: %v", err)
			}
		})
	}
}

// TestCostEstimateAdmits holds the other side of the estimate: what users
// write, one comprehension deep (or nested over an item's own short
// lists), is not refused.
func TestCostEstimateAdmits(t *testing.T) {
	for _, expr := range []string{
		`object.status.containerStatuses.exists(c, has(c.state.waiting) && c.state.waiting.reason == "CrashLoopBackOff")`,
		`object.status.observedGeneration == object.metadata.generation && object.status.conditions.exists(c, c.type == "Progressing" && c.reason == "NewReplicaSetAvailable")`,
		`object.spec.containers.all(c, c.image.matches('^registry.example.com/') && c.name.matches('^[a-z]+$') && !c.image.endsWith(':latest'))`,
		`object.spec.template.spec.containers.all(c, c.ports.all(p, p.containerPort > 1024))`,
		`object.spec.containers.map(c, c.name).join(',') == 'a'`,
		`[1, 2, 3].all(x, [1, 2, 3].all(y, x != y || x == y))`,
	} {
		if _, err := Compile("--where", expr); err != nil {
			t.Errorf("%s: %v", expr, err)
		}
	}
}

// TestLibraries evaluates expressions of every library of Kubernetes' CEL
// environment, most of them as Kubernetes' documentation of CEL,
// ValidatingAdmissionPolicy and CRD validation rules writes them (self
// there is object here).
func TestLibraries(t *testing.T) {
	deploy := Vars{
		Type: "Updated", Kind: "Deployment", APIVersion: "apps/v1", Resource: "deployments", Namespace: "demo", Name: "web-1",
		Object: []byte(`{"metadata":{"name":"web-1","namespace":"demo","labels":{"app":"web","environment":"prod"}},
			"spec":{"replicas":3,"minReplicas":1,"template":{"spec":{"containers":[
				{"name":"app","image":"my-registry/app:1.2.3","resources":{"limits":{"memory":"512Mi","cpu":"500m"}},"env":[{"name":"MY_ENV","value":"abc"}]},
				{"name":"side","image":"my-registry/side:0.9.0","resources":{"limits":{"memory":"2Gi"}}}]}}},
			"status":{"conditions":[{"type":"Available","status":"True"}]}}`),
		OldObject: []byte(`{"metadata":{"name":"web-1","labels":{"app":"web"}},"spec":{"replicas":2}}`),
	}
	cm := Vars{Kind: "ConfigMap", Name: "settings", Object: []byte(`{"data":{"url":"https://example.com:8443/path","ip":"10.0.0.7",
		"cidr":"10.0.0.0/16","version":"1.4.2","mem":"1536Mi","k":"keep","list":"b,a,c"}}`)}
	for _, tc := range []struct {
		library, expr string
		vars          Vars
		want          bool
	}{
		// The language and the record's variables.
		{"core", `deltaType == "Updated" && kind == "Deployment" && apiVersion == "apps/v1" && resource == "deployments"`, deploy, true},
		{"core", `object.metadata.namespace == "demo" && name == "web-1"`, deploy, true},
		{"core", `object.spec.minReplicas <= object.spec.replicas`, deploy, true},
		{"core", `object.spec.replicas > oldObject.spec.replicas`, deploy, true},
		{"core", `has(object.metadata.labels) && 'environment' in object.metadata.labels`, deploy, true},
		{"core", `!has(object.spec.template.spec.containers) || object.spec.template.spec.containers.all(c, c.image.startsWith('my-registry'))`, deploy, true},
		{"core", `object.spec.template.spec.containers[0].env.filter(e, e.name == 'MY_ENV').all(e, e.value.matches('^[a-zA-Z]*$'))`, deploy, true},
		{"core", `object.status.conditions.exists(c, c.type == 'Available' && c.status == 'True')`, deploy, true},
		{"core", `type(object.spec.replicas) == int ? object.spec.replicas == 3 : false`, deploy, true},
		{"core", `object.spec.replicas == 3.0`, deploy, true}, // cross-type numeric comparison (1.28)
		{"core", `oldObject == null`, Vars{Object: deploy.Object}, true},
		{"core", `object.status.phase == "Running"`, deploy, false}, // no such key: false
		{"core", `object.spec.replicas > 1`, Vars{}, false},         // no object

		// cel-go's optional types.
		{"optionals", `object.?data.k.orValue('') == 'keep'`, cm, true},
		{"optionals", `object.?data.absent.orValue('none') == 'none'`, cm, true},
		{"optionals", `object.metadata.?labels[?'environment'].orValue('') == 'prod'`, deploy, true},
		{"optionals", `!object.?spec.?paused.hasValue()`, deploy, true},
		{"optionals", `optional.of(object.spec.replicas).value() == 3`, deploy, true},
		{"optionals", `[?object.metadata.?labels.app, ?optional.none()].size() == 1`, deploy, true},
		{"optionals", `{?'x': optional.none(), 'y': 1}.size() == 1`, deploy, true},

		// ext strings (version 2).
		{"strings", `name.charAt(1) == 'e' && name.indexOf('-') == 3 && name.lastIndexOf('1') == 4`, deploy, true},
		{"strings", `'TacoCat'.lowerAscii() == 'tacocat' && 'tacocat'.upperAscii() == 'TACOCAT'`, deploy, true},
		{"strings", `'  \ttrim\n '.trim() == 'trim' && 'hello hello'.replace('he', 'we') == 'wello wello'`, deploy, true},
		{"strings", `object.data.list.split(',').size() == 3 && 'tacocat'.substring(4) == 'cat'`, cm, true},
		{"strings", `['hello', 'mellow'].join(' ') == 'hello mellow'`, deploy, true},
		{"strings", `'%s has %d replicas'.format([name, object.spec.replicas]) == 'web-1 has 3 replicas'`, deploy, true},
		{"strings", `strings.quote('a"b') == '"a\\"b"'`, deploy, true},

		// ext lists (version 3) and Kubernetes' lists.
		{"lists", `[1, 2, 3].sum() == 6 && [3, 1, 2].min() == 1 && [3, 1, 2].max() == 3`, deploy, true},
		{"lists", `['a', 'b', 'c'].isSorted() && ['b', 'a'].indexOf('a') == 1 && [1, 2, 1].lastIndexOf(1) == 2`, deploy, true},
		{"lists", `object.data.list.split(',').sort() == ['a', 'b', 'c']`, cm, true},
		{"lists", `[1, 1, 2].distinct() == [1, 2] && [[1], [2, 3]].flatten() == [1, 2, 3] && lists.range(3) == [0, 1, 2]`, deploy, true},
		{"lists", `[1, 2, 3, 4].slice(1, 3) == [2, 3] && [1, 2].reverse() == [2, 1]`, deploy, true},
		{"lists", `object.spec.template.spec.containers.sortBy(c, c.name)[1].name == 'side'`, deploy, true},

		// ext sets.
		{"sets", `sets.contains(['a', 'b', 'c'], [name.substring(0, 1)])`, Vars{Name: "b"}, true},
		{"sets", `sets.equivalent([1, 2, 3], [3, 2, 1]) && sets.intersects([1, 2], [2, 3])`, deploy, true},
		{"sets", `sets.contains(object.metadata.labels.map(k, k), ['app', 'environment'])`, deploy, true},

		// ext two-variable comprehensions (1.32).
		{"two-var comprehensions", `object.metadata.labels.all(k, v, k.size() < 64 && v.size() < 64)`, deploy, true},
		{"two-var comprehensions", `object.spec.template.spec.containers.exists(i, c, i == 1 && c.name == 'side')`, deploy, true},
		{"two-var comprehensions", `object.metadata.labels.transformMap(k, v, v.upperAscii()) == {'app': 'WEB', 'environment': 'PROD'}`, deploy, true},

		// Kubernetes' regex library.
		{"regex", `"abc 123".find('[0-9]+') == '123' && "abc 123 456".findAll('[0-9]+') == ['123', '456']`, deploy, true},
		{"regex", `object.metadata.labels.all(k, k.matches('^[a-z]+$'))`, deploy, true},

		// Kubernetes' URL library.
		{"url", `isURL(object.data.url) && url(object.data.url).getScheme() == 'https'`, cm, true},
		{"url", `url(object.data.url).getHost() == 'example.com:8443' && url(object.data.url).getPort() == '8443'`, cm, true},
		{"url", `url('https://example.com/path with spaces/').getEscapedPath() == '/path%20with%20spaces/'`, cm, true},

		// Kubernetes' quantity library (1.28).
		{"quantity", `quantity(object.data.mem).isGreaterThan(quantity('1Gi'))`, cm, true},
		{"quantity", `object.spec.template.spec.containers.all(c, quantity(c.resources.limits.memory).compareTo(quantity('4Gi')) < 0)`, deploy, true},
		{"quantity", `isQuantity('50k') && quantity('50k').asInteger() == 50000 && quantity('50M').add(quantity('20k')) == quantity('50.02M')`, deploy, true},
		{"quantity", `quantity('500000G').isInteger() && quantity('50k').sub(20000).asInteger() == 30000 && sign(quantity('-50.7k')) == -1`, deploy, true},

		// Kubernetes' IP and CIDR libraries (1.30).
		{"ip", `isIP(object.data.ip) && ip(object.data.ip).family() == 4 && !ip(object.data.ip).isLoopback()`, cm, true},
		{"ip", `ip('::1').isLoopback() && ip('fe80::1').isLinkLocalUnicast()`, cm, true},
		{"cidr", `cidr(object.data.cidr).containsIP(ip(object.data.ip)) && cidr(object.data.cidr).prefixLength() == 16`, cm, true},
		{"cidr", `cidr('192.168.0.0/16').containsCIDR(cidr('192.168.10.0/24')) && isCIDR('10.0.0.0/8')`, cm, true},

		// Kubernetes' format library (1.31).
		{"format", `!format.dns1123Label().validate(name).hasValue()`, deploy, true},
		{"format", `format.dns1123Label().validate('Not_A_Label').hasValue()`, deploy, true},
		{"format", `format.named('dns1123Subdomain').value().validate(object.metadata.name) == optional.none()`, deploy, true},

		// Kubernetes' semver library (1.33).
		{"semver", `isSemver(object.data.version) && semver(object.data.version).isGreaterThan(semver('1.4.0'))`, cm, true},
		{"semver", `semver(object.data.version).major() == 1 && semver(object.data.version).minor() == 4 && semver('1.4.2').compareTo(semver('1.4.2')) == 0`, cm, true},
		{"semver", `object.spec.template.spec.containers.all(c, isSemver(c.image.split(':')[1]))`, deploy, true},
	} {
		t.Run(tc.library, func(t *testing.T) {
			p, err := Compile("--where", tc.expr)
			if err != nil {
				t.Fatal(err)
			}
			got, err := p.Eval(tc.vars)
			if err != nil || got != tc.want {
				t.Errorf("%s: %v, %v; want %v", tc.expr, got, err, tc.want)
			}
		})
	}
}

// TestLibrariesOutsideKubernetes: what Kubernetes' environment does not
// have is not offered either (cel-go's math and encoders libraries).
func TestLibrariesOutsideKubernetes(t *testing.T) {
	for _, expr := range []string{`math.greatest(1, 2) == 2`, `base64.encode(b'x') == 'eA=='`} {
		if _, err := Compile("--where", expr); err == nil || !strings.Contains(err.Error(), "undeclared reference") {
			t.Errorf("%s compiles: %v", expr, err)
		}
	}
}

func TestEvalErrors(t *testing.T) {
	vars := Vars{Kind: "ConfigMap", Namespace: "ns", Name: "cm", Object: []byte(`{"spec":{"replicas":3}}`)}
	p, err := Compile("--where", "object.spec.replicas == 3 ? true : object.spec")
	if err != nil {
		t.Fatal(err)
	}
	vars.Object = []byte(`{"spec":{"replicas":2}}`)
	if _, err := p.Eval(vars); err == nil || !strings.Contains(err.Error(), `--where: "object.spec.replicas == 3 ? true : object.spec" yields map`) ||
		!strings.Contains(err.Error(), "on configmap ns/cm, not a bool") {
		t.Errorf("a dyn non-bool result: %v", err)
	}
}

// TestRuntimeCostLimit: an expression the estimate admits but that runs
// away on the object at hand stops at Kubernetes' per-call limit, with an
// error naming the flag and the object.
func TestRuntimeCostLimit(t *testing.T) {
	p, err := Compile("--until", `[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(i, object.data.blob.matches('^(a|b)*$'))`)
	if err != nil {
		t.Fatal(err)
	}
	small, _ := json.Marshal(map[string]any{"data": map[string]string{"blob": "abba"}})
	if ok, err := p.Eval(Vars{Kind: "ConfigMap", Name: "small", Object: small}); !ok || err != nil {
		t.Fatalf("a small object: %v, %v", ok, err)
	}
	big, _ := json.Marshal(map[string]any{"data": map[string]string{"blob": strings.Repeat("ab", 400_000)}})
	_, err = p.Eval(Vars{Kind: "ConfigMap", Namespace: "f1", Name: "big", Object: big})
	for _, want := range []string{"--until: evaluating", "on configmap f1/big", "cost limit exceeded", "1000000 per evaluation"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("a runaway evaluation: %v, want an error containing %q", err, want)
		}
	}
}

// TestTimeLimit: a comprehension that outlasts the time limit stops at
// the interpreter's next check, with an error that says so.
func TestTimeLimit(t *testing.T) {
	p, err := Compile("--where", `lists.range(1000).all(i, i >= 0)`)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := p.Eval(Vars{Name: "x"}); !ok || err != nil {
		t.Fatalf("within the limit: %v, %v", ok, err)
	}
	p.timeLimit = time.Nanosecond // over by the first check
	_, err = p.Eval(Vars{Kind: "ConfigMap", Name: "x"})
	if err == nil || !strings.Contains(err.Error(), "on configmap x") || !strings.Contains(err.Error(), "it ran longer than 1ns") {
		t.Errorf("an evaluation past its time: %v", err)
	}
}

// TestREADMEExamples compiles every example of the documented table of
// the environment (docs/waiting.md, linked from the README), so that what
// users copy from it works.
func TestREADMEExamples(t *testing.T) {
	page, err := os.ReadFile("../../docs/waiting.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, found := strings.Cut(string(page), "| library | example |")
	if !found {
		t.Fatal("docs/waiting.md has no table of the CEL environment")
	}
	table, _, _ = strings.Cut(table, "\n\n")
	examples := regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(table, -1)
	if len(examples) < 11 {
		t.Fatalf("%d examples in the table of docs/waiting.md", len(examples))
	}
	for _, m := range examples {
		if _, err := Compile("--where", m[1]); err != nil {
			t.Errorf("docs/waiting.md example %s: %v", m[1], err)
		}
	}
}
