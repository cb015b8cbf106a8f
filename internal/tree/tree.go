// Package tree follows what a set of root objects owns, transitively, by
// the UIDs of metadata.ownerReferences (--tree): a Deployment's ReplicaSets
// and their Pods, a CronJob's Jobs and theirs, a custom resource's objects,
// for any kinds, without a list of known kinds and without polling.
//
// A Tree is an informer.Sink in front of the Sink that prints. It sees the
// batches of three kinds of informers of one Engine, told apart by their
// Targets:
//
//   - roots (not Unfiltered): the targets the user named. Their batches
//     pass through unchanged; their objects are the roots of the tree.
//   - scouts (Unfiltered and MetadataOnly): one per type in scope, metadata
//     only, never printed. They find owned objects of the types that have
//     no owned informer yet; the first one found promotes its type.
//   - owned (Unfiltered, not MetadataOnly): whole objects of a type in
//     which an owned object was found, started by the promotion (which
//     removes the scout). Their deltas of objects in the tree are printed,
//     with the owner chain; the others are held back.
//
// Owned objects are found through the Stores' OwnerIndex (Indexers), an
// index by owner UID, as client-go's users find them.
package tree

import (
	"github.com/kubectl-deltas/kubectl-deltas/internal/cache"
	"github.com/kubectl-deltas/kubectl-deltas/internal/informer"
	"github.com/kubectl-deltas/kubectl-deltas/internal/rawobj"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// OwnerIndex is the name of the Store index of objects by the UIDs of their
// owners.
const OwnerIndex = "owner-uid"

// Indexers are the Store indices a Tree needs: give them to the Engine's
// Config.
func Indexers() cache.Indexers {
	return cache.Indexers{OwnerIndex: ownerUIDs}
}

// ownerUIDs is the IndexFunc of OwnerIndex. An object whose
// ownerReferences cannot be decoded (no API server sends such) is indexed
// as owned by nothing rather than stopping its informer.
func ownerUIDs(obj any) ([]string, error) {
	o, ok := obj.(*rawobj.Object)
	if !ok {
		return nil, nil
	}
	refs, err := o.OwnerReferences()
	if err != nil || len(refs) == 0 {
		return nil, nil //nolint:nilerr // see above
	}
	uids := make([]string, len(refs))
	for i := range refs {
		uids[i] = string(refs[i].UID)
	}
	return uids, nil
}

// Engine is what a Tree needs of the informer.Engine it runs in.
type Engine interface {
	Add(informer.Target) (*informer.Informer, error)
	AddInitial(informer.Target) (*informer.Informer, error)
	Remove(id string) bool
	Informers() []*informer.Informer
}

// ScoutTarget is the scout of t's type: metadata only, unfiltered, in
// namespace (every namespace when ""), optional.
func ScoutTarget(t informer.Target, namespace string) informer.Target {
	return informer.Target{
		Context: t.Context, Resource: t.Resource, Kind: t.Kind, Namespace: namespace,
		Optional: true, Unfiltered: true, MetadataOnly: true,
	}
}

// IsRoot reports whether t is a root target of a tree (or of a run
// without one): not a scout, not an owned type, not the Events that
// explain them.
func IsRoot(t informer.Target) bool { return !t.Unfiltered && !t.Events }

// member is an object in the tree, by UID.
type member struct {
	// owners is the chain of ownerReferences from the root down to the
	// object's direct owner; nil for a root.
	owners []metav1.OwnerReference
	root   bool
	// shown: an owned object whose first delta was printed; its later
	// deltas are printed as they come, its deletion ends it.
	shown bool
	// gone: the object was deleted. It stays a member while dependents
	// (members whose direct owner it is) remain, so that their deletions —
	// the garbage collector's, which follow the owner's — are printed.
	gone bool
	// dependents counts the members whose direct owner this is.
	dependents int
}

// owner is the UID of m's direct owner, "" for a root.
func (m *member) owner() types.UID {
	if len(m.owners) == 0 {
		return ""
	}
	return m.owners[len(m.owners)-1].UID
}

// held is an object of an owned type that was handed out while not in the
// tree: if it joins (its owner turns up later), it is printed from here,
// as last handed out, not from the Store, which may be ahead.
type held struct {
	inf *informer.Informer
	obj *rawobj.Object
	key string
}

// Tree keeps the set of objects the roots own and passes on the deltas of
// those objects. Like every Sink it is used from the Engine's goroutine
// only, so nothing in it is locked.
type Tree struct {
	engine Engine
	next   informer.Sink

	// members holds the objects in the tree, roots included, by UID.
	members map[types.UID]*member
	// held holds the objects of owned types handed out and not in the tree.
	held map[types.UID]held
	// owned holds the promoted types, by resource. A type promoted before
	// the tree's initial state was out is added with AddInitial, so that
	// the engine shows its list as part of that state.
	owned map[schema.GroupVersionResource]bool
	// started: every root's and scout's initial list has been handed out.
	started bool
}

// New returns a Tree passing the deltas of the roots and of what they own
// to next. The roots, and a scout (ScoutTarget) for every type to search,
// are added to engine by the caller.
func New(engine Engine, next informer.Sink) *Tree {
	return &Tree{
		engine:  engine,
		next:    next,
		members: map[types.UID]*member{},
		held:    map[types.UID]held{},
		owned:   map[schema.GroupVersionResource]bool{},
	}
}

// Handle implements informer.Sink.
func (t *Tree) Handle(b informer.Batch) (bool, error) {
	target := b.Informer.Target()
	if target.Events {
		// Not the tree's: the Sink that joins Events to objects, after
		// the tree, decides.
		return t.next.Handle(b)
	}
	ofInitialLists := b.Initial && (IsRoot(target) || target.MetadataOnly)
	if !t.started && !ofInitialLists {
		// The lists may have ended with no batch (an empty one): a batch
		// that is not part of them says whether they have.
		t.started = t.initialListsOut()
	}
	var done bool
	var err error
	switch {
	case IsRoot(target):
		done, err = t.handleRoot(b)
	case target.MetadataOnly:
		done, err = t.handleScout(b)
	default:
		done, err = t.handleOwned(b)
	}
	if !t.started && err == nil {
		t.started = t.initialListsOut()
	}
	return done, err
}

// Flush implements informer.Sink.
func (t *Tree) Flush() error { return t.next.Flush() }

// initialListsOut reports whether every root's and scout's initial list
// has been handed out. Types promoted until then count as initial.
func (t *Tree) initialListsOut() bool {
	for _, inf := range t.engine.Informers() {
		target := inf.Target()
		if (IsRoot(target) || target.MetadataOnly) && !inf.InitialDone() {
			return false
		}
	}
	return true
}

// handleRoot prints a root's batch, then adds what the root owns.
func (t *Tree) handleRoot(b informer.Batch) (bool, error) {
	if done, err := t.next.Handle(b); done || err != nil {
		return done, err
	}
	for i := range b.Items {
		obj := itemObject(&b.Items[i])
		if obj == nil {
			continue
		}
		uid := types.UID(obj.UID)
		if b.Items[i].Type == cache.Deleted {
			t.forget(uid)
			continue
		}
		if m := t.members[uid]; m != nil && m.root {
			continue
		}
		t.makeRoot(uid)
		if done, err := t.join(uid); done || err != nil {
			return done, err
		}
	}
	return false, nil
}

// handleScout takes a scout's batch: never printed, it places its objects
// in the tree or out of it.
func (t *Tree) handleScout(b informer.Batch) (bool, error) {
	target := b.Informer.Target()
	for i := range b.Items {
		obj := itemObject(&b.Items[i])
		if obj == nil {
			continue
		}
		uid := types.UID(obj.UID)
		if b.Items[i].Type == cache.Deleted {
			t.forget(uid)
			continue
		}
		if joined, _ := t.place(target, obj); joined {
			if !t.members[uid].root {
				t.promote(target)
			}
			if done, err := t.join(uid); done || err != nil {
				return done, err
			}
		}
	}
	return false, nil
}

// handleOwned prints the deltas of an owned type's batch whose objects are
// in the tree: the first one of an object as Added (Replaced in the
// initial state), the last one when it leaves the tree or is deleted.
func (t *Tree) handleOwned(b informer.Batch) (bool, error) {
	for i := range b.Items {
		it := b.Items[i]
		obj := itemObject(&it)
		if obj == nil {
			continue
		}
		uid := types.UID(obj.UID)
		m := t.members[uid]
		if m != nil && m.root {
			// Printed by its root's informer.
			continue
		}
		wasShown := m != nil && m.shown
		var lastOwners []metav1.OwnerReference
		if m != nil {
			lastOwners = m.owners
		}
		if it.Type == cache.Deleted {
			delete(t.held, uid)
			t.forget(uid)
			if !wasShown {
				continue
			}
			it.Owners = lastOwners
			if done, err := t.print(b, it); done || err != nil {
				return done, err
			}
			continue
		}
		joined, in := t.place(b.Informer.Target(), obj)
		if in && t.members[uid].root {
			// Named too: printed by its root's informer.
			if joined {
				if done, err := t.join(uid); done || err != nil {
					return done, err
				}
			}
			continue
		}
		if !in {
			t.held[uid] = held{inf: b.Informer, obj: obj, key: it.Key}
			if !wasShown {
				continue
			}
			// Its last delta: the change that took it out of the tree.
			it.Owners = lastOwners
			if done, err := t.print(b, it); done || err != nil {
				return done, err
			}
			continue
		}
		delete(t.held, uid)
		m = t.members[uid]
		it.Owners = m.owners
		if !wasShown {
			m.shown = true
			it.Entering(b.InitialState())
		}
		if done, err := t.print(b, it); done || err != nil {
			return done, err
		}
		if joined {
			if done, err := t.join(uid); done || err != nil {
				return done, err
			}
		}
	}
	return false, nil
}

// print passes one delta of b's informer to the next Sink.
func (t *Tree) print(b informer.Batch, it informer.Item) (bool, error) {
	return t.next.Handle(informer.Batch{Informer: b.Informer, Items: []informer.Item{it}, Initial: b.Initial, Joined: b.Joined})
}

// place puts obj in the tree when one of its owners is in it, or takes it
// out when none is (it stopped being owned). joined reports a new member,
// in whether it is one now. Roots stay roots.
func (t *Tree) place(target informer.Target, obj *rawobj.Object) (joined, in bool) {
	uid := types.UID(obj.UID)
	m := t.members[uid]
	if m != nil && m.root {
		return false, true
	}
	if t.named(target.Context, target.Resource, obj) {
		return t.makeRoot(uid), true
	}
	owners, ok := t.ownerChain(obj)
	switch {
	case ok && m == nil:
		m = &member{owners: owners}
		t.members[uid] = m
		t.members[m.owner()].dependents++
		return true, true
	case ok:
		if before := m.owner(); before != owners[len(owners)-1].UID {
			t.members[owners[len(owners)-1].UID].dependents++
			t.release(before)
		}
		m.owners = owners
		return false, true
	case m != nil:
		t.remove(uid, m)
	}
	return false, false
}

// named reports whether obj, of resource in context's cluster, is a root: in the Store of a
// root's informer. That Store may be ahead of what was handed out, which
// is what is wanted here: an object both named and owned comes out as a
// root, whichever informer hands it out first.
func (t *Tree) named(context string, resource schema.GroupVersionResource, obj *rawobj.Object) bool {
	key := obj.Name
	if obj.Namespace != "" {
		key = obj.Namespace + "/" + obj.Name
	}
	for _, inf := range t.engine.Informers() {
		target := inf.Target()
		if !IsRoot(target) || target.Resource != resource || target.Context != context {
			continue
		}
		if o, ok, _ := inf.Store().GetByKey(key); ok {
			if root, isObject := o.(*rawobj.Object); isObject && root.UID == obj.UID {
				return true
			}
		}
	}
	return false
}

// makeRoot makes uid a root and reports whether it is new to the tree. An
// owned object that turns out to be named too is a root from now on (its
// dependents' owner chains say so from their next delta on).
func (t *Tree) makeRoot(uid types.UID) bool {
	m := t.members[uid]
	if m == nil {
		t.members[uid] = &member{root: true, shown: true}
		return true
	}
	t.release(m.owner())
	m.owners, m.root, m.shown, m.gone = nil, true, true, false
	return false
}

// ownerChain is obj's owner chain when one of its owners is in the tree:
// the controller first, then the others in order. An owner whose own chain
// runs through obj (a cycle) does not count.
func (t *Tree) ownerChain(obj *rawobj.Object) ([]metav1.OwnerReference, bool) {
	refs, err := obj.OwnerReferences()
	if err != nil || len(refs) == 0 {
		return nil, false
	}
	for _, controller := range []bool{true, false} {
		for _, ref := range refs {
			if (ref.Controller != nil && *ref.Controller) != controller {
				continue
			}
			owner := t.members[ref.UID]
			if owner == nil || ref.UID == types.UID(obj.UID) || inChain(owner.owners, types.UID(obj.UID)) {
				continue
			}
			chain := make([]metav1.OwnerReference, len(owner.owners), len(owner.owners)+1)
			copy(chain, owner.owners)
			return append(chain, metav1.OwnerReference{APIVersion: ref.APIVersion, Kind: ref.Kind, Name: ref.Name, UID: ref.UID}), true
		}
	}
	return nil, false
}

// inChain reports whether uid is one of chain's owners.
func inChain(chain []metav1.OwnerReference, uid types.UID) bool {
	for i := range chain {
		if chain[i].UID == uid {
			return true
		}
	}
	return false
}

// join adds, transitively, the objects that name uid, a new member, as
// their owner: found through the Stores' OwnerIndex. A scout's find
// promotes its type; an object of an owned type handed out earlier is
// printed now.
func (t *Tree) join(uid types.UID) (bool, error) {
	queue := []types.UID{uid}
	for len(queue) > 0 {
		owner := queue[0]
		queue = queue[1:]
		for _, inf := range t.engine.Informers() {
			target := inf.Target()
			if IsRoot(target) {
				// Its Store holds what the user named; the scout of its
				// type sees the rest.
				continue
			}
			owned, err := inf.Store().ByIndex(OwnerIndex, string(owner))
			if err != nil {
				continue
			}
			for _, o := range owned {
				obj, ok := o.(*rawobj.Object)
				if !ok {
					continue
				}
				joined, _ := t.place(target, obj)
				if !joined {
					continue
				}
				dependent := types.UID(obj.UID)
				queue = append(queue, dependent)
				if t.members[dependent].root {
					continue
				}
				if target.MetadataOnly {
					t.promote(target)
					continue
				}
				if done, err := t.unhold(dependent); done || err != nil {
					return done, err
				}
			}
		}
	}
	return false, nil
}

// unhold prints a held object that joined the tree, as it was last handed
// out. An object not handed out yet is printed when it is.
func (t *Tree) unhold(uid types.UID) (bool, error) {
	h, ok := t.held[uid]
	if !ok {
		return false, nil
	}
	delete(t.held, uid)
	m := t.members[uid]
	m.shown = true
	it := informer.Item{Delta: cache.Delta{Object: h.obj}, Object: h.obj, Key: h.key, Owners: m.owners}
	it.Entering(!t.started)
	return t.print(informer.Batch{Informer: h.inf, Initial: !t.started}, it)
}

// promote starts the owned informer of a scout's type and removes the
// scout: from now on whole objects of the type are watched.
func (t *Tree) promote(scout informer.Target) {
	if _, ok := t.owned[scout.Resource]; ok {
		return
	}
	owned := scout
	owned.MetadataOnly = false
	add := t.engine.Add
	if !t.started {
		// Promoted while the tree's initial state is coming in: the
		// type's list is part of it, not news.
		add = t.engine.AddInitial
	}
	if _, err := add(owned); err != nil {
		// The stream has ended.
		return
	}
	t.owned[scout.Resource] = true
	t.engine.Remove(scout.ID())
}

// forget marks a deleted object gone; it leaves the tree once no member
// names it as direct owner.
func (t *Tree) forget(uid types.UID) {
	m := t.members[uid]
	if m == nil {
		return
	}
	m.gone, m.shown = true, false
	if m.dependents == 0 {
		t.remove(uid, m)
	}
}

// remove takes m out of the tree, and its direct owner too when that is
// gone and m was its last dependent.
func (t *Tree) remove(uid types.UID, m *member) {
	delete(t.members, uid)
	t.release(m.owner())
}

// release drops one dependent of owner; a gone owner without dependents
// leaves the tree.
func (t *Tree) release(owner types.UID) {
	o := t.members[owner]
	if o == nil {
		return
	}
	o.dependents--
	if o.gone && o.dependents <= 0 {
		t.remove(owner, o)
	}
}

// itemObject is the object a delta is about: its new state, or for a
// tombstone without one, the Store's last.
func itemObject(it *informer.Item) *rawobj.Object {
	if it.Object != nil {
		return it.Object
	}
	return it.Old
}
