package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	clientgocache "k8s.io/client-go/tools/cache"
)

// handlerCalls is a client-go SharedIndexInformer's handler calls, in the
// form the test compares --handler's JSON records in.
type handlerCalls struct {
	mu    sync.Mutex
	lines []string
}

func (h *handlerCalls) add(line string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.lines = append(h.lines, line)
}

func (h *handlerCalls) snapshot() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.lines)
}

func callOf(typ, name, rv, oldRV string, initial, tombstone bool) string {
	switch typ {
	case "OnAdd":
		return fmt.Sprintf("OnAdd %s@%s initial=%t", name, rv, initial)
	case "OnUpdate":
		return fmt.Sprintf("OnUpdate %s %s→%s", name, oldRV, rv)
	}
	return fmt.Sprintf("OnDelete %s@%s tombstone=%t", name, rv, tombstone)
}

// watchWithClientGo runs client-go v0.36's own SharedIndexInformer on the
// ConfigMaps of ns, as a controller would, until the test ends.
func watchWithClientGo(t *testing.T, ns string) *handlerCalls {
	t.Helper()
	return watchWithClientGoOf(t, testEnv.client, ns)
}

// watchWithClientGoOf is watchWithClientGo through client.
func watchWithClientGoOf(t *testing.T, client kubernetes.Interface, ns string) *handlerCalls {
	t.Helper()
	calls := &handlerCalls{}
	lw := clientgocache.NewListWatchFromClient(client.CoreV1().RESTClient(), "configmaps", ns, fields.Everything())
	inf := clientgocache.NewSharedIndexInformer(lw, &corev1.ConfigMap{}, 0, clientgocache.Indexers{})
	name := func(obj any) (string, string) {
		m, err := meta.Accessor(obj)
		if err != nil {
			return "?", "?"
		}
		return m.GetName(), m.GetResourceVersion()
	}
	if _, err := inf.AddEventHandler(clientgocache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) {
			n, rv := name(obj)
			calls.add(callOf("OnAdd", n, rv, "", initial, false))
		},
		UpdateFunc: func(old, obj any) {
			n, rv := name(obj)
			_, oldRV := name(old)
			calls.add(callOf("OnUpdate", n, rv, oldRV, false, false))
		},
		DeleteFunc: func(obj any) {
			if d, ok := obj.(clientgocache.DeletedFinalStateUnknown); ok {
				_, rv := name(d.Obj)
				_, n, _ := strings.Cut(d.Key, "/")
				calls.add(callOf("OnDelete", n, rv, "", false, true))
				return
			}
			n, rv := name(obj)
			calls.add(callOf("OnDelete", n, rv, "", false, false))
		},
	}); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { defer close(done); inf.Run(stop) }()
	t.Cleanup(func() { close(stop); <-done })
	return calls
}

// handlerRecord is what the test reads of a --handler JSON record.
type handlerRecord struct {
	Type               string `json:"type"`
	Name               string `json:"name"`
	ResourceVersion    string `json:"resourceVersion"`
	OldResourceVersion string `json:"oldResourceVersion"`
	IsInInitialList    bool   `json:"isInInitialList"`
	FinalStateUnknown  bool   `json:"finalStateUnknown"`
	Delta              string `json:"delta"`
}

// readCalls reads n --handler JSON records of s as calls.
func readCalls(t *testing.T, s *stream, n int) []string {
	t.Helper()
	return readCallsWithin(t, s, n, 30*time.Second)
}

// readCallsWithin is readCalls, each line within limit.
func readCallsWithin(t *testing.T, s *stream, n int, limit time.Duration) []string {
	t.Helper()
	var out []string
	for len(out) < n {
		line := s.next(limit)
		var r handlerRecord
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("not a JSON record: %q: %v", line, err)
		}
		if r.Delta == "" {
			t.Fatalf("a --handler record without its delta: %s", line)
		}
		out = append(out, callOf(r.Type, r.Name, r.ResourceVersion, r.OldResourceVersion, r.IsInInitialList, r.FinalStateUnknown))
	}
	return out
}

// TestHandlerCallsAsClientGo: what `kubectl deltas --handler` prints is
// what client-go v0.36's SharedIndexInformer calls a handler with, on the
// same namespace: the initial list, creates, rapid updates and deletes.
func TestHandlerCallsAsClientGo(t *testing.T) {
	ns := newNamespace(t)
	for _, n := range []string{"a", "b", "c"} {
		createCM(t, ns, n, nil, map[string]string{"k": "0"})
	}
	theirs := watchWithClientGo(t, ns)
	s := start(t, "cm", "-n", ns, "--handler", "-o", "json")
	ours := readCalls(t, s, 3)

	writes := 0
	for i := range 5 {
		updateCM(t, ns, "a", "k", fmt.Sprint(i+1))
		writes++
	}
	createCM(t, ns, "d", nil, nil)
	updateCM(t, ns, "b", "k", "x")
	deleteCM(t, ns, "c")
	updateCM(t, ns, "d", "k", "y")
	deleteCM(t, ns, "a")
	writes += 5
	ours = append(ours, readCalls(t, s, writes)...)

	deadline := time.Now().Add(30 * time.Second)
	for len(theirs.snapshot()) < len(ours) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	// client-go v0.36 takes the initial state as a stream of watch events
	// (WatchListClient is on) into a map, then hands it over in the map's
	// order: the initial list is compared as a set.
	if got := theirs.snapshot(); !slices.Equal(sortInitial(ours), sortInitial(got)) {
		t.Fatalf("kubectl deltas --handler:\n  %s\nclient-go's SharedIndexInformer:\n  %s", strings.Join(ours, "\n  "), strings.Join(got, "\n  "))
	}
	if !strings.HasPrefix(ours[0], "OnAdd a@") || !strings.HasSuffix(ours[0], "initial=true") || !strings.HasPrefix(ours[len(ours)-1], "OnDelete a@") {
		t.Fatalf("calls:\n%s", strings.Join(ours, "\n"))
	}
}

// TestHandlerText: the text lines of --handler say the call and its
// arguments.
func TestHandlerText(t *testing.T) {
	ns := newNamespace(t)
	first := createCM(t, ns, "web", nil, map[string]string{"k": "0"})
	s := start(t, "cm", "-n", ns, "--handler", "--fifo=delta")
	s.expect("OnAdd: web (initial list)")
	second := updateCM(t, ns, "web", "k", "1")
	s.expect(fmt.Sprintf("OnUpdate: web %s→%s", first.ResourceVersion, second.ResourceVersion))
	deleteCM(t, ns, "web")
	s.expect("OnDelete: web")

	for _, args := range [][]string{{"--fifo=real"}, {"--handler", "--fifo=fast"}} {
		res := run(t, 30*time.Second, append([]string{"cm", "-n", ns}, args...)...)
		if res.code != 1 || res.stdout != "" || !strings.HasPrefix(res.stderr, "error: ") || !strings.Contains(res.stderr, "--fifo") {
			t.Errorf("%v: exit %d\nstdout:\n%s\nstderr:\n%s", args, res.code, res.stdout, res.stderr)
		}
	}
}

// sortInitial sorts the calls of the initial list, which lead.
func sortInitial(calls []string) []string {
	out := slices.Clone(calls)
	n := 0
	for n < len(out) && strings.HasSuffix(out[n], "initial=true") {
		n++
	}
	slices.Sort(out[:n])
	return out
}

// queueRecord is what the test reads of --queue's records.
type queueRecord struct {
	Type          string    `json:"type"`
	Time          time.Time `json:"time"`
	Kind          string    `json:"kind"`
	Name          string    `json:"name"`
	Calls         int       `json:"calls"`
	WaitedSeconds float64   `json:"waitedSeconds"`
	Worker        int       `json:"worker"`
	Reconciles    int       `json:"reconciles"`
	Coalesced     int       `json:"coalesced"`
	Pending       int       `json:"pending"`
}

// TestQueueFoldsABurst: 100 updates of one ConfigMap through --queue with
// two workers and 50ms reconciles: far fewer reconciles than calls, never
// two of the key at once, the last one after the last call, and a summary
// that adds up.
func TestQueueFoldsABurst(t *testing.T) {
	ns := newNamespace(t)
	createCM(t, ns, "hot", nil, map[string]string{"k": "0"})
	file := filepath.Join(t.TempDir(), "burst.jsonl")
	s := start(t, "cm", "-n", ns, "--handler", "--queue", "--workers=2", "--reconcile-time=50ms", "-o", "json", "--record="+file)
	if !s.waitFor(func(l string) bool { return strings.Contains(l, `"type":"OnAdd"`) }, 30*time.Second) {
		t.Fatalf("no OnAdd of the initial list; lines:\n%s", strings.Join(s.seen, "\n"))
	}
	const updates = 100
	for i := range updates {
		updateCM(t, ns, "hot", "k", fmt.Sprint(i+1))
	}
	var lastCall time.Time
	var reconciles []queueRecord
	calls := 1 // the OnAdd
	for calls < updates+1 || len(reconciles) == 0 || reconciles[len(reconciles)-1].Time.Before(lastCall) {
		line := s.next(30 * time.Second)
		var r queueRecord
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("not JSON: %q", line)
		}
		switch r.Type {
		case "OnAdd", "OnUpdate":
			calls++
			lastCall = r.Time
		case "Reconcile":
			reconciles = append(reconciles, r)
		default:
			t.Fatalf("unexpected record %s", line)
		}
	}
	s.stop()
	folded := 0
	for i, r := range reconciles {
		folded += r.Calls
		if r.Name != "hot" || r.Kind != "ConfigMap" {
			t.Fatalf("reconcile of %s %s", r.Kind, r.Name)
		}
		if i > 0 && r.Time.Sub(reconciles[i-1].Time) < 50*time.Millisecond {
			t.Errorf("two reconciles of hot %s apart: one began before the other ended", r.Time.Sub(reconciles[i-1].Time))
		}
	}
	if len(reconciles) >= updates/2 || folded != calls {
		t.Fatalf("%d calls made %d reconciles folding %d calls", calls, len(reconciles), folded)
	}
	var summary queueRecord
	for line := range s.lines {
		if err := json.Unmarshal([]byte(line), &summary); err == nil && summary.Type == "QueueSummary" {
			break
		}
	}
	if summary.Type != "QueueSummary" || summary.Reconciles != len(reconciles) || summary.Coalesced != calls-len(reconciles) || summary.Pending != 0 {
		t.Fatalf("summary %+v after %d calls and %d reconciles", summary, calls, len(reconciles))
	}
	t.Logf("%d handler calls, %d reconciles", calls, len(reconciles))

	// The recording, replayed through the same queue on the recording's
	// clock: the same calls, folded as they were live.
	res := run(t, time.Minute, "--replay="+file, "--handler", "--queue", "--workers=2", "--reconcile-time=50ms", "-o", "json")
	if res.code != 0 {
		t.Fatalf("replay: exit %d\nstderr:\n%s", res.code, res.stderr)
	}
	replayed, replayCalls := 0, 0
	summary = queueRecord{}
	for _, line := range strings.Split(strings.TrimSpace(res.stdout), "\n") {
		var r queueRecord
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("not JSON: %q", line)
		}
		switch r.Type {
		case "OnAdd", "OnUpdate":
			replayCalls++
		case "Reconcile":
			replayed++
		case "QueueSummary":
			summary = r
		}
	}
	if replayCalls != calls || replayed == 0 || replayed >= updates/2 || summary.Reconciles != replayed || summary.Calls != calls {
		t.Fatalf("replay: %d calls, %d reconciles, summary %+v; live: %d calls, %d reconciles\nstdout:\n%s", replayCalls, replayed, summary, calls, len(reconciles), res.stdout)
	}
	t.Logf("replayed: %d reconciles (%d pending at the recording's end)\n%s", replayed, summary.Pending, res.stdout)
}

// TestQueueKeyOwner: with --queue-key=owner a call queues the object's
// controlling owner, and an object without one queues nothing.
func TestQueueKeyOwner(t *testing.T) {
	ns := newNamespace(t)
	owner := createCM(t, ns, "owner", nil, nil)
	yes := true
	child := &corev1.ConfigMap{}
	child.Name, child.Namespace = "child", ns
	child.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID, Controller: &yes}}
	if _, err := testEnv.client.CoreV1().ConfigMaps(ns).Create(context.Background(), child, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	s := start(t, "cm", "-n", ns, "--handler", "--queue", "--queue-key=owner")
	if !s.waitFor(func(l string) bool { return strings.HasPrefix(l, "Reconcile: ") }, 30*time.Second) {
		t.Fatalf("no reconcile; lines:\n%s", strings.Join(s.seen, "\n"))
	}
	s.quiet(time.Second)
	var got []string
	for _, l := range s.seen {
		if strings.HasPrefix(l, "Reconcile: ") {
			got = append(got, l)
		}
	}
	if len(got) != 1 || !strings.HasPrefix(got[0], "Reconcile: configmap "+ns+"/owner (1 call, waited ") {
		t.Fatalf("reconciles %q; lines:\n%s", got, strings.Join(s.seen, "\n"))
	}
}
