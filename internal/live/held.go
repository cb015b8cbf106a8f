package live

import (
	"bytes"
	"io"
	"sync"
)

// heldWriter holds what is written while holding is set, and writes it to
// out at release; afterwards it writes through.
type heldWriter struct {
	mu      sync.Mutex
	out     io.Writer
	holding bool
	held    bytes.Buffer
}

func (h *heldWriter) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.holding {
		return h.held.Write(p)
	}
	return h.out.Write(p)
}

// release writes what was held and stops holding.
func (h *heldWriter) release() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.holding {
		h.holding = false
		_, _ = h.out.Write(h.held.Bytes())
		h.held.Reset()
	}
}
