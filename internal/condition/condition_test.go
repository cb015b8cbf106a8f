package condition

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-deltas/kubectl-deltas/internal/celexpr"
	"github.com/kubectl-deltas/kubectl-deltas/internal/rawobj"
)

func TestParseErrors(t *testing.T) {
	cases := []struct {
		name, cond, want string
	}{
		{"unknown form", "ready", `invalid --until "ready": must be delete, create, condition=NAME[=VALUE], jsonpath='{PATH}'[=VALUE], cel='EXPR' or status=STATUS`},
		{"CEL that does not parse", "cel='object.('", "--until:1:8: Syntax error"},
		{"CEL that is no bool", "cel=name", `--until:1:1: the expression yields string, not bool`},
		{"CEL estimated too costly", `cel="object.data.all(k, object.data.all(j, k != j))"`, "--until:1:1: estimated cost"},
		{"status not of kstatus", "status=Ready", `invalid --until "status=Ready": one of Current, InProgress, Failed, Terminating, Unknown, NotFound`},
		{"status without a value", "status", `invalid --until "status": one of Current`},
		{"delete with a value", "delete=yes", `invalid --until "delete=yes": delete takes no value`},
		{"condition without a name", "condition=", `invalid --until "condition=": name the condition`},
		{"jsonpath without braces", "jsonpath=.status.phase=Running", `invalid --until "jsonpath=.status.phase=Running": the JSONPath must be in braces`},
		{"jsonpath that does not parse", "jsonpath={.status[}", `invalid --until "jsonpath={.status[}"`},
		{"junk after the path", "jsonpath={.a}x", `unexpected "x" after the JSONPath`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("--until", tc.cond)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Parse(%q) error = %v, want it to contain %q", tc.cond, err, tc.want)
			}
		})
	}
}

func TestHolds(t *testing.T) {
	available := `{"metadata":{"name":"web"},"status":{"phase":"Running","readyReplicas":3,"conditions":[{"type":"Progressing","status":"True"},{"type":"Available","status":"False"}]}}`
	cases := []struct {
		name, cond string
		obj        string // "" is an absent object
		want       bool
	}{
		{"delete of an absent object", "delete", "", true},
		{"delete of an existing object", "delete", available, false},
		{"create", "create", available, true},
		{"create of an absent object", "create", "", false},
		{"condition true", "condition=Progressing", available, true},
		{"condition false", "condition=Available", available, false},
		{"condition with its value", "condition=available=false", available, true},
		{"condition missing", "condition=Ready", available, false},
		{"condition of an absent object", "condition=Available", "", false},
		{"jsonpath string", "jsonpath='{.status.phase}'=Running", available, true},
		{"jsonpath other string", "jsonpath={.status.phase}=Pending", available, false},
		{"jsonpath number", `jsonpath="{.status.readyReplicas}"=3`, available, true},
		{"jsonpath exists", "jsonpath={.status.readyReplicas}", available, true},
		{"jsonpath missing", "jsonpath={.status.nothing}", available, false},
		{"jsonpath filter", `jsonpath={.status.conditions[?(@.type=="Available")].status}=False`, available, true},
		{"CEL true", `cel='object.status.readyReplicas >= 3 && name == "web"'`, available, true},
		{"CEL false", `cel=object.status.phase == "Pending"`, available, false},
		{"CEL on an absent object", `cel=true`, "", false},
		{"status of a Deployment in progress", "status=InProgress", `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","generation":2},"status":{"observedGeneration":1}}`, true},
		{"status current, case-insensitively", "status=current", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"web"}}`, true},
		{"status of an absent object", "status=Current", "", false},
		{"status NotFound of an absent object", "status=NotFound", "", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse("--until", tc.cond)
			if err != nil {
				t.Fatal(err)
			}
			v := celexpr.Vars{Name: "web", Kind: "Deployment"}
			if tc.obj != "" {
				v.Object = []byte(tc.obj)
			}
			got, err := c.Holds(v)
			if err != nil || got != tc.want {
				t.Errorf("%s on %s: %v, %v; want %v", tc.cond, tc.name, got, err, tc.want)
			}
		})
	}
	c, _ := Parse("--until", "condition=Available")
	if _, err := c.Holds(celexpr.Vars{Object: []byte("{")}); err == nil {
		t.Error("broken JSON gave no error")
	}
}

// TestReadsDecodeWhatIsRead: condition= and jsonpath= decode only what
// they read of an object, and answer as they would on the whole of it —
// for templates that read one path, several, from a filter on, anything
// (recursive descent, range), and objects whose members are missing, of
// another type, or nested deeper than the template reads.
func TestReadsDecodeWhatIsRead(t *testing.T) {
	conditions := []string{
		"condition=Ready", "condition=Ready=False",
		"jsonpath={.metadata.labels.v}=2", "jsonpath={.metadata.labels.v}", "jsonpath={.metadata.labels}",
		"jsonpath={.status.phase}=Running", "jsonpath={$.status.phase}=Running", "jsonpath={['status']['phase']}=Running",
		`jsonpath={.status.conditions[?(@.type=="Ready")].status}=True`, "jsonpath={.status.conditions[0].type}=Ready",
		"jsonpath={.metadata.name}{.status.phase}=webRunning",
		"jsonpath={.status.phase}{.status}", "jsonpath={..phase}=Running", "jsonpath={.spec.replicas}=3",
		"jsonpath={range .status.conditions[*]}{.type}{end}=ReadyScheduled", "jsonpath={.data.big}",
	}
	objects := []string{
		`{"metadata":{"name":"web","labels":{"v":"2"},"managedFields":[{"manager":"m"}]},"spec":{"replicas":3},"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"},{"type":"Scheduled","status":"True"}]},"data":{"big":"x"}}`,
		`{"metadata":{"name":"web","labels":{"v":2}},"status":{"phase":"Pending","conditions":[{"type":"Ready","status":"False"}]}}`,
		`{"metadata":{"name":"web"},"status":"Running"}`,
		`{"metadata":"web","status":{"phase":{"deeper":"Running"}},"spec":{"replicas":"3"}}`,
		`{"metadata":{"name":"web","labels":null},"status":{"conditions":"none"}}`,
		`{"status":{"phase":"Running","conditions":[]},"spec":{"replicas":3.0}}`,
	}
	for _, src := range conditions {
		c, err := Parse("--until", src)
		if err != nil {
			t.Fatal(err)
		}
		for _, obj := range objects {
			got, err := c.Holds(celexpr.Vars{Object: []byte(obj)})
			if err != nil {
				t.Fatal(err)
			}
			// What kubectl wait does: all of it decoded by encoding/json.
			var whole any
			dec := json.NewDecoder(strings.NewReader(obj))
			dec.UseNumber()
			if err := dec.Decode(&whole); err != nil {
				t.Fatal(err)
			}
			want := c.conditionHolds(whole)
			if c.kind == kindJSONPath {
				want, _ = c.jsonPathHolds(whole)
			}
			if got != want {
				t.Errorf("%s on %s: %v; decoding the whole object: %v", src, obj, got, want)
			}
		}
	}
	c, _ := Parse("--until", "jsonpath={.metadata.labels.v}=2")
	if _, status := c.reads["status"]; c.reads == nil || c.reads["metadata"] == nil || status {
		t.Errorf("jsonpath={.metadata.labels.v} reads %+v, want metadata alone", c.reads)
	}
	if c, _ := Parse("--until", "jsonpath={..phase}"); c.reads != nil {
		t.Errorf("a recursive descent reads %+v, want everything", c.reads)
	}
}

// TestKeptVerdictsAreTheVerdicts: condition=, jsonpath= and cel= keep
// their verdicts by what they read; on objects that differ only in what
// they do not read the kept verdict is the verdict, and objects that
// differ in what they read — the labels, the name a CEL expression
// names — are judged for themselves.
func TestKeptVerdictsAreTheVerdicts(t *testing.T) {
	conditions := []string{
		"condition=Ready", "jsonpath={.metadata.labels.v}=2", `cel=object.metadata.labels.v == "2"`,
		`cel=object.metadata.labels.v == "2" && name == "a"`, `cel=resource == "configmaps" && kind == "ConfigMap"`,
		"jsonpath={..v}=2", `cel=object.data.size() == 1`,
	}
	var objects []*rawobj.Object
	for _, name := range []string{"a", "b"} {
		for _, v := range []string{"1", "2"} {
			for _, rv := range []string{"10", "11"} {
				for _, ready := range []string{"True", "False"} {
					o, err := rawobj.Parse([]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"`+name+`","namespace":"ns","resourceVersion":"`+rv+`","labels":{"v":"`+v+`"}},"data":{"k":"`+rv+`"},"status":{"conditions":[{"type":"Ready","status":"`+ready+`"}]}}`), rawobj.ParseOptions{})
					if err != nil {
						t.Fatal(err)
					}
					objects = append(objects, o)
				}
			}
		}
	}
	for _, src := range conditions {
		c, err := Parse("--until", src)
		if err != nil {
			t.Fatal(err)
		}
		for range 2 { // the second time from what was kept
			for _, o := range objects {
				v := celexpr.Vars{Object: o.JSON, Kind: "ConfigMap", APIVersion: "v1", Resource: "configmaps", Namespace: o.Namespace, Name: o.Name}
				got, _, err := c.Judge(o, v, time.Time{})
				want, wantErr := c.Holds(v)
				if err != nil || wantErr != nil || got != want {
					t.Fatalf("%s on %s: kept %v, %v; judged %v, %v", src, o.JSON, got, err, want, wantErr)
				}
			}
		}
	}
	if c, _ := Parse("--until", "jsonpath={..v}=2"); c.memo != nil {
		t.Error("a recursive descent reads all of the object: nothing to keep its verdicts by")
	}
	if c, _ := Parse("--until", `cel=object.metadata.labels.v == "2"`); c.memo == nil || len(c.memo.verdicts) != 0 {
		t.Error("cel= on the labels keeps no verdicts")
	}
}
