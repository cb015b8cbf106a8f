package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestTimelineFile: --timeline writes its page whatever the stream is — a
// snapshot, an empty one, a replay — as one file holding its data; a path
// that cannot be written is an error before any request, with nothing on
// stdout. (The page in a browser: TestBusyTimeline.)
func TestTimelineFile(t *testing.T) {
	dir := t.TempDir()

	// Unwritable: the kubeconfig's server would refuse a connection, and
	// the error is the page's, so none was made.
	res := run(t, 30*time.Second, "cm", "--server=https://127.0.0.1:1", "--timeline="+filepath.Join(dir, "no-such-dir", "t.html"))
	if res.code != 1 || res.stdout != "" || !strings.HasPrefix(res.stderr, "error: --timeline: ") {
		t.Fatalf("an unwritable --timeline: exit %d, stdout %q, stderr %q; want exit 1, nothing on stdout, an error naming the flag", res.code, res.stdout, res.stderr)
	}
	res = run(t, 30*time.Second, "cm", "--server=https://127.0.0.1:1", "--timeline=-")
	if res.code != 1 || !strings.Contains(res.stderr, "not standard output") {
		t.Fatalf("--timeline=-: exit %d, stderr %q", res.code, res.stderr)
	}

	// A snapshot: one lane per object, each with its initial Replaced.
	ns := newNamespace(t)
	createCM(t, ns, "a", nil, map[string]string{"k": "1"})
	createCM(t, ns, "b", nil, map[string]string{"k": "1"})
	page, rec := filepath.Join(dir, "snapshot.html"), filepath.Join(dir, "snapshot.jsonl")
	res = run(t, 30*time.Second, "cm", "-n", ns, "--until-synced", "-o", "name", "--record="+rec, "--timeline="+page)
	if res.code != 0 || res.stderr != "" {
		t.Fatalf("snapshot with --timeline: exit %d, stderr %q", res.code, res.stderr)
	}
	doc := readTimelineDoc(t, page)
	if doc.Live || lanesOf(doc) != "ConfigMap/a:Replaced ConfigMap/b:Replaced" {
		t.Fatalf("the snapshot's page: live %v, lanes %s", doc.Live, lanesOf(doc))
	}
	raw, _ := os.ReadFile(page)
	if strings.Contains(string(raw), "http://") || strings.Contains(string(raw), "https://") {
		t.Error("the page names a network address: it must need none")
	}

	// The replay of its recording draws the same page.
	replayed := filepath.Join(dir, "replayed.html")
	res = run(t, 30*time.Second, "--replay="+rec, "--timeline="+replayed)
	if res.code != 0 {
		t.Fatalf("replay with --timeline: exit %d, stderr %q", res.code, res.stderr)
	}
	if got := lanesOf(readTimelineDoc(t, replayed)); got != lanesOf(doc) {
		t.Fatalf("the replay's page has lanes %s, the stream's %s", got, lanesOf(doc))
	}

	// An empty stream: a page with nothing in it.
	empty := filepath.Join(dir, "empty.html")
	res = run(t, 30*time.Second, "cm", "-n", newNamespace(t), "--until-synced", "--timeline="+empty)
	if res.code != 0 || res.stdout != "" {
		t.Fatalf("empty snapshot: exit %d, stdout %q, stderr %q", res.code, res.stdout, res.stderr)
	}
	if doc := readTimelineDoc(t, empty); doc.Live || len(doc.Lanes) != 0 {
		t.Fatalf("the empty stream's page: live %v, %d lanes", doc.Live, len(doc.Lanes))
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("a temporary file was left: %s", e.Name())
		}
	}

	// A run that fails before it watches anything leaves no page.
	res = run(t, 30*time.Second, "no-such-type", "--timeline="+filepath.Join(dir, "never.html"))
	if res.code != 1 {
		t.Fatalf("an unknown type: exit %d, stderr %q", res.code, res.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "never.html")); !os.IsNotExist(err) {
		t.Errorf("a run that never began left its page: %v", err)
	}
}

// lanesOf is "Kind/name:Type,Type …" of each lane, sorted.
func lanesOf(doc timelineDoc) string {
	var out []string
	for _, l := range doc.Lanes {
		var types []string
		for _, m := range l.Marks {
			types = append(types, m.Type)
		}
		out = append(out, l.Kind+"/"+l.Name+":"+strings.Join(types, ","))
	}
	slices.Sort(out)
	return strings.Join(out, " ")
}

// timelineDoc is what the tests read of a page's data document.
type timelineDoc struct {
	Live  bool `json:"live"`
	Lanes []struct {
		Kind  string `json:"kind"`
		Name  string `json:"name"`
		UID   string `json:"uid"`
		Marks []struct {
			Type string `json:"d"`
		} `json:"marks"`
	} `json:"lanes"`
}

// readTimelineDoc reads the data document of the page at path.
func readTimelineDoc(t *testing.T, path string) timelineDoc {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const open = `<script id="timeline-data" type="application/json">`
	_, rest, ok := strings.Cut(string(raw), open)
	data, _, ok2 := strings.Cut(rest, "</script>")
	if !ok || !ok2 {
		t.Fatalf("%s holds no data document:\n%.2000s", path, raw)
	}
	var doc timelineDoc
	if err := json.Unmarshal([]byte(data), &doc); err != nil {
		t.Fatalf("the data of %s does not read: %v", path, err)
	}
	return doc
}

// waitForPage waits until the page at path holds a document ok accepts.
func waitForPage(t *testing.T, path string, limit time.Duration, ok func(timelineDoc) bool) timelineDoc {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		doc := readTimelineDoc(t, path)
		if ok(doc) {
			return doc
		}
		if time.Now().After(deadline) {
			t.Fatalf("the page %s was not rewritten as expected within %s: live %v, %d lanes", path, limit, doc.Live, len(doc.Lanes))
		}
		time.Sleep(200 * time.Millisecond)
	}
}
