package recording

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Lock is a recorder's hold on its recording: an exclusive advisory lock
// (flock on Unix, LockFileEx on Windows) on the file, taken before the
// recording is read or written and kept until the recorder closes it. The
// kernel releases it when the process ends, however it ends, so a
// recorder killed with SIGKILL never leaves a stale lock behind. Replays
// do not lock: they read what is whole (RecordedBy says a recorder is
// writing).
type Lock struct {
	file *os.File
	// Created: the file did not exist and was made to be locked.
	Created bool
}

// BusyError says that another recorder holds the lock of Name; PID is
// that process when the system says so (Linux's /proc/locks), else 0.
type BusyError struct {
	Name string
	PID  int
}

func (e *BusyError) Error() string {
	return fmt.Sprintf("%s is being recorded by %s: two recorders would corrupt it; stop that one, or record to another file", e.Name, e.By())
}

// By names the recorder that holds the lock: "another kubectl deltas
// (pid N)", without the pid when the system does not say it.
func (e *BusyError) By() string {
	if e.PID > 0 {
		return fmt.Sprintf("another kubectl deltas (pid %d)", e.PID)
	}
	return "another kubectl deltas"
}

// LockRecording takes the recording name's lock, creating an empty file
// when there is none (Lock.Created); a *BusyError when another process
// holds it, the file untouched.
func LockRecording(name string) (*Lock, error) {
	_, statErr := os.Stat(name)
	f, err := os.OpenFile(name, os.O_RDONLY|os.O_CREATE, 0o600)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("cannot write the recording: %w: make its directory first (mkdir -p %s)", err, filepath.Dir(name))
	}
	if err != nil {
		return nil, fmt.Errorf("cannot write the recording: %w", err)
	}
	held, err := tryLock(f, true)
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("cannot lock the recording %s: %w", name, err)
	}
	if !held {
		pid := lockHolder(f)
		_ = f.Close()
		return nil, &BusyError{Name: name, PID: pid}
	}
	return &Lock{file: f, Created: errors.Is(statErr, os.ErrNotExist)}, nil
}

// Unlock releases the lock (closing its file releases it). Nil-safe.
func (l *Lock) Unlock() error {
	if l == nil || l.file == nil {
		return nil
	}
	err := l.file.Close()
	l.file = nil
	return err
}

// RecordedBy is, when a recorder holds the lock of the recording name
// now, a *BusyError naming it; nil when none does, and for standard
// input, a file that cannot be opened or locks that are not supported.
func RecordedBy(name string) *BusyError {
	if name == "-" {
		return nil
	}
	f, err := os.Open(name)
	if err != nil {
		return nil
	}
	defer func() { _ = f.Close() }()
	free, err := tryLock(f, false)
	if err != nil || free {
		return nil // the shared lock goes with the file's close
	}
	return &BusyError{Name: name, PID: lockHolder(f)}
}
