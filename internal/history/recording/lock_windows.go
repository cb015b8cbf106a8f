//go:build windows

package recording

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

// tryLock takes a lock on f without waiting: exclusive, or shared; false
// when another open file holds a conflicting one. Windows' locks are
// mandatory over the bytes they cover, so the lock covers one byte far
// past any recording's end: readers of the recording are never refused.
func tryLock(f *os.File, exclusive bool) (bool, error) {
	flags := uint32(windows.LOCKFILE_FAIL_IMMEDIATELY)
	if exclusive {
		flags |= windows.LOCKFILE_EXCLUSIVE_LOCK
	}
	ol := &windows.Overlapped{Offset: 0xffffffff, OffsetHigh: 0x7fffffff}
	err := windows.LockFileEx(windows.Handle(f.Fd()), flags, 0, 1, 0, ol)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, windows.ERROR_LOCK_VIOLATION), errors.Is(err, windows.ERROR_IO_PENDING):
		return false, nil
	default:
		return false, err
	}
}

// lockHolder is the pid of the lock's holder: Windows does not say.
func lockHolder(*os.File) int { return 0 }
