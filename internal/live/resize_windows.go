package live

import "os"

// notifyResize does nothing on Windows, which has no SIGWINCH: the next
// frame reads the new size.
func notifyResize(chan os.Signal) (stop func()) { return func() {} }
