//go:build linux

package printer

import (
	"os"
	"syscall"
)

// closedPollInterval is how often the closed-stdout watcher re-checks
// whether it should stop; the close itself is reported at once.
const closedPollInterval = 250

// WatchClosed reports on the returned channel when the reader of a
// stdout pipe goes away (`kubectl deltas … | head -1`), even while no delta
// is being written, so that the command can exit at once instead of at its
// next write. It watches pipes and sockets only. stop ends the watcher.
func WatchClosed(out any) (closed <-chan struct{}, stop func()) {
	f, ok := out.(*os.File)
	if !ok {
		return nil, func() {}
	}
	info, err := f.Stat()
	if err != nil || info.Mode()&(os.ModeNamedPipe|os.ModeSocket) == 0 {
		return nil, func() {}
	}
	epfd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return nil, func() {}
	}
	// No event bits: EPOLLERR and EPOLLHUP are always reported, and the
	// write end of a pipe reports EPOLLERR once the read end is closed.
	event := syscall.EpollEvent{Events: 0, Fd: int32(f.Fd())}
	if err := syscall.EpollCtl(epfd, syscall.EPOLL_CTL_ADD, int(f.Fd()), &event); err != nil {
		syscall.Close(epfd)
		return nil, func() {}
	}
	ch := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer syscall.Close(epfd)
		events := make([]syscall.EpollEvent, 1)
		for {
			select {
			case <-done:
				return
			default:
			}
			n, err := syscall.EpollWait(epfd, events, closedPollInterval)
			if err != nil && err != syscall.EINTR {
				return
			}
			if n > 0 && events[0].Events&(syscall.EPOLLERR|syscall.EPOLLHUP) != 0 {
				close(ch)
				return
			}
		}
	}()
	var stopped bool
	return ch, func() {
		if !stopped {
			stopped = true
			close(done)
		}
	}
}
