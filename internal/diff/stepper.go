package diff

// Stepper computes what Compute would, for a caller that walks the two
// objects itself, member by member, and hands over decoded values only
// where they differ: a caller holding JSON can skip a member whose bytes
// are the same on both sides (it makes no change) without decoding the
// objects into maps at all.
//
// The caller descends into a member present on both sides as an object
// with Enter and comes back with Leave; at a member it hands over the two
// values (Values), or the one side that has it (Added, Removed). Within an
// object it may visit the members in any order and each at most once: the
// operations of each object's members are put in sorted key order when it
// is left, as Compute orders them. Operations then returns what Compute
// returns for the same two objects, provided that the caller entered
// exactly the members that are JSON objects on both sides and differ, and
// handed over every other member that differs.
//
// A Stepper is used by one goroutine; Reset reuses it.
type Stepper struct {
	d differ
	// levels are where the walk is: the root, then one per Enter. A
	// level's runs are the operations of its members, one run per member,
	// put in key order when the level is left.
	levels []stepLevel
}

// stepLevel is one object the walk is in.
type stepLevel struct {
	// ig is the ignore node of its path; red whether its path is redacted.
	ig  *pathTrie
	red bool
	// key is the member it is in its parent; start the length of the
	// operations when it was entered.
	key   string
	start int
	runs  []keyRun
}

// NewStepper returns a Stepper at the root of two objects, diffing with
// opts as Compute does.
func NewStepper(opts Options) *Stepper {
	s := &Stepper{}
	s.Reset(opts)
	return s
}

// Reset puts s back at the root of two new objects, with opts; the
// operations returned before are left alone.
func (s *Stepper) Reset(opts Options) {
	s.d = differ{redact: opts.Redact, path: s.d.path[:0]}
	s.levels = append(s.levels[:0], stepLevel{ig: opts.Ignored.trieOr(opts.Ignore)}) // the root is never ignored: ParsePath refuses ""
	s.levels[0].red = s.d.isRedacted(false)
}

// level is the object the walk is in.
func (s *Stepper) level() *stepLevel { return &s.levels[len(s.levels)-1] }

// Ignores reports whether the member key of the object the walk is in is
// ignored: such a member makes no change and must not be handed over.
func (s *Stepper) Ignores(key []byte) bool {
	return s.level().ig.child(string(key)).ignored()
}

// IgnoresBelow reports whether a path below the member key of the object
// the walk is in, and not key itself, is ignored: a caller that would
// hand over that member's value whole must leave the ignoring to the
// Stepper.
func (s *Stepper) IgnoresBelow(key string) bool {
	kid := s.level().ig.child(key)
	return kid != nil && !kid.end && len(kid.kids) > 0
}

// Path is the keys of the objects the walk is in, from the root: valid
// until the walk moves.
func (s *Stepper) Path() []string { return s.d.path }

// Enter descends into the member key of the object the walk is in, an
// object on both sides; key must not be ignored (Ignores).
func (s *Stepper) Enter(key string) {
	parent := s.level()
	ig, red := parent.ig.child(key), parent.red
	s.d.push(key)
	red = s.d.isRedacted(red)
	s.levels = append(s.levels, stepLevel{ig: ig, red: red, key: key, start: len(s.d.ops), runs: s.levelRuns()})
}

// levelRuns is the runs slice of the level about to be pushed, reusing
// the memory of an earlier level at that depth.
func (s *Stepper) levelRuns() []keyRun {
	if n := len(s.levels); n < cap(s.levels) {
		return s.levels[:n+1][n].runs[:0]
	}
	return nil
}

// Leave comes back from the member Enter descended into.
func (s *Stepper) Leave() {
	l := s.level()
	sortRuns(s.d.ops[l.start:], l.runs)
	key, start := l.key, l.start
	s.levels = s.levels[:len(s.levels)-1]
	s.d.pop()
	s.note(key, start)
}

// note records the operations made since start as the run of member key
// of the object the walk is in.
func (s *Stepper) note(key string, start int) {
	if len(s.d.ops) > start {
		l := s.level()
		l.runs = append(l.runs, keyRun{key: key, start: start - l.start, end: len(s.d.ops) - l.start})
	}
}

// Values hands over the member key of the object the walk is in, which
// differs: before and after decoded (as Compute takes them). Members
// that are objects on both sides may be entered instead.
func (s *Stepper) Values(key string, before, after any) {
	s.member(key, func(ig *pathTrie, red bool) { s.d.diff(before, after, ig, red) })
}

// Added hands over the member key that only the new object has.
func (s *Stepper) Added(key string, value any) {
	s.member(key, func(ig *pathTrie, red bool) { s.d.add(value, ig, red) })
}

// Removed hands over the member key that only the old object has.
func (s *Stepper) Removed(key string, value any) {
	s.member(key, func(ig *pathTrie, red bool) { s.d.remove(value, ig, red) })
}

// member runs emit at the member key of the object the walk is in, with
// the member's ignore node and its parent's redaction, as diffMaps does.
func (s *Stepper) member(key string, emit func(ig *pathTrie, parentRedacted bool)) {
	l := s.level()
	kid := l.ig.child(key)
	if kid.ignored() {
		return
	}
	start := len(s.d.ops)
	s.d.push(key)
	emit(kid, l.red)
	s.d.pop()
	s.note(key, start)
}

// Operations are the changes handed over, in Compute's order: empty and
// non-nil when nothing differs. The walk must be back at the root. The
// slice is the caller's: Reset starts a new one.
func (s *Stepper) Operations() []Operation {
	root := &s.levels[0]
	sortRuns(s.d.ops, root.runs)
	ops := s.d.ops
	if ops == nil {
		ops = []Operation{}
	}
	s.d.ops = nil
	return ops
}
