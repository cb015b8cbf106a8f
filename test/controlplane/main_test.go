package controlplane

import (
	"fmt"
	"os"
	"testing"
)

// TestMain stops with one line naming what to do when the binaries the
// tests start are missing (a fresh clone before "make controlplane"),
// rather than a failure per test.
func TestMain(m *testing.M) {
	if err := Check(Options{Nodes: 1}); err != nil {
		fmt.Fprintf(os.Stderr, "test/controlplane: %v\n", err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}
