//go:build faults

package e2e

// The recipes of the README and of the docs/ pages, run as written: every
// command of a sh or console block of their usage sections is a row of
// readmeRecipes, run in bash at a terminal (a pseudo-terminal: programs
// such as jq flush each line there, as users see them) against the busy
// cluster, with the namespaces and contexts the pages assume, and checked
// against what the pages say it does. A recipe added to a page without a
// row, or a row whose recipe left every page, fails the test.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/kubectl-deltas/kubectl-deltas/test/controlplane"
)

// docCommand is a command of a page and the page it is on.
type docCommand struct {
	cmd, file string
}

// readmeCommands returns the commands of README.md and of the docs/*.md
// pages that run kubectl deltas, in the order of docFiles, outside their
// Install, Shell completion and Development sections: in ```sh blocks
// every command (comments dropped, continued lines joined), in ```console
// blocks every line after "$ ".
func readmeCommands(t *testing.T) []docCommand {
	t.Helper()
	var out []docCommand
	for _, f := range docFiles(t) {
		for _, c := range pageCommands(docText(t, f)) {
			name := filepath.Base(f)
			if filepath.Base(filepath.Dir(f)) == "docs" {
				name = "docs/" + name
			}
			out = append(out, docCommand{cmd: c, file: name})
		}
	}
	return out
}

// pageCommands returns the commands of one page, as readmeCommands
// describes them.
func pageCommands(text string) []string {
	var out []string
	section, lang, inBlock := "", "", false
	var pending string
	for _, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case !inBlock && strings.HasPrefix(line, "## "):
			section = line
			continue
		case strings.HasPrefix(trimmed, "```"):
			inBlock = !inBlock
			lang = strings.TrimPrefix(trimmed, "```")
			pending = ""
			continue
		case !inBlock || section == "## Install" || section == "## Shell completion" || section == "## Development":
			continue
		}
		var cmd string
		switch lang {
		case "sh":
			if strings.HasPrefix(trimmed, "#") || trimmed == "" {
				continue
			}
			cmd = trimmed
		case "console":
			after, ok := strings.CutPrefix(trimmed, "$ ")
			if !ok {
				continue
			}
			cmd = after
		default:
			continue
		}
		if rest, ok := strings.CutSuffix(cmd, "\\"); ok {
			pending += strings.TrimSpace(rest) + " "
			continue
		}
		cmd, pending = pending+cmd, ""
		if strings.Contains(cmd, "kubectl deltas") || strings.Contains(cmd, "kubectl-deltas") {
			out = append(out, cmd)
		}
	}
	return out
}

// recipe is one README command and how the test knows it works.
type recipe struct {
	cmd string
	// swap replaces, for the test, a part of cmd: a timeout of minutes by
	// seconds, so that a pipeline that prints at the end ends.
	swap [2]string
	// setup runs before the command.
	setup func(t *testing.T, e *readmeEnv)
	// ready are patterns of lines the command prints before act is
	// called: its initial list is out.
	ready []string
	// act makes the n-th change; it is called every 2 s (n = 0, 1, …) until
	// want holds, the command ends, or ten calls.
	act func(t *testing.T, e *readmeEnv, n int)
	// want are patterns each of which some stdout line must match; never
	// those no line may match.
	want, never []string
	// wantStderr are patterns some stderr line must match.
	wantStderr []string
	// ends: the command ends by itself with exit code code; otherwise it
	// is interrupted (Ctrl-C) once want holds.
	ends bool
	code int
	// then is a second command of the recipe, run after the first ended,
	// whose output want is matched against instead; recorded are the
	// patterns the file deltas.jsonl that the first writes must match
	// before it is stopped.
	then     string
	recorded []string
	// cleanup runs after the command.
	cleanup func(t *testing.T, e *readmeEnv)
}

// readmeEnv is the cluster and kubeconfig the recipes run against, and
// the collector of the recipe that exports (set by its setup).
type readmeEnv struct {
	c          *cluster
	kubeconfig string
	dir        string
	collector  *collector
}

// exported requires that the recipe's collector received a log record
// named event of the object name.
func (e *readmeEnv) exported(t *testing.T, event, name string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		for _, l := range e.collector.Logs(t) {
			if l.EventName == event && l.Resource["k8s.object.name"] == name {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the collector has no %s of %s: %+v", event, name, e.collector.Logs(t))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (e *readmeEnv) configMap(t *testing.T, name string, data map[string]string) {
	t.Helper()
	_, err := e.c.client.CoreV1().ConfigMaps("demo").Create(bg, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: data}, metav1.CreateOptions{})
	must(t, err)
}

func (e *readmeEnv) deleteConfigMap(t *testing.T, name string) {
	t.Helper()
	if err := e.c.client.CoreV1().ConfigMaps("demo").Delete(bg, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
}

func (e *readmeEnv) patch(t *testing.T, resource, name, patch string) {
	t.Helper()
	var err error
	switch resource {
	case "configmap":
		_, err = e.c.client.CoreV1().ConfigMaps("demo").Patch(bg, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: "kubectl-patch"})
	case "deployment":
		_, err = e.c.client.AppsV1().Deployments("demo").Patch(bg, name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: "kubectl-patch"})
	}
	must(t, err)
}

// web is the Deployment web of namespace demo.
func (e *readmeEnv) web(t *testing.T) *rollout {
	return &rollout{t: t, c: e.c, ns: "demo"}
}

// rollWeb rolls web to a new image on the first call.
func rollWeb(t *testing.T, e *readmeEnv, n int) {
	if n == 0 {
		e.web(t).setImage(fmt.Sprintf("nginx:1.%d", time.Now().UnixNano()%1000))
	}
}

// waitWeb waits until web is rolled out.
func waitWeb(t *testing.T, e *readmeEnv) { e.web(t).waitRolledOut(90 * time.Second) }

// readmeRecipes are the recipes of the README and of the docs/ pages, in
// the order their commands first appear: README.md, then docs/*.md by
// name (docFiles).
func readmeRecipes() []recipe {
	configMapSteps := func(t *testing.T, e *readmeEnv, n int) {
		switch n {
		case 0:
			e.configMap(t, "demo", map[string]string{"key": "a"})
		case 1:
			e.patch(t, "configmap", "demo", `{"data":{"key":"b"}}`)
		case 2:
			e.deleteConfigMap(t, "demo")
		}
	}
	newConfigMap := func(prefix string) func(*testing.T, *readmeEnv, int) {
		// With data: a ConfigMap created empty has no managedFields entry
		// (an empty field set is dropped), so no manager to show.
		return func(t *testing.T, e *readmeEnv, n int) {
			e.configMap(t, fmt.Sprintf("%s-%d", prefix, n), map[string]string{"n": fmt.Sprint(n)})
		}
	}
	return []recipe{{
		cmd:     "kubectl deltas configmaps -n demo",
		ready:   []string{`^Replaced: settings$`},
		act:     configMapSteps,
		want:    []string{`^Added: demo$`, `^Updated: demo$`, `^Deleted: demo$`},
		cleanup: func(t *testing.T, e *readmeEnv) { e.deleteConfigMap(t, "demo") },
	}, {
		cmd: "kubectl deltas cm -n demo --diff",
		setup: func(t *testing.T, e *readmeEnv) {
			e.configMap(t, "demo", map[string]string{"key": "a", "old": "x"})
		},
		ready: []string{`^Replaced: demo$`},
		act: func(t *testing.T, e *readmeEnv, n int) {
			if n == 0 {
				e.patch(t, "configmap", "demo", `{"data":{"key":"b","old":null},"metadata":{"labels":{"tier":"web"}}}`)
			}
		},
		want:    []string{`^Updated: demo by kubectl-patch$`, `^  ~ data.key: "a" → "b"$`, `^  - data.old$`, `^  \+ metadata.labels: \{"tier":"web"\}$`},
		cleanup: func(t *testing.T, e *readmeEnv) { e.deleteConfigMap(t, "demo") },
	}, {
		cmd:        "kubectl deltas deploy/web -n demo --tree --until=status=Current --fail-when=status=Failed --timeout=5m",
		act:        rollWeb,
		ends:       true,
		want:       []string{`^Replaced: deployment.apps web$`, `^Replaced: pod web-\w+-\w+ \(deployment.apps web → replicaset.apps web-\w+\)$`},
		wantStderr: []string{`^deployment.apps/web condition met$`},
		cleanup:    waitWeb,
	}, {
		cmd:   "kubectl deltas cm,secrets -n shop --record=shop.jsonl.zst",
		setup: func(t *testing.T, e *readmeEnv) { e.shop(t) },
		ready: []string{`^Replaced: configmap checkout$`},
		act:   shopSteps,
		want:  []string{`^Updated: configmap checkout$`, `^Added: secret payment-key$`, `^Added: configmap feature-flags$`, `^Deleted: configmap feature-flags$`},
	}, {
		cmd:  "kubectl deltas --replay=shop.jsonl.zst --diff --timestamps",
		ends: true,
		want: []string{`^\S+Z Replaced: configmap checkout$`, `^\S+Z Updated: configmap checkout by ops-script$`, `^  ~ data.timeout: "30s" → "3s"$`,
			`^\S+Z Added: secret payment-key$`, `^\S+Z Deleted: configmap feature-flags$`},
	}, {
		cmd:  `kubectl deltas cm/checkout --replay=shop.jsonl.zst --at=08:18:16 -o json | jq -c '{type, time, name, data: .object.data}'`,
		swap: [2]string{"--at=08:18:16", "--at=+0s"}, // the recording's own times
		ends: true,
		want: []string{`^\{"type":"Replaced","time":"[^"]+","name":"checkout","data":\{"timeout":"30s"\}\}$`},
	}, {
		cmd:        "kubectl deltas deploy/web -n demo --tree --events --until=status=Current --timeline=rollout.html",
		act:        rollWeb,
		ends:       true,
		want:       []string{`^Replaced: deployment.apps web$`, `^Replaced: replicaset.apps web-\w+ \(deployment.apps web\)$`},
		wantStderr: []string{`^deployment.apps/web condition met$`},
		cleanup:    waitWeb,
	}, {
		cmd:  "kubectl deltas deployment/web --context=staging,prod --tree",
		want: []string{`^staging Replaced: deployment.apps web$`, `^prod    Replaced: deployment.apps web$`, `^staging Replaced: pod web-`, `^prod    Replaced: pod web-`},
	}, {
		cmd:  `kubectl deltas cm --all-contexts -o json | jq -r '"\(.context) \(.type) \(.name)"'`,
		want: []string{`^busy Replaced settings$`, `^staging Replaced kube-root-ca.crt$`, `^prod Replaced kube-root-ca.crt$`},
	}, {
		cmd:   `kubectl deltas cm -n demo --diff -o json | jq -c 'select(.changes) | .changes'`,
		setup: func(t *testing.T, e *readmeEnv) { e.configMap(t, "demo", map[string]string{"key": "a", "old": "x"}) },
		act: func(t *testing.T, e *readmeEnv, n int) {
			// Back and forth until a change comes after the initial list.
			if n%2 == 0 {
				e.patch(t, "configmap", "demo", `{"data":{"key":"b","old":null}}`)
			} else {
				e.patch(t, "configmap", "demo", `{"data":{"key":"a","old":"x"}}`)
			}
		},
		want:    []string{`^\[\{"op":"replace","path":"/data/key","old":"a","value":"b"\},\{"op":"remove","path":"/data/old","old":"x"\}\]$`},
		never:   []string{`^null$`},
		cleanup: func(t *testing.T, e *readmeEnv) { e.deleteConfigMap(t, "demo") },
	}, {
		cmd:   "kubectl deltas deployment/web -n demo --tree",
		ready: []string{`^Replaced: deployment.apps web$`, `^Replaced: replicaset.apps web-\w+ \(deployment.apps web\)$`, `^Replaced: pod web-\w+-\w+ \(deployment.apps web → replicaset.apps web-\w+\)$`},
		act:   rollWeb,
		want: []string{`^Updated: deployment.apps web$`, `^Added: replicaset.apps web-\w+ \(deployment.apps web\)$`,
			`^Added: pod web-\w+-\w+ \(deployment.apps web → replicaset.apps web-\w+\)$`},
		cleanup: waitWeb,
	}, {
		cmd:     "kubectl deltas cm -n demo --handler --resync=5s",
		ready:   []string{`^OnAdd: settings \(initial list\)$`},
		act:     configMapSteps,
		want:    []string{`^OnAdd: demo$`, `^OnUpdate: demo \d+→\d+$`, `^OnDelete: demo$`, `^OnUpdate: settings (\d+)→(\d+) \(resync\)$`},
		cleanup: func(t *testing.T, e *readmeEnv) { e.deleteConfigMap(t, "demo") },
	}, {
		cmd:     "kubectl deltas cm -n demo --handler --queue --reconcile-time=50ms",
		ready:   []string{`^Reconcile: configmap demo/settings \(1 call, waited \S+, worker 1\)$`},
		act:     configMapSteps,
		want:    []string{`^OnUpdate: demo \d+→\d+$`, `^Reconcile: configmap demo/demo \(\d+ calls?, waited \S+, worker 1\)$`},
		cleanup: func(t *testing.T, e *readmeEnv) { e.deleteConfigMap(t, "demo") },
	}, {
		cmd:   "kubectl deltas cm -n demo --otlp=http://127.0.0.1:4318",
		setup: func(t *testing.T, e *readmeEnv) { e.collector = startCollectorAt(t, "127.0.0.1:4318") },
		ready: []string{`^Replaced: settings$`},
		act:   configMapSteps,
		want:  []string{`^Added: demo$`, `^Updated: demo$`, `^Deleted: demo$`},
		cleanup: func(t *testing.T, e *readmeEnv) {
			e.deleteConfigMap(t, "demo")
			e.exported(t, "k8s.object.added", "demo")
			e.exported(t, "k8s.object.deleted", "demo")
		},
	}, {
		cmd:     "kubectl deltas cm -n demo --until-synced -q --otlp",
		setup:   func(t *testing.T, e *readmeEnv) { e.collector = startCollectorAt(t, "127.0.0.1:4318") },
		ends:    true,
		never:   []string{`.`}, // -q: nothing on stdout
		cleanup: func(t *testing.T, e *readmeEnv) { e.exported(t, "k8s.object.replaced", "settings") },
	}, {
		cmd:        "kubectl deltas deploy/web -n demo --tree --events --until=status=Current --timeout=5m -q --otlp",
		setup:      func(t *testing.T, e *readmeEnv) { e.collector = startCollectorAt(t, "127.0.0.1:4318") },
		act:        rollWeb,
		ends:       true,
		wantStderr: []string{`^deployment.apps/web condition met$`},
		cleanup: func(t *testing.T, e *readmeEnv) {
			waitWeb(t, e)
			for _, s := range e.collector.waitSpans(t, 1, 30*time.Second) {
				if s.Name == "kubectl deltas wait" && s.StatusCode == 1 {
					return
				}
			}
			t.Errorf("no OK span of the wait: %+v", e.collector.Spans(t))
		},
	}, {
		cmd:  "kubectl deltas cm -n demo -o name",
		want: []string{`^configmap/settings$`, `^configmap/kube-root-ca.crt$`},
	}, {
		cmd:  "kubectl deltas cm,deploy -A",
		want: []string{`^Replaced: configmap demo/settings$`, `^Replaced: deployment.apps demo/web$`},
	}, {
		cmd:  "kubectl deltas cm -n demo -o wide",
		want: []string{`^TIME +DELTA +NAME +DATA +AGE +HEALTH$`, `^\d\d:\d\d:\d\d +Replaced +settings +1 +\S+ +Current$`},
	}, {
		cmd:  `kubectl deltas cm -n demo -o jsonpath='{.type} {.object.metadata.name}{"\n"}'`,
		want: []string{`^Replaced settings$`},
	}, {
		cmd: "kubectl deltas deploy/stuck -n demo --live --tree --health --events --until=status=Current --fail-when=status=Failed --timeout=2m",
		setup: func(t *testing.T, e *readmeEnv) {
			createBroken(t, e.c, "demo", "stuck", nil, map[string]string{"deltas.test/nowhere": "true"})
		},
		ends:       true,
		code:       2,
		want:       []string{`pod/stuck-\w+-\w+ +Failed +Replaced`, `⚠ Warning FailedScheduling: 0/3 nodes are available`},
		wantStderr: []string{`^error: pod/stuck-\w+-\w+ matched --fail-when=status=Failed: Failed \(PodUnschedulable\)`},
		cleanup: func(t *testing.T, e *readmeEnv) {
			must(t, e.c.client.AppsV1().Deployments("demo").Delete(bg, "stuck", metav1.DeleteOptions{}))
		},
	}, {
		cmd:     `kubectl deltas deploy/web -n demo --tree -o json --until=status=Current --fail-when=status=Failed --timeout=5m | jq -c 'select(.type == "Verdict") | {outcome, blockers: [.objects[] | select(.health.status != "Current") | {kind, name, reason: .health.reason, container, event: .event.reason}]}'`,
		act:     rollWeb,
		ends:    true,
		want:    []string{`^\{"outcome":"Met","blockers":\[\]\}$`},
		cleanup: waitWeb,
	}, {
		cmd: `kubectl deltas pods -A -o json | jq -c 'select(.type == "Deleted") | {namespace, name, finalStateUnknown}'`,
		act: func(t *testing.T, e *readmeEnv, n int) {
			name := fmt.Sprintf("lonely-%d", n)
			_, err := e.c.client.CoreV1().Pods("demo").Create(bg, &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: name},
				Spec:       corev1.PodSpec{NodeName: e.c.cp.Nodes()[0], Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
			}, metav1.CreateOptions{})
			must(t, err)
			must(t, e.c.client.CoreV1().Pods("demo").Delete(bg, name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}))
		},
		want: []string{`^\{"namespace":"demo","name":"lonely-\d+","finalStateUnknown":(false|null)\}$`},
	}, {
		cmd: `kubectl deltas deploy -A -o json --watch-only | jq -c 'select(.object.metadata.labels.tier != null) | {name, tier: .object.metadata.labels.tier}'`,
		act: func(t *testing.T, e *readmeEnv, n int) {
			e.patch(t, "deployment", "web", fmt.Sprintf(`{"metadata":{"labels":{"tier":"t-%d"}}}`, n))
		},
		want: []string{`^\{"name":"web","tier":"t-\d+"\}$`},
		cleanup: func(t *testing.T, e *readmeEnv) {
			e.patch(t, "deployment", "web", `{"metadata":{"labels":{"tier":null}}}`)
		},
	}, {
		cmd:     `kubectl deltas cm/ready -n demo --until=create -o json | jq -c '{type, name, uid}'`,
		act:     func(t *testing.T, e *readmeEnv, n int) { createOnce(t, e, n, "ready") },
		ends:    true,
		want:    []string{`^\{"type":"(Added|Replaced)","name":"ready","uid":"[0-9a-f-]{36}"\}$`},
		cleanup: func(t *testing.T, e *readmeEnv) { e.deleteConfigMap(t, "ready") },
	}, {
		cmd:  `kubectl deltas cm,secrets -A -o json --watch-only --timeout=10m | jq -r '"\(.time[0:16]) \(.kind)"' | sort | uniq -c`,
		swap: [2]string{"--timeout=10m", "--timeout=8s"},
		act:  newConfigMap("counted-again"),
		ends: true,
		want: []string{`^ +\d+ \d{4}-\d\d-\d\dT\d\d:\d\d ConfigMap$`},
	}, {
		cmd:      "kubectl deltas cm -A -q --record=deltas.jsonl",
		act:      newConfigMap("recorded"),
		then:     `jq -c 'select(.initial == false)' deltas.jsonl`,
		recorded: []string{`"initial":false,.*"name":"recorded-\d+"`},
		want:     []string{`^\{"type":"Added",.*"namespace":"demo","name":"recorded-\d+",`},
	}, {
		cmd:   "kubectl deltas --replay=shop.jsonl.zst --from=10:37 --to=10:42 --watch-only --diff",
		swap:  [2]string{"--from=10:37 --to=10:42", "--from=+0s --to=-0s"},
		ends:  true,
		want:  []string{`^Updated: configmap checkout by ops-script$`, `^  ~ data.timeout: "30s" → "3s"$`},
		never: []string{`Replaced`},
	}, {
		cmd:   "kubectl deltas --replay=shop.jsonl.zst --at=10:37 -o yaml",
		swap:  [2]string{"--at=10:37", "--at=-0s"},
		ends:  true,
		want:  []string{`^type: Replaced$`, `^name: checkout$`, `^name: payment-key$`},
		never: []string{`feature-flags`},
	}, {
		cmd:        "kubectl deltas deploy/web -n demo --tree --events --until=status=Current --fail-when=status=Failed --timeout=5m --timeline=rollout.html",
		act:        rollWeb,
		ends:       true,
		then:       `sed -n 's|.*<script id="timeline-data" type="application/json">\(.*\)</script>.*|\1|p' rollout.html | jq -c '.lanes[] | {kind, name, deltas: (.marks | length)}'`,
		want:       []string{`^\{"kind":"Deployment","name":"web","deltas":\d+\}$`, `^\{"kind":"ReplicaSet","name":"web-\w+","deltas":\d+\}$`, `^\{"kind":"Pod","name":"web-\w+-\w+","deltas":\d+\}$`},
		wantStderr: []string{`^deployment.apps/web condition met$`},
		cleanup:    waitWeb,
	}, {
		cmd:        "kubectl deltas deployment/web -n demo --until=condition=Available --timeout=5m",
		ends:       true,
		want:       []string{`^Replaced: web$`},
		wantStderr: []string{`^deployment.apps/web condition met$`},
	}, {
		cmd: "kubectl deltas job/migrate -n demo --until=condition=Complete --fail-when=condition=Failed -o name",
		act: func(t *testing.T, e *readmeEnv, n int) {
			if n != 0 {
				return
			}
			_, err := e.c.client.BatchV1().Jobs("demo").Create(bg, &batchv1.Job{
				ObjectMeta: metav1.ObjectMeta{Name: "migrate"},
				Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers:    []corev1.Container{{Name: "migrate", Image: "migrate:v1"}},
				}}},
			}, metav1.CreateOptions{})
			must(t, err)
		},
		ends:       true,
		want:       []string{`^job.batch/migrate$`},
		wantStderr: []string{`^job.batch/migrate condition met$`},
		cleanup: func(t *testing.T, e *readmeEnv) {
			must(t, e.c.client.BatchV1().Jobs("demo").Delete(bg, "migrate", metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationForeground)}))
			deadline := time.Now().Add(time.Minute)
			for {
				pods, err := e.c.client.CoreV1().Pods("demo").List(bg, metav1.ListOptions{LabelSelector: "job-name=migrate"})
				must(t, err)
				if len(pods.Items) == 0 {
					return
				}
				if time.Now().After(deadline) {
					t.Fatalf("the Pods of job migrate are still there: %d", len(pods.Items))
				}
				time.Sleep(200 * time.Millisecond)
			}
		},
	}, {
		cmd:        `kubectl deltas pods -n demo -l app=web --until-any=cel='object.status.phase == "Running"' --fail-when=cel='object.status.containerStatuses.exists(c, has(c.state.waiting) && c.state.waiting.reason == "CrashLoopBackOff")'`,
		ends:       true,
		want:       []string{`^Replaced: web-\w+-\w+$`},
		wantStderr: []string{`^pod/web-\w+-\w+ condition met$`},
	}, {
		cmd:   "kubectl deltas cm/lock -n demo --until=delete",
		setup: func(t *testing.T, e *readmeEnv) { e.configMap(t, "lock", nil) },
		ready: []string{`^Replaced: lock$`},
		act: func(t *testing.T, e *readmeEnv, n int) {
			if n == 0 {
				e.deleteConfigMap(t, "lock")
			}
		},
		ends:       true,
		want:       []string{`^Deleted: lock$`},
		wantStderr: []string{`^configmap/lock condition met$`},
	}, {
		cmd:        "kubectl deltas cm/ready -n demo --until=create",
		act:        func(t *testing.T, e *readmeEnv, n int) { createOnce(t, e, n, "ready") },
		ends:       true,
		want:       []string{`^(Added|Replaced): ready$`},
		wantStderr: []string{`^configmap/ready condition met$`},
		cleanup:    func(t *testing.T, e *readmeEnv) { e.deleteConfigMap(t, "ready") },
	}, {
		cmd: `kubectl deltas deploy -A --watch-only --where='deltaType == "Updated" && object.spec.replicas != oldObject.spec.replicas'`,
		act: func(t *testing.T, e *readmeEnv, n int) {
			e.patch(t, "deployment", "web", fmt.Sprintf(`{"spec":{"replicas":%d}}`, 3-n%2))
		},
		want:    []string{`^Updated: demo/web$`},
		cleanup: func(t *testing.T, e *readmeEnv) { e.web(t).scale(2); waitWeb(t, e) },
	}, {
		cmd: `kubectl deltas cm -A --where="object.?data.mode.orValue('') == 'keep'"`,
		setup: func(t *testing.T, e *readmeEnv) {
			e.configMap(t, "dropper", map[string]string{"mode": "drop"})
			e.configMap(t, "keeper", map[string]string{"mode": "keep"})
		},
		want:  []string{`^Replaced: demo/keeper$`},
		never: []string{`dropper`, `settings`},
	}, {
		cmd:  "kubectl deltas --all-types -n demo --watch-only",
		act:  newConfigMap("everything"),
		want: []string{`^Added: configmap everything-\d+$`},
	}, {
		cmd:  "kubectl deltas --all-types -A --watch-only --metadata-only --show-manager",
		act:  newConfigMap("meta"),
		want: []string{`^Added: configmap demo/meta-\d+ by \S+$`},
	}, {
		cmd:  `kubectl deltas --all-types -n demo --watch-only --timeout=5m -o json | jq -r '.kind' | sort | uniq -c | sort -rn`,
		swap: [2]string{"--timeout=5m", "--timeout=8s"},
		act:  newConfigMap("counted"),
		ends: true,
		want: []string{`^ +\d+ ConfigMap$`},
	}, {
		cmd:  `kubectl deltas --all-types -A --watch-only --timeout=10m -o json | jq -r '"\(.time[0:16]) \(.kind)"' | sort | uniq -c`,
		swap: [2]string{"--timeout=10m", "--timeout=8s"},
		act:  newConfigMap("per-minute"),
		ends: true,
		want: []string{`^ +\d+ \d{4}-\d\d-\d\dT\d\d:\d\d ConfigMap$`},
	}}
}

// shop makes the namespace shop of the recording recipes, with the
// ConfigMap checkout.
func (e *readmeEnv) shop(t *testing.T) {
	t.Helper()
	_, err := e.c.client.CoreV1().Namespaces().Create(bg, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}}, metav1.CreateOptions{})
	must(t, err)
	_, err = e.c.client.CoreV1().ConfigMaps("shop").Create(bg, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "checkout"}, Data: map[string]string{"timeout": "30s"}}, metav1.CreateOptions{FieldManager: "kubectl-create"})
	must(t, err)
}

// shopSteps are the changes the recording recipe records, one a call.
func shopSteps(t *testing.T, e *readmeEnv, n int) {
	cms := e.c.client.CoreV1().ConfigMaps("shop")
	var err error
	switch n {
	case 0:
		_, err = cms.Patch(bg, "checkout", types.MergePatchType, []byte(`{"data":{"timeout":"3s"}}`), metav1.PatchOptions{FieldManager: "ops-script"})
	case 1:
		_, err = e.c.client.CoreV1().Secrets("shop").Create(bg, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "payment-key"}, StringData: map[string]string{"key": "abc"}}, metav1.CreateOptions{})
	case 2:
		_, err = cms.Create(bg, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "feature-flags"}, Data: map[string]string{"newCheckout": "true"}}, metav1.CreateOptions{})
	case 3:
		err = cms.Delete(bg, "feature-flags", metav1.DeleteOptions{})
	}
	must(t, err)
}

// createOnce creates the ConfigMap name on the first call.
func createOnce(t *testing.T, e *readmeEnv, n int, name string) {
	if n == 0 {
		e.configMap(t, name, nil)
	}
}

// helpCommands are the commands of --help's examples, as written: each
// line of "Examples by task:" from "kubectl deltas" on; a line's
// "X, later FLAGS" is two commands, X and "kubectl deltas FLAGS".
func helpCommands(t *testing.T) []docCommand {
	t.Helper()
	r := run(t, 30*time.Second, "--help")
	if r.code != 0 {
		t.Fatalf("--help: exit %d, stderr %q", r.code, r.stderr)
	}
	_, examples, ok := strings.Cut(r.stdout, "Examples by task:\n")
	if !ok {
		t.Fatalf("--help has no examples:\n%s", r.stdout)
	}
	examples, _, _ = strings.Cut(examples, "\n\n")
	var out []docCommand
	for _, line := range strings.Split(examples, "\n") {
		i := strings.Index(line, "kubectl deltas ")
		if i < 0 {
			t.Fatalf("an example of --help without a command: %q", line)
		}
		first, later, two := strings.Cut(line[i:], ", later ")
		out = append(out, docCommand{cmd: first, file: "--help"})
		if two {
			out = append(out, docCommand{cmd: "kubectl deltas " + later, file: "--help"})
		}
	}
	return out
}

// helpRecipes are the recipes of --help's examples that no page has, in
// their order; they run after the pages', in namespace demo (the
// context's).
func helpRecipes() []recipe {
	return []recipe{{
		cmd:     "kubectl deltas deploy/web --diff --show-manager",
		ready:   []string{`^Replaced: web( by \S+)?$`},
		act:     rollWeb,
		want:    []string{`^Updated: web( by \S+)?$`, `^  ~ spec.template.spec.containers\[0\].image: "[^"]+" → "nginx:1.\d+"$`},
		cleanup: waitWeb,
	}, {
		cmd:        "kubectl deltas deploy/web --tree --until=status=Current --timeout=5m",
		ends:       true,
		want:       []string{`^Replaced: deployment.apps web$`, `^Replaced: pod web-\w+-\w+ \(deployment.apps web → replicaset.apps web-\w+\)$`},
		wantStderr: []string{`^deployment.apps/web condition met$`},
	}, {
		// Long enough for the look back of the next one, -10s.
		cmd:   "kubectl deltas cm --record=s.zst",
		ready: []string{`^Replaced: settings$`},
		act: func(t *testing.T, e *readmeEnv, n int) {
			if n == 6 {
				e.patch(t, "configmap", "settings", `{"data":{"looked":"back"}}`)
			}
		},
		want: []string{`^Updated: settings$`},
	}, {
		cmd:   "kubectl deltas --replay=s.zst --at=-10s",
		ends:  true,
		want:  []string{`^Replaced: settings$`},
		never: []string{`Updated`},
	}, {
		cmd:   "kubectl deltas deploy/web --tree --timeline=web.html",
		ready: []string{`^Replaced: deployment.apps web$`},
		want:  []string{`^Replaced: replicaset.apps web-\w+ \(deployment.apps web\)$`},
		cleanup: func(t *testing.T, e *readmeEnv) {
			if page, err := os.ReadFile(filepath.Join(e.dir, "web.html")); err != nil || !strings.Contains(string(page), `"web"`) {
				t.Errorf("the timeline web.html: %v, %d bytes without the Deployment's name", err, len(page))
			}
		},
	}, {
		cmd:  "kubectl deltas deploy/web --context=staging,prod",
		want: []string{`^staging +Replaced: (deployment.apps )?web$`, `^prod +Replaced: (deployment.apps )?web$`},
	}}
}

// TestBusyREADMERecipes runs every recipe of the README and of the docs/
// pages, then every example of --help.
func TestBusyREADMERecipes(t *testing.T) {
	recipes := append(readmeRecipes(), helpRecipes()...)
	var known []string
	for _, r := range recipes {
		if slices.Contains(known, r.cmd) {
			t.Errorf("readmeRecipes has two rows for\n  %s", r.cmd)
		}
		known = append(known, r.cmd)
		if r.then != "" && !readmeHas(t, r.then) {
			t.Errorf("the second command of %q is on no page: %s", r.cmd, r.then)
		}
	}
	// Each command once, where it first appears.
	var commands []docCommand
	for _, c := range append(readmeCommands(t), helpCommands(t)...) {
		if !slices.ContainsFunc(commands, func(d docCommand) bool { return d.cmd == c.cmd }) {
			commands = append(commands, c)
		}
	}
	var said []string
	for _, c := range commands {
		said = append(said, c.cmd)
		if !slices.Contains(known, c.cmd) {
			t.Errorf("a recipe of %s has no test: add a row to readmeRecipes (helpRecipes for --help) for\n  %s", c.file, c.cmd)
		}
	}
	for _, k := range known {
		if !slices.Contains(said, k) {
			t.Errorf("readmeRecipes has a row for what neither the README nor a docs/ page says any more:\n  %s", k)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	// The rows follow the pages: README.md, then docs/*.md by name, each
	// command where it first appears.
	for i, c := range commands {
		if known[i] != c.cmd {
			t.Fatalf("readmeRecipes is not in the pages' order: row %d is\n  %s\nwhere %s has, first,\n  %s\n(rows follow README.md, then docs/*.md by name)", i, known[i], c.file, c.cmd)
		}
	}

	e := setupReadme(t)
	for i, r := range recipes {
		t.Run(fmt.Sprintf("%02d", i), func(t *testing.T) { runRecipe(t, e, r) })
	}
}

// readmeHas reports whether the README or a docs/ page holds s.
func readmeHas(t *testing.T, s string) bool {
	t.Helper()
	for _, f := range docFiles(t) {
		if strings.Contains(docText(t, f), s) {
			return true
		}
	}
	return false
}

// docFiles returns the paths of README.md and of every docs/*.md page:
// the README first, then the pages by name.
func docFiles(t *testing.T) []string {
	t.Helper()
	root, err := controlplane.FindRepoRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(pages)
	return append([]string{filepath.Join(root, "README.md")}, pages...)
}

// docText is the text of one of docFiles.
func docText(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// setupReadme makes what the README assumes on the busy cluster: namespace
// demo with the ConfigMap settings and the Deployment web (app=web, two
// replicas, rolled out), namespaces staging and prod with a web each, and
// a kubeconfig whose contexts busy (namespace demo, the current one),
// staging and prod reach them.
func setupReadme(t *testing.T) *readmeEnv {
	t.Helper()
	c := busyCluster(t)
	for _, ns := range []string{"demo", "staging", "prod"} {
		_, err := c.client.CoreV1().Namespaces().Create(bg, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		must(t, err)
		t.Cleanup(func() { _ = c.client.CoreV1().Namespaces().Delete(bg, ns, metav1.DeleteOptions{}) })
	}
	e := &readmeEnv{c: c, dir: t.TempDir()}
	e.configMap(t, "settings", map[string]string{"mode": "on"})
	var webs []*rollout
	for _, ns := range []string{"demo", "staging", "prod"} {
		r := &rollout{t: t, c: c, ns: ns}
		r.create(2, "nginx")
		webs = append(webs, r)
	}
	for _, r := range webs {
		r.waitRolledOut(90 * time.Second)
	}
	e.kubeconfig = contextsKubeconfig(t, placeContext{"busy", c, "demo"}, placeContext{"staging", c, "staging"}, placeContext{"prod", c, "prod"})
	return e
}

// shell is bash -c cmd at a terminal, with the plugin and kubectl on PATH,
// in the recipes' directory.
func (e *readmeEnv) shell(cmd string) *exec.Cmd {
	sh := exec.Command("bash", "-o", "pipefail", "-c", cmd)
	sh.Dir = e.dir
	sh.Env = append(os.Environ(),
		"PATH="+testEnv.pathDir+string(os.PathListSeparator)+os.Getenv("PATH"),
		"KUBECONFIG="+e.kubeconfig,
		"NO_COLOR=1",
		"HOME="+e.dir,
	)
	return sh
}

// runRecipe runs r and checks it.
func runRecipe(t *testing.T, e *readmeEnv, r recipe) {
	cmd := r.cmd
	if r.swap[0] != "" {
		if !strings.Contains(cmd, r.swap[0]) {
			t.Fatalf("%q has no %q to swap", cmd, r.swap[0])
		}
		cmd = strings.Replace(cmd, r.swap[0], r.swap[1], 1)
	}
	t.Logf("$ %s", cmd)
	if r.setup != nil {
		r.setup(t, e)
	}
	if r.cleanup != nil {
		defer r.cleanup(t, e)
	}
	run := startInTerminal(t, e.shell(cmd))
	describe := func() string {
		return fmt.Sprintf("$ %s\nstdout:\n%s\nstderr:\n%s", cmd, run.stdout.String(), run.stderr.String())
	}
	for _, p := range r.ready {
		re := regexp.MustCompile(p)
		if !run.waitOutput(p, time.Minute, re.MatchString) {
			t.Fatalf("no line matching %s before the changes\n%s", p, describe())
		}
	}
	// What shows that the changes took effect: want on the output, or
	// recorded on the file of a recording.
	output, progress := run.stdout.String, r.want
	if r.then != "" {
		output, progress = func() string {
			data, _ := os.ReadFile(filepath.Join(e.dir, "deltas.jsonl"))
			return string(data)
		}, r.recorded
	}
	wanted := func() bool {
		for _, p := range progress {
			if !matchLine(output(), p) {
				return false
			}
		}
		return true
	}
	for n := 0; n < 10; n++ {
		if r.act != nil {
			r.act(t, e, n)
		}
		if r.ends {
			select {
			case <-run.done:
			case <-time.After(2 * time.Second):
			}
			if isDone(run.done) {
				break
			}
			continue
		}
		deadline := time.Now().Add(2 * time.Second)
		for !wanted() && time.Now().Before(deadline) && !isDone(run.done) {
			time.Sleep(100 * time.Millisecond)
		}
		if wanted() || isDone(run.done) {
			break
		}
	}
	if r.ends {
		if code := run.wait(2 * time.Minute); code != r.code {
			t.Fatalf("exit %d, want %d\n%s", code, r.code, describe())
		}
	} else {
		if isDone(run.done) {
			t.Fatalf("the stream ended by itself\n%s", describe())
		}
		run.signal(syscall.SIGINT)
		// A pipeline's status is its last program's: jq, in the same
		// process group, dies of the Ctrl-C too, and bash then reports
		// the SIGINT itself (-1) or jq's 130, whichever it saw first.
		if code := run.wait(30 * time.Second); code != 130 && (code != -1 || !strings.Contains(cmd, " | ")) {
			t.Errorf("exit %d after Ctrl-C, want 130\n%s", code, describe())
		}
	}
	got := run.stdout.String()
	if r.then != "" {
		then := e.shell(r.then)
		out, err := then.Output()
		if err != nil {
			t.Fatalf("$ %s: %v\n%s", r.then, err, describe())
		}
		got = string(out)
	}
	for _, p := range r.want {
		if !matchLine(got, p) {
			t.Errorf("no line matches %s\n%s", p, describe())
		}
	}
	for _, p := range r.never {
		if matchLine(got, p) {
			t.Errorf("a line matches %s\n%s", p, describe())
		}
	}
	for _, p := range r.wantStderr {
		if !matchLine(run.stderr.String(), p) {
			t.Errorf("no stderr line matches %s\n%s", p, describe())
		}
	}
	// A recipe that ends in a failure on purpose (--fail-when, exit 2)
	// says it with error:, as wantStderr checks.
	if errs := run.stderr.String(); strings.Contains(errs, "error:") && r.code == 0 || strings.Contains(errs, "warning:") {
		t.Errorf("stderr has an error or warning\n%s", describe())
	}
}

// sgr matches the color sequences programs such as jq write to a
// terminal.
var sgr = regexp.MustCompile("\x1b\\[[0-9;]*m")

// matchLine reports whether a line of text, colors left out, matches
// pattern.
func matchLine(text, pattern string) bool {
	re := regexp.MustCompile(pattern)
	for _, line := range strings.Split(sgr.ReplaceAllString(text, ""), "\n") {
		if re.MatchString(line) {
			return true
		}
	}
	return false
}

func isDone(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
