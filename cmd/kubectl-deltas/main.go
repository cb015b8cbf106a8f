// Command kubectl-deltas is the kubectl plugin "kubectl deltas": it lists
// and watches Kubernetes resources through an informer and prints every
// delta it pops.
package main

import (
	"os"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-deltas/kubectl-deltas/internal/cmd"
)

func main() {
	os.Exit(cmd.Execute(genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}, os.Args[1:]))
}
