package live

import (
	"bytes"
	"io"
	"sync"
)

// heldWriter holds what is written while holding is set, and writes it to
// out at release; afterwards it writes through. While it holds, line, if
// set, is told of each whole line written (the view shows some of them).
type heldWriter struct {
	mu      sync.Mutex
	out     io.Writer
	holding bool
	held    bytes.Buffer
	line    func(string)
	// told is how much of held line was told of.
	told int
}

func (h *heldWriter) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.holding {
		return h.out.Write(p)
	}
	n, err := h.held.Write(p)
	for h.line != nil {
		rest := h.held.Bytes()[h.told:]
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			break
		}
		h.line(string(rest[:i]))
		h.told += i + 1
	}
	return n, err
}

// release writes what was held and stops holding.
func (h *heldWriter) release() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.holding {
		h.holding = false
		_, _ = h.out.Write(h.held.Bytes())
		h.held.Reset()
		h.told = 0
	}
}
