//go:build faults

package e2e

// Issue 14, scenarios 7 and 8: objects near etcd's size limit, and the
// watched namespace deleted under the stream.

import (
	"bufio"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// largeCount and largeSize: a few hundred ConfigMaps of about 1 MiB (etcd
// takes at most 1.5 MiB a value).
const (
	largeCount = 200
	largeSize  = 1 << 20
)

// TestFaultLargeObjects: ConfigMaps of about 1 MiB created, updated and
// deleted under a -o json stream and a text --diff stream: every JSON line
// is whole (its object's value has the size written), the stream ends in
// the server's state, every --diff line stays short, and the plugin's peak
// memory stays within a small multiple of what its Store must hold.
func TestFaultLargeObjects(t *testing.T) {
	c := startCluster(t)
	ns := c.namespace(t)
	cms := c.client.CoreV1().ConfigMaps(ns)
	d := startJSON(t, c.cp.AdminKubeconfig(), "cm", "-n", ns)
	d.waitWatchingJSON(c, ns, 30*time.Second)
	diff := startAs(t, c.cp.AdminKubeconfig(), "cm", "-n", ns, "--diff")

	value := func(gen, i int) string {
		return strings.Repeat(string(rune('a'+(gen+i)%26)), largeSize)
	}
	parallel := func(do func(i int) error) {
		t.Helper()
		var wg sync.WaitGroup
		errs := make(chan error, largeCount)
		sem := make(chan struct{}, 4)
		for i := range largeCount {
			wg.Go(func() {
				sem <- struct{}{}
				defer func() { <-sem }()
				if err := do(i); err != nil {
					errs <- err
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
	}
	began := time.Now()
	parallel(func(i int) error {
		_, err := cms.Create(bg, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("big-%d", i)}, Data: map[string]string{"v": value(0, i)}}, metav1.CreateOptions{})
		return err
	})
	d.converge(c, ns, 2*time.Minute)
	pid := d.pluginPID(10 * time.Second)
	parallel(func(i int) error {
		_, err := cms.Update(bg, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("big-%d", i)}, Data: map[string]string{"v": value(1, i)}}, metav1.UpdateOptions{})
		return err
	})
	d.converge(c, ns, 2*time.Minute)
	hwm, err := procStatusKB(pid, "VmHWM")
	must(t, err)
	parallel(func(i int) error {
		err := cms.Delete(bg, fmt.Sprintf("big-%d", i), metav1.DeleteOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	})
	d.converge(c, ns, 2*time.Minute)
	t.Logf("%d ConfigMaps of %d KiB created, updated and deleted in %s; the plugin's peak RSS %d MiB", largeCount, largeSize>>10, time.Since(began).Round(100*time.Millisecond), hwm>>10)

	// Every line parsed as one JSON record (the ledger checks that), and
	// every record of a big ConfigMap carries its whole value.
	for _, rec := range d.led.recordsFrom(0) {
		if strings.HasPrefix(rec.Name, "big-") && len(rec.Object) < largeSize {
			t.Fatalf("%s: the object is not whole (%d bytes)", rec.brief(), len(rec.Object))
		}
	}
	// The Store holds largeCount MiB at most; the peak stays within three
	// times that (a list decoded next to the Store, the GC's headroom).
	if limit := int64(3 * largeCount * largeSize >> 10); hwm > limit {
		t.Errorf("peak RSS %d MiB, want at most %d MiB", hwm>>10, limit>>10)
	}
	// --diff prints the change of a 1 MiB value cut short.
	diff.stop()
	sc := bufio.NewScanner(strings.NewReader(strings.Join(diff.output(), "\n")))
	sc.Buffer(make([]byte, 1<<20), 8<<20)
	lines, updates := 0, 0
	for sc.Scan() {
		lines++
		if strings.HasPrefix(sc.Text(), "Updated: big-") {
			updates++
		}
		if n := len(sc.Text()); n > 400 {
			t.Fatalf("a --diff line of %d bytes: %.200s…", n, sc.Text())
		}
	}
	if updates != largeCount {
		t.Errorf("--diff showed %d updates of big ConfigMaps, want %d", updates, largeCount)
	}
	d.checkRules()
}

// TestFaultNamespaceDeleted: the namespace a stream watches (-n) is deleted
// — the namespace controller deletes its objects — and created again: a
// Deleted for each object, no warning, and the objects of the new namespace
// as Added.
func TestFaultNamespaceDeleted(t *testing.T) {
	c := busyCluster(t)
	ns := c.namespace(t)
	for i := range 5 {
		createIn(t, c, ns, fmt.Sprintf("cm-%d", i), nil)
	}
	d := startJSON(t, c.cp.AdminKubeconfig(), "cm", "-n", ns)
	// The five, and the namespace's kube-root-ca.crt (its publisher runs
	// in kube-controller-manager).
	before := len(d.converge(c, ns, 30*time.Second))
	must(t, c.client.CoreV1().Namespaces().Delete(bg, ns, metav1.DeleteOptions{}))
	d.waitFor("every object of the namespace deleted", 2*time.Minute, func() bool { return len(d.led.snapshot()) == 0 })
	deleted := 0
	for _, rec := range d.led.recordsFrom(0) {
		if rec.Type == "Deleted" {
			deleted++
			if rec.FinalStateUnknown {
				t.Errorf("%s: a deletion the watch saw must not be a tombstone", rec.brief())
			}
		}
	}
	if deleted != before {
		t.Errorf("%d Deleted records for %d objects", deleted, before)
	}
	ctx, cancel := context.WithTimeout(bg, 2*time.Minute)
	defer cancel()
	for {
		_, err := c.client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("namespace %s never went away", ns)
		}
		time.Sleep(200 * time.Millisecond)
	}
	_, err := c.client.CoreV1().Namespaces().Create(bg, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	must(t, err)
	createIn(t, c, ns, "again", nil)
	d.waitRecord("the new namespace's object as Added", 60*time.Second, func(r *deltaRecord) bool { return r.Name == "again" && r.Type == "Added" })
	d.converge(c, ns, 30*time.Second)
	if errs := d.stderr.String(); errs != "" {
		t.Errorf("stderr is not empty:\n%s", errs)
	}
	noFailure(t, c)
}
