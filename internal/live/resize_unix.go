//go:build !windows

package live

import (
	"os"
	"os/signal"
	"syscall"
)

// notifyResize has ch told when the terminal is resized (SIGWINCH); the
// returned stop ends that.
func notifyResize(ch chan os.Signal) (stop func()) {
	signal.Notify(ch, syscall.SIGWINCH)
	return func() { signal.Stop(ch) }
}
