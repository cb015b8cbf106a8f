// Package otelcol runs the tests' OpenTelemetry Collector — bin/otelcol,
// built by "make otelcol" from hack/otelcol, with hack/otelcol/collector.yaml:
// an OTLP/HTTP receiver on loopback and file exporters that write what it
// receives, as OTLP JSON, to files — and reads what it wrote. The e2e tests
// and the benchmarks' OpenTelemetry section start it; never part of the
// plugin.
package otelcol

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Options say where a collector runs.
type Options struct {
	// Root is the repository's root: bin/otelcol and
	// hack/otelcol/collector.yaml are found under it.
	Root string
	// Dir is where its files go: logs.json, traces.json (opened in append
	// mode, so what arrived before a Stop and Start is kept) and
	// otelcol.log (its stdout and stderr, every run).
	Dir string
	// Endpoint is the receiver's HOST:PORT; "" picks a free port on
	// 127.0.0.1.
	Endpoint string
}

// Collector is one collector, running or stopped. Its methods are called
// from one goroutine.
type Collector struct {
	// Endpoint is the receiver's HOST:PORT.
	Endpoint string
	// LogsFile and TracesFile are what the file exporters write, one
	// OTLP JSON object a line (a batch); OutFile what it printed.
	LogsFile, TracesFile, OutFile string

	bin, config string
	// run is the running process, nil when stopped.
	run *process
}

// process is one run of the collector.
type process struct {
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
	err  error         // cmd.Wait's, set before done is closed
}

// readyWithin bounds how long a start waits for the receiver to answer.
const readyWithin = 30 * time.Second

// Start starts a collector as o says and waits until its receiver takes
// requests. The caller stops it with Stop or Kill, however it ends: the
// process also dies with its parent (Pdeathsig).
func Start(ctx context.Context, o Options) (*Collector, error) {
	c := &Collector{
		Endpoint:   o.Endpoint,
		LogsFile:   filepath.Join(o.Dir, "logs.json"),
		TracesFile: filepath.Join(o.Dir, "traces.json"),
		OutFile:    filepath.Join(o.Dir, "otelcol.log"),
		bin:        filepath.Join(o.Root, "bin", "otelcol"),
		config:     filepath.Join(o.Root, "hack", "otelcol", "collector.yaml"),
	}
	if _, err := os.Stat(c.bin); err != nil {
		return nil, fmt.Errorf("the OpenTelemetry Collector is not built (%w): run \"make otelcol\" first", err)
	}
	if c.Endpoint != "" {
		return c, c.Start(ctx)
	}
	// A port picked free may be taken by a parallel test before the
	// collector binds it: then another is picked (3 tries). Started
	// again later (Start), it keeps its port.
	for try := 1; ; try++ {
		if err := c.pickPort(); err != nil {
			return nil, err
		}
		before := c.outputSize()
		err := c.Start(ctx)
		if err == nil || try == 3 || !strings.Contains(c.outputSince(before), "address already in use") {
			return c, err
		}
	}
}

// pickPort sets Endpoint to a loopback port free now: the collector binds
// it a moment later, so a start that finds it taken picks again.
func (c *Collector) pickPort() error {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("finding a free port for the collector: %w", err)
	}
	c.Endpoint = l.Addr().String()
	return l.Close()
}

// URL is the receiver's base URL: http://HOST:PORT.
func (c *Collector) URL() string { return "http://" + c.Endpoint }

// Start starts the collector — again after a Stop, on the same port and
// files — and waits until its receiver takes requests.
func (c *Collector) Start(ctx context.Context) error {
	if c.run != nil {
		return errors.New("the collector runs already: Stop it first")
	}
	out, err := os.OpenFile(c.OutFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer out.Close() // the child has its own copy
	cmd := exec.Command(c.bin, "--config="+c.config)
	cmd.Env = append(os.Environ(),
		"OTLP_HTTP_ENDPOINT="+c.Endpoint,
		"OTLP_LOGS_FILE="+c.LogsFile,
		"OTLP_TRACES_FILE="+c.TracesFile,
	)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", c.bin, err)
	}
	run := &process{cmd: cmd, done: make(chan struct{})}
	go func() {
		run.err = cmd.Wait()
		close(run.done)
	}()
	c.run = run
	if err := c.waitReady(ctx, readyWithin); err != nil {
		c.Kill()
		return err
	}
	return nil
}

// waitReady posts an empty logs request, which the receiver answers
// without passing anything on, until it answers 200.
func (c *Collector) waitReady(ctx context.Context, within time.Duration) error {
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(within)
	for {
		select {
		case <-c.run.done:
			return fmt.Errorf("the collector exited before it was ready (%v):\n%s", c.run.err, c.Output())
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		resp, err := client.Post(c.URL()+"/v1/logs", "application/json", strings.NewReader("{}"))
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("status %s", resp.Status)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the collector is not ready on %s after %v (%w):\n%s", c.Endpoint, within, err, c.Output())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stopWithin bounds how long Stop waits after SIGTERM.
const stopWithin = 10 * time.Second

// Stop stops the collector with SIGTERM, which flushes what it holds to
// the files, and waits for it to exit: its port then refuses connections.
// It is killed, and Stop fails, if it takes more than 10 seconds.
func (c *Collector) Stop() error {
	if c.run == nil {
		return nil
	}
	_ = syscall.Kill(-c.run.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-c.run.done:
		c.run = nil
		return nil
	case <-time.After(stopWithin):
		c.Kill()
		return fmt.Errorf("the collector did not stop within %v of SIGTERM:\n%s", stopWithin, c.Output())
	}
}

// Kill kills the collector and its process group, if it runs, and waits.
func (c *Collector) Kill() {
	if c.run == nil {
		return
	}
	_ = syscall.Kill(-c.run.cmd.Process.Pid, syscall.SIGKILL)
	<-c.run.done
	c.run = nil
}

// Exited is closed when the running collector exits; nil (never ready)
// when it is stopped.
func (c *Collector) Exited() <-chan struct{} {
	if c.run == nil {
		return nil
	}
	return c.run.done
}

// Output is the end of what the collector printed, for messages.
func (c *Collector) Output() string {
	const most = 8 << 10
	data, err := os.ReadFile(c.OutFile)
	if err != nil {
		return err.Error()
	}
	if len(data) > most {
		data = data[len(data)-most:]
	}
	return string(data)
}

// outputSize is how much the collector has printed, every run.
func (c *Collector) outputSize() int64 {
	st, err := os.Stat(c.OutFile)
	if err != nil {
		return 0
	}
	return st.Size()
}

// outputSince is what the collector printed past offset: its last run's.
func (c *Collector) outputSince(offset int64) string {
	data, err := os.ReadFile(c.OutFile)
	if err != nil || int64(len(data)) < offset {
		return ""
	}
	return string(data[offset:])
}
