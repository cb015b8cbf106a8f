// Command baseline is client (b) of `make bench`: the same job as
// `kubectl deltas -o json`, done with client-go's own informer machinery and
// its defaults, so that the two can be compared side by side.
//
//   - a dynamic client (objects decoded into *unstructured.Unstructured), as
//     dynamicinformer builds its ListerWatcher;
//   - cache.NewReflectorWithOptions with client-go's defaults; whether the
//     initial state comes as a streaming list (sendInitialEvents) follows
//     client-go's WatchListClient feature gate, which client-go reads from
//     the environment: KUBE_FEATURE_WatchListClient=true|false;
//   - cache.NewDeltaFIFOWithOptions{KnownObjects: store,
//     EmitDeltaTypeReplaced: true} over a cache.NewIndexer;
//   - a pop loop that updates the Indexer as client-go's processDeltas does
//     and prints one JSON line per delta, {"type":…,"object":…}, with
//     encoding/json.
//
// It strips metadata.managedFields (in the FIFO's Transformer, as client-go
// informers' SetTransform is used for) so that it prints the same objects
// as kubectl deltas, which strips them by default; this makes the baseline
// cheaper, not dearer. Output goes through a 64 KiB buffer flushed every
// 10 ms and when a count is reached, so the baseline does not pay one write
// per line either.
//
// With -typed it is client-go's typed Pod informer instead: the ListWatch
// of informers/core/v1's NewPodInformer (the typed clientset, objects
// decoded into *corev1.Pod), the same Reflector, DeltaFIFO, Indexer and
// printing; -protobuf makes that clientset speak protobuf, as controllers
// configure it (ContentType application/vnd.kubernetes.protobuf).
//
// It exits 0 after -count deltas have been printed (0: run until
// interrupted).
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
		os.Exit(1)
	}
}

// line is one printed delta.
type line struct {
	Type   cache.DeltaType `json:"type"`
	Object any             `json:"object"`
}

func run() error {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig file")
	namespace := flag.String("namespace", "bench", "namespace to watch")
	resource := flag.String("resource", "configmaps", "core/v1 resource to watch")
	count := flag.Int("count", 0, "exit after this many deltas (0 = no limit)")
	typed := flag.Bool("typed", false, "client-go's typed Pod informer (the typed clientset, *corev1.Pod) instead of the dynamic one; -resource is ignored")
	protobuf := flag.Bool("protobuf", false, "with -typed: the clientset speaks protobuf")
	flag.Parse()
	klog.SetOutput(os.Stderr)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	config, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		return fmt.Errorf("load kubeconfig: %w", err)
	}
	// As kubectl deltas does: no client-side throttling of list pages.
	config.QPS, config.Burst = 100, 200
	gvr := schema.GroupVersionResource{Version: "v1", Resource: *resource}
	var lw cache.ListerWatcher
	var expected runtime.Object = &unstructured.Unstructured{}
	if *typed {
		if *protobuf {
			config.ContentType = "application/vnd.kubernetes.protobuf"
			config.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
		}
		clientset, err := kubernetes.NewForConfig(config)
		if err != nil {
			return fmt.Errorf("create clientset: %w", err)
		}
		gvr.Resource = "pods"
		expected = &corev1.Pod{}
		pods := clientset.CoreV1().Pods(*namespace)
		lw = cache.ToListWatcherWithWatchListSemantics(&cache.ListWatch{
			ListWithContextFunc: func(ctx context.Context, options metav1.ListOptions) (runtime.Object, error) {
				return pods.List(ctx, options)
			},
			WatchFuncWithContext: func(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
				return pods.Watch(ctx, options)
			},
		}, clientset)
	} else {
		client, err := dynamic.NewForConfig(config)
		if err != nil {
			return fmt.Errorf("create dynamic client: %w", err)
		}
		ri := client.Resource(gvr).Namespace(*namespace)
		lw = cache.ToListWatcherWithWatchListSemantics(&cache.ListWatch{
			ListWithContextFunc: func(ctx context.Context, options metav1.ListOptions) (runtime.Object, error) {
				return ri.List(ctx, options)
			},
			WatchFuncWithContext: func(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
				return ri.Watch(ctx, options)
			},
		}, client)
	}

	store := cache.NewIndexer(cache.DeletionHandlingMetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	fifo := cache.NewDeltaFIFOWithOptions(cache.DeltaFIFOOptions{
		KnownObjects:          store,
		EmitDeltaTypeReplaced: true,
		Transformer:           stripManagedFields,
	})
	reflector := cache.NewReflectorWithOptions(lw, expected, fifo, cache.ReflectorOptions{
		Name:            "bench-baseline",
		TypeDescription: gvr.String(),
	})

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	wg.Go(func() { reflector.RunWithContext(runCtx) })
	go func() {
		<-runCtx.Done()
		fifo.Close()
	}()

	out := &flushingWriter{w: bufio.NewWriterSize(os.Stdout, 64<<10)}
	wg.Go(func() { out.flushEvery(runCtx, 10*time.Millisecond) })
	err = popLoop(fifo, store, out, *count)
	cancel()
	wg.Wait()
	if ferr := out.flush(); err == nil && ferr != nil {
		err = ferr
	}
	if errors.Is(err, cache.ErrFIFOClosed) && ctx.Err() != nil {
		return nil // interrupted
	}
	return err
}

// stripManagedFields drops metadata.managedFields before the object enters
// the FIFO.
func stripManagedFields(obj any) (any, error) {
	if m, ok := obj.(metav1.Object); ok {
		m.SetManagedFields(nil)
	}
	return obj, nil
}

// popLoop pops deltas, applies them to the Indexer (processDeltas), and
// prints them outside the FIFO's lock.
func popLoop(fifo *cache.DeltaFIFO, store cache.Indexer, out *flushingWriter, count int) error {
	printed := 0
	var popped cache.Deltas
	for {
		popped = popped[:0]
		_, err := fifo.Pop(func(obj any, _ bool) error {
			deltas, ok := obj.(cache.Deltas)
			if !ok {
				return fmt.Errorf("unexpected %T popped from the FIFO", obj)
			}
			for _, d := range deltas {
				switch d.Type {
				case cache.Sync, cache.Replaced, cache.Added, cache.Updated:
					if _, exists, err := store.Get(d.Object); err == nil && exists {
						if err := store.Update(d.Object); err != nil {
							return err
						}
					} else if err := store.Add(d.Object); err != nil {
						return err
					}
				case cache.Deleted:
					if err := store.Delete(d.Object); err != nil {
						return err
					}
				}
			}
			popped = append(popped, deltas...)
			return nil
		})
		if err != nil {
			return err
		}
		for _, d := range popped {
			var object any
			switch o := d.Object.(type) {
			case *unstructured.Unstructured:
				object = o.Object
			case cache.DeletedFinalStateUnknown:
				object = o.Obj
				if u, ok := o.Obj.(*unstructured.Unstructured); ok {
					object = u.Object
				}
			default:
				object = o
			}
			if err := out.encode(line{Type: d.Type, Object: object}); err != nil {
				return err
			}
			printed++
			if count > 0 && printed >= count {
				return out.flush()
			}
		}
	}
}

// flushingWriter is a buffered stdout shared by the pop loop and a ticker
// that flushes it.
type flushingWriter struct {
	mu  sync.Mutex
	w   *bufio.Writer
	enc *json.Encoder
}

func (f *flushingWriter) encode(v any) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.enc == nil {
		f.enc = json.NewEncoder(f.w)
		f.enc.SetEscapeHTML(false)
	}
	if err := f.enc.Encode(v); err != nil {
		return fmt.Errorf("write a delta: %w", err)
	}
	return nil
}

func (f *flushingWriter) flush() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.w.Flush(); err != nil {
		return fmt.Errorf("flush stdout: %w", err)
	}
	return nil
}

func (f *flushingWriter) flushEvery(ctx context.Context, d time.Duration) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			_ = f.flush()
		}
	}
}
