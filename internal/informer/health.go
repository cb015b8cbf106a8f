package informer

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// health turns the reflectors' failure and recovery reports into one
// warning line per outage on errOut, and one line when it is over, however
// many retries and informers it spans. Safe for concurrent use.
type health struct {
	errOut io.Writer
	now    func() time.Time

	// lock guards failing and since, and serialises writes to errOut.
	lock sync.Mutex
	// failing holds the informers whose last report was a failure.
	failing map[*Informer]bool
	// since is when the current outage began.
	since time.Time
	// rewrittenAt is when a rewritten history was last reported.
	rewrittenAt time.Time
}

// rewriteQuiet is how long after a report of a rewritten history the
// other informers' reports of it are not repeated: one restore, one line.
const rewriteQuiet = time.Minute

func newHealth(errOut io.Writer, now func() time.Time) *health {
	return &health{errOut: errOut, now: now, failing: map[*Informer]bool{}}
}

// failed records a failure of inf; the first failure of an outage prints
// the warning.
func (h *health) failed(inf *Informer, err error) {
	h.lock.Lock()
	defer h.lock.Unlock()
	if len(h.failing) == 0 {
		h.since = h.now()
		fmt.Fprintf(h.errOut, "warning: %s; retrying, nothing is lost: the watch resumes where it stopped, or relists\n", oneLine(err))
	}
	h.failing[inf] = true
}

// recovered records that inf listed or watched successfully; the end of
// the outage is printed once.
func (h *health) recovered(inf *Informer) {
	h.lock.Lock()
	defer h.lock.Unlock()
	if !h.failing[inf] {
		return
	}
	delete(h.failing, inf)
	if len(h.failing) == 0 {
		fmt.Fprintf(h.errOut, "info: connection restored after %s\n", h.now().Sub(h.since).Round(100*time.Millisecond))
	}
}

// forget drops a removed informer from the outage without a message: it
// will not recover.
func (h *health) forget(inf *Informer) {
	h.lock.Lock()
	defer h.lock.Unlock()
	delete(h.failing, inf)
}

// note prints a one-line warning that is not part of an outage.
func (h *health) note(err error) {
	h.lock.Lock()
	defer h.lock.Unlock()
	fmt.Fprintf(h.errOut, "warning: %s\n", oneLine(err))
}

// rewritten reports a rewritten history (an etcd restore) once for all
// the informers that relist because of it.
func (h *health) rewritten(err error) {
	h.lock.Lock()
	defer h.lock.Unlock()
	now := h.now()
	if !h.rewrittenAt.IsZero() && now.Sub(h.rewrittenAt) < rewriteQuiet {
		return
	}
	h.rewrittenAt = now
	fmt.Fprintf(h.errOut, "warning: %s; deltas below are the difference to what the stream had shown\n", oneLine(err))
}

// oneLine keeps a message on one line.
func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}
