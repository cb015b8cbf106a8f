package health

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/kubectl-deltas/kubectl-deltas/internal/rawobj"
)

// kstatusCase is one case of kstatus' own table tests.
type kstatusCase struct {
	name, manifest string
	want           Status
	// reason is the Reconciling or Stalled condition's reason the case
	// expects, "" if none.
	reason string
}

// kstatusCases reads the manifests and expected statuses of kstatus' own
// tests (status_compute_test.go of the module version go.mod requires),
// so that Of is held to kstatus' cases as kstatus wrote them.
func kstatusCases(t *testing.T) []kstatusCase {
	t.Helper()
	f := kstatusFile(t, "status_compute_test.go")
	manifests := map[string]string{}
	for _, decl := range f.Decls {
		gen, ok := decl.(*ast.GenDecl)
		if !ok || gen.Tok != token.VAR {
			continue
		}
		for _, spec := range gen.Specs {
			vs := spec.(*ast.ValueSpec)
			if len(vs.Values) == 1 {
				if lit, ok := vs.Values[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					manifests[vs.Names[0].Name], _ = strconv.Unquote(lit.Value)
				}
			}
		}
	}
	var cases []kstatusCase
	ast.Inspect(f, func(n ast.Node) bool {
		kv, ok := n.(*ast.KeyValueExpr)
		if !ok {
			return true
		}
		name, ok := kv.Key.(*ast.BasicLit)
		body, isLit := kv.Value.(*ast.CompositeLit)
		if !ok || !isLit {
			return true
		}
		c := kstatusCase{name: name.Value}
		for _, e := range body.Elts {
			field, ok := e.(*ast.KeyValueExpr)
			if !ok {
				continue
			}
			switch field.Key.(*ast.Ident).Name {
			case "spec":
				c.manifest = specOf(t, field.Value, manifests)
			case "expectedStatus":
				c.want = Status(strings.TrimSuffix(field.Value.(*ast.Ident).Name, "Status"))
			case "expectedConditions":
				c.reason = reasonOf(field.Value)
			}
		}
		if c.manifest != "" && c.want != "" {
			cases = append(cases, c)
		}
		return true
	})
	return cases
}

// kstatusFile parses the file name of kstatus' package, of the module
// version go.mod requires.
func kstatusFile(t *testing.T, name string) *ast.File {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/cli-utils").Output()
	if err != nil {
		t.Fatalf("finding the kstatus module: %v", err)
	}
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(strings.TrimSpace(string(out)), "pkg", "kstatus", "status", name), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// specOf is a case's manifest: a variable, or fmt.Sprintf of one with the
// current time (a Pod created just now).
func specOf(t *testing.T, e ast.Expr, manifests map[string]string) string {
	switch v := e.(type) {
	case *ast.Ident:
		return manifests[v.Name]
	case *ast.CallExpr:
		if id, ok := v.Args[0].(*ast.Ident); ok && len(v.Args) == 2 {
			return strings.Replace(manifests[id.Name], "%s", time.Now().Format(time.RFC3339), 1)
		}
	}
	t.Fatalf("a kstatus case's spec of an unexpected form: %T", e)
	return ""
}

// reasonOf is the reason of the Reconciling or Stalled condition that a
// case's expectedConditions hold with status True.
func reasonOf(e ast.Expr) string {
	list, ok := e.(*ast.CompositeLit)
	if !ok {
		return ""
	}
	for _, elt := range list.Elts {
		cond, ok := elt.(*ast.CompositeLit)
		if !ok {
			continue
		}
		var typ, reason string
		for _, f := range cond.Elts {
			kv := f.(*ast.KeyValueExpr)
			switch kv.Key.(*ast.Ident).Name {
			case "Type":
				if id, ok := kv.Value.(*ast.Ident); ok {
					typ = id.Name
				}
			case "Reason":
				reason, _ = strconv.Unquote(kv.Value.(*ast.BasicLit).Value)
			}
		}
		if typ == "ConditionReconciling" || typ == "ConditionStalled" {
			return reason
		}
	}
	return ""
}

// TestKstatusOwnCases: on every manifest of kstatus' tests, Of gives
// kstatus' status and reason.
func TestKstatusOwnCases(t *testing.T) {
	cases := kstatusCases(t)
	if len(cases) < 50 {
		t.Fatalf("read %d cases from kstatus' tests, want its 53", len(cases))
	}
	kinds := map[string]bool{}
	for _, c := range cases {
		data, err := yaml.YAMLToJSON([]byte(c.manifest))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var meta struct{ Kind string }
		if err := yaml.Unmarshal(data, &meta); err != nil {
			t.Fatal(err)
		}
		kinds[meta.Kind] = true
		got := judge(t, data)
		if got.Status != c.want || (c.reason != "" && got.Reason != c.reason) {
			t.Errorf("%s: %+v, want %s (reason %q)", c.name, got, c.want, c.reason)
		}
	}
	for _, kind := range []string{"Pod", "PersistentVolumeClaim", "StatefulSet", "DaemonSet", "Deployment", "ReplicaSet",
		"PodDisruptionBudget", "Job", "CronJob", "Service", "CustomResourceDefinition"} {
		if !kinds[kind] {
			t.Errorf("no case of kind %s", kind)
		}
	}
}

// pod is a Pod manifest with the given status, created at created.
func pod(created time.Time, status string) []byte {
	return []byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web-1","namespace":"demo","uid":"web-1-uid","creationTimestamp":"` +
		created.UTC().Format(time.RFC3339) + `"},"spec":{"containers":[{"name":"web","image":"nginx"}]},"status":` + status + `}`)
}

// TestPodRules: what rollout trackers call failed and kstatus leaves
// pending, and the unschedulable Pod's window.
func TestPodRules(t *testing.T) {
	old := time.Now().Add(-time.Hour)
	for _, tc := range []struct {
		name, status       string
		want               Status
		reason, inMessage  string
		recheckAfterCreate time.Duration
	}{
		{"image not found", `{"phase":"Pending","containerStatuses":[{"name":"web","state":{"waiting":{"reason":"ErrImagePull","message":"failed to pull and unpack image \"docker.io/library/nginx:nope\": docker.io/library/nginx:nope: not found"}}}]}`,
			Failed, "ErrImagePull", `container web: ErrImagePull: failed to pull`, 0},
		{"manifest unknown", `{"phase":"Pending","containerStatuses":[{"name":"web","state":{"waiting":{"reason":"ImagePullBackOff","message":"Back-off pulling image: manifest unknown"}}}]}`,
			Failed, "ImagePullBackOff", `manifest unknown`, 0},
		{"invalid image name", `{"phase":"Pending","containerStatuses":[{"name":"web","state":{"waiting":{"reason":"InvalidImageName"}}}]}`,
			Failed, "InvalidImageName", "", 0},
		{"init container crash-looping", `{"phase":"Pending","initContainerStatuses":[{"name":"migrate","state":{"waiting":{"reason":"CrashLoopBackOff"}}}]}`,
			Failed, "CrashLoopBackOff", "init container migrate: CrashLoopBackOff", 0},
		{"init container pulling", `{"phase":"Pending","initContainerStatuses":[{"name":"migrate","state":{"waiting":{"reason":"PodInitializing"}}}]}`,
			InProgress, "PodPending", "Pod is in the Pending phase", 0},
		{"container creating", `{"phase":"Pending","containerStatuses":[{"name":"web","state":{"waiting":{"reason":"ContainerCreating"}}}]}`,
			InProgress, "PodPending", "", 0},
		{"crash-looping (kstatus)", `{"phase":"Running","containerStatuses":[{"name":"web","state":{"waiting":{"reason":"CrashLoopBackOff"}}}]}`,
			Failed, "ContainerCrashLooping", "Containers in CrashLoop state: web", 0},
		{"running, not ready", `{"phase":"Running","conditions":[{"type":"Ready","status":"False"}]}`,
			InProgress, "PodRunningNotReady", "", 0},
		{"unschedulable for an hour", `{"phase":"Pending","conditions":[{"type":"PodScheduled","status":"False","reason":"Unschedulable"}]}`,
			Failed, "PodUnschedulable", "Pod could not be scheduled", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := judge(t, pod(old, tc.status))
			if got.Status != tc.want || got.Reason != tc.reason || !strings.Contains(got.Message, tc.inMessage) || !got.RecheckAt.IsZero() {
				t.Errorf("%+v, want %s (%s) with %q in the message", got, tc.want, tc.reason, tc.inMessage)
			}
		})
	}

	// kstatus names the crash-looping container in prose only; the
	// verdict names it too.
	if got := judge(t, pod(old, `{"phase":"Running","containerStatuses":[{"name":"sidecar","state":{"running":{}}},{"name":"web","state":{"waiting":{"reason":"CrashLoopBackOff"}}}]}`)); got.Container != "web" {
		t.Errorf("crash-looping: container %q, want web: %+v", got.Container, got)
	}

	// Unschedulable for less than kstatus' window: in progress until the
	// window ends, which RecheckAt says; failed from then on, whatever
	// the wall clock says.
	created := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	o := judgeableT(t, string(pod(created, `{"phase":"Pending","conditions":[{"type":"PodScheduled","status":"False","reason":"Unschedulable"}]}`)))
	end := created.Add(15 * time.Second)
	j := NewJudge()
	if got := j.At(o, created.Add(2*time.Second)); got.Status != InProgress || got.Reason != "PodNotScheduled" || !got.RecheckAt.Equal(end) {
		t.Errorf("unschedulable for 2s: %+v, want InProgress until %s", got, end)
	}
	if got := j.At(o, end); got.Status != Failed || got.Reason != "PodUnschedulable" || !got.RecheckAt.IsZero() {
		t.Errorf("unschedulable for 15s: %+v, want Failed", got)
	}
}

// TestTransientFailuresCountOnceTheyLast: a pull error or a missing
// ConfigMap is InProgress, reason kept, until it has lasted the dwell
// (RecheckAt says when); Failed from then on; the dwell starts again once
// the container got past it; ErrImagePull and ImagePullBackOff are one
// failure; a dwell of 0 fails at first sight.
func TestTransientFailuresCountOnceTheyLast(t *testing.T) {
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	waiting := func(reason, message string) *rawobj.Object {
		return judgeableT(t, string(pod(t0, `{"phase":"Pending","containerStatuses":[{"name":"web","state":{"waiting":{"reason":"`+reason+`","message":"`+message+`"}}}]}`)))
	}
	running := judgeableT(t, string(pod(t0, `{"phase":"Running","conditions":[{"type":"Ready","status":"True"}],"containerStatuses":[{"name":"web","ready":true,"state":{"running":{}}}]}`)))
	for _, tc := range []struct{ reason, message string }{
		{"ErrImagePull", "rpc error: connection reset by peer"},
		{"CreateContainerConfigError", "configmap settings not found"},
	} {
		j := NewJudge()
		o := waiting(tc.reason, tc.message)
		got := j.At(o, t0)
		if got.Status != InProgress || got.Reason != tc.reason || !got.RecheckAt.Equal(t0.Add(DefaultFailAfter)) || !strings.Contains(got.Message, "counts as Failed if it lasts until") {
			t.Errorf("%s at first sight: %+v, want InProgress until %s", tc.reason, got, t0.Add(DefaultFailAfter))
		}
		if got := j.At(o, t0.Add(DefaultFailAfter-time.Second)); got.Status != InProgress {
			t.Errorf("%s before the dwell: %+v", tc.reason, got)
		}
		if got := j.At(o, t0.Add(DefaultFailAfter)); got.Status != Failed || got.Reason != tc.reason || !got.RecheckAt.IsZero() {
			t.Errorf("%s once it lasted: %+v, want Failed", tc.reason, got)
		}
		// It passed; a later failure starts its own dwell.
		if got := j.At(running, t0.Add(time.Minute)); got.Status != Current {
			t.Errorf("running: %+v", got)
		}
		if got := j.At(o, t0.Add(2*time.Minute)); got.Status != InProgress {
			t.Errorf("%s again after it passed: %+v, want InProgress", tc.reason, got)
		}
	}

	// The two reasons of one pull failure are one failure.
	j := NewJudge()
	j.At(waiting("ErrImagePull", "timeout"), t0)
	if got := j.At(waiting("ImagePullBackOff", "Back-off pulling image"), t0.Add(DefaultFailAfter)); got.Status != Failed {
		t.Errorf("ImagePullBackOff after ErrImagePull for the dwell: %+v, want Failed", got)
	}
	// --fail-after=0: at first sight.
	j = NewJudge()
	j.SetFailAfter(0)
	if got := j.At(waiting("ErrImagePull", "timeout"), t0); got.Status != Failed {
		t.Errorf("a dwell of 0: %+v, want Failed", got)
	}
}

// TestAScaleUpKeepsAnUnschedulablePodInProgress: a TriggeredScaleUp newer
// than the Pod's last FailedScheduling keeps it InProgress for the dwell
// from the scale-up; an older one, or none, does not.
func TestAScaleUpKeepsAnUnschedulablePodInProgress(t *testing.T) {
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	o := judgeableT(t, string(pod(t0, `{"phase":"Pending","conditions":[{"type":"PodScheduled","status":"False","reason":"Unschedulable"}]}`)))
	late := t0.Add(time.Minute) // past kstatus' window
	j := NewJudge()
	j.NoteEvent(o.UID, "FailedScheduling", t0.Add(time.Second))
	if got := j.At(o, late); got.Status != Failed || got.Reason != "PodUnschedulable" {
		t.Fatalf("FailedScheduling alone: %+v, want Failed", got)
	}
	scaleUp := t0.Add(50 * time.Second)
	j.NoteEvent(o.UID, "TriggeredScaleUp", scaleUp)
	j.NoteEvent(o.UID, "Scheduled", t0.Add(55*time.Second)) // says nothing of it
	got := j.At(o, late)
	if got.Status != InProgress || got.Reason != "TriggeredScaleUp" || !got.RecheckAt.Equal(scaleUp.Add(DefaultFailAfter)) ||
		!strings.Contains(got.Message, "a scale-up was triggered at") {
		t.Fatalf("while the scale-up runs: %+v, want InProgress until %s", got, scaleUp.Add(DefaultFailAfter))
	}
	if got := j.At(o, scaleUp.Add(DefaultFailAfter)); got.Status != Failed || got.Reason != "PodUnschedulable" || !strings.Contains(got.Message, "has not brought a node") {
		t.Fatalf("once the dwell passed: %+v, want Failed", got)
	}
	// The scheduler failed again after the scale-up: it did not help.
	j.NoteEvent(o.UID, "FailedScheduling", scaleUp.Add(10*time.Second))
	if got := j.At(o, scaleUp.Add(11*time.Second)); got.Status != Failed {
		t.Fatalf("FailedScheduling after the scale-up: %+v, want Failed", got)
	}
	// Another Pod's scale-up is not this one's.
	other := NewJudge()
	other.NoteEvent("someone-else", "TriggeredScaleUp", scaleUp)
	if got := other.At(o, late); got.Status != Failed {
		t.Fatalf("another Pod's scale-up: %+v, want Failed", got)
	}
}

func TestOfOtherCases(t *testing.T) {
	for _, tc := range []struct {
		name, object string
		want         Status
		inMessage    string
	}{
		{"malformed observedGeneration", `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","generation":2},"status":{"observedGeneration":"two"}}`,
			Unknown, "status cannot be read"},
		{"terminating", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","deletionTimestamp":"2026-11-25T06:00:00Z"}}`, Terminating, ""},
		{"configmap", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}}`, Current, ""},
		{"custom resource stalled", `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","generation":1},"status":{"observedGeneration":1,"conditions":[{"type":"Stalled","status":"True","reason":"NoCapacity","message":"no capacity"}]}}`,
			Failed, "no capacity"},
		{"custom resource not ready", `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"status":{"conditions":[{"type":"Ready","status":"False","reason":"Waiting","message":"waiting for db"}]}}`,
			InProgress, "waiting for db"},
		{"a Pod of another group is no Pod", `{"apiVersion":"example.com/v1","kind":"Pod","metadata":{"name":"p"},"status":{"phase":"Pending","containerStatuses":[{"name":"x","state":{"waiting":{"reason":"ErrImagePull"}}}]}}`,
			Current, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := judge(t, []byte(tc.object))
			if got.Status != tc.want || !strings.Contains(got.Message, tc.inMessage) {
				t.Errorf("%+v, want %s with %q in the message", got, tc.want, tc.inMessage)
			}
		})
	}
}

func TestGone(t *testing.T) {
	if got := NewJudge().Of(nil); got.Status != NotFound || got.Message != "Resource does not exist" {
		t.Errorf("NewJudge().Of(nil) = %+v", got)
	}
}

// judge parses data as the informers do and judges it.
func judge(t testing.TB, data []byte) Health {
	t.Helper()
	return NewJudge().Of(judgeableT(t, string(data)))
}

func TestParseStatus(t *testing.T) {
	for _, s := range Statuses() {
		if got, err := ParseStatus(strings.ToLower(string(s))); err != nil || got != s {
			t.Errorf("ParseStatus(%q) = %q, %v", strings.ToLower(string(s)), got, err)
		}
	}
	if _, err := ParseStatus("Ready"); err == nil || err.Error() != "one of Current, InProgress, Failed, Terminating, Unknown, NotFound" {
		t.Errorf("ParseStatus(Ready): %v", err)
	}
}

// TestPodStatusFields: what a Judge decodes of a Pod's status gives the
// verdict the whole status gives, on Pods in every state the rules know.
func TestPodStatusFields(t *testing.T) {
	created := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	container := func(name, state string) string {
		return `{"name":"` + name + `","state":` + state + `,"lastState":{"terminated":{"exitCode":1,"reason":"Error"}},"ready":false,"restartCount":3,` +
			`"image":"nginx:1.27","imageID":"","started":false,"volumeMounts":[{"name":"v","mountPath":"/v"}],"resources":{"limits":{"memory":"128Mi"}}}`
	}
	statuses := []string{
		`{"phase":"Running","hostIP":"10.0.0.1","podIPs":[{"ip":"10.0.0.2"}],"qosClass":"Burstable","conditions":[{"type":"Ready","status":"True","lastTransitionTime":"2030-01-01T00:00:01Z"}],"containerStatuses":[` + container("web", `{"running":{"startedAt":"2030-01-01T00:00:01Z"}}`) + `]}`,
		`{"phase":"Running","conditions":[{"type":"Ready","status":"False","reason":"ContainersNotReady","message":"containers with unready status: [web]"}],"containerStatuses":[` + container("web", `{"waiting":{"reason":"CrashLoopBackOff","message":"back-off 5m0s"}}`) + `]}`,
		`{"phase":"Pending","containerStatuses":[` + container("side", `{"running":{}}`) + `,` + container("web", `{"waiting":{"reason":"ImagePullBackOff","message":"Back-off pulling image"}}`) + `]}`,
		`{"phase":"Pending","initContainerStatuses":[` + container("init", `{"waiting":{"reason":"CrashLoopBackOff"}}`) + `]}`,
		`{"phase":"Pending","conditions":[{"type":"PodScheduled","status":"False","reason":"Unschedulable","message":"0/3 nodes are available"}]}`,
		`{"phase":"Pending","conditions":[{"type":"Reconciling","status":"True","reason":"Working","message":"still"}]}`,
		`{"phase":"Running","observedGeneration":1,"conditions":[{"type":"Stalled","status":"True","reason":"Stuck","message":"no way"}]}`,
		`{"phase":"Succeeded"}`, `{"phase":"Failed"}`, `{}`,
	}
	for _, st := range statuses {
		o := judgeableT(t, string(pod(created, st)))
		// One judge of each for the times of one Pod: a transient
		// failure's verdict depends on when it was first seen.
		fast, whole := NewJudge(), &Judge{failAfter: DefaultFailAfter, since: map[string]map[string]failingSince{}} // whole keeps all of the status
		for _, at := range []time.Time{created.Add(time.Second), created.Add(time.Minute)} {
			if got, want := fast.At(o, at), whole.At(o, at); got != want {
				t.Errorf("status %s at %s: %+v, the whole status gives %+v", st, at, got, want)
			}
		}
	}
	if got := NewJudge().At(runningPod(t), created); got.Status != Current || got.Message != "Pod is Ready" {
		t.Errorf("the benchmark's Pod: %+v", got)
	}
}

// judgeableT parses data as the informers do (a name may lack: kstatus'
// manifests have none).
func judgeableT(t testing.TB, data string) *rawobj.Object {
	t.Helper()
	o, err := rawobj.Parse([]byte(data), rawobj.ParseOptions{AllowMissingName: true})
	if err != nil {
		t.Fatalf("parsing %s: %v", data, err)
	}
	return o
}

// TestJudgeKeepsPodVerdicts: a Judge judges Pods in the same state once,
// never mixes up what a verdict depends on, keeps no verdict that depends
// on the time, and keeps a bounded number.
func TestJudgeKeepsPodVerdicts(t *testing.T) {
	j := NewJudge()
	created := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	ready := `{"phase":"Running","conditions":[{"type":"Ready","status":"True"}],"containerStatuses":[{"name":"web","state":{"running":{"startedAt":"%s"}}}]}`
	podJSON := func(name, meta, status string) *rawobj.Object {
		return judgeableT(t, `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"`+name+`","creationTimestamp":"2030-01-01T00:00:00Z"`+meta+`},"status":`+status+`}`)
	}
	for i, started := range []string{"2030-01-01T00:00:01Z", "2030-01-01T00:00:02Z", "2030-01-01T00:00:03Z"} {
		if got := j.At(podJSON(fmt.Sprint("web-", i), "", strings.Replace(ready, "%s", started, 1)), created); got.Status != Current || got.Message != "Pod is Ready" {
			t.Fatalf("ready Pod %d: %+v", i, got)
		}
	}
	if len(j.pods) != 1 {
		t.Errorf("%d verdicts kept for three Pods in one state, want 1", len(j.pods))
	}
	same := strings.Replace(ready, "%s", "2030-01-01T00:00:01Z", 1)
	for _, tc := range []struct {
		name, meta, status string
		want               Status
	}{
		{"being deleted", `,"deletionTimestamp":"2030-01-01T00:01:00Z"`, same, Terminating},
		{"a generation not observed", `,"generation":2`, strings.Replace(same, `"phase"`, `"observedGeneration":1,"phase"`, 1), InProgress},
		{"crash-looping", "", `{"phase":"Running","containerStatuses":[{"name":"web","state":{"waiting":{"reason":"CrashLoopBackOff"}}}]}`, Failed},
	} {
		if got := j.At(podJSON("p", tc.meta, tc.status), created); got.Status != tc.want {
			t.Errorf("%s: %+v, want %s", tc.name, got, tc.want)
		}
	}
	kept := len(j.pods)
	unschedulable := podJSON("u", "", `{"phase":"Pending","conditions":[{"type":"PodScheduled","status":"False","reason":"Unschedulable"}]}`)
	if a, b := j.At(unschedulable, created), j.At(unschedulable, created.Add(time.Minute)); a.Status != InProgress || b.Status != Failed {
		t.Errorf("unschedulable: %+v then %+v", a, b)
	}
	if len(j.pods) != kept {
		t.Errorf("a verdict that depends on the time was kept")
	}
	for i := range maxPodVerdicts + 10 {
		j.At(podJSON("n", "", fmt.Sprintf(`{"phase":"Running","conditions":[{"type":"Ready","status":"False","message":"%d"}]}`, i)), created)
	}
	if len(j.pods) > maxPodVerdicts {
		t.Errorf("%d verdicts kept, more than %d", len(j.pods), maxPodVerdicts)
	}
}

// TestSourceSaysWhereTheVerdictCameFrom: a kind with a rule is judged by
// it; a custom resource by its conditions when it has them; one without
// status by nothing at all — Current by default, said so.
func TestSourceSaysWhereTheVerdictCameFrom(t *testing.T) {
	j := NewJudge()
	for _, tc := range []struct {
		name, json string
		status     Status
		source     Source
	}{
		{"deployment", `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d","generation":1},"spec":{"replicas":1},"status":{"observedGeneration":1,"replicas":1,"updatedReplicas":1,"readyReplicas":1,"availableReplicas":1,"conditions":[{"type":"Available","status":"True"}]}}`, Current, SourceKind},
		{"configmap", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}}`, Current, SourceKind},
		{"custom resource, no status", `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"size":1}}`, Current, SourceNone},
		{"custom resource, Ready", `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"status":{"conditions":[{"type":"Ready","status":"True"}]}}`, Current, SourceConditions},
		{"custom resource, not Ready", `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"status":{"conditions":[{"type":"Ready","status":"False","reason":"Waiting"}]}}`, InProgress, SourceConditions},
		{"custom resource, being deleted", `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","deletionTimestamp":"2026-11-26T10:00:00Z"}}`, Terminating, SourceConditions},
		{"pod that cannot pull", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"status":{"phase":"Pending","containerStatuses":[{"name":"c","state":{"waiting":{"reason":"InvalidImageName"}}}]}}`, Failed, SourceKind},
	} {
		o, err := rawobj.Parse([]byte(tc.json), rawobj.ParseOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if h := j.Of(o); h.Status != tc.status || h.Source != tc.source {
			t.Errorf("%s: %s from %q (%s), want %s from %q", tc.name, h.Status, h.Source, h.Message, tc.status, tc.source)
		}
	}
}

// TestAlwaysReadyKindsAreKstatus: ruleOf names as alwaysReady exactly the
// kinds kstatus' own table (legacyTypes in core.go of the module version
// go.mod requires) maps to its alwaysReady rule, and every other kind of
// that table as one with a rule that reads the object.
func TestAlwaysReadyKindsAreKstatus(t *testing.T) {
	f := kstatusFile(t, "core.go")
	rules := map[string]string{} // "group/Kind" or "Kind" -> the rule's name
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok || len(vs.Names) != 1 || vs.Names[0].Name != "legacyTypes" {
			return true
		}
		for _, e := range vs.Values[0].(*ast.CompositeLit).Elts {
			kv := e.(*ast.KeyValueExpr)
			key, _ := strconv.Unquote(kv.Key.(*ast.BasicLit).Value)
			rules[key] = kv.Value.(*ast.Ident).Name
		}
		return false
	})
	if len(rules) < 10 || rules["ConfigMap"] != "alwaysReady" {
		t.Fatalf("kstatus' legacyTypes not found as expected in its core.go: %v", rules)
	}
	for key, rule := range rules {
		apiVersion, kind := "v1", key
		if group, k, found := strings.Cut(key, "/"); found {
			apiVersion, kind = group+"/v1", k
		}
		want := otherRule
		if rule == "alwaysReady" {
			want = alwaysReadyRule
		}
		if got := ruleOf(apiVersion, kind); got != want {
			t.Errorf("%s (%s, kstatus' %s): rule %d, want %d", key, apiVersion, rule, got, want)
		}
	}
	if got := ruleOf("example.com/v1", "Widget"); got != noRule {
		t.Errorf("a custom kind: rule %d, want none", got)
	}
}

// TestObjectsWithoutStatusJudgedByKindAsKstatusDoes: NewJudge's judges an
// object without status by its kind alone (withoutStatus); on every kind
// of object, with and without status, spec, generation or deletion, and
// on malformed apiVersions, it gives what kstatus' whole computation (the
// zero Judge) gives.
func TestObjectsWithoutStatusJudgedByKindAsKstatusDoes(t *testing.T) {
	types := [][2]string{
		{"v1", "ConfigMap"}, {"v1", "Secret"}, {"batch/v1", "CronJob"}, {"batch/v1beta1", "CronJob"},
		{"v1", "Service"}, {"v1", "PersistentVolumeClaim"}, {"apps/v1", "Deployment"}, {"apps/v1", "StatefulSet"},
		{"batch/v1", "Job"}, {"policy/v1", "PodDisruptionBudget"}, {"apiextensions.k8s.io/v1", "CustomResourceDefinition"},
		{"example.com/v1", "Widget"}, {"example.com/v1", "ConfigMap"}, {"v1", "Namespace"}, {"a/b/c", "Service"}, {"a/v1", "Service"}, {"", "Secret"},
	}
	bodies := []string{
		``, `,"data":{"k":"v"}`, `,"spec":{"type":"LoadBalancer","replicas":2}`, `,"status":{}`, `,"status":null`,
		`,"status":{"observedGeneration":1}`, `,"status":{"conditions":[{"type":"Ready","status":"False","reason":"Waiting"}]}`,
		`,"status":{"conditions":[{"type":"Stalled","status":"True","reason":"Stuck"}]}`,
		// Keys a decoder reads as status or not (WithoutStatus must agree).
		`,"st\u0061tus":{"conditions":[{"type":"Stalled","status":"True","reason":"Stuck"}]}`,
		`,"Status":{"conditions":[{"type":"Stalled","status":"True","reason":"Stuck"}]}`,
		`,"status":{"conditions":[{"type":"Stalled","status":"True","reason":"Stuck"}]},"status":null`,
		`,"status":null,"status":{"conditions":[{"type":"Stalled","status":"True","reason":"Stuck"}]}`,
	}
	metas := []string{``, `,"generation":3`, `,"deletionTimestamp":"2030-01-01T00:00:00Z"`}
	fast, whole := NewJudge(), &Judge{}
	at := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, ty := range types {
		for _, body := range bodies {
			for _, meta := range metas {
				data := `{"apiVersion":"` + ty[0] + `","kind":"` + ty[1] + `","metadata":{"name":"x"` + meta + `}` + body + `}`
				o := judgeableT(t, data)
				for range 2 { // the second time from what the Judge keeps
					if got, want := fast.At(o, at), whole.At(o, at); got != want {
						t.Errorf("%s: %+v, kstatus gives %+v", data, got, want)
					}
				}
			}
		}
	}
	if got := fast.At(judgeableT(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}}`), at); got.Status != Current || got.Source != SourceKind {
		t.Errorf("a ConfigMap: %+v", got)
	}
}
