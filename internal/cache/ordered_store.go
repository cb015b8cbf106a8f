package cache

// orderedStore is the temporary store of a streaming list: it applies the
// initial events in arrival order and lists the surviving objects in the
// order their keys first appeared. It is used by one goroutine only.
type orderedStore struct {
	// index maps a key to its position in keys/objs.
	index map[string]int
	keys  []string
	// objs[i] is the object of keys[i], or nil once deleted.
	objs []any
}

var _ ReflectorStore = (*orderedStore)(nil)

func newOrderedStore() *orderedStore {
	return &orderedStore{index: map[string]int{}}
}

func (s *orderedStore) Add(obj any) error {
	key, err := DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		return KeyError{obj, err}
	}
	if i, ok := s.index[key]; ok {
		s.objs[i] = obj
		return nil
	}
	s.index[key] = len(s.keys)
	s.keys = append(s.keys, key)
	s.objs = append(s.objs, obj)
	return nil
}

func (s *orderedStore) Update(obj any) error {
	return s.Add(obj)
}

func (s *orderedStore) Delete(obj any) error {
	key, err := DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		return KeyError{obj, err}
	}
	if i, ok := s.index[key]; ok {
		s.objs[i] = nil
		delete(s.index, key)
	}
	return nil
}

func (s *orderedStore) Replace([]any, string) error { return nil }

func (s *orderedStore) Resync() error { return nil }

// list returns the objects in first-seen order.
func (s *orderedStore) list() []any {
	out := make([]any, 0, len(s.index))
	for i, obj := range s.objs {
		if obj != nil && s.index[s.keys[i]] == i {
			out = append(out, obj)
		}
	}
	return out
}
