package recording

import (
	"bytes"
	"errors"
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
	if live, pid := RecordedBy(path); !live || (runtime.GOOS == "linux" && pid != os.Getpid()) {
		t.Errorf("RecordedBy while locked: got %v, pid %d", live, pid)
	}

	if err := first.Unlock(); err != nil {
		t.Fatal(err)
	}
	if live, _ := RecordedBy(path); live {
		t.Error("RecordedBy after the lock was released: still live")
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

// TestReaderOfALiveRecordingSaysSo: a reader opened while a recorder
// holds the lock knows it (its torn end is where the recorder is).
func TestReaderOfALiveRecordingSaysSo(t *testing.T) {
	path := record(t, "r.jsonl", testLines()[:3], 1)
	lock, err := LockRecording(path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if live, _ := r.Live(); !live {
		t.Error("a reader of a locked recording: not live")
	}
	_ = r.Close()
	if err := lock.Unlock(); err != nil {
		t.Fatal(err)
	}
	r, err = Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = r.Close() }()
	if live, _ := r.Live(); live {
		t.Error("a reader of a recording no one records: live")
	}
}
