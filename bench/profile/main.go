// Command profile runs kubectl deltas in-process, exactly as
// bin/kubectl-deltas does (internal/cmd.Execute with the same arguments),
// under the Go CPU profiler, so that `make bench` can show where the time
// of an initial sync goes (the plugin itself has no pprof flag).
//
//	profile -cpuprofile cpu.pprof -memprofile mem.pprof -repeat 5 -- cm -n bench -o json --count=10000 --kubeconfig …
//
// -repeat runs the command that many times in one process so that a sync
// of a fraction of a second still collects enough samples; stdout receives
// the output of every run. The exit code is the first non-zero one.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-deltas/kubectl-deltas/internal/cmd"
)

func main() {
	code, err := run()
	if err != nil {
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
		os.Exit(1)
	}
	os.Exit(code)
}

func run() (int, error) {
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile to this file")
	memProfile := flag.String("memprofile", "", "write an allocation profile to this file at the end")
	repeat := flag.Int("repeat", 1, "run the command this many times")
	flag.Parse()
	if *repeat < 1 {
		return 0, errors.New("-repeat must be at least 1")
	}
	if *memProfile != "" {
		runtime.MemProfileRate = 64 << 10
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return 0, fmt.Errorf("create the CPU profile: %w", err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return 0, fmt.Errorf("start the CPU profile: %w", err)
		}
	}
	streams := genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	code := 0
	for i := 0; i < *repeat && code == 0; i++ {
		code = cmd.Execute(streams, flag.Args())
	}
	if *cpuProfile != "" {
		pprof.StopCPUProfile()
	}
	if *memProfile != "" {
		f, err := os.Create(*memProfile)
		if err != nil {
			return code, fmt.Errorf("create the memory profile: %w", err)
		}
		defer f.Close()
		if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
			return code, fmt.Errorf("write the memory profile: %w", err)
		}
	}
	return code, nil
}
