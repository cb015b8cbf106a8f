package main

import (
	"compress/gzip"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// record captures the API server's JSON watch stream of the benchmark
// namespace: the existing objects as ADDED events (a watch without a
// resourceVersion starts with them), then one update burst of m writes as
// MODIFIED events. The file is gzip-compressed; bench/pipeline replays it.
func record(ctx context.Context, cl *cluster, e *env, path string, m int) error {
	var raw []byte
	def := clientDef{ID: "record", mode: lines(),
		args: func(e *env, _ bool) []string {
			return []string{filepath.Join(e.tools, "rawclient"), "-server", e.server, "-watch"}
		},
		tee: func(b []byte) { raw = append(raw, b...) },
	}
	p, err := startClient(&def, e, true)
	if err != nil {
		return err
	}
	collect := make(chan []byte, 1)
	go func() {
		<-p.readDone
		collect <- raw
	}()
	if _, err := p.waitObjects(ctx, p.counter.WaitFor(e.n), e.n, 2*time.Minute); err != nil {
		p.stop()
		return err
	}
	if _, err := cl.burst(ctx, "rec", 0, m, e.n); err != nil {
		p.stop()
		return err
	}
	if _, err := p.waitObjects(ctx, p.counter.WaitFor(e.n+m), e.n+m, time.Minute); err != nil {
		p.stop()
		return err
	}
	p.stop()
	data := <-collect

	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	zw, err := gzip.NewWriterLevel(f, gzip.BestCompression)
	if err != nil {
		f.Close()
		return fmt.Errorf("gzip: %w", err)
	}
	if _, err := zw.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := zw.Close(); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	logf("recorded %d events (%s of JSON) into %s", e.n+m, mib(int64(len(data))), path)
	return nil
}
