// Package rawobj keeps Kubernetes objects as the JSON the API server sent and
// extracts only the metadata an informer cache needs, with a hand-written
// scanner instead of a full decode into map[string]any. The scanner is
// hand-written because decoding every object costs several times the time
// and memory of scanning it; bench/RESULTS.md has the measurements.
//
// The package is layered, one file per job:
//
//   - scan.go, jsonstring.go: the JSON scanner (validation, strings,
//     numbers, members) and the decoding and quoting of string contents;
//   - frame.go, decoder.go: framing, which finds where a value ends without
//     validating it, and the Decoder that splits a stream into values;
//   - object.go, metadata.go, build.go: one object — the Object type, the
//     scan of its metadata (which also decides which bytes to drop) and
//     the build of its single allocation;
//   - list.go, listwindow.go, listretype.go: the list envelope, read whole
//     or as it streams;
//   - event.go: the watch event envelope.
//
// Memory model: Parse copies what it keeps of its input into one new byte
// slice per object. Object.JSON is a prefix of that slice and the Object's
// string fields are sliced from it (unescaped copies of escaped strings, and
// the managedFields summary of a stripped object, live in the rest of it;
// the apiVersion and kind ParseList gives items that lack them are shared
// with the List). So an Object never aliases the caller's buffer, costs
// about the size of its JSON, and Object.JSON must be treated as read-only:
// writing to it would change the strings.
//
// Validation: everything Parse, ParseList, ParseListFrom, ParseListEach
// and NextEvent accept is valid JSON per encoding/json (json.Valid),
// including its nesting limit of 10000; strings are not checked for valid
// UTF-8 (as json.Valid), but extracted strings are decoded like
// encoding/json does (invalid UTF-8 becomes U+FFFD). Repeated keys behave
// as in encoding/json: the last one wins.
package rawobj
