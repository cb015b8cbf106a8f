package timeline

import (
	"bufio"
	"bytes"
	"context"
	_ "embed" // page.html
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// page is the page's HTML, CSS and JavaScript, with dataMarker where the
// data document goes (inside its script element).
//
//go:embed page.html
var page []byte

// dataMarker is replaced by the data document in page, basesMarker by the
// versions its patches start from (Timeline.bases), after it.
const (
	dataMarker  = "{{DATA}}"
	basesMarker = "{{BASES}}"
)

// RefreshEvery is how often a page is rewritten while the stream goes on
// (when something changed): often enough to reload mid-run, rarely enough
// that writing costs the stream little.
const RefreshEvery = 5 * time.Second

// Write renders the page to its file, replacing what was there at once (a
// temporary file in its directory, renamed over it): a reader sees the
// previous page or this one, never half of one. live says that the stream
// goes on.
func (t *Timeline) Write(live bool) error {
	t.writing.Lock()
	defer t.writing.Unlock()
	before, rest, ok := bytes.Cut(page, []byte(dataMarker))
	middle, after, ok2 := bytes.Cut(rest, []byte(basesMarker))
	if !ok || !ok2 {
		return errors.New("--timeline: the embedded page has no place for its data (a build without page.html?)")
	}
	dir, base := filepath.Split(t.path)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+base+".*.tmp")
	if err != nil {
		return fmt.Errorf("--timeline: %w (is its directory there and writable?)", err)
	}
	defer func() { _ = os.Remove(tmp.Name()) }() // after a rename: nothing left to remove
	w := bufio.NewWriterSize(tmp, flushSize)
	var bases [][]byte
	_, err = w.Write(before)
	if err == nil {
		bases, err = t.writeData(w, live)
	}
	if err == nil {
		_, err = w.Write(middle)
	}
	for _, chunk := range bases {
		if err == nil {
			_, err = w.Write(chunk)
		}
	}
	if err == nil {
		_, err = w.Write(after)
	}
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		_ = tmp.Close()
		return fmt.Errorf("--timeline: writing %s: %w", t.path, err)
	}
	if err := tmp.Chmod(pageMode(t.path)); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("--timeline: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("--timeline: writing %s: %w", t.path, err)
	}
	if err := os.Rename(tmp.Name(), t.path); err != nil {
		return fmt.Errorf("--timeline: %w", err)
	}
	return nil
}

// pageMode is the mode the page at path is written with: a new page is
// 0600, as kubectl writes a kubeconfig — it holds the cluster's objects —
// and a page written over keeps the mode its owner gave it.
func pageMode(path string) os.FileMode {
	if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() {
		return st.Mode().Perm()
	}
	return 0o600
}

// Start begins the stream (Begin) and rewrites the page every
// RefreshEvery while it runs (Refresh), a failure a warning on warn; stop
// ends the rewriting (Close then writes the page whole).
func (t *Timeline) Start(warn io.Writer) (stop func()) {
	t.Begin()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		t.Refresh(ctx, func(err error) { fmt.Fprintf(warn, "warning: %v\n", err) })
	}()
	return func() {
		cancel()
		<-done
	}
}

// Refresh rewrites the page every RefreshEvery while something changed,
// until ctx ends; errors go to report (the run goes on: the page is
// written once more at the end, and that error ends the run). Run it on
// its own goroutine.
func (t *Timeline) Refresh(ctx context.Context, report func(error)) {
	tick := time.NewTicker(RefreshEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			if !t.Dirty() {
				continue
			}
			if err := t.Write(true); err != nil {
				report(err)
			}
		}
	}
}
