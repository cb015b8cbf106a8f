// Package tree follows what a set of root objects owns, transitively, by
// the UIDs of metadata.ownerReferences (--tree): a Deployment's ReplicaSets
// and their Pods, a CronJob's Jobs and theirs, a custom resource's objects,
// for any kinds, without a list of known kinds and without polling.
//
// A Tree is an informer.Sink in front of the Sink that prints. It sees the
// batches of three kinds of informers of one Engine, told apart by their
// Targets' roles: roots (the targets the user named: passed through, the
// roots of the tree), scouts (one per type in scope, metadata only, never
// printed: the first owned object one finds promotes its type) and owned
// informers (whole objects of a promoted type: their deltas of objects in
// the tree are printed with the owner chain, the others held back). Owned
// objects are found through the Stores' OwnerIndex; every decision is per
// cluster.
//
// Which members are shown as initial (Replaced) and which as Added, and
// the one case approximated: docs/architecture.md, "The initial state".
package tree

import (
	"slices"
	"strings"

	"github.com/kubectl-deltas/kubectl-deltas/internal/cache"
	"github.com/kubectl-deltas/kubectl-deltas/internal/informer"
	"github.com/kubectl-deltas/kubectl-deltas/internal/rawobj"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	Remove(id string) bool
	Informers() []*informer.Informer
}

// ScoutTarget is the scout of t's type: metadata only, unfiltered, in
// namespace (every namespace when ""), optional.
func ScoutTarget(t informer.Target, namespace string) informer.Target {
	return informer.Target{
		Context: t.Context, Resource: t.Resource, Kind: t.Kind, Namespace: namespace,
		Role: informer.RoleScout, Optional: true,
	}
}

// KeepListed is the engine's informer.Config.KeepListed for a tree: roots
// and scouts remember what their initial lists held (see "The initial
// state").
func KeepListed(t informer.Target) bool {
	return t.Role.IsRoot() || t.Role == informer.RoleScout
}

// KeepListedFromStart is KeepListed for a tree whose owned types are
// watched from the start, without scouts (a replay, where every recorded
// type is known): roots and owned informers remember their initial lists.
func KeepListedFromStart(t informer.Target) bool {
	return t.Role.IsRoot() || t.Role == informer.RoleOwned
}

// key is how the tree knows an object: its cluster's context and its UID.
// Two contexts may reach the same server: the same object is then a
// member of each cluster's tree.
type key struct {
	context string
	uid     types.UID
}

// keyOf is the key of obj, of target's cluster.
func keyOf(target informer.Target, obj *rawobj.Object) key {
	return key{context: target.Context, uid: types.UID(obj.UID)}
}

// member is an object in the tree.
type member struct {
	// owners is the chain of ownerReferences from the root down to the
	// object's direct owner; nil for a root.
	owners []metav1.OwnerReference
	root   bool
	// initial: the object was in the tree when the stream started (see
	// "The initial state").
	initial bool
	// shown: an owned object whose first delta was printed; its later
	// deltas are printed as they come, its deletion ends it.
	shown bool
	// gone: the object was deleted. It stays a member while dependents
	// (members whose direct owner it is) remain, so that their deletions —
	// the garbage collector's, which follow the owner's — are printed.
	gone bool
	// dependents counts the members whose direct owner this is.
	dependents int
	// found and foundBy, for a member a scout placed and nothing showed
	// yet, are its metadata as the scout had it and the scout: if its
	// owned informer's initial list does not have it, it was deleted in
	// between (sweepUnlisted).
	found   *rawobj.Object
	foundBy informer.Target
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
	// listed is the object as its owned informer's initial list handed it
	// out, when its scout listed it too (it existed when the stream
	// started); nil otherwise.
	listed *rawobj.Object
}

// Tree keeps the set of objects the roots own and passes on the deltas of
// those objects. Like every Sink it is used from the Engine's goroutine
// only, so nothing in it is locked.
type Tree struct {
	engine Engine
	next   informer.Sink

	// members holds the objects in the tree, roots included.
	members map[key]*member
	// held holds the objects of owned types handed out and not in the tree.
	held map[key]held
	// owned holds the promoted types, by their scout's Target ID: the
	// scout, removed from the engine, still says which objects of the
	// type existed when the stream started (Listed); nil once the initial
	// state is out.
	owned map[string]*informer.Informer
	// pending holds the scouts whose type is to be promoted once their
	// initial list has been popped whole, by Target ID.
	pending map[string]*informer.Informer
	// initialOut: every root's, scout's and owned informer's initial list
	// has been handed out, and no promotion is pending: no member is
	// initial from now on.
	initialOut bool
	// unlisted are, by their scout's Target ID, the members a scout placed
	// that nothing showed yet (member.found): each is shown by its owned
	// informer's initial list, or, missing from it, said deleted
	// (sweepUnlisted).
	unlisted map[string]map[key]struct{}
	// resumed are the owned members a recording this run goes on with
	// had shown (New's resumed) that the run has not shown yet: one shown again
	// comes as a relist says an object (Replaced, unchanged or not, see
	// enter); those left once the initial state is out vanished while
	// nothing recorded (sayVanished).
	resumed map[key]resumedMember
	// resumedTypes are the scout targets of the types of resumed, by ID.
	resumedTypes map[string]informer.Target
}

// resumedMember is an owned member a recording had shown, as it last
// showed it, and the owned collection it came from.
type resumedMember struct {
	target informer.Target
	obj    *rawobj.Object
}

// Member is an object a tree held, of an owned collection (a target of
// role owned): what a recording made with --tree ended with.
type Member struct {
	Target informer.Target
	Object *rawobj.Object
}

// New returns a Tree passing the deltas of the roots and of what they own
// to next. The roots, and a scout (ScoutTarget) for every type to search,
// are added to engine by the caller, whose Config has the tree's Indexers
// and KeepListed. resumed are, for a run going on with a recording (--record
// onto it), the members it ended with (see resume).
func New(engine Engine, next informer.Sink, resumed ...Member) *Tree {
	t := &Tree{
		engine:       engine,
		next:         next,
		members:      map[key]*member{},
		held:         map[key]held{},
		owned:        map[string]*informer.Informer{},
		pending:      map[string]*informer.Informer{},
		unlisted:     map[string]map[key]struct{}{},
		resumed:      map[key]resumedMember{},
		resumedTypes: map[string]informer.Target{},
	}
	for _, m := range resumed {
		t.resume(m.Target, m.Object)
	}
	return t
}

// resume notes that obj, of the owned collection target, was in the tree
// as a recording this run goes on with ended: found again, it is not new
// to whoever reads the recording, and not found once its type is listed,
// it vanished while nothing recorded.
func (t *Tree) resume(target informer.Target, obj *rawobj.Object) {
	t.resumed[keyOf(target, obj)] = resumedMember{target: target, obj: obj}
	scout := ScoutTarget(target, target.Namespace)
	t.resumedTypes[scout.ID()] = scout
}

// enter makes it, the first delta shown of the member k, what it is to
// the stream: the member entering the tree (initial: in its initial
// state) — or, for a member a resumed recording showed, what a relist
// says of an object it knew: Replaced, from the version shown then,
// and unchanged when it is that version. Found in the initial state, a
// change of it was made while nothing recorded: it is caught up
// (informer.Item.CaughtUp).
func (t *Tree) enter(k key, it *informer.Item, initial bool) {
	r, ok := t.resumed[k]
	if !ok {
		it.Entering(initial)
		return
	}
	delete(t.resumed, k)
	it.Type, it.Initial, it.Old = cache.Replaced, false, r.obj
	it.Unchanged = it.Object != nil && it.Object.ResourceVersion == r.obj.ResourceVersion
	it.CaughtUp = !it.Unchanged && !t.initialOut
}

// sayVanished says, once the initial state is out, that the members a
// resumed recording showed and this run has not found again are gone:
// each is Deleted with its final state unknown, caught up, as a relist
// says what vanished while nothing watched — handed out by its type's
// owned informer, or its scout while there is none.
func (t *Tree) sayVanished() (bool, error) {
	if len(t.resumed) == 0 {
		return false, nil
	}
	clear(t.resumedTypes)
	byInformer := map[*informer.Informer][]informer.Item{}
	var order []*informer.Informer
	for k, r := range t.resumed {
		delete(t.resumed, k)
		inf := t.typeInformerOf(ScoutTarget(r.target, r.target.Namespace))
		if inf == nil {
			continue // its type is watched no more
		}
		storeKey := cache.ObjectKey(r.obj)
		owners, _ := t.ownerChain(k.context, r.obj)
		if byInformer[inf] == nil {
			order = append(order, inf)
		}
		byInformer[inf] = append(byInformer[inf], informer.Item{
			Delta: cache.Delta{Type: cache.Deleted, Object: cache.DeletedFinalStateUnknown{Key: storeKey, Obj: r.obj}},
			Type:  cache.Deleted, Object: r.obj, Old: r.obj, Key: storeKey, Tombstone: true, Owners: owners, CaughtUp: true,
		})
	}
	for _, inf := range order {
		items := byInformer[inf]
		slices.SortFunc(items, func(a, b informer.Item) int { return strings.Compare(a.Key, b.Key) })
		if done, err := t.next.Handle(informer.Batch{Informer: inf, Items: items}); done || err != nil {
			return done, err
		}
	}
	return false, nil
}

// typeInformerOf is the informer that lists scout's type: its owned
// informer, or the scout while none was promoted; nil when neither runs.
func (t *Tree) typeInformerOf(scout informer.Target) *informer.Informer {
	if inf := t.ownedInformerOf(scout); inf != nil {
		return inf
	}
	return t.informerOf(scout)
}

// informerOf is the engine's informer of target, nil when none runs.
func (t *Tree) informerOf(target informer.Target) *informer.Informer {
	id := target.ID()
	for _, inf := range t.engine.Informers() {
		if inf.Target().ID() == id {
			return inf
		}
	}
	return nil
}

// Handle implements informer.Sink.
func (t *Tree) Handle(b informer.Batch) (bool, error) {
	var done bool
	var err error
	switch b.Informer.Target().Role {
	case informer.RoleEvents:
		// Not the tree's: the Sink that joins Events to objects, after
		// the tree, decides.
		return t.next.Handle(b)
	case informer.RoleRoot:
		done, err = t.handleRoot(b)
	case informer.RoleScout:
		done, err = t.handleScout(b)
	case informer.RoleOwned:
		done, err = t.handleOwned(b)
	}
	if done || err != nil {
		return done, err
	}
	// Only after the batch: while the Sink handles an informer's last
	// initial batch, the engine counts that list as out already.
	t.promotePending()
	if len(t.unlisted) > 0 {
		if done, err := t.sweepUnlisted(); done || err != nil {
			return done, err
		}
	}
	return t.endInitialState()
}

// Synced implements informer.SyncedSink: the initial state may be out
// with no batch to say so (a scout's empty list the last to come).
func (t *Tree) Synced() (bool, error) { return t.endInitialState() }

// endInitialState ends the initial state once it is out (the initial
// lists' UIDs are forgotten), and says gone what a resumed recording
// showed and was not found again once every type it showed members of
// has been listed whole.
func (t *Tree) endInitialState() (bool, error) {
	if !t.initialOut && t.initialStateOut() {
		t.initialOut = true
		t.forgetListed()
	}
	if len(t.resumed) > 0 && t.resumedTypesListed() {
		return t.sayVanished()
	}
	return false, nil
}

// resumedTypesListed reports whether the roots and every type a resumed
// recording showed members of have been listed whole — a type by its
// owned informer, or by its scout while none was promoted — with no
// promotion pending: a member still there has been found again by then.
// The roots first: a scout's list handed out before its members' root
// placed none of them, and promoted nothing yet. (Not every scout's
// list: one of a type the tree has no member of says nothing of them,
// and may be slow.)
func (t *Tree) resumedTypesListed() bool {
	if len(t.pending) > 0 {
		return false
	}
	for _, inf := range t.engine.Informers() {
		if inf.Target().Role.IsRoot() && !inf.InitialDone() {
			return false
		}
	}
	for _, scout := range t.resumedTypes {
		if inf := t.typeInformerOf(scout); inf != nil && !inf.InitialDone() {
			return false
		}
	}
	return true
}

// Flush implements informer.Sink.
func (t *Tree) Flush() error { return t.next.Flush() }

// initialStateOut reports whether every root's, scout's and owned
// informer's initial list has been handed out, with no promotion pending.
func (t *Tree) initialStateOut() bool {
	if len(t.pending) > 0 {
		return false
	}
	for _, inf := range t.engine.Informers() {
		if inf.Target().Role != informer.RoleEvents && !inf.InitialDone() {
			return false
		}
	}
	return true
}

// forgetListed drops the initial lists' UIDs: nobody asks any more.
func (t *Tree) forgetListed() {
	for id, scout := range t.owned {
		if scout != nil {
			scout.ForgetListed()
		}
		t.owned[id] = nil
	}
	for _, inf := range t.engine.Informers() {
		inf.ForgetListed()
	}
}

// listed reports whether the object of uid, handed out by inf, existed when
// the stream started: its root informer or its type's scout listed it.
func (t *Tree) listed(inf *informer.Informer, uid types.UID) bool {
	if t.initialOut {
		return false
	}
	target := inf.Target()
	if KeepListed(target) {
		return inf.Listed(string(uid))
	}
	scout, promoted := t.owned[scoutID(target)]
	if !promoted {
		// An owned type watched from the start (KeepListedFromStart):
		// its own initial list says.
		return inf.Listed(string(uid))
	}
	return scout != nil && scout.Listed(string(uid))
}

// scoutID is the Target ID of the scout of an owned target.
func scoutID(owned informer.Target) string {
	owned.Role = informer.RoleScout
	return owned.ID()
}

// handleRoot prints a root's batch, then adds what the root owns.
func (t *Tree) handleRoot(b informer.Batch) (bool, error) {
	if done, err := t.next.Handle(t.withOwners(b)); done || err != nil {
		return done, err
	}
	target := b.Informer.Target()
	for i := range b.Items {
		obj := itemObject(&b.Items[i])
		if obj == nil {
			continue
		}
		k := keyOf(target, obj)
		if b.Items[i].Type == cache.Deleted {
			t.forget(k)
			continue
		}
		if m := t.members[k]; m != nil && m.root {
			continue
		}
		delete(t.held, k) // held while its list was to come: its own now
		t.makeRoot(k, b.InitialState() && t.listed(b.Informer, k.uid))
		if done, err := t.join(k); done || err != nil {
			return done, err
		}
	}
	return false, nil
}

// withOwners is b, a root's batch, with the owner chain of each object
// that another root (or a member) owns, as far as the tree knows it: an
// object both named and owned is printed once, by its root's informer,
// with its owners. b's own items are left as they are (a copy is made).
func (t *Tree) withOwners(b informer.Batch) informer.Batch {
	var items []informer.Item
	for i := range b.Items {
		obj := itemObject(&b.Items[i])
		if obj == nil || b.Items[i].Owners != nil {
			continue
		}
		chain, ok := t.ownerChain(b.Informer.Target().Context, obj)
		if !ok {
			continue
		}
		if items == nil {
			items = slices.Clone(b.Items)
		}
		items[i].Owners = chain
	}
	if items != nil {
		b.Items = items
	}
	return b
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
		k := keyOf(target, obj)
		if b.Items[i].Type == cache.Deleted {
			if m := t.members[k]; m != nil && m.found != nil && !m.shown && !m.root {
				// A member it found, deleted before the scout was gone:
				// its owned informer's initial list says what became of
				// it (sweepUnlisted) — listed, that informer's watch
				// prints the deletion; missing, it is printed entered,
				// then deleted. Forgotten here, it would never be.
				continue
			}
			t.forget(k)
			continue
		}
		fromList := b.InitialState() && t.listed(b.Informer, k.uid)
		if joined, _ := t.place(b.Informer, obj, fromList); joined {
			if !t.members[k].root {
				t.found(k, b.Informer, obj)
				t.promote(b.Informer)
			}
			if done, err := t.join(k); done || err != nil {
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
	target := b.Informer.Target()
	for i := range b.Items {
		it := b.Items[i]
		obj := itemObject(&it)
		if obj == nil {
			continue
		}
		k := keyOf(target, obj)
		m := t.members[k]
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
			delete(t.held, k)
			t.forget(k)
			if !wasShown {
				continue
			}
			it.Owners = lastOwners
			if done, err := t.print(b, it); done || err != nil {
				return done, err
			}
			continue
		}
		if !wasShown && t.rootToCome(target, obj) {
			// Its root's list hands it out, and places it.
			delete(t.held, k)
			continue
		}
		fromList := b.Initial && t.listed(b.Informer, k.uid)
		joined, in := t.place(b.Informer, obj, fromList)
		if in && t.members[k].root {
			// Named too: printed by its root's informer.
			if joined {
				if done, err := t.join(k); done || err != nil {
					return done, err
				}
			}
			continue
		}
		if !in {
			t.hold(b.Informer, obj, it.Key, fromList)
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
		delete(t.held, k)
		m = t.members[k]
		it.Owners = m.owners
		if !wasShown {
			m.shown = true
			t.enter(k, &it, m.initial && fromList)
		}
		if done, err := t.print(b, it); done || err != nil {
			return done, err
		}
		if joined {
			if done, err := t.join(k); done || err != nil {
				return done, err
			}
		}
	}
	return false, nil
}

// hold keeps obj, handed out by inf and not in the tree, in case it joins;
// fromList says it came with inf's initial list and existed when the
// stream started, and that version is kept too.
func (t *Tree) hold(inf *informer.Informer, obj *rawobj.Object, storeKey string, fromList bool) {
	k := keyOf(inf.Target(), obj)
	h := t.held[k]
	h.inf, h.obj, h.key = inf, obj, storeKey
	if fromList && h.listed == nil {
		h.listed = obj
	}
	t.held[k] = h
}

// print passes one delta of b's informer to the next Sink.
func (t *Tree) print(b informer.Batch, it informer.Item) (bool, error) {
	return t.next.Handle(informer.Batch{Informer: b.Informer, Items: []informer.Item{it}, Initial: b.Initial, Joined: b.Joined})
}

// place puts obj, handed out by inf or found in its Store, in the tree when
// one of its owners is in it, or takes it out when none is (it stopped
// being owned). fromList says it came with an initial list and existed
// when the stream started: a new member is initial if its owner is too.
// joined reports a new member, in whether it is one now. Roots stay roots.
func (t *Tree) place(inf *informer.Informer, obj *rawobj.Object, fromList bool) (joined, in bool) {
	target := inf.Target()
	k := keyOf(target, obj)
	m := t.members[k]
	if m != nil && m.root {
		return false, true
	}
	if root, initial := t.named(target, obj); root {
		return t.makeRoot(k, initial), true
	}
	if t.rootToCome(target, obj) {
		return false, false
	}
	owners, ok := t.ownerChain(k.context, obj)
	switch {
	case ok && m == nil:
		owner := t.members[key{k.context, owners[len(owners)-1].UID}]
		m = &member{owners: owners, initial: fromList && owner.initial}
		t.members[k] = m
		owner.dependents++
		return true, true
	case ok:
		if before := m.owner(); before != owners[len(owners)-1].UID {
			owner := t.members[key{k.context, owners[len(owners)-1].UID}]
			owner.dependents++
			m.initial = m.initial && owner.initial
			t.release(key{k.context, before})
		}
		m.owners = owners
		return false, true
	case m != nil:
		t.remove(k, m)
	}
	return false, false
}

// named reports whether obj, of target's type and cluster, is a root: in
// the Store of a root's informer, or, once that informer's initial list
// is out, selected by its list and watch (Informer.Selects: an object
// made a moment ago may be handed out by an owned informer before its
// root's has it; it is new, not initial); initial says that informer
// listed it. That Store may be ahead of what was handed out, which is
// what is wanted here: an object both named and owned comes out as a
// root, whichever informer hands it out first, and its root's informer
// prints every change of it, once.
func (t *Tree) named(target informer.Target, obj *rawobj.Object) (root, initial bool) {
	storeKey := obj.Name
	if obj.Namespace != "" {
		storeKey = obj.Namespace + "/" + obj.Name
	}
	for _, inf := range t.engine.Informers() {
		rt := inf.Target()
		if !rt.Role.IsRoot() || rt.Resource != target.Resource || rt.Context != target.Context {
			continue
		}
		if o, ok, _ := inf.Store().GetByKey(storeKey); ok {
			if r, isObject := o.(*rawobj.Object); isObject && r.UID == obj.UID {
				return true, t.listed(inf, types.UID(obj.UID))
			}
		}
		// Once its initial list is out: until then, whether it listed obj
		// (initial) is not known yet, and its own batch says it.
		if selects, known := inf.Selects(obj); selects && known && inf.InitialDone() {
			return true, false
		}
	}
	return false, false
}

// rootToCome reports whether obj, of target's type and cluster and not a
// member yet, is selected by a root's list that is not out yet (and not in
// its Store): that list will hand it out, initial or not as it says, and
// place it as a root; until then it is no member, and not printed as one.
func (t *Tree) rootToCome(target informer.Target, obj *rawobj.Object) bool {
	if m := t.members[keyOf(target, obj)]; m != nil {
		return false
	}
	for _, inf := range t.engine.Informers() {
		rt := inf.Target()
		if !rt.Role.IsRoot() || rt.Resource != target.Resource || rt.Context != target.Context || inf.InitialDone() {
			continue
		}
		if selects, known := inf.Selects(obj); selects && known {
			return true
		}
	}
	return false
}

// makeRoot makes k a root and reports whether it is new to the tree. An
// owned object that turns out to be named too is a root from now on (its
// dependents' owner chains say so from their next delta on).
func (t *Tree) makeRoot(k key, initial bool) bool {
	m := t.members[k]
	if m == nil {
		t.members[k] = &member{root: true, shown: true, initial: initial}
		return true
	}
	t.release(key{k.context, m.owner()})
	m.owners, m.root, m.shown, m.gone = nil, true, true, false
	return false
}

// ownerChain is obj's owner chain, in context's cluster, when one of its
// owners is in the tree: the controller first, then the others in order.
// An owner whose own chain runs through obj (a cycle) does not count.
func (t *Tree) ownerChain(context string, obj *rawobj.Object) ([]metav1.OwnerReference, bool) {
	if obj.OwnerUID() == "" {
		return nil, false // no owner: nothing decoded (every root's delta asks)
	}
	refs, err := obj.OwnerReferences()
	if err != nil || len(refs) == 0 {
		return nil, false
	}
	for _, controller := range []bool{true, false} {
		for _, ref := range refs {
			if (ref.Controller != nil && *ref.Controller) != controller {
				continue
			}
			owner := t.members[key{context, ref.UID}]
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

// join adds, transitively, the objects that name k, a new member, as their
// owner: found through the OwnerIndex of the Stores of k's cluster. A
// scout's find promotes its type; an object of an owned type handed out
// earlier is printed now. A dependent found in a Store existed when the
// stream started if its informer, or its scout, listed it: the Store may
// be ahead of what was handed out, and listed is as far ahead.
func (t *Tree) join(k key) (bool, error) {
	queue := []key{k}
	for len(queue) > 0 {
		owner := queue[0]
		queue = queue[1:]
		for _, inf := range t.engine.Informers() {
			target := inf.Target()
			if target.Role.IsRoot() || target.Role == informer.RoleEvents || target.Context != owner.context {
				// A root's Store holds what the user named; the scout of
				// its type sees the rest.
				continue
			}
			owned, err := inf.Store().ByIndex(OwnerIndex, string(owner.uid))
			if err != nil {
				continue
			}
			for _, o := range owned {
				obj, ok := o.(*rawobj.Object)
				if !ok {
					continue
				}
				dependent := keyOf(target, obj)
				joined, _ := t.place(inf, obj, t.listed(inf, dependent.uid))
				if !joined {
					continue
				}
				queue = append(queue, dependent)
				if t.members[dependent].root {
					continue
				}
				if target.Role == informer.RoleScout {
					t.found(dependent, inf, obj)
					t.promote(inf)
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

// unhold prints a held object that joined the tree: as its owned informer's
// initial list had it, then what changed since, when it was in the tree
// when the stream started; else as last handed out. An object not handed
// out yet is printed when it is.
func (t *Tree) unhold(k key) (bool, error) {
	h, ok := t.held[k]
	if !ok {
		return false, nil
	}
	delete(t.held, k)
	m := t.members[k]
	m.shown = true
	initial := m.initial && h.listed != nil
	first := h.obj
	if initial {
		first = h.listed
	}
	it := informer.Item{Delta: cache.Delta{Object: first}, Object: first, Key: h.key, Owners: m.owners}
	t.enter(k, &it, initial)
	if done, err := t.print(informer.Batch{Informer: h.inf, Initial: initial}, it); done || err != nil || first == h.obj {
		return done, err
	}
	later := informer.Item{
		Delta: cache.Delta{Type: cache.Updated, Object: h.obj}, Type: cache.Updated,
		Object: h.obj, Old: first, Key: h.key, Owners: m.owners,
	}
	return t.print(informer.Batch{Informer: h.inf}, later)
}

// found notes that the scout placed obj, the member k, in the tree: until
// something shows it, its owned informer's initial list is expected to.
func (t *Tree) found(k key, scout *informer.Informer, obj *rawobj.Object) {
	m := t.members[k]
	if m == nil || m.shown {
		return
	}
	m.found, m.foundBy = obj, scout.Target()
	id := m.foundBy.ID()
	if t.unlisted[id] == nil {
		t.unlisted[id] = map[key]struct{}{}
	}
	t.unlisted[id][k] = struct{}{}
}

// sweepUnlisted says what became of the members scouts placed once their
// owned informers' initial lists are out: shown (by those lists, or
// held and shown since), nothing to say; missing from the list, the
// object was deleted between the scout's list and its owned informer's,
// and is printed as it entered the tree (its metadata, as the scout had
// it), then Deleted with its final state unknown — as a relist says what
// vanished while nothing watched.
func (t *Tree) sweepUnlisted() (bool, error) {
	for id, members := range t.unlisted {
		var owned *informer.Informer
		for k := range members {
			m := t.members[k]
			if m == nil || m.shown || m.root || m.found == nil {
				delete(members, k)
				continue
			}
			if owned == nil {
				if owned = t.ownedInformerOf(m.foundBy); owned == nil || !owned.InitialDone() {
					break // not yet: the whole type waits
				}
			}
			delete(members, k)
			if done, err := t.sayUnlisted(k, m, owned); done || err != nil {
				return done, err
			}
		}
		if len(members) == 0 {
			delete(t.unlisted, id)
		}
	}
	return false, nil
}

// sayUnlisted prints m, the member k a scout placed, unless owned — its
// type's owned informer, whose initial list is out — has it: then it was
// handed out, and held or shown.
func (t *Tree) sayUnlisted(k key, m *member, owned *informer.Informer) (bool, error) {
	storeKey := cache.ObjectKey(m.found)
	if o, ok, _ := owned.Store().GetByKey(storeKey); ok {
		if obj, isObject := o.(*rawobj.Object); isObject && obj.UID == m.found.UID {
			return false, nil
		}
	}
	obj := m.found
	m.found = nil
	entered := informer.Item{Delta: cache.Delta{Type: cache.Replaced, Object: obj}, Object: obj, Key: storeKey, Owners: m.owners}
	t.enter(k, &entered, m.initial)
	gone := informer.Item{
		Delta: cache.Delta{Type: cache.Deleted, Object: cache.DeletedFinalStateUnknown{Key: storeKey, Obj: obj}},
		Type:  cache.Deleted, Object: obj, Old: obj, Key: storeKey, Tombstone: true, Owners: m.owners,
	}
	t.forget(k)
	return t.next.Handle(informer.Batch{Informer: owned, Items: []informer.Item{entered, gone}, Initial: entered.Initial})
}

// ownedInformerOf is the owned informer that took over from scout, nil
// when none runs.
func (t *Tree) ownedInformerOf(scout informer.Target) *informer.Informer {
	owned := scout
	owned.Role = informer.RoleOwned
	return t.informerOf(owned)
}

// promote starts the owned informer of a scout's type, whole objects, and
// removes the scout — once the scout's initial list has been popped whole,
// so that what it listed is known when the owned informer's objects come.
func (t *Tree) promote(scout *informer.Informer) {
	id := scout.Target().ID()
	if _, ok := t.owned[id]; ok {
		return
	}
	if !scout.InitialDone() {
		t.pending[id] = scout
		return
	}
	delete(t.pending, id)
	owned := scout.Target()
	owned.Role = informer.RoleOwned
	if _, err := t.engine.Add(owned); err != nil {
		// The stream has ended.
		return
	}
	t.owned[id] = scout
	if t.initialOut {
		t.owned[id] = nil
	}
	t.engine.Remove(id)
}

// promotePending promotes the types whose scouts have handed out their
// initial lists since the promotion was asked for.
func (t *Tree) promotePending() {
	for _, scout := range t.pending {
		if scout.InitialDone() {
			t.promote(scout)
		}
	}
}

// forget marks a deleted object gone; it leaves the tree once no member
// names it as direct owner.
func (t *Tree) forget(k key) {
	m := t.members[k]
	if m == nil {
		return
	}
	m.gone, m.shown = true, false
	if m.dependents == 0 {
		t.remove(k, m)
	}
}

// remove takes m, the member k, out of the tree, and its direct owner too
// when that is gone and m was its last dependent.
func (t *Tree) remove(k key, m *member) {
	delete(t.members, k)
	t.release(key{k.context, m.owner()})
}

// release drops one dependent of owner; a gone owner without dependents
// leaves the tree.
func (t *Tree) release(owner key) {
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
