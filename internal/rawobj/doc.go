// Package rawobj keeps Kubernetes objects as the JSON the API server sent
// and extracts only the metadata an informer cache needs, with a
// hand-written scanner instead of a full decode into map[string]any
// (several times cheaper: bench/RESULTS.md).
//
// Memory: Parse copies what it keeps of its input into one new byte slice
// per object; Object.JSON and the Object's strings live in it, so an
// Object never aliases the caller's buffer and Object.JSON is read-only.
// Validation: everything Parse, ParseList and NextEvent accept is valid
// JSON per encoding/json, and repeated keys behave as there (the last
// wins). The files, one per job, and these rules in full:
// docs/architecture.md, "Raw objects".
package rawobj
