package main

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"runtime"
	"strings"
)

// machineInfo describes where a run happened.
type machineInfo struct {
	CPU       string `json:"cpu"`
	CPUs      int    `json:"cpus"`
	Memory    string `json:"memory"`
	Kernel    string `json:"kernel"`
	GoVersion string `json:"goVersion"`
}

func machine(ctx context.Context, root string) machineInfo {
	m := machineInfo{CPU: "unknown", CPUs: runtime.NumCPU(), Memory: "unknown", Kernel: "unknown"}
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPU = strings.TrimSpace(v)
				break
			}
		}
		f.Close()
	}
	if f, err := os.Open("/proc/meminfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
				m.Memory = strings.TrimSpace(v)
				break
			}
		}
		f.Close()
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = "Linux " + strings.TrimSpace(string(b))
	}
	cmd := exec.CommandContext(ctx, goTool(), "version")
	cmd.Dir = root
	if out, err := cmd.Output(); err == nil {
		m.GoVersion = strings.TrimSpace(string(out))
	} else {
		m.GoVersion = runtime.Version()
	}
	return m
}

func gitDescribe(ctx context.Context, root string) string {
	cmd := exec.CommandContext(ctx, "git", "describe", "--tags", "--always", "--dirty")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(out))
}
