// Package informer is kubectl deltas' informer engine, the counterpart of
// client-go's controller.go and shared informer: one Informer per watched
// collection (Reflector → DeltaFIFO → Pop → Store), and an Engine that
// merges the deltas of a set of informers into one ordered stream, keeps the
// "initial list done" bookkeeping, and runs until a stop condition.
//
// Informers can be added to and removed from an Engine while it runs; each
// one owns three goroutines (reflector, consumer, sync waiter), all of which
// have returned when Remove, or Run, returns.
//
// The package knows nothing of flags, printers or output formats: it takes
// a narrow Config, a ListerWatcher factory (tests pass fake watchers), and
// hands popped batches to a Sink.
package informer
