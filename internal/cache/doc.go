// Package cache is the informer machinery of kubectl deltas, with
// client-go's tools/cache semantics: a thread-safe Store/Indexer, the
// DeltaFIFO that accumulates deltas per key (knownObjects, tombstones,
// Replaced, Sync), and the Reflector that lists and watches a resource into
// it (paging, resourceVersion rules, bookmarks, relist on 410, backoff,
// resync, streaming list).
//
// Objects are seen only through the Object accessor (namespace, name,
// resourceVersion, UID), so any representation works; the command keeps
// objects as the server's JSON. This package imports neither cobra nor the
// printers, nor client-go's tools/cache.
package cache
