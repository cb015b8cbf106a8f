//go:build faults

package e2e

// Disasters of issue 14: etcd restored from a snapshot, with and without
// --bump-revision, under a running stream.

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestFaultEtcdRestore: a snapshot is taken, the stream starts, ConfigMaps
// change (one updated, one created, one deleted), then etcd is restored
// from the snapshot. The stream must end in the restored state: the one
// created after the snapshot Deleted (final state unknown), the updated
// one Replaced with its old content, the deleted one Replaced (back), the
// untouched one not at all. With --bump-revision resourceVersions move on
// and the watch is answered "too old"; without, they go back, which
// client-go's informer never notices (its watch waits for the future) and
// kubectl deltas says once on stderr.
func TestFaultEtcdRestore(t *testing.T) {
	for _, tc := range []struct {
		name string
		bump uint64
	}{
		{"bump revision", 1_000_000},
		{"no bump: resourceVersions go back", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := startCluster(t)
			ns := c.namespace(t)
			cms := c.client.CoreV1().ConfigMaps(ns)
			for _, name := range []string{"untouched", "reverted", "resurrected"} {
				_, err := cms.Create(bg, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"v": "1"}}, metav1.CreateOptions{})
				must(t, err)
			}
			snapshot := filepath.Join(t.TempDir(), "etcd.db")
			ctx, cancel := context.WithTimeout(bg, 2*time.Minute)
			defer cancel()
			must(t, c.cp.SnapshotEtcd(ctx, snapshot))

			d := startJSON(t, c.cp.AdminKubeconfig(), "cm", "-n", ns, "--min-watch-timeout=10s")
			d.converge(c, ns, 30*time.Second)
			_, err := cms.Update(bg, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "reverted"}, Data: map[string]string{"v": "2"}}, metav1.UpdateOptions{})
			must(t, err)
			_, err = cms.Create(bg, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "lost"}}, metav1.CreateOptions{})
			must(t, err)
			must(t, cms.Delete(bg, "resurrected", metav1.DeleteOptions{}))
			// A backup is rarely seconds old: the history the stream saw
			// moves on by many revisions before the restore. Without that,
			// the API server's own writes while it restarts could carry
			// the revision past the stream's before it reconnects, and the
			// rewrite would go unseen (README: Guarantees).
			for i := range 300 {
				_, err := cms.Update(bg, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "lost"}, Data: map[string]string{"n": fmt.Sprint(i)}}, metav1.UpdateOptions{})
				must(t, err)
			}
			d.converge(c, ns, 30*time.Second)
			before := d.led.count()

			d.led.historyRewritten()
			restored := time.Now()
			must(t, c.cp.RestoreEtcd(ctx, snapshot, tc.bump))
			server := d.converge(c, ns, 60*time.Second)
			t.Logf("the stream matched the restored state (%d objects) %s after the restore", len(server), time.Since(restored).Round(100*time.Millisecond))

			got := map[string]string{}
			for _, rec := range d.led.recordsFrom(before) {
				got[rec.Name] += rec.Type
				if rec.FinalStateUnknown {
					got[rec.Name] += "(final state unknown)"
				}
			}
			want := map[string]string{"lost": "Deleted(final state unknown)", "reverted": "Replaced", "resurrected": "Replaced"}
			for _, name := range []string{"untouched", "reverted", "resurrected", "lost"} {
				if got[name] != want[name] {
					t.Errorf("after the restore, %s: %q, want %q\n%s", name, got[name], want[name], d.describe())
				}
			}
			for _, rec := range d.led.recordsFrom(before) {
				if rec.Name == "reverted" && !strings.Contains(string(rec.Object), `"v":"1"`) {
					t.Errorf("reverted was not printed with its restored content: %s", rec.Object)
				}
			}

			// The stream goes on: a write after the restore shows.
			_, err = cms.Create(bg, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "after"}}, metav1.CreateOptions{})
			must(t, err)
			d.converge(c, ns, 30*time.Second)

			rewrites := d.stderrLines("warning: the resourceVersion of configmaps went back")
			switch {
			case tc.bump == 0 && len(rewrites) != 1:
				t.Errorf("without a bump: %d warnings of a rewritten history, want 1:\n%s", len(rewrites), d.stderr.String())
			case tc.bump > 0 && len(rewrites) != 0:
				t.Errorf("with a bump, resourceVersions moved on, yet:\n%s", strings.Join(rewrites, "\n"))
			}
			if code := d.stop(); code != 130 {
				t.Errorf("exit code after SIGINT = %d, want 130", code)
			}
			noStackTrace(t, d.stderr.String())
		})
	}
}
