//go:build faults

package e2e

// --timeline on the busy cluster, looked at in a real browser: headless
// Chromium driven through the DevTools protocol (chromedp) opens the page
// a rollout's stream wrote, from file://, and the test reads it through
// its data-* contract.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// browserPath is the Chromium the page tests drive; the test fails, saying
// how to install it, when there is none.
func browserPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{os.Getenv("DELTAS_CHROMIUM"), "chromium", "chromium-browser", "google-chrome"} {
		if name == "" {
			continue
		}
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("the timeline's page tests need Chromium: install it (apt-get install chromium; .ci/run does), or name one with DELTAS_CHROMIUM=/path/to/chrome")
	return ""
}

// browser is a headless Chromium with one tab, and what the page wrote to
// the console that is an error or a warning.
type browser struct {
	t   *testing.T
	ctx context.Context
	mu  sync.Mutex
	bad []string
}

// openBrowser starts headless Chromium (stopped when the test ends) with
// no network beyond the page: the flags that keep it from calling home.
func openBrowser(t *testing.T) *browser {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(browserPath(t)), chromedp.NoSandbox, chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1400, 900),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-quic", true), chromedp.Flag("no-first-run", true),
	)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	b := &browser{t: t, ctx: ctx}
	console := chromedp.Console(ctx)
	go func() {
		for m, err := range console {
			if err != nil {
				return
			}
			if m.IsException() || m.Type == chromedp.ConsoleError || m.Type == chromedp.ConsoleWarning {
				b.mu.Lock()
				b.bad = append(b.bad, m.String())
				b.mu.Unlock()
			}
		}
	}()
	return b
}

// open loads the page at path and waits until it has drawn (data-ready).
func (b *browser) open(path string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate("file://"+path), chromedp.WaitReady(chromedp.CSS("[data-timeline][data-ready]"))); err != nil {
		b.t.Fatalf("opening %s: %v", path, err)
	}
}

// eval evaluates a JavaScript expression on the page.
func eval[T any](b *browser, expr string) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		b.t.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

// click clicks the first element sel matches, as a user does.
func (b *browser) click(sel string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(sel))); err != nil {
		b.t.Fatalf("clicking %s: %v", sel, err)
	}
}

// screenshot saves the page as a PNG in dir (or $DELTAS_TIMELINE_SCREENSHOT,
// the README's picture) and returns where.
func (b *browser) screenshot(dir, name string) string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Fatalf("screenshot: %v", err)
	}
	path := filepath.Join(dir, name)
	if p := os.Getenv("DELTAS_TIMELINE_SCREENSHOT"); p != "" {
		path = p
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		b.t.Fatal(err)
	}
	b.t.Logf("screenshot of the page: %s", path)
	return path
}

// noConsoleErrors fails the test if the page wrote an error or a warning.
func (b *browser) noConsoleErrors() {
	b.t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.bad) > 0 {
		b.t.Errorf("the page wrote to the console:\n%s", strings.Join(b.bad, "\n"))
	}
}

// shown is what the stream showed of one object.
type shown struct {
	kind, name, uid, owner string
}

// TestBusyTimeline: a rollout of web (three replicas, v1 → v2) and a
// Deployment whose Pod cannot be scheduled, followed with --tree --events
// --timeline and interrupted with Ctrl-C. The page, written whole, has one
// lane per object the stream showed, nested by owner; the unschedulable
// Pod's lane has a Failed band and a FailedScheduling Warning mark; a
// click on web's image change shows the image diff; an Event whose
// message holds markup shows it as text; nothing is written to the
// console. The page was also written mid-run, as a live page.
func TestBusyTimeline(t *testing.T) {
	b := openBrowser(t)
	c := busyCluster(t)
	ns := c.namespace(t)
	r := &rollout{t: t, c: c, ns: ns, minReadySeconds: 1}
	r.create(3, "web:v1")
	r.waitRolledOut(90 * time.Second)

	dir := t.TempDir()
	page := filepath.Join(dir, "rollout.html")
	s := startAs(t, c.cp.AdminKubeconfig(), "deploy/web", "deploy/stuck", "-n", ns, "--tree", "--events", "-o", "json", "--timeline="+page)
	if !s.waitFor(func(line string) bool { return strings.Contains(line, `"kind":"Deployment"`) }, 30*time.Second) {
		t.Fatalf("no record of web within 30s; lines:\n%s\nstderr:\n%s", strings.Join(s.seen, "\n"), s.stderr.String())
	}
	r.setImage("web:v2")
	web, err := c.client.AppsV1().Deployments(ns).Get(bg, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	const markup = `<script>window.pwned=1</script><img src=x onerror="window.pwned=2">`
	_, err = c.client.CoreV1().Events(ns).Create(bg, &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "web.markup"},
		InvolvedObject: corev1.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: ns, Name: "web", UID: web.UID},
		Type:           corev1.EventTypeNormal, Reason: "Markup", Message: markup,
		FirstTimestamp: metav1.Now(), LastTimestamp: metav1.Now(), Count: 1,
		Source: corev1.EventSource{Component: "e2e"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r.waitRolledOut(90 * time.Second)
	// After the rollout (whose wait counts the namespace's Pods): a
	// Deployment whose Pod cannot be scheduled.
	createBroken(t, c, ns, "stuck", nil, map[string]string{"kubernetes.io/hostname": "no-such-node"})

	// Read the stream until it has shown the rollout's end, the stuck
	// Pod's FailedScheduling and the markup Event.
	objects := map[string]shown{}
	var imageChange, stuckPod string
	var sawFailedScheduling, sawMarkup bool
	read := func(line string) {
		var rec struct {
			Time   time.Time `json:"time"`
			Kind   string    `json:"kind"`
			Name   string    `json:"name"`
			UID    string    `json:"uid"`
			Object struct {
				Metadata struct {
					OwnerReferences []struct {
						UID        string `json:"uid"`
						Controller bool   `json:"controller"`
					} `json:"ownerReferences"`
				} `json:"metadata"`
				Spec struct {
					Template struct {
						Spec struct {
							Containers []struct {
								Image string `json:"image"`
							} `json:"containers"`
						} `json:"spec"`
					} `json:"template"`
				} `json:"spec"`
				Reason  string `json:"reason"`
				Message string `json:"message"` // core/v1
				Note    string `json:"note"`    // events.k8s.io/v1
			} `json:"object"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("a line that is not a record: %q", line)
		}
		if rec.Kind == "Event" {
			sawFailedScheduling = sawFailedScheduling || rec.Object.Reason == "FailedScheduling"
			sawMarkup = sawMarkup || rec.Object.Message == markup || rec.Object.Note == markup
			return
		}
		o := shown{kind: rec.Kind, name: rec.Name, uid: rec.UID}
		for _, ref := range rec.Object.Metadata.OwnerReferences {
			if ref.Controller {
				o.owner = ref.UID
			}
		}
		if old, ok := objects[rec.UID]; ok && o.owner == "" {
			o.owner = old.owner
		}
		objects[rec.UID] = o
		if rec.Kind == "Deployment" && rec.Name == "web" && imageChange == "" {
			if cs := rec.Object.Spec.Template.Spec.Containers; len(cs) == 1 && cs[0].Image == "web:v2" {
				imageChange = rec.Time.UTC().Truncate(time.Millisecond).Format("2006-01-02T15:04:05.000Z")
			}
		}
		if rec.Kind == "Pod" && strings.HasPrefix(rec.Name, "stuck-") {
			stuckPod = rec.UID
		}
	}
	for _, line := range s.seen {
		read(line)
	}
	deadline := time.Now().Add(60 * time.Second)
	all := func() bool { return sawFailedScheduling && sawMarkup && imageChange != "" && stuckPod != "" }
	for !all() && time.Now().Before(deadline) {
		read(s.next(time.Until(deadline)))
	}
	if !all() {
		t.Fatalf("the stream did not show it all: FailedScheduling %v, markup Event %v, image change %q, stuck Pod %q; lines:\n%s\nstderr:\n%s",
			sawFailedScheduling, sawMarkup, imageChange, stuckPod, strings.Join(s.seen, "\n"), s.stderr.String())
	}
	// The old Pods' deletions, once the rollout is done, a moment more.
	s.waitFor(func(line string) bool { read(line); return false }, 3*time.Second)

	// The stuck Pod fails once kstatus' schedule window (15 s) has passed
	// since its creation: with time alone, no delta.
	pods, err := c.client.CoreV1().Pods(ns).List(bg, metav1.ListOptions{LabelSelector: "app=stuck"})
	if err != nil || len(pods.Items) != 1 {
		t.Fatalf("the stuck Pod: %v, %d", err, len(pods.Items))
	}
	time.Sleep(time.Until(pods.Items[0].CreationTimestamp.Add(16 * time.Second)))

	// Mid-run the page is live: rewritten with what the stream showed.
	live := waitForPage(t, page, 15*time.Second, func(doc timelineDoc) bool { return doc.Live && len(doc.Lanes) > 0 })
	if code := s.stop(); code != 130 {
		t.Fatalf("interrupted, the stream exits 130, got %d; stderr:\n%s", code, s.stderr.String())
	}
	for line := range s.lines { // what was left when it stopped
		s.seen = append(s.seen, line)
		read(line)
	}
	final := readTimelineDoc(t, page)
	if final.Live || len(final.Lanes) < len(live.Lanes) {
		t.Fatalf("after Ctrl-C the page must be written whole and final: live %v, %d lanes (mid-run %d)", final.Live, len(final.Lanes), len(live.Lanes))
	}

	b.open(page)
	// Unfold whatever folded, then: one lane per object shown, nested by
	// owner.
	eval[int](b, `(() => { let n = 0; for (const el of document.querySelectorAll('[data-fold]')) { el.click(); n++ } return n })()`)
	type laneAttrs struct {
		Kind, Name, UID, Parent string
	}
	lanes := eval[[]laneAttrs](b, `[...document.querySelectorAll('[data-lane]')].map(el => ({Kind: el.dataset.kind, Name: el.dataset.name, UID: el.dataset.uid, Parent: el.dataset.parentUid}))`)
	var gotUIDs, wantUIDs []string
	for _, l := range lanes {
		gotUIDs = append(gotUIDs, l.UID)
		o, ok := objects[l.UID]
		if !ok {
			t.Errorf("a lane for %s %s (%s), which the stream did not show", l.Kind, l.Name, l.UID)
			continue
		}
		if l.Kind != o.kind || l.Name != o.name {
			t.Errorf("lane %s: %s %s, the stream showed %s %s", l.UID, l.Kind, l.Name, o.kind, o.name)
		}
		if l.Parent != o.owner {
			t.Errorf("lane %s %s nests under %q, its controller is %q", l.Kind, l.Name, l.Parent, o.owner)
		}
	}
	for uid := range objects {
		wantUIDs = append(wantUIDs, uid)
	}
	slices.Sort(gotUIDs)
	slices.Sort(wantUIDs)
	if !slices.Equal(gotUIDs, wantUIDs) {
		t.Errorf("lanes %v, want one per object the stream showed %v", gotUIDs, wantUIDs)
	}

	// The unschedulable Pod: a Failed band and a Warning mark.
	for _, sel := range []string{
		fmt.Sprintf(`[data-health="Failed"][data-uid=%q]`, stuckPod),
		fmt.Sprintf(`[data-event="Warning"][data-reason="FailedScheduling"][data-uid=%q]`, stuckPod),
	} {
		if n := eval[int](b, fmt.Sprintf(`document.querySelectorAll(%q).length`, sel)); n == 0 {
			t.Errorf("no %s on the page", sel)
		}
	}

	// A click on web's image change shows its diff.
	b.click(fmt.Sprintf(`[data-delta="Updated"][data-uid=%q][data-time=%q]`, string(web.UID), imageChange))
	details := eval[string](b, `document.querySelector('[data-details]').textContent`)
	if !strings.Contains(details, "spec.template.spec.containers") || !strings.Contains(details, "web:v2") || !strings.Contains(details, "web:v1") {
		t.Errorf("the details of web's image change do not show its diff:\n%s", details)
	}
	shot := b.screenshot(dir, "rollout.png")

	// The markup Event is text.
	b.click(fmt.Sprintf(`[data-event][data-reason="Markup"][data-uid=%q]`, string(web.UID)))
	details = eval[string](b, `document.querySelector('[data-details]').textContent`)
	if !strings.Contains(details, markup) {
		t.Errorf("the Event's message is not shown as text:\n%s", details)
	}
	if pwned := eval[bool](b, `window.pwned !== undefined || document.querySelectorAll('img[src="x"]').length > 0`); pwned {
		t.Error("the Event's message was run as markup")
	}
	b.noConsoleErrors()
	if t.Failed() {
		t.Logf("page: %s, screenshot: %s", page, shot)
	}
}
