// Package pipeline holds the in-process benchmarks of kubectl deltas' hot
// path, decode → FIFO → encode, on a watch stream recorded from a real
// kube-apiserver (bench/testdata), next to client-go's decoding of the same
// stream. It has no non-test code; run
//
//	go test -run '^$' -bench . -benchmem ./bench/pipeline/
package pipeline
