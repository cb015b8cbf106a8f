package history

import (
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-deltas/kubectl-deltas/internal/cache"
	"github.com/kubectl-deltas/kubectl-deltas/internal/history/recording"
	"github.com/kubectl-deltas/kubectl-deltas/internal/informer"
	"github.com/kubectl-deltas/kubectl-deltas/internal/printer"
	"github.com/kubectl-deltas/kubectl-deltas/internal/rawobj"
)

// objectFiller fills a record from the delta alone.
type objectFiller struct{}

func (objectFiller) Fill(rec *printer.Record, t informer.Target, it *informer.Item, now time.Time) (bool, error) {
	*rec = printer.Record{
		Type: string(it.Type), Time: now, Initial: it.Initial, Context: t.Context,
		APIVersion: "v1", Kind: "ConfigMap", Resource: "configmaps",
		Namespace: it.Object.Namespace, Name: it.Object.Name, UID: it.Object.UID,
		ResourceVersion: it.Object.ResourceVersion, Object: json.RawMessage(it.Object.JSON),
	}
	return true, nil
}

var configMaps = informer.Target{
	Resource: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"},
	Kind:     schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, Namespace: "shop",
}

// recordRun is one run of a recorder on path watching the ConfigMaps of
// shop on servers: a header, one ConfigMap, its end.
func recordRun(t *testing.T, path string, run int, servers ...recording.APIServer) error {
	t.Helper()
	return recordWith(t, path, run, watching{targets: []informer.Target{configMaps}, servers: servers})
}

// watching is what a test's run watches: its targets, on servers, with
// selectors.
type watching struct {
	targets                      []informer.Target
	servers                      []recording.APIServer
	labelSelector, fieldSelector string
}

// recordWith is recordRun watching w.
func recordWith(t *testing.T, path string, run int, w watching) error {
	t.Helper()
	rec, err := (&Flags{Record: path}).OpenRecorder(objectFiller{}, io.Discard)
	if err != nil {
		return err
	}
	rec.Watches(w.servers)
	now := time.Date(2026, 11, 29, 10, run, 0, 0, time.UTC)
	if err := rec.BeginAt(now, w.targets, "test", w.labelSelector, w.fieldSelector); err != nil {
		return errors.Join(err, rec.Close())
	}
	obj, err := rawobj.Parse([]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"shop","uid":"u-a","resourceVersion":"`+string(rune('0'+run))+`"}}`), rawobj.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := rec.Record(configMaps, []informer.Item{{Type: cache.Added, Object: obj}}, now); err != nil {
		t.Fatal(err)
	}
	return rec.CloseAt(now.Add(time.Second))
}

// TestGoingOnRefusesAnotherCluster: a recording names the API server it
// recorded; a run that would go on with it watching another server — a
// kubeconfig whose current context now points elsewhere, or another
// cluster under the same context name — is refused before it writes
// anything: its positions are another etcd's resourceVersions, and going
// on would say the recorded objects deleted, or miss changes, without a
// word. Another name for the same server goes on; so does a recording
// made before servers were noted. A replay names the recorded cluster.
func TestGoingOnRefusesAnotherCluster(t *testing.T) {
	a := recording.APIServer{Context: "kind-a", URL: "https://127.0.0.1:6443"}
	b := recording.APIServer{Context: "kind-a", URL: "https://127.0.0.1:7443"}
	for _, name := range []string{"rec.jsonl.zst", "rec/"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), name)
			if err := recordRun(t, path, 1, a); err != nil {
				t.Fatal(err)
			}
			if p, err := (&Flags{Replay: []string{path}}).OpenReplay(nil, io.Discard); err != nil || p.Cluster() != "kind-a" {
				t.Errorf("the replay's cluster: %q (%v), want kind-a", p.Cluster(), err)
			} else {
				_ = p.Close()
			}
			err := recordRun(t, path, 2, b)
			if err == nil || !strings.Contains(err.Error(), a.URL) || !strings.Contains(err.Error(), b.URL) || !strings.Contains(err.Error(), "record it to a new file") {
				t.Fatalf("going on watching another server: %v, want an error naming both servers and the fix", err)
			}
			if err := recordRun(t, path, 3, recording.APIServer{Context: "renamed", URL: a.URL}); err != nil {
				t.Fatalf("the same server under another context name: %v", err)
			}
			if err := recordRun(t, path, 4); err != nil {
				t.Fatalf("a run that does not name its servers: %v", err)
			}
			if got, want := runMinutes(t, path), []int{1, 3, 4}; !slices.Equal(got, want) {
				t.Errorf("the minutes of the recording's headers and Added records: %v, want %v: the refused run (minute 2) wrote nothing", got, want)
			}
		})
	}
}

// runMinutes are the minutes in which the recording path (a file, or a
// directory's segments) has headers or Added records, sorted, once each.
func runMinutes(t *testing.T, path string) []int {
	t.Helper()
	files := []string{path}
	if recording.IsDir(path) {
		var err error
		if files, err = filepath.Glob(filepath.Join(path, "*.jsonl.zst")); err != nil || len(files) == 0 {
			t.Fatalf("segments of %s: %v %v", path, files, err)
		}
	}
	var minutes []int
	for _, name := range files {
		r, err := recording.Open(name, nil)
		if err != nil {
			t.Fatal(err)
		}
		for {
			data, number, err := r.Next()
			if errors.Is(err, io.EOF) || (err == nil && data == nil) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			l, err := recording.ParseLine(name, number, data)
			if err != nil {
				t.Fatal(err)
			}
			if l.Header != nil || l.Type == "Added" {
				minutes = append(minutes, l.Time.Minute())
			}
		}
		_ = r.Close()
	}
	slices.Sort(minutes)
	return slices.Compact(minutes)
}

// TestGoingOnKeepsTreeAndEvents: a run that would go on with a recording
// without the --tree or --events it was recorded with is refused (what
// they record would stop without a word), and so is one that adds them
// (a replay learns what a recording holds from its first header: what
// they recorded would never be replayed). The same flags go on.
func TestGoingOnKeepsTreeAndEvents(t *testing.T) {
	scout := informer.Target{Resource: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "replicasets"},
		Kind: schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "ReplicaSet"}, Namespace: "shop", Role: informer.RoleScout}
	events := informer.Target{Resource: schema.GroupVersionResource{Group: "events.k8s.io", Version: "v1", Resource: "events"},
		Kind: schema.GroupVersionKind{Group: "events.k8s.io", Version: "v1", Kind: "Event"}, Namespace: "shop", Role: informer.RoleEvents}
	plain := watching{targets: []informer.Target{configMaps}}
	tree := watching{targets: []informer.Target{configMaps, scout}}
	withEvents := watching{targets: []informer.Target{configMaps, events}}
	for _, tc := range []goingOn{
		{"tree kept", tree, tree, ""},
		{"events kept", withEvents, withEvents, ""},
		{"tree dropped", tree, plain, "was recorded with --tree; this run does not watch what the roots own"},
		{"tree added", plain, tree, "was recorded without --tree; this run also watches what the roots own"},
		{"events dropped", withEvents, plain, "was recorded with --events; this run does not watch the Events"},
		{"events added", plain, withEvents, "was recorded without --events; this run also watches the Events"},
	} {
		goOn(t, tc)
	}
}

// TestGoingOnKeepsSelectors: a run that would go on with a recording
// with other selectors is refused: the watch would go on from the
// recording's positions, and what the new ones select that the old did
// not would never be seen. The same selectors, written otherwise, go on.
func TestGoingOnKeepsSelectors(t *testing.T) {
	cms := []informer.Target{configMaps}
	for _, tc := range []goingOn{
		{"same", watching{targets: cms, labelSelector: "app=x,tier=web"}, watching{targets: cms, labelSelector: "tier=web, app=x"}, ""},
		{"other label selector", watching{targets: cms, labelSelector: "app=x"}, watching{targets: cms, labelSelector: "app=y"}, `was recorded with -l "app=x"; this run selects with -l "app=y"`},
		{"label selector dropped", watching{targets: cms, labelSelector: "app=x"}, watching{targets: cms}, `with no label selector`},
		{"field selector added", watching{targets: cms}, watching{targets: cms, fieldSelector: "metadata.name=a"}, `was recorded with no field selector; this run selects with --field-selector "metadata.name=a"`},
	} {
		goOn(t, tc)
	}
}

// goingOn is a recording made as first, gone on with as then: refused
// with an error saying want, or gone on with ("").
type goingOn struct {
	name        string
	first, then watching
	want        string // "" goes on
}

// goOn checks tc on a file and on a directory: a refused run writes
// nothing.
func goOn(t *testing.T, tc goingOn) {
	t.Helper()
	for _, name := range []string{"rec.jsonl.zst", "rec/"} {
		t.Run(tc.name+" "+name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), name)
			if err := recordWith(t, path, 1, tc.first); err != nil {
				t.Fatal(err)
			}
			err := recordWith(t, path, 2, tc.then)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("going on: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("going on: %v, want an error saying %q", err, tc.want)
			case tc.want != "" && !slices.Equal(runMinutes(t, path), []int{1}):
				t.Errorf("the refused run wrote: %v", runMinutes(t, path))
			}
		})
	}
}
