package cache

// Store is a generic object storage and processing interface. A Store holds
// a map from string keys to accumulators, and has operations to add, update,
// and delete a given object to/from the accumulator currently associated
// with a given key. A Store also knows how to extract the key from a given
// object, so many operations are given only the object.
//
// In the simplest Store implementations each accumulator is simply the last
// given object, or empty after Delete, and thus the Store's behavior is
// simple storage.
//
// Reflector knows how to watch a server and update a ReflectorStore.
type Store interface {
	// Add adds the given object to the accumulator associated with the
	// given object's key.
	Add(obj any) error
	// Update updates the given object in the accumulator associated with
	// the given object's key.
	Update(obj any) error
	// Delete deletes the given object from the accumulator associated with
	// the given object's key. Deleting a missing key is a no-op.
	Delete(obj any) error
	// List returns a list of all the currently non-empty accumulators.
	List() []any
	// ListKeys returns a list of all the keys currently associated with
	// non-empty accumulators.
	ListKeys() []string
	// Get returns the accumulator associated with the given object's key.
	Get(obj any) (item any, exists bool, err error)
	// GetByKey returns the accumulator associated with the given key.
	GetByKey(key string) (item any, exists bool, err error)
	// Replace will delete the contents of the store, using instead the
	// given list. Store takes ownership of the list, you should not
	// reference it after calling this function.
	Replace(list []any, resourceVersion string) error
	// Resync is meaningless in the terms appearing here but has meaning in
	// some implementations that have non-trivial additional behavior (e.g.,
	// DeltaFIFO).
	Resync() error
}

// KeyListerGetter is anything that knows how to list its keys and look up
// by key. The DeltaFIFO's knownObjects is one.
type KeyListerGetter interface {
	// ListKeys returns a list of all the keys of the object.
	ListKeys() []string
	// GetByKey returns the object associated with the given key.
	GetByKey(key string) (value any, exists bool, err error)
}

// cache responsibilities are limited to:
//  1. Computing keys for objects via keyFunc
//  2. Invoking methods of a threadSafeStore
type cache struct {
	// cacheStorage bears the burden of thread safety for the cache.
	cacheStorage *threadSafeStore
	// keyFunc is used to make the key for objects stored in and retrieved
	// from items, and should be deterministic.
	keyFunc KeyFunc
}

var _ Indexer = (*cache)(nil)

// NewIndexer returns an Indexer implemented simply with a map and a lock.
func NewIndexer(keyFunc KeyFunc, indexers Indexers) Indexer {
	return &cache{
		cacheStorage: newThreadSafeStore(indexers, Indices{}),
		keyFunc:      keyFunc,
	}
}

func (c *cache) key(obj any) (string, error) {
	key, err := c.keyFunc(obj)
	if err != nil {
		return "", KeyError{obj, err}
	}
	return key, nil
}

// Add inserts an item into the cache.
func (c *cache) Add(obj any) error {
	key, err := c.key(obj)
	if err != nil {
		return err
	}
	return c.cacheStorage.Add(key, obj)
}

// Update sets an item in the cache to its updated state.
func (c *cache) Update(obj any) error {
	key, err := c.key(obj)
	if err != nil {
		return err
	}
	return c.cacheStorage.Update(key, obj)
}

// Delete removes an item from the cache.
func (c *cache) Delete(obj any) error {
	key, err := c.key(obj)
	if err != nil {
		return err
	}
	c.cacheStorage.Delete(key)
	return nil
}

// List returns a list of all the items. List is completely threadsafe as
// long as you treat all items as immutable.
func (c *cache) List() []any {
	return c.cacheStorage.List()
}

// ListKeys returns a list of all the keys of the objects currently in the
// cache.
func (c *cache) ListKeys() []string {
	return c.cacheStorage.ListKeys()
}

// GetIndexers returns the indexers of the cache.
func (c *cache) GetIndexers() Indexers {
	return c.cacheStorage.GetIndexers()
}

// Index returns a list of items that match on the index function. Index is
// thread-safe so long as you treat all items as immutable.
func (c *cache) Index(indexName string, obj any) ([]any, error) {
	return c.cacheStorage.Index(indexName, obj)
}

// IndexKeys returns the sorted storage keys of the stored objects whose set
// of indexed values for the named index includes the given indexed value.
func (c *cache) IndexKeys(indexName, indexedValue string) ([]string, error) {
	return c.cacheStorage.IndexKeys(indexName, indexedValue)
}

// ListIndexFuncValues returns the list of generated values of an Index func.
func (c *cache) ListIndexFuncValues(indexName string) []string {
	return c.cacheStorage.ListIndexFuncValues(indexName)
}

// ByIndex returns the stored objects whose set of indexed values for the
// named index includes the given indexed value.
func (c *cache) ByIndex(indexName, indexedValue string) ([]any, error) {
	return c.cacheStorage.ByIndex(indexName, indexedValue)
}

// AddIndexers adds indexers; existing items are indexed by them.
func (c *cache) AddIndexers(newIndexers Indexers) error {
	return c.cacheStorage.AddIndexers(newIndexers)
}

// Get returns the requested item, or sets exists=false.
func (c *cache) Get(obj any) (item any, exists bool, err error) {
	key, err := c.key(obj)
	if err != nil {
		return nil, false, err
	}
	return c.GetByKey(key)
}

// GetByKey returns the request item, or exists=false.
func (c *cache) GetByKey(key string) (item any, exists bool, err error) {
	item, exists = c.cacheStorage.Get(key)
	return item, exists, nil
}

// Replace will delete the contents of 'c', using instead the given list.
// 'c' takes ownership of the list, you should not reference the list again
// after calling this function.
func (c *cache) Replace(list []any, _ string) error {
	items := make(map[string]any, len(list))
	for _, item := range list {
		key, err := c.key(item)
		if err != nil {
			return err
		}
		items[key] = item
	}
	return c.cacheStorage.Replace(items)
}

// Resync is meaningless for one of these.
func (c *cache) Resync() error {
	return nil
}
