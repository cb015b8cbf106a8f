//go:build !unix

package listwatch

import "time"

// cpuTime is not implemented here: benchmarks report 0 cpu-ns/op.
func cpuTime() time.Duration { return 0 }
