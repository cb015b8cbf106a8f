package e2e

// A pseudo-terminal for the commands a user runs at a terminal: a shell
// pipeline whose programs (jq among them) write to a terminal flushes each
// line, where into a pipe it would hold its output until it exits.

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// openPTY opens a new pseudo-terminal pair: the side a program runs in
// (tty) and the side that reads what it writes (pty).
func openPTY() (pty, tty *os.File, err error) {
	pty, err = os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("opening a pseudo-terminal: %w", err)
	}
	var unlock int32
	if err := ioctl(pty.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); err != nil {
		pty.Close()
		return nil, nil, fmt.Errorf("unlocking the pseudo-terminal: %w", err)
	}
	var n uint32
	if err := ioctl(pty.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); err != nil {
		pty.Close()
		return nil, nil, fmt.Errorf("naming the pseudo-terminal: %w", err)
	}
	tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		pty.Close()
		return nil, nil, fmt.Errorf("opening the terminal side: %w", err)
	}
	return pty, tty, nil
}

func ioctl(fd, req, arg uintptr) error {
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, fd, req, arg); errno != 0 {
		return errno
	}
	return nil
}

// terminalRun is a command running with a terminal as stdin and stdout (a
// session of its own, the terminal its controlling one), stderr apart.
type terminalRun struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdout *syncBuffer
	stderr *syncBuffer
	// done is closed once the command has exited and its output is read.
	done chan struct{}
	err  error
}

// startInTerminal starts cmd in a new session whose controlling terminal
// is a pseudo-terminal; it is killed, with its whole session, at the end
// of the test.
func startInTerminal(t *testing.T, cmd *exec.Cmd) *terminalRun {
	t.Helper()
	pty, tty, err := openPTY()
	if err != nil {
		t.Fatal(err)
	}
	r := &terminalRun{t: t, cmd: cmd, stdout: &syncBuffer{}, stderr: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, r.stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		pty.Close()
		tty.Close()
		t.Fatal(err)
	}
	tty.Close()
	read := make(chan struct{})
	go func() {
		defer close(read)
		// The terminal ends lines with \r\n; reading ends with EIO once
		// every program holding the terminal has exited.
		sc := bufio.NewScanner(pty)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			_, _ = r.stdout.Write([]byte(strings.TrimSuffix(sc.Text(), "\r") + "\n"))
		}
	}()
	go func() {
		r.err = cmd.Wait()
		<-read
		pty.Close()
		close(r.done)
	}()
	t.Cleanup(func() {
		r.signal(syscall.SIGKILL)
		<-r.done
	})
	return r
}

// signal sends sig to every process of the run's session, as a terminal's
// Ctrl-C does with SIGINT.
func (r *terminalRun) signal(sig syscall.Signal) {
	if r.cmd.Process != nil {
		_ = syscall.Kill(-r.cmd.Process.Pid, sig)
	}
}

// waitOutput waits until stdout has a line for which match holds.
func (r *terminalRun) waitOutput(what string, limit time.Duration, match func(line string) bool) bool {
	r.t.Helper()
	deadline := time.Now().Add(limit)
	for {
		for _, line := range strings.Split(r.stdout.String(), "\n") {
			if match(line) {
				return true
			}
		}
		select {
		case <-r.done:
			for _, line := range strings.Split(r.stdout.String(), "\n") {
				if match(line) {
					return true
				}
			}
			return false
		default:
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// wait waits for the exit, failing the test after limit, and returns the
// exit code (-1 for a signal).
func (r *terminalRun) wait(limit time.Duration) int {
	r.t.Helper()
	select {
	case <-r.done:
	case <-time.After(limit):
		r.t.Fatalf("did not exit within %s\nstdout:\n%s\nstderr:\n%s", limit, r.stdout.String(), r.stderr.String())
	}
	var exit *exec.ExitError
	if errors.As(r.err, &exit) {
		return exit.ExitCode()
	}
	return 0
}
