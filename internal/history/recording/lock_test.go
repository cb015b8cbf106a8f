package recording

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestLockRecording: one lock per recording. A second taker is refused
// with the holder named, the file untouched; once released, the
// recording can be locked again; RecordedBy sees the holder while it
// holds.
func TestLockRecording(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.jsonl")
	first, err := LockRecording(path)
	if err != nil {
		t.Fatal(err)
	}
	if !first.Created {
		t.Error("the lock of a new recording does not say it made the file")
	}
	content := []byte(`{"type":"Recording"}` + "\n")
	if err := os.WriteFile(path, content, 0o600); err != nil {
		t.Fatal(err)
	}

	second, err := LockRecording(path)
	var busy *BusyError
	if !errors.As(err, &busy) {
		_ = second.Unlock()
		t.Fatalf("a second lock: got %v, want a *BusyError", err)
	}
	if runtime.GOOS == "linux" && busy.PID != os.Getpid() {
		t.Errorf("the holder: got pid %d, want %d (this process)", busy.PID, os.Getpid())
	}
	if !strings.Contains(err.Error(), path+" is being recorded by another kubectl deltas") || !strings.Contains(err.Error(), "record to another file") {
		t.Errorf("the refusal: got %q", err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, content) {
		t.Errorf("the refused lock changed the file: %q", got)
	}
	if by := RecordedBy(path); by == nil || (runtime.GOOS == "linux" && by.PID != os.Getpid()) {
		t.Errorf("RecordedBy while locked: got %+v", by)
	}

	if err := first.Unlock(); err != nil {
		t.Fatal(err)
	}
	if by := RecordedBy(path); by != nil {
		t.Errorf("RecordedBy after the lock was released: still live (%+v)", by)
	}
	again, err := LockRecording(path)
	if err != nil {
		t.Fatalf("locking a released recording: %v", err)
	}
	if again.Created {
		t.Error("the lock of an existing recording says it made the file")
	}
	if err := again.Unlock(); err != nil {
		t.Fatal(err)
	}
	var none *Lock
	if err := none.Unlock(); err != nil {
		t.Errorf("a nil lock's Unlock: %v", err)
	}
}

// TestRecordedBySaysWhoWrites: a recording a recorder holds is said to
// be recorded, by that recorder (By names it, with its pid where the
// system says); one no recorder holds, and standard input, are not.
func TestRecordedBySaysWhoWrites(t *testing.T) {
	path := record(t, "r.jsonl", testLines()[:3], 1)
	lock, err := LockRecording(path)
	if err != nil {
		t.Fatal(err)
	}
	by := RecordedBy(path)
	if by == nil {
		t.Fatal("a locked recording: not recorded")
	}
	if want := fmt.Sprintf("another kubectl deltas (pid %d)", os.Getpid()); runtime.GOOS == "linux" && by.By() != want {
		t.Errorf("By() = %q, want %q", by.By(), want)
	}
	if got := (&BusyError{Name: path}).By(); got != "another kubectl deltas" {
		t.Errorf("By() without a pid = %q", got)
	}
	if err := lock.Unlock(); err != nil {
		t.Fatal(err)
	}
	if by := RecordedBy(path); by != nil {
		t.Errorf("a recording no one records: %+v", by)
	}
	if by := RecordedBy("-"); by != nil {
		t.Errorf("standard input: %+v", by)
	}
}
