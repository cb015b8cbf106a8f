package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// anonSampler polls the resident anonymous memory (RssAnon: heap, stacks,
// runtime) of the client that bench/rusage started, every interval until
// stop is closed, and keeps the maximum. ru_maxrss also counts the pages
// of the executable that are mapped in (RssFile), which on this kind of
// machine come in 2 MiB folios and make a large binary look large; the
// sampled RssAnon separates the two.
type anonSampler struct {
	wrapperPID int
	maxAnonKiB int64
	maxFileKiB int64
}

func (a *anonSampler) run(interval time.Duration, stop <-chan struct{}) {
	t := time.NewTicker(interval)
	defer t.Stop()
	child := 0
	for {
		if child == 0 {
			child = firstChild(a.wrapperPID)
		}
		if child != 0 {
			if anon, file, ok := rssKiB(child); ok {
				a.maxAnonKiB = max(a.maxAnonKiB, anon)
				a.maxFileKiB = max(a.maxFileKiB, file)
			}
		}
		select {
		case <-stop:
			return
		case <-t.C:
		}
	}
}

// firstChild is the first child of pid, 0 if none (yet). Children are
// listed per thread, and a Go program forks from any of its threads.
func firstChild(pid int) int {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return 0
	}
	for _, t := range tasks {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", pid, t.Name()))
		if err != nil {
			continue
		}
		if f := strings.Fields(string(b)); len(f) > 0 {
			if c, err := strconv.Atoi(f[0]); err == nil {
				return c
			}
		}
	}
	return 0
}

// procCPU is the user+system CPU time of pid so far, -1 if unknown.
func procCPU(pid int) time.Duration {
	if pid <= 0 {
		return -1
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return -1
	}
	// The command name in parentheses may hold spaces; the fields after
	// it start with the state (field 3); utime and stime are 14 and 15.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return -1
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return -1
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return -1
	}
	// USER_HZ is 100 on Linux.
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// rssKiB reads RssAnon and RssFile of pid.
func rssKiB(pid int) (anon, file int64, ok bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, false
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	found := 0
	for sc.Scan() {
		line := sc.Text()
		var dst *int64
		switch {
		case strings.HasPrefix(line, "RssAnon:"):
			dst = &anon
		case strings.HasPrefix(line, "RssFile:"):
			dst = &file
		default:
			continue
		}
		f := strings.Fields(line)
		if len(f) >= 2 {
			if v, err := strconv.ParseInt(f[1], 10, 64); err == nil {
				*dst = v
				found++
			}
		}
	}
	return anon, file, found == 2
}

// findPID returns the first process whose command line contains substr, 0
// if none.
func findPID(substr string) int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err == nil && bytes.Contains(b, []byte(substr)) {
			return pid
		}
	}
	return 0
}

// contention measures how busy the CPUs were with processes other than the
// client under test, the control plane and the harness during a run.
type contention struct {
	start               time.Time
	busy0               uint64
	server0, etcd0, me0 time.Duration
	serverPID, etcdPID  int
}

func startContention(serverPID, etcdPID int) *contention {
	c := &contention{start: time.Now(), serverPID: serverPID, etcdPID: etcdPID}
	c.busy0, _, _ = cpuTimes()
	c.server0, c.etcd0, c.me0 = procCPU(serverPID), procCPU(etcdPID), procCPU(os.Getpid())
	return c
}

// foreign returns the share of all CPUs (0-1) used by other processes
// since start, given the client's own CPU time; -1 when unknown.
func (c *contention) foreign(clientCPU time.Duration) float64 {
	busy1, _, err := cpuTimes()
	server1, etcd1, me1 := procCPU(c.serverPID), procCPU(c.etcdPID), procCPU(os.Getpid())
	if err != nil || c.server0 < 0 || c.etcd0 < 0 || c.me0 < 0 || server1 < 0 || etcd1 < 0 || me1 < 0 {
		return -1
	}
	elapsed := time.Since(c.start)
	if elapsed <= 0 {
		return -1
	}
	// /proc/stat counts USER_HZ (100) ticks.
	busy := time.Duration(busy1-c.busy0) * 10 * time.Millisecond
	ours := clientCPU + (server1 - c.server0) + (etcd1 - c.etcd0) + (me1 - c.me0)
	f := float64(busy-ours) / (float64(elapsed) * float64(runtime.NumCPU()))
	return max(0, f)
}
