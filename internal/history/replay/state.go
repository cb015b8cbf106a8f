package replay

import "github.com/kubectl-deltas/kubectl-deltas/internal/rawobj"

// state is a collection's objects at the point the recording has
// reached, by key, listed in the order they first came.
type state struct {
	objects map[string]*rawobj.Object
	// order holds the keys in the order they came; removed keys stay
	// until compact drops them, so that a key removed and set again may
	// stand twice (items lists it once, at its first place).
	order   []string
	removed int
}

func newState() *state { return &state{objects: map[string]*rawobj.Object{}} }

func (s *state) get(key string) *rawobj.Object { return s.objects[key] }

func (s *state) len() int { return len(s.objects) }

func (s *state) set(key string, obj *rawobj.Object) {
	if _, ok := s.objects[key]; !ok {
		s.order = append(s.order, key)
	}
	s.objects[key] = obj
}

func (s *state) remove(key string) {
	if _, ok := s.objects[key]; !ok {
		return
	}
	delete(s.objects, key)
	s.removed++
	if s.removed > len(s.objects) {
		s.compact()
	}
}

// compact drops the keys of removed objects from order.
func (s *state) compact() {
	kept := s.order[:0]
	for _, k := range s.order {
		if _, ok := s.objects[k]; ok {
			kept = append(kept, k)
		}
	}
	clear(s.order[len(kept):])
	s.order, s.removed = kept, 0
}

// items are the objects in order.
func (s *state) items() []*rawobj.Object {
	out := make([]*rawobj.Object, 0, len(s.objects))
	seen := make(map[string]bool, len(s.objects))
	for _, k := range s.order {
		if obj, ok := s.objects[k]; ok && !seen[k] {
			seen[k] = true
			out = append(out, obj)
		}
	}
	return out
}
