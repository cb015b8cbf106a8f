// Package difftest is the oracle of the tests that walk JSON and hand the
// members that differ to a diff.Stepper themselves: the operations of two
// decoded objects handed over whole, member by member, at the root.
package difftest

import (
	"reflect"
	"slices"

	"github.com/kubectl-deltas/kubectl-deltas/internal/diff"
)

// Compute returns the operations that turn before into after, two decoded
// objects: every member of either handed to a Stepper with opts, in sorted
// key order — what the Stepper's walk must return for the same two.
func Compute(before, after map[string]any, opts diff.Options) []diff.Operation {
	s := diff.NewStepper(opts)
	handOver(s, before, after)
	return s.Operations()
}

// At returns the operations of a member below the root: path leads to
// the object holding it, before and after hold it (or not) under its key,
// as a walk that entered the objects on path would make them.
func At(path []string, before, after map[string]any, opts diff.Options) []diff.Operation {
	s := diff.NewStepper(opts)
	for _, key := range path {
		s.Enter(key)
	}
	handOver(s, before, after)
	for range path {
		s.Leave()
	}
	return s.Operations()
}

// handOver hands s the members of before and after that differ, at the
// object the walk is in.
func handOver(s *diff.Stepper, before, after map[string]any) {
	keys := make([]string, 0, len(before)+len(after))
	for k := range before {
		keys = append(keys, k)
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		a, inBefore := before[k]
		b, inAfter := after[k]
		switch {
		case !inAfter:
			s.Removed(k, a)
		case !inBefore:
			s.Added(k, b)
		case !reflect.DeepEqual(a, b):
			s.Values(k, a, b)
		}
	}
}
