// Command rusage runs a command with the same stdin, stdout and stderr,
// waits for it and writes its resource usage (rusage of the child: CPU
// time and peak RSS) and its start time as JSON to -report. The harness of
// `make bench` starts every client through it.
//
// Why a wrapper: Go starts child processes with vfork semantics
// (CLONE_VM), and Linux carries the parent's peak RSS into the child's
// ru_maxrss when the child execs. Started directly by the harness, every
// client would report at least the harness's own peak RSS; started by this
// small program, the floor is this program's few MiB.
//
// SIGINT and SIGTERM are forwarded to the child; if it has not exited
// -grace after the first one, it is killed.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"
)

// Report is what -report receives.
type Report struct {
	// StartUnixNano is the wall clock just before the child was started.
	StartUnixNano int64  `json:"startUnixNano"`
	UserNanos     int64  `json:"userNanos"`
	SystemNanos   int64  `json:"systemNanos"`
	MaxRSSKiB     int64  `json:"maxRssKiB"`
	ExitCode      int    `json:"exitCode"`
	Signal        string `json:"signal,omitempty"`
}

func main() {
	code, err := run()
	if err != nil {
		fmt.Fprintf(os.Stderr, "rusage: error: %v\n", err)
		os.Exit(125)
	}
	os.Exit(code)
}

func run() (int, error) {
	reportPath := flag.String("report", "", "write the JSON report to this file")
	grace := flag.Duration("grace", 3*time.Second, "kill the child this long after forwarding a signal")
	flag.Parse()
	if flag.NArg() == 0 || *reportPath == "" {
		return 0, errors.New("usage: rusage -report FILE -- COMMAND [ARG...]")
	}
	cmd := exec.Command(flag.Arg(0), flag.Args()[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM)

	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("start %s: %w", flag.Arg(0), err)
	}
	exited := make(chan struct{})
	go func() {
		forwarded := false
		for {
			select {
			case sig := <-signals:
				_ = cmd.Process.Signal(sig)
				if !forwarded {
					forwarded = true
					time.AfterFunc(*grace, func() { _ = cmd.Process.Kill() })
				}
			case <-exited:
				return
			}
		}
	}()
	waitErr := cmd.Wait()
	close(exited)
	var exitErr *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &exitErr) {
		return 0, fmt.Errorf("wait for %s: %w", flag.Arg(0), waitErr)
	}
	ps := cmd.ProcessState
	r := Report{
		StartUnixNano: start.UnixNano(),
		UserNanos:     int64(ps.UserTime()),
		SystemNanos:   int64(ps.SystemTime()),
		ExitCode:      ps.ExitCode(),
	}
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		r.MaxRSSKiB = ru.Maxrss
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		r.Signal = ws.Signal().String()
	}
	b, err := json.Marshal(r)
	if err != nil {
		return 0, fmt.Errorf("encode the report: %w", err)
	}
	if err := os.WriteFile(*reportPath, b, 0o644); err != nil {
		return 0, fmt.Errorf("write the report: %w", err)
	}
	code := r.ExitCode
	if code < 0 {
		code = 128 + 9
	}
	return code, nil
}
