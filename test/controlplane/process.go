package controlplane

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// process is one running server (etcd or kube-apiserver).
type process struct {
	name string
	cmd  *exec.Cmd
	done chan struct{} // closed once the process has exited

	onUnexpectedExit func(error)

	mu       sync.Mutex
	waitErr  error
	stopping bool // set before the harness signals the process itself
	armed    bool // exits are reported to onUnexpectedExit (set once ready)
	reported bool
}

// startProcess starts bin with args, its stdout and stderr appended to
// logPath. Once armed, onUnexpectedExit is called (from another goroutine)
// when the process exits without the harness having asked it to.
func startProcess(name, bin string, args []string, dir, logPath string, onUnexpectedExit func(error)) (*process, error) {
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open %s log: %w", name, err)
	}
	fmt.Fprintf(logFile, "==== %s starting at %s: %s %s\n", name, time.Now().Format(time.RFC3339Nano), bin, strings.Join(args, " "))

	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.Env = os.Environ()
	cmd.SysProcAttr = &syscall.SysProcAttr{
		// Own process group: a terminal's Ctrl-C goes to the harness only, and
		// signals can be sent to the whole group.
		Setpgid: true,
		// Nothing outlives the test process, even when it is SIGKILLed.
		Pdeathsig: syscall.SIGKILL,
	}
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, done: make(chan struct{}), onUnexpectedExit: onUnexpectedExit}
	go func() {
		err := cmd.Wait()
		_ = logFile.Close()
		p.mu.Lock()
		p.waitErr = err
		p.mu.Unlock()
		close(p.done)
		p.reportExit()
	}()
	return p, nil
}

// arm makes later exits (and an exit that already happened) count as
// unexpected unless the harness stops the process itself. Exits during
// startup are reported by the startup code as errors instead.
func (p *process) arm() {
	p.mu.Lock()
	p.armed = true
	p.mu.Unlock()
	if done, _ := p.exited(); done {
		p.reportExit()
	}
}

func (p *process) reportExit() {
	p.mu.Lock()
	if !p.armed || p.stopping || p.reported || p.onUnexpectedExit == nil {
		p.mu.Unlock()
		return
	}
	p.reported = true
	err := p.waitErr
	p.mu.Unlock()
	if err == nil {
		err = errors.New("exit status 0")
	}
	p.onUnexpectedExit(fmt.Errorf("%s (pid %d) exited unexpectedly: %w", p.name, p.pid(), err))
}

func (p *process) pid() int { return p.cmd.Process.Pid }

// exited reports whether the process has exited, and its wait error.
func (p *process) exited() (bool, error) {
	select {
	case <-p.done:
		p.mu.Lock()
		defer p.mu.Unlock()
		return true, p.waitErr
	default:
		return false, nil
	}
}

// signal marks the process as being stopped by the harness and sends sig to
// its process group.
func (p *process) signal(sig syscall.Signal) {
	p.mu.Lock()
	p.stopping = true
	p.mu.Unlock()
	if done, _ := p.exited(); done {
		return
	}
	// The negative pid addresses the process group (Setpgid made the server
	// its leader). Fall back to the process alone if that fails.
	if err := syscall.Kill(-p.pid(), sig); err != nil {
		_ = p.cmd.Process.Signal(sig)
	}
}

// kill sends SIGKILL and waits for the process to exit.
func (p *process) kill() {
	p.signal(syscall.SIGKILL)
	<-p.done
}

// terminate sends SIGTERM, waits up to stopGrace, then SIGKILLs.
func (p *process) terminate() {
	p.signal(syscall.SIGTERM)
	timer := time.NewTimer(stopGrace)
	defer timer.Stop()
	select {
	case <-p.done:
	case <-timer.C:
		p.kill()
	}
}

// tailFile returns the last n lines of the file at path (reading at most the
// final 256 KiB of it).
func tailFile(path string, n int) (string, error) {
	const maxRead = 256 << 10
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return "", err
	}
	offset := info.Size() - maxRead
	if offset < 0 {
		offset = 0
	}
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return "", err
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return "", err
	}
	if offset > 0 {
		// Drop the partial first line.
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			data = data[i+1:]
		}
	}
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), maxRead)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) > n {
			lines = lines[1:]
		}
	}
	if n <= 0 {
		return "", nil
	}
	return strings.Join(lines, "\n"), nil
}
