package cache

import (
	"fmt"
	"sort"
	"sync"
)

// threadSafeStore is a map of keyed objects with indices, safe for
// concurrent use.
//
// Unlike client-go, an IndexFunc error is returned instead of panicking, and
// the store is left unchanged by the failed call: index values are computed
// before anything is modified.
type threadSafeStore struct {
	// lock guards items and index.
	lock  sync.RWMutex
	items map[string]any
	// index holds the indexers and the indices computed with them.
	index *storeIndex
}

// storeIndex holds the indexers and the indices. It is guarded by the
// threadSafeStore's lock.
type storeIndex struct {
	// indexers maps a name to an IndexFunc
	indexers Indexers
	// indices maps a name to an Index. An indexed value is present in an
	// Index only while its set of keys is non-empty.
	indices Indices
}

func newThreadSafeStore(indexers Indexers, indices Indices) *threadSafeStore {
	if indexers == nil {
		indexers = Indexers{}
	}
	if indices == nil {
		indices = Indices{}
	}
	return &threadSafeStore{
		items: map[string]any{},
		index: &storeIndex{indexers: indexers, indices: indices},
	}
}

// indexValues computes the values of every index for obj, keyed by index
// name. Caller must hold the lock (read or write).
func (i *storeIndex) indexValues(obj any) (map[string][]string, error) {
	if obj == nil || len(i.indexers) == 0 {
		return nil, nil
	}
	out := make(map[string][]string, len(i.indexers))
	for name, indexFunc := range i.indexers {
		values, err := indexFunc(obj)
		if err != nil {
			return nil, fmt.Errorf("unable to calculate index %q entries: %w", name, err)
		}
		out[name] = values
	}
	return out, nil
}

// update moves key from the old values to the new ones in every index. Any
// of oldValues/newValues may be nil (no object). Caller must hold the write
// lock.
func (i *storeIndex) update(oldValues, newValues map[string][]string, key string) {
	for name := range i.indexers {
		i.updateSingle(name, oldValues[name], newValues[name], key)
	}
}

// updateSingle maintains one index. Caller must hold the write lock.
func (i *storeIndex) updateSingle(name string, oldValues, newValues []string, key string) {
	// Fast path: a single unchanged value is the common case.
	if len(oldValues) == 1 && len(newValues) == 1 && oldValues[0] == newValues[0] {
		return
	}
	index := i.indices[name]
	if index == nil {
		index = Index{}
		i.indices[name] = index
	}
	for _, value := range oldValues {
		i.deleteKeyFromIndex(key, value, index)
	}
	for _, value := range newValues {
		s := index[value]
		if s == nil {
			s = set{}
			index[value] = s
		}
		s.insert(key)
	}
}

// deleteKeyFromIndex removes key from the set of value, dropping the set
// once it is empty so that an index does not grow without bound with values
// nobody holds any more (#84959). Caller must hold the write lock.
func (i *storeIndex) deleteKeyFromIndex(key, value string, index Index) {
	s := index[value]
	if s == nil {
		return
	}
	delete(s, key)
	if len(s) == 0 {
		delete(index, value)
	}
}

// Add and Update are the same: the object is stored under key.
func (t *threadSafeStore) Add(key string, obj any) error {
	return t.Update(key, obj)
}

func (t *threadSafeStore) Update(key string, obj any) error {
	t.lock.Lock()
	defer t.lock.Unlock()
	newValues, err := t.index.indexValues(obj)
	if err != nil {
		return err
	}
	old, existed := t.items[key]
	var oldValues map[string][]string
	if existed {
		// The old object was indexed successfully when it was stored with
		// the same indexers, so this cannot fail in practice; if an
		// IndexFunc is not deterministic, keep going with what it gives.
		oldValues, _ = t.index.indexValues(old)
	}
	t.items[key] = obj
	t.index.update(oldValues, newValues, key)
	return nil
}

func (t *threadSafeStore) Delete(key string) {
	t.lock.Lock()
	defer t.lock.Unlock()
	old, exists := t.items[key]
	if !exists {
		return
	}
	oldValues, _ := t.index.indexValues(old)
	t.index.update(oldValues, nil, key)
	delete(t.items, key)
}

func (t *threadSafeStore) Get(key string) (item any, exists bool) {
	t.lock.RLock()
	defer t.lock.RUnlock()
	item, exists = t.items[key]
	return item, exists
}

func (t *threadSafeStore) List() []any {
	t.lock.RLock()
	defer t.lock.RUnlock()
	list := make([]any, 0, len(t.items))
	for _, item := range t.items {
		list = append(list, item)
	}
	return list
}

// ListKeys returns the keys of all objects, in map (unspecified) order.
func (t *threadSafeStore) ListKeys() []string {
	t.lock.RLock()
	defer t.lock.RUnlock()
	list := make([]string, 0, len(t.items))
	for key := range t.items {
		list = append(list, key)
	}
	return list
}

// Replace swaps in items and rebuilds every index. Nothing changes when an
// IndexFunc fails.
func (t *threadSafeStore) Replace(items map[string]any) error {
	t.lock.Lock()
	defer t.lock.Unlock()
	indices := make(Indices, len(t.index.indexers))
	rebuilt := &storeIndex{indexers: t.index.indexers, indices: indices}
	for key, item := range items {
		values, err := rebuilt.indexValues(item)
		if err != nil {
			return err
		}
		rebuilt.update(nil, values, key)
	}
	t.items = items
	t.index = rebuilt
	return nil
}

// Index returns the objects that share at least one indexed value with obj.
func (t *threadSafeStore) Index(indexName string, obj any) ([]any, error) {
	t.lock.RLock()
	defer t.lock.RUnlock()
	indexFunc := t.index.indexers[indexName]
	if indexFunc == nil {
		return nil, fmt.Errorf("Index with name %s does not exist", indexName) //nolint:staticcheck // client-go's exact message
	}
	values, err := indexFunc(obj)
	if err != nil {
		return nil, err
	}
	index := t.index.indices[indexName]
	var keys set
	if len(values) == 1 {
		// Common case: no need to deduplicate.
		keys = index[values[0]]
	} else {
		keys = set{}
		for _, value := range values {
			for key := range index[value] {
				keys.insert(key)
			}
		}
	}
	list := make([]any, 0, len(keys))
	for key := range keys {
		list = append(list, t.items[key])
	}
	return list, nil
}

// ByIndex returns the objects whose indexed values include indexedValue.
func (t *threadSafeStore) ByIndex(indexName, indexedValue string) ([]any, error) {
	t.lock.RLock()
	defer t.lock.RUnlock()
	if t.index.indexers[indexName] == nil {
		return nil, fmt.Errorf("Index with name %s does not exist", indexName) //nolint:staticcheck // client-go's exact message
	}
	keys := t.index.indices[indexName][indexedValue]
	list := make([]any, 0, len(keys))
	for key := range keys {
		list = append(list, t.items[key])
	}
	return list, nil
}

// IndexKeys returns the sorted keys whose indexed values include
// indexedValue.
func (t *threadSafeStore) IndexKeys(indexName, indexedValue string) ([]string, error) {
	t.lock.RLock()
	defer t.lock.RUnlock()
	if t.index.indexers[indexName] == nil {
		return nil, fmt.Errorf("Index with name %s does not exist", indexName) //nolint:staticcheck // client-go's exact message
	}
	keys := t.index.indices[indexName][indexedValue]
	list := make([]string, 0, len(keys))
	for key := range keys {
		list = append(list, key)
	}
	sort.Strings(list)
	return list, nil
}

// ListIndexFuncValues returns the values of indexName that currently have at
// least one object; an unknown index gives an empty list.
func (t *threadSafeStore) ListIndexFuncValues(indexName string) []string {
	t.lock.RLock()
	defer t.lock.RUnlock()
	index := t.index.indices[indexName]
	names := make([]string, 0, len(index))
	for key := range index {
		names = append(names, key)
	}
	return names
}

// GetIndexers returns the live map of indexers.
func (t *threadSafeStore) GetIndexers() Indexers {
	return t.index.indexers
}

// AddIndexers adds indexers and indexes the objects already stored with
// them. A name that is already taken is an error and nothing is added.
func (t *threadSafeStore) AddIndexers(newIndexers Indexers) error {
	t.lock.Lock()
	defer t.lock.Unlock()
	var conflicts []string
	for name := range newIndexers {
		if _, ok := t.index.indexers[name]; ok {
			conflicts = append(conflicts, name)
		}
	}
	if len(conflicts) > 0 {
		sort.Strings(conflicts)
		return fmt.Errorf("indexer conflict: %v", conflicts)
	}
	added := &storeIndex{indexers: newIndexers, indices: Indices{}}
	for key, item := range t.items {
		values, err := added.indexValues(item)
		if err != nil {
			return err
		}
		added.update(nil, values, key)
	}
	for name, indexFunc := range newIndexers {
		t.index.indexers[name] = indexFunc
		if index := added.indices[name]; index != nil {
			t.index.indices[name] = index
		}
	}
	return nil
}
