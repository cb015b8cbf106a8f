package e2e

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/fields"
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
	calls := &handlerCalls{}
	lw := clientgocache.NewListWatchFromClient(testEnv.client.CoreV1().RESTClient(), "configmaps", ns, fields.Everything())
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
	var out []string
	for len(out) < n {
		line := s.next(30 * time.Second)
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
