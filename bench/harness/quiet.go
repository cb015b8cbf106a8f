package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// cpuTimes reads the aggregate busy and total jiffies from /proc/stat.
func cpuTimes() (busy, total uint64, err error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, fmt.Errorf("read /proc/stat: %w", err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	fields := strings.Fields(line)
	if len(fields) < 5 || fields[0] != "cpu" {
		return 0, 0, fmt.Errorf("unexpected /proc/stat line %q", line)
	}
	for i, f := range fields[1:] {
		v, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("parse /proc/stat: %w", err)
		}
		total += v
		// idle and iowait are the 4th and 5th values.
		if i != 3 && i != 4 {
			busy += v
		}
	}
	return busy, total, nil
}

// busyFraction is the share of all CPUs that was busy over d.
func busyFraction(ctx context.Context, d time.Duration) (float64, error) {
	b0, t0, err := cpuTimes()
	if err != nil {
		return 0, err
	}
	select {
	case <-time.After(d):
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	b1, t1, err := cpuTimes()
	if err != nil {
		return 0, err
	}
	if t1 == t0 {
		return 0, nil
	}
	return float64(b1-b0) / float64(t1-t0), nil
}

// waitQuiet waits, up to maxWait, until the machine is less than limit
// busy (other processes would distort the timings), and returns the last
// busy fraction seen.
func waitQuiet(ctx context.Context, limit float64, maxWait time.Duration) (float64, error) {
	deadline := time.Now().Add(maxWait)
	for {
		busy, err := busyFraction(ctx, 2*time.Second)
		if err != nil {
			return 0, err
		}
		if busy <= limit {
			return busy, nil
		}
		if time.Now().After(deadline) {
			logf("the machine is still %.0f%% busy with other work after waiting %s: measuring anyway (RESULTS.md notes it)", 100*busy, maxWait)
			return busy, nil
		}
		logf("the machine is %.0f%% busy with other work; waiting for it to calm down (up to %s, -quiet-wait)", 100*busy, time.Until(deadline).Round(time.Second))
		select {
		case <-time.After(8 * time.Second):
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
}
