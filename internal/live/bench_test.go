//go:build linux

package live

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int
}

func (c *countingWriter) Write(p []byte) (int, error) {
	c.n += len(p)
	return c.w.Write(p)
}

// openTerminal opens a pseudo-terminal of cols × rows: the program's side
// (tty) and the side that reads what it writes (pty), drained until
// closed.
func openTerminal(b *testing.B, cols, rows int) (tty *os.File) {
	b.Helper()
	pty, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY|syscall.O_CLOEXEC, 0)
	if err != nil {
		b.Fatalf("opening a pseudo-terminal: %v", err)
	}
	ioctl := func(f *os.File, req uintptr, arg unsafe.Pointer) {
		if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), req, uintptr(arg)); errno != 0 {
			b.Fatal(errno)
		}
	}
	var unlock, n int32
	ioctl(pty, syscall.TIOCSPTLCK, unsafe.Pointer(&unlock))
	ioctl(pty, syscall.TIOCGPTN, unsafe.Pointer(&n))
	tty, err = os.OpenFile("/dev/pts/"+strconv.Itoa(int(n)), os.O_RDWR|syscall.O_NOCTTY|syscall.O_CLOEXEC, 0)
	if err != nil {
		b.Fatal(err)
	}
	ws := struct{ rows, cols, x, y uint16 }{uint16(rows), uint16(cols), 0, 0}
	ioctl(pty, syscall.TIOCSWINSZ, unsafe.Pointer(&ws))
	go func() { _, _ = io.Copy(io.Discard, pty) }()
	b.Cleanup(func() { tty.Close(); pty.Close() })
	return tty
}

// BenchmarkView200At10PerSecond is the cost target of --live: a 200-object
// tree (a Deployment, 4 ReplicaSets, 195 Pods) at 10 deltas a second, one
// frame per delta (the Screen draws at most 10 a second), drawn in a
// 160×50 pseudo-terminal. An op is one second of it: 10 deltas observed
// and 10 frames drawn and written; %core is its CPU share of one core
// (the target is ≤ 5), bytes/s what it writes to the terminal a second.
func BenchmarkView200At10PerSecond(b *testing.B) {
	tty := openTerminal(b, 160, 50)
	v := NewView("deployment/web --tree --live", false)
	v.begin(t0)
	observe(b, v, "Deployment", "web", "d", "", "InProgress", t0)
	for r := range 4 {
		observe(b, v, "ReplicaSet", fmt.Sprintf("web-%d", r), fmt.Sprintf("r%d", r), "d", "InProgress", t0)
	}
	for p := range 195 {
		observe(b, v, "Pod", fmt.Sprintf("web-%d-%03d", p%4, p), fmt.Sprintf("p%03d", p), fmt.Sprintf("r%d", p%4), "Current", t0)
	}
	out := &countingWriter{w: tty}
	now := t0
	s := NewScreen(out, int(tty.Fd()), v, false, func() time.Time { return now })
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		for d := range 10 {
			now = now.Add(100 * time.Millisecond)
			p := (i*10 + d) % 195
			observe(b, v, "Pod", fmt.Sprintf("web-%d-%03d", p%4, p), fmt.Sprintf("p%03d", p), fmt.Sprintf("r%d", p%4), "InProgress", now)
			s.draw()
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(out.n)/float64(b.N), "bytes/s")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e9*100, "%core")
}
