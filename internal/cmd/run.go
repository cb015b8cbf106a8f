package cmd

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kubectl-deltas/kubectl-deltas/internal/cache"
	"github.com/kubectl-deltas/kubectl-deltas/internal/printer"
	"github.com/kubectl-deltas/kubectl-deltas/internal/rawobj"
	"github.com/kubectl-deltas/kubectl-deltas/internal/source"
)

const (
	// startupTimeout bounds discovery when --request-timeout is not set,
	// so that an unreachable server is reported instead of hanging.
	startupTimeout = 30 * time.Second
	// outputBuffer is the size of stdout's buffer; it is flushed whenever
	// no popped batch is waiting.
	outputBuffer = 64 << 10
	// clientQPS and clientBurst lift client-go's default rate limit of 5
	// requests/s, which would throttle paging through a large list.
	clientQPS   = 100
	clientBurst = 200
)

// Run resolves the resources, starts one pipeline per target and prints
// until a stop condition, a signal or a fatal error.
func (o *DeltasOptions) Run(ctx context.Context) error {
	if ctx == nil {
		ctx = context.Background()
	}
	sigCtx, stopSignals := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stopSignals()

	var err error
	if err := o.checkConfigPresent(); err != nil {
		return err
	}
	o.namespace, o.explicitNamespace, err = o.configFlags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return kubeconfigError(err)
	}
	var targets []watchTarget
	targets, err = o.resolve(sigCtx)
	if err != nil {
		if sigCtx.Err() != nil && ctx.Err() == nil {
			return &ExitError{Code: exitInterrupted}
		}
		return err
	}

	o.printerOptions.MultiType = distinctResources(targets) > 1
	p, err := printer.New(o.printerOptions)
	if err != nil {
		return err
	}
	o.printer = p

	config, err := o.restConfig()
	if err != nil {
		return err
	}
	client, err := source.NewRESTClient(config)
	if err != nil {
		return err
	}

	if err := o.preflight(sigCtx, client, targets); err != nil {
		return err
	}

	runCtx, cancel := context.WithCancel(sigCtx)
	defer cancel()

	r := &runner{
		o:      o,
		out:    bufio.NewWriterSize(o.Out, outputBuffer),
		health: newHealth(o.ErrOut, time.Now),
		fatal:  make(chan error, 1),
		synced: make(chan struct{}, len(targets)),
	}
	batches := make(chan batch, 64)
	var wg sync.WaitGroup
	for _, t := range targets {
		inf := o.newInformer(client, t, r)
		r.informers = append(r.informers, inf)
	}
	for _, inf := range r.informers {
		wg.Go(func() { inf.reflector.Run(runCtx) })
		wg.Go(func() { inf.consume(runCtx, batches, o.relist == "all", r.fail) })
		wg.Go(func() {
			select {
			case <-inf.fifo.Synced():
				r.synced <- struct{}{}
			case <-runCtx.Done():
			}
		})
	}
	defer func() {
		cancel()
		for _, inf := range r.informers {
			inf.fifo.Close()
		}
		wg.Wait()
	}()

	var timeout <-chan time.Time
	if o.timeout > 0 {
		timer := time.NewTimer(o.timeout)
		defer timer.Stop()
		timeout = timer.C
	}
	stdoutClosed, stopWatching := watchStdoutClosed(o.Out)
	defer stopWatching()
	return r.loop(sigCtx, batches, timeout, stdoutClosed)
}

// restConfig is the REST config of the run, with a rate limit fit for
// paging and watching.
func (o *DeltasOptions) restConfig() (*rest.Config, error) {
	if o.cachedConfig != nil {
		return o.cachedConfig, nil
	}
	config, err := o.configFlags.ToRESTConfig()
	if err != nil {
		return nil, kubeconfigError(err)
	}
	config.QPS = clientQPS
	config.Burst = clientBurst
	o.cachedConfig = config
	return config, nil
}

// newInformer builds the pipeline of one target.
func (o *DeltasOptions) newInformer(client *rest.RESTClient, t watchTarget, r *runner) *informer {
	fieldSelector := o.fieldSelector
	if t.name != "" {
		nameSelector := "metadata.name=" + t.name
		if fieldSelector != "" {
			fieldSelector += "," + nameSelector
		} else {
			fieldSelector = nameSelector
		}
	}
	lw := source.NewListerWatcher(client, source.Target{
		Resource:      t.mapping.Resource,
		Namespace:     t.namespace,
		LabelSelector: o.labelSelector,
		FieldSelector: fieldSelector,
		Parse:         rawobj.ParseOptions{KeepManagedFields: o.showManagedFields},
	})
	// No indices: nothing looks objects up but by key, and maintaining
	// one costs CPU and memory per object.
	store := cache.NewIndexer(cache.DeletionHandlingMetaNamespaceKeyFunc, cache.Indexers{})
	fifo := cache.NewDeltaFIFOWithOptions(cache.DeltaFIFOOptions{
		KnownObjects:          knownStore{Indexer: store, resume: o.resourceVersion != ""},
		EmitDeltaTypeReplaced: true,
		MaxUpdatedBacklog:     o.maxUpdatedBacklog,
	})
	inf := &informer{target: t, store: store, fifo: fifo}
	name := t.mapping.Resource.GroupResource().String()
	pageSize := int64(0)
	if o.chunkSizeSet {
		pageSize = o.chunkSize
		if pageSize == 0 {
			pageSize = -1
		}
	}
	inf.reflector = cache.NewReflector(lw, fifo, cache.ReflectorOptions{
		Name:              name,
		TypeDescription:   name,
		ExpectedType:      &rawobj.Object{},
		ResyncPeriod:      o.resync,
		MinWatchTimeout:   o.minWatchTimeout,
		WatchListPageSize: pageSize,
		// auto lists: the watch cache serves a list at resourceVersion 0
		// from memory in one response, at about half the client and a
		// third of the server CPU of streaming 10,000 events
		// (bench/RESULTS.md).
		UseWatchList:           o.watchList == "true",
		InitialResourceVersion: o.resourceVersion,
		ErrorHandler:           func(err error) { r.reflectorError(inf, err) },
		HealthyHandler:         func() { r.health.recovered(inf) },
	})
	return inf
}

// runner is the state of the output loop.
type runner struct {
	o         *DeltasOptions
	informers []*informer
	out       *bufio.Writer
	health    *health
	// fatal receives the first unrecoverable error.
	fatal chan error
	// synced receives one value per informer whose FIFO synced.
	synced chan struct{}
	// printed counts printed records, for --count.
	printed int
	// record is reused for every delta.
	record printer.Record
}

// fail reports an unrecoverable error; the first one wins.
func (r *runner) fail(err error) {
	select {
	case r.fatal <- err:
	default:
	}
}

// reflectorError sorts a reflector's report: fatal, a note, or part of an
// outage.
func (r *runner) reflectorError(inf *informer, err error) {
	var fallback *cache.WatchListFallbackError
	switch {
	case errors.As(err, &fallback):
		if r.o.watchList == "true" {
			fmt.Fprintf(r.o.ErrOut, "warning: %v\n", err)
		}
	case isFatal(err):
		r.fail(fatalError(err))
	case isExpired(err):
		// A relist follows; its tombstones and Replaced deltas say what
		// happened while the watch was down.
	default:
		r.health.failed(inf, err)
	}
}

// loop prints batches until a stop condition.
func (r *runner) loop(ctx context.Context, batches <-chan batch, timeout <-chan time.Time, stdoutClosed <-chan struct{}) error {
	o := r.o
	for {
		select {
		case b := <-batches:
			done, err := r.handle(b)
			if err != nil || done {
				return r.finish(err)
			}
			if len(batches) == 0 {
				if err := r.out.Flush(); err != nil {
					return r.finish(err)
				}
			}
			if o.untilSynced && r.allInitialDone() {
				return r.finish(nil)
			}
		case <-r.synced:
			if o.untilSynced && r.allInitialDone() {
				return r.finish(nil)
			}
		case err := <-r.fatal:
			r.out.Flush()
			return err
		case <-timeout:
			return r.finish(nil)
		case <-stdoutClosed:
			// The reader went away: a normal end, nothing left to say.
			return nil
		case <-ctx.Done():
			r.out.Flush()
			return &ExitError{Code: exitInterrupted}
		}
	}
}

// finish flushes and maps a write error: a reader that went away (EPIPE)
// is a normal end.
func (r *runner) finish(err error) error {
	if err == nil {
		err = r.out.Flush()
	}
	if err == nil || errors.Is(err, syscall.EPIPE) {
		return nil
	}
	return fmt.Errorf("writing output: %w", err)
}

func (r *runner) allInitialDone() bool {
	for _, inf := range r.informers {
		if !inf.initialDone() {
			return false
		}
	}
	return true
}

// handle prints the deltas of one batch that pass the filters. done means
// --count was reached.
func (r *runner) handle(b batch) (done bool, err error) {
	o := r.o
	if b.initial {
		b.inf.handledInitial++
	}
	now := time.Now()
	for i := range b.items {
		it := &b.items[i]
		if it.unchanged || !o.printTypes[it.delta.Type] || (o.watchOnly && b.initial) {
			continue
		}
		if err := r.fillRecord(b.inf, it, b.initial, now); err != nil {
			return false, err
		}
		if dc := o.diffConfig; dc.applies(it, b.initial) {
			changes, err := dc.compute(it.old, it.obj, isSecret(b.inf.target.mapping) && !o.showSecretData)
			if err != nil {
				return false, err
			}
			if dc.changedOnly && it.delta.Type == cache.Updated && len(changes) == 0 {
				continue
			}
			if dc.show {
				r.record.Changes = changes
			}
		}
		if err := o.printer.Print(r.out, &r.record); err != nil {
			return false, err
		}
		r.printed++
		if o.count > 0 && r.printed >= o.count {
			return true, nil
		}
	}
	return false, nil
}

// fillRecord describes an item as the S3 record.
func (r *runner) fillRecord(inf *informer, it *item, initial bool, now time.Time) error {
	m := inf.target.mapping
	rec := &r.record
	*rec = printer.Record{
		Type:              string(it.delta.Type),
		Time:              now,
		Initial:           initial,
		APIVersion:        m.GroupVersionKind.GroupVersion().String(),
		Kind:              m.GroupVersionKind.Kind,
		Resource:          m.Resource.Resource,
		FinalStateUnknown: it.tombstone,
		Coalesced:         it.delta.Coalesced,
	}
	if it.obj == nil {
		rec.Namespace, rec.Name, _ = cache.SplitMetaNamespaceKey(it.key)
		rec.Object = nullJSON
		return nil
	}
	rec.Namespace, rec.Name = it.obj.Namespace, it.obj.Name
	rec.UID, rec.ResourceVersion = it.obj.UID, it.obj.ResourceVersion
	if it.delta.Type != cache.Deleted {
		rec.Manager, rec.Operation = changeManager(it.old, it.obj)
	}
	object, err := r.objectJSON(inf, it.obj)
	if err != nil {
		return err
	}
	rec.Object = object
	return nil
}

var nullJSON = []byte("null")

// objectJSON is the object as printed: Secrets redacted unless
// --show-secret-data.
func (r *runner) objectJSON(inf *informer, obj *rawobj.Object) ([]byte, error) {
	if r.o.showSecretData || !isSecret(inf.target.mapping) {
		return obj.JSON, nil
	}
	return redactSecretJSON(obj.JSON)
}

// changeManager names the field manager of a change, from managedFields:
// the newest entry that is new or whose time moved; failing that (the same
// manager wrote twice within a second), the newest entry whose set of owned
// fields changed; failing that, for an object that did change, the single
// newest entry. Empty when it cannot be told (no managedFields, or a tie).
func changeManager(old, obj *rawobj.Object) (manager, operation string) {
	if e := newestEntry(obj.Managers, func(e *rawobj.ManagedFieldsEntry) bool {
		prev := findEntry(old, e)
		return prev == nil || e.Time > prev.Time
	}); e != nil {
		return e.Manager, e.Operation
	}
	if e := newestEntry(obj.Managers, func(e *rawobj.ManagedFieldsEntry) bool {
		prev := findEntry(old, e)
		return prev != nil && e.FieldsHash != prev.FieldsHash
	}); e != nil {
		return e.Manager, e.Operation
	}
	if old != nil && old.ResourceVersion == obj.ResourceVersion {
		return "", ""
	}
	var newest *rawobj.ManagedFieldsEntry
	tie := false
	for i := range obj.Managers {
		e := &obj.Managers[i]
		switch {
		case newest == nil || e.Time > newest.Time:
			newest, tie = e, false
		case e.Time == newest.Time:
			tie = true
		}
	}
	if newest == nil || tie {
		return "", ""
	}
	return newest.Manager, newest.Operation
}

// newestEntry returns the entry with the latest time among those that
// match, nil if none does.
func newestEntry(entries []rawobj.ManagedFieldsEntry, match func(*rawobj.ManagedFieldsEntry) bool) *rawobj.ManagedFieldsEntry {
	var best *rawobj.ManagedFieldsEntry
	for i := range entries {
		e := &entries[i]
		if match(e) && (best == nil || e.Time > best.Time) {
			best = e
		}
	}
	return best
}

// findEntry returns old's entry for the same manager, operation and
// subresource as e, nil if none (or no old object).
func findEntry(old *rawobj.Object, e *rawobj.ManagedFieldsEntry) *rawobj.ManagedFieldsEntry {
	if old == nil {
		return nil
	}
	for i := range old.Managers {
		b := &old.Managers[i]
		if b.Manager == e.Manager && b.Operation == e.Operation && b.Subresource == e.Subresource {
			return b
		}
	}
	return nil
}
