package cache

// Indexer extends Store with multiple indices and restricts each accumulator
// to simply hold the current object (and be empty after Delete).
//
// There are three kinds of strings here:
//  1. a storage key, as defined in the Store interface,
//  2. a name of an index, and
//  3. an "indexed value", which is produced by an IndexFunc and can be a
//     field value or any other string computed from the object.
type Indexer interface {
	Store
	// Index returns the stored objects whose set of indexed values
	// intersects the set of indexed values of the given object, for the
	// named index.
	Index(indexName string, obj any) ([]any, error)
	// IndexKeys returns the storage keys of the stored objects whose set of
	// indexed values for the named index includes the given indexed value,
	// sorted.
	IndexKeys(indexName, indexedValue string) ([]string, error)
	// ListIndexFuncValues returns all the indexed values of the given index
	// that currently have at least one object.
	ListIndexFuncValues(indexName string) []string
	// ByIndex returns the stored objects whose set of indexed values for the
	// named index includes the given indexed value.
	ByIndex(indexName, indexedValue string) ([]any, error)
	// GetIndexers returns the indexers.
	GetIndexers() Indexers
	// AddIndexers adds more indexers to this store. Objects already in the
	// store are indexed by the new indexers.
	AddIndexers(newIndexers Indexers) error
}

// IndexFunc knows how to compute a set of indexed values for an object.
type IndexFunc func(obj any) ([]string, error)

// Indexers maps a name to an IndexFunc.
type Indexers map[string]IndexFunc

// Index maps the indexed value to a set of keys in the store that match on
// that value.
type Index map[string]set

// Indices maps a name to an Index.
type Indices map[string]Index

// set is a set of strings.
type set map[string]struct{}

func (s set) insert(v string) { s[v] = struct{}{} }
func (s set) has(v string) bool {
	_, ok := s[v]
	return ok
}
