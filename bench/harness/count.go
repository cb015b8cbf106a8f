package main

import (
	"bytes"
	"io"
	"sync"
	"time"
)

// countMode says how a client's stdout is counted in objects.
type countMode struct {
	// marker, when set, is counted wherever it occurs (across read
	// boundaries); otherwise newlines are counted.
	marker string
	// perObject is how many markers or lines one object produces.
	perObject int
}

func lines() countMode { return countMode{perObject: 1} }

func markers(m string) countMode { return countMode{marker: m, perObject: 1} }

// waiter is a threshold somebody waits for.
type waiter struct {
	objects int
	ch      chan time.Time
}

// streamCounter reads a child's stdout to its end, counts objects as they
// arrive and tells waiters the time at which the read that crossed their
// threshold returned.
type streamCounter struct {
	mode countMode

	mu      sync.Mutex
	units   int64 // markers or lines seen
	bytes   int64
	waiters []waiter
	done    bool
	// tail keeps the last len(marker)-1 bytes, for markers split across
	// reads.
	tail []byte
	// tee, when set before the stream starts, sees every byte read.
	tee func([]byte)
}

func newStreamCounter(mode countMode) *streamCounter {
	if mode.perObject < 1 {
		mode.perObject = 1
	}
	return &streamCounter{mode: mode}
}

// objects is the number of whole objects seen so far.
func (c *streamCounter) objectsLocked() int {
	return int(c.units / int64(c.mode.perObject))
}

// Objects returns the objects and bytes seen so far.
func (c *streamCounter) Objects() (objects int, bytes int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.objectsLocked(), c.bytes
}

// WaitFor returns a channel that receives the time at which the count
// reached n objects; it is closed without a value if the stream ends first.
func (c *streamCounter) WaitFor(n int) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	switch {
	case c.objectsLocked() >= n:
		ch <- time.Now()
	case c.done:
		close(ch)
	default:
		c.waiters = append(c.waiters, waiter{objects: n, ch: ch})
	}
	return ch
}

// run reads r until EOF or an error. It must run in its own goroutine.
func (c *streamCounter) run(r io.Reader) {
	buf := make([]byte, 256<<10)
	marker := []byte(c.mode.marker)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			now := time.Now()
			chunk := buf[:n]
			if c.tee != nil {
				c.tee(chunk)
			}
			var units int
			if len(marker) == 0 {
				units = bytes.Count(chunk, []byte{'\n'})
			} else {
				joined := make([]byte, 0, len(c.tail)+len(chunk))
				joined = append(append(joined, c.tail...), chunk...)
				units = bytes.Count(joined, marker)
				keep := len(marker) - 1
				if keep > len(joined) {
					keep = len(joined)
				}
				// Keep the bytes that could start a marker, but never
				// part of one already counted.
				tail := joined[len(joined)-keep:]
				if i := bytes.LastIndex(joined, marker); i >= 0 && i+len(marker) > len(joined)-keep {
					tail = joined[i+len(marker):]
				}
				c.tail = append(c.tail[:0:0], tail...)
			}
			c.mu.Lock()
			c.units += int64(units)
			c.bytes += int64(n)
			objects := c.objectsLocked()
			kept := c.waiters[:0]
			for _, w := range c.waiters {
				if objects >= w.objects {
					w.ch <- now
				} else {
					kept = append(kept, w)
				}
			}
			c.waiters = kept
			c.mu.Unlock()
		}
		if err != nil {
			c.mu.Lock()
			c.done = true
			for _, w := range c.waiters {
				close(w.ch)
			}
			c.waiters = nil
			c.mu.Unlock()
			return
		}
	}
}
