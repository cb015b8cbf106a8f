package reconcile

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-deltas/kubectl-deltas/internal/flaghelp"
	"github.com/kubectl-deltas/kubectl-deltas/internal/printer"
	"github.com/kubectl-deltas/kubectl-deltas/internal/rawobj"
	"github.com/kubectl-deltas/kubectl-deltas/internal/stage"
)

// The keys --queue-key names.
const (
	// KeyObject queues the object of each handler call (controller-
	// runtime's EnqueueRequestForObject).
	KeyObject = "object"
	// KeyOwner queues the object's controlling owner, and nothing for an
	// object without one (EnqueueRequestForOwner with OnlyControllerOwner).
	KeyOwner = "owner"
)

// Flags are the flags of --queue: the workqueue a controller would feed
// with the handler calls, and its workers.
type Flags struct {
	Queue         bool
	Workers       int
	ReconcileTime time.Duration
	QueueKey      string

	// flags is the set AddFlags declared on, to tell a flag given from
	// its default.
	flags *pflag.FlagSet
}

// NewFlags returns the flags with their defaults.
func NewFlags() *Flags {
	return &Flags{Workers: 1, QueueKey: KeyObject}
}

// AddFlags declares the flags on fs.
func (f *Flags) AddFlags(fs *pflag.FlagSet) {
	f.flags = fs
	fs.BoolVar(&f.Queue, "queue", f.Queue, "With --handler: feed client-go's workqueue; print each reconcile")
	fs.StringVar(&f.QueueKey, "queue-key", f.QueueKey, "With --queue: queue the object or its owner")
	fs.IntVar(&f.Workers, "workers", f.Workers, "With --queue: `N` workers reconcile at once")
	fs.DurationVar(&f.ReconcileTime, "reconcile-time", f.ReconcileTime, "With --queue: how long each reconcile takes")
	flaghelp.File(fs, flaghelp.Output, "queue", "queue-key", "workers", "reconcile-time")
	flaghelp.Pair(fs, "queue-key", "workers", "With --queue: queue the object or owner / N workers (1)")
}

// Validate checks the values, and that they go with --queue, and --queue
// with --handler (handler).
func (f *Flags) Validate(handler bool) error {
	switch {
	case f.Workers < 1:
		return fmt.Errorf("invalid --workers %d: must be 1 or more", f.Workers)
	case f.ReconcileTime < 0:
		return fmt.Errorf("invalid --reconcile-time %s: must be 0 or more", f.ReconcileTime)
	case f.QueueKey != KeyObject && f.QueueKey != KeyOwner:
		return fmt.Errorf("invalid --queue-key value %q: must be object or owner", f.QueueKey)
	case f.Queue && !handler:
		return errors.New("--queue feeds the handler calls into a workqueue: add --handler")
	}
	if !f.Queue && f.flags != nil {
		for _, name := range []string{"workers", "reconcile-time", "queue-key"} {
			if f.flags.Changed(name) {
				return fmt.Errorf("--%s applies to --queue's workqueue: add --queue --handler", name)
			}
		}
	}
	return nil
}

// Options are the Queue's options the flags give.
func (f *Flags) Options() Options {
	return Options{Workers: f.Workers, ReconcileTime: f.ReconcileTime}
}

// KeyFor is the key a handler call of the object queues, as --queue-key
// says: the object, or its controlling owner (refs are its
// ownerReferences); ok is false when it queues nothing.
func (f *Flags) KeyFor(context, apiVersion, kind, namespace, name string, refs []metav1.OwnerReference) (k Key, ok bool) {
	if f.QueueKey == KeyOwner {
		for i := range refs {
			if c := refs[i].Controller; c != nil && *c {
				return Key{APIVersion: refs[i].APIVersion, Kind: refs[i].Kind, Context: context, Namespace: namespace, Name: refs[i].Name}, true
			}
		}
		return Key{}, false
	}
	return Key{APIVersion: apiVersion, Kind: kind, Context: context, Namespace: namespace, Name: name}, true
}

// CallKey is the key a handler call queues, as one controller built on
// the run's informers would: the roots' calls are its For (KeyFor: the
// object, or its controlling owner with --queue-key=owner); the calls of
// --tree's members are its Owns (EnqueueRequestForOwner with
// OnlyControllerOwner): the member's owner in the tree when that is of
// its root's type (group and kind; the version may differ), else nothing
// — a Deployment's controller is not told of a Pod, whose owner is a
// ReplicaSet; the Events of --events queue nothing (the controller does
// not watch them). rec is the call's record, obj its object (nil for a
// deletion without a final state); false when it queues nothing.
func (f *Flags) CallKey(rec *printer.Record, obj *rawobj.Object, from stage.CallFrom) (Key, bool) {
	switch from {
	case stage.FromRoot:
		var refs []metav1.OwnerReference
		if obj != nil && f.QueueKey == KeyOwner {
			refs, _ = obj.OwnerReferences()
		}
		return f.KeyFor(rec.Context, rec.APIVersion, rec.Kind, rec.Namespace, rec.Name, refs)
	case stage.FromMember:
		// Owners is the path from the root down to the member's owner.
		if n := len(rec.Owners); n > 0 && groupKind(rec.Owners[n-1]) == groupKind(rec.Owners[0]) {
			o := rec.Owners[n-1]
			return Key{APIVersion: o.APIVersion, Kind: o.Kind, Context: rec.Context, Namespace: rec.Namespace, Name: o.Name}, true
		}
	}
	return Key{}, false
}

// groupKind is the type of o.
func groupKind(o printer.Owner) schema.GroupKind {
	return schema.FromAPIVersionAndKind(o.APIVersion, o.Kind).GroupKind()
}
