package informer

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/rest"

	"github.com/kubectl-deltas/kubectl-deltas/internal/cache"
	"github.com/kubectl-deltas/kubectl-deltas/internal/flaghelp"
	"github.com/kubectl-deltas/kubectl-deltas/internal/listwatch"
	"github.com/kubectl-deltas/kubectl-deltas/internal/rawobj"
)

// ListWatchFlags are the flags of how lists and watches are made: the
// server-side selectors, metadata only, paging, streaming lists, resuming
// from a resourceVersion, resyncs and the FIFO's backlog. Config builds
// the Engine's Config from them, with the ListerWatchers of package
// source.
type ListWatchFlags struct {
	LabelSelector     string
	FieldSelector     string
	MetadataOnly      bool
	ShowManagedFields bool
	ChunkSize         int64
	WatchList         string
	ResourceVersion   string
	Resync            time.Duration
	MaxUpdatedBacklog int
	MinWatchTimeout   time.Duration
	// Handler is --handler: the run shows an informer handler's calls,
	// not the deltas. FIFO is --fifo: "" (the default of the run:
	// FIFOKind), "real" or "delta".
	Handler bool
	FIFO    string

	// flags is the set AddFlags declared on, to tell a --chunk-size given
	// from the default.
	flags *pflag.FlagSet
}

// NewListWatchFlags returns the flags with their defaults.
func NewListWatchFlags() *ListWatchFlags {
	return &ListWatchFlags{ChunkSize: 500, WatchList: "auto", MaxUpdatedBacklog: 10}
}

// AddFlags declares the flags on fs.
func (f *ListWatchFlags) AddFlags(fs *pflag.FlagSet) {
	f.flags = fs
	fs.StringVarP(&f.LabelSelector, "selector", "l", f.LabelSelector, "Only objects whose labels match `SELECTOR`, as kubectl get -l")
	fs.StringVar(&f.FieldSelector, "field-selector", f.FieldSelector, "Only objects whose fields match `SELECTOR` (metadata.name=web)")
	fs.BoolVar(&f.ShowManagedFields, "show-managed-fields", f.ShowManagedFields, "Keep metadata.managedFields in printed objects")
	fs.BoolVar(&f.MetadataOnly, "metadata-only", f.MetadataOnly, "List and watch metadata only: a fraction of the memory")
	fs.Int64Var(&f.ChunkSize, "chunk-size", f.ChunkSize, "List in pages of `N` objects (0: one request)")
	fs.StringVar(&f.WatchList, "watch-list", f.WatchList, "Initial state as a watch stream: true, false or auto")
	fs.StringVar(&f.ResourceVersion, "resource-version", f.ResourceVersion, "Resume: watch from `RV` instead of listing")
	fs.DurationVar(&f.Resync, "resync", f.Resync, "Sync deltas for every known object this often (0: never)")
	fs.IntVar(&f.MaxUpdatedBacklog, "max-update-backlog", f.MaxUpdatedBacklog, "When output lags, fold over `N` updates of an object")
	fs.BoolVar(&f.Handler, "handler", f.Handler, "Print an informer handler's calls, not deltas (docs/handler.md)")
	fs.StringVar(&f.FIFO, "fifo", f.FIFO, "With --handler: real (RealFIFO, the default) or delta (DeltaFIFO)")
	fs.DurationVar(&f.MinWatchTimeout, "min-watch-timeout", f.MinWatchTimeout, "Shortest server-side watch timeout; each watch lasts a random time between this and twice this (default 5m).")
	flaghelp.File(fs, flaghelp.Watch, "selector", "field-selector")
	flaghelp.File(fs, flaghelp.Filter, "show-managed-fields")
	flaghelp.File(fs, flaghelp.Output, "handler")
	flaghelp.File(fs, flaghelp.Tuning, "metadata-only", "chunk-size", "watch-list", "resource-version", "resync", "max-update-backlog", "fifo")
	_ = fs.MarkHidden("min-watch-timeout")
}

// Validate checks the values and parses the selectors, so that a bad one
// fails before any request.
func (f *ListWatchFlags) Validate() error {
	switch {
	case f.Resync < 0:
		return fmt.Errorf("invalid --resync %s: must be 0 (off) or more", f.Resync)
	case f.Resync > 0 && f.Resync < time.Second:
		return fmt.Errorf("invalid --resync %s: must be at least 1s", f.Resync)
	case f.ChunkSize < 0:
		return fmt.Errorf("invalid --chunk-size %d: must be 0 (no paging) or more", f.ChunkSize)
	case f.MaxUpdatedBacklog < 0:
		return fmt.Errorf("invalid --max-update-backlog %d: must be 0 (no limit) or more", f.MaxUpdatedBacklog)
	case f.MinWatchTimeout < 0:
		return fmt.Errorf("invalid --min-watch-timeout %s", f.MinWatchTimeout)
	case f.WatchList != "auto" && f.WatchList != "true" && f.WatchList != "false":
		return fmt.Errorf("invalid --watch-list value %q: must be auto, true or false", f.WatchList)
	case f.FIFO != "" && f.FIFO != string(FIFOReal) && f.FIFO != string(FIFODelta):
		return fmt.Errorf("invalid --fifo value %q: must be real (client-go v0.33 and later) or delta (v0.32 and earlier)", f.FIFO)
	case f.ResourceVersion == "0":
		return errors.New(`invalid --resource-version "0": give the resourceVersion of a previous delta to resume from`)
	case f.ResourceVersion != "" && !isRevision(f.ResourceVersion):
		return fmt.Errorf("invalid --resource-version %q: a kube-apiserver's resourceVersions are numbers; give the resourceVersion of a previous delta (its \"resourceVersion\" in -o json)", f.ResourceVersion)
	}
	if _, err := labels.Parse(f.LabelSelector); err != nil {
		return fmt.Errorf("invalid --selector %q: %w", f.LabelSelector, err)
	}
	if _, err := fields.ParseSelector(f.FieldSelector); err != nil {
		return fmt.Errorf("invalid --field-selector %q: %w", f.FieldSelector, err)
	}
	return nil
}

// isRevision reports whether rv reads as an etcd revision: a positive
// decimal number.
func isRevision(rv string) bool {
	n, err := strconv.ParseUint(rv, 10, 64)
	return err == nil && n > 0
}

// FIFOKind is the queue of the run's informers: --fifo when given, else
// the RealFIFO of client-go v0.36 when the run shows handler calls, the
// DeltaFIFO when it shows deltas.
func (f *ListWatchFlags) FIFOKind() FIFO {
	switch {
	case f.FIFO != "":
		return FIFO(f.FIFO)
	case f.Handler:
		return FIFOReal
	}
	return FIFODelta
}

// Selected reports whether a label or field selector narrows the run.
func (f *ListWatchFlags) Selected() bool { return f.LabelSelector != "" || f.FieldSelector != "" }

// Resuming reports whether the stream resumes from a resourceVersion,
// without an initial list.
func (f *ListWatchFlags) Resuming() bool { return f.ResourceVersion != "" }

// Config is the Engine's Config the flags describe: raw JSON lists and
// watches through the client of each target's cluster (clientOf), the
// server's Table rows with them when tableRows (-o wide); notes of what
// the server could not do go to errOut.
func (f *ListWatchFlags) Config(clientOf func(context string) rest.Interface, tableRows bool, errOut io.Writer) Config {
	pageSize := int64(0)
	if f.flags != nil && f.flags.Changed("chunk-size") {
		pageSize = f.ChunkSize
		if pageSize == 0 {
			pageSize = -1
		}
	}
	parse := rawobj.ParseOptions{KeepManagedFields: f.ShowManagedFields}
	return Config{
		NewListerWatcher: func(t Target) cache.ListerWatcher {
			return listwatch.NewListerWatcher(clientOf(t.Context), f.request(t, parse, tableRows, errOut))
		},
		ResyncPeriod:    f.Resync,
		PageSize:        pageSize,
		MinWatchTimeout: f.MinWatchTimeout,
		// auto lists: the watch cache serves a list at resourceVersion 0
		// from memory in one response, at about half the client and a
		// third of the server CPU of streaming 10,000 events
		// (bench/RESULTS.md).
		// Not with Table rows: a streaming list's end bookmark is not
		// known to survive the server's Table rendering.
		WatchList:         f.WatchList == "true" && !tableRows,
		ResumeFrom:        f.ResourceVersion,
		Selects:           SelectsBy(f.LabelSelector, f.FieldSelector),
		MaxUpdatedBacklog: f.MaxUpdatedBacklog,
		GCPercent:         f.gcPercent(os.Getenv),
	}
}

// SelectsBy is a Config.Selects of a run whose roots list and watch with
// labelSelector and fieldSelector (as request makes them): whether a
// target selects an object, from its namespace, name and labels; a field
// selector on any other field is not known from the object's metadata,
// nor a selector that does not parse (Validate refuses it).
func SelectsBy(labelSelector, fieldSelector string) func(Target, *rawobj.Object) (bool, bool) {
	labelSel, lerr := labels.Parse(labelSelector)
	fieldSel, ferr := fields.ParseSelector(fieldSelector)
	metadataFields := ferr == nil
	if metadataFields {
		for _, r := range fieldSel.Requirements() {
			metadataFields = metadataFields && (r.Field == "metadata.name" || r.Field == "metadata.namespace")
		}
	}
	return func(t Target, obj *rawobj.Object) (bool, bool) {
		switch {
		case t.Namespace != "" && obj.Namespace != t.Namespace, t.Name != "" && obj.Name != t.Name:
			return false, true
		case t.Role.Unfiltered():
			return t.FieldSelector == "", t.FieldSelector == ""
		case lerr != nil || !metadataFields:
			return false, false
		case !fieldSel.Matches(fields.Set{"metadata.name": obj.Name, "metadata.namespace": obj.Namespace}):
			return false, true
		case labelSel.Empty():
			return true, true
		}
		set, err := ObjectLabels(obj)
		if err != nil {
			return false, false
		}
		return labelSel.Matches(set), true
	}
}

// ObjectLabels are obj's metadata.labels, read from its metadata alone.
func ObjectLabels(obj *rawobj.Object) (labels.Set, error) {
	meta, err := obj.Member("metadata")
	if err != nil || meta == nil {
		return nil, err
	}
	var m struct {
		Labels map[string]string `json:"labels"`
	}
	if err := json.Unmarshal(meta, &m); err != nil {
		return nil, err
	}
	return m.Labels, nil
}

// request is what t's ListerWatcher lists and watches: the run's
// selectors unless t's role watches every object, metadata only for a
// scout or with --metadata-only, Table rows when asked.
func (f *ListWatchFlags) request(t Target, parse rawobj.ParseOptions, tableRows bool, errOut io.Writer) listwatch.Request {
	target := listwatch.Request{
		Resource:      t.Resource,
		Namespace:     t.Namespace,
		LabelSelector: f.LabelSelector,
		FieldSelector: withName(f.FieldSelector, t.Name),
		Parse:         parse,
		MetadataOnly:  f.MetadataOnly || t.Role.MetadataOnly(),
	}
	if t.Role.Unfiltered() {
		target.LabelSelector, target.FieldSelector = "", withName(t.FieldSelector, t.Name)
	}
	if target.MetadataOnly && !t.Role.MetadataOnly() {
		target.FullObjects = func() {
			fmt.Fprintf(errOut, "info: %s cannot be listed as metadata only: watching whole objects\n", t.Resource.GroupResource())
		}
	}
	if tableRows && !target.MetadataOnly {
		// Each kind's own columns: the server's Table.
		target.Table = true
		target.NoTable = func() {
			fmt.Fprintf(errOut, "info: the server does not render %s as a table: generic columns for it\n", t.Resource.GroupResource())
		}
	}
	return target
}

// withName adds metadata.name=name to a field selector.
func withName(fieldSelector, name string) string {
	switch {
	case name == "":
		return fieldSelector
	case fieldSelector == "":
		return "metadata.name=" + name
	}
	return fieldSelector + ",metadata.name=" + name
}

// ChunkSizeGiven reports whether --chunk-size was given.
func (f *ListWatchFlags) ChunkSizeGiven() bool {
	return f.flags != nil && f.flags.Changed("chunk-size")
}

// ServerOnly names the given flags that only mean something to a server's
// lists and watches (which a replay refuses).
func (f *ListWatchFlags) ServerOnly() []string {
	var out []string
	for _, given := range []struct {
		flag string
		is   bool
	}{
		{"--resource-version", f.Resuming()}, {"--watch-list", f.WatchList != "auto"}, {"--chunk-size", f.ChunkSizeGiven()},
		{"--resync", f.Resync > 0}, {"--field-selector", f.FieldSelector != ""},
	} {
		if given.is {
			out = append(out, given.flag)
		}
	}
	return out
}

// metadataOnlyGCPercent is the garbage collector's target under
// --metadata-only (Config.GCPercent).
const metadataOnlyGCPercent = 50

// gcPercent is Config.GCPercent: metadataOnlyGCPercent under
// --metadata-only unless GOGC (read with getenv) says otherwise, 0
// (Go's default, GOGC=100) otherwise. The heap peaks at the end of the
// initial list, above what the Store holds by the garbage made since the
// last collection, up to GOGC percent of the heap live then. Every listed
// object leaves about as much garbage (its record, its queue entry, the
// response's buffers: about 700 bytes), but a metadata-only Pod keeps
// about 1,100 bytes where a whole one keeps 4,800: the headroom weighs
// four times as much with metadata only, and the collections a lower
// target adds are short, the heap being small. Measured with 20,000
// Pods: peak RssAnon 35.7 -> 33.7 MiB, CPU 0.72 -> 0.78 s.
func (f *ListWatchFlags) gcPercent(getenv func(string) string) int {
	if !f.MetadataOnly || getenv("GOGC") != "" {
		return 0
	}
	return metadataOnlyGCPercent
}
