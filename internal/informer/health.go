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
// many retries and informers it spans. With several clusters, outages are
// per cluster, and the lines name its context. Safe for concurrent use.
type health struct {
	errOut io.Writer
	now    func() time.Time

	// lock guards failing and since, and serialises writes to errOut.
	lock sync.Mutex
	// failing holds, by context, the informers whose last report was a
	// failure.
	failing map[string]map[*Informer]bool
	// since is when the current outage of each context began.
	since map[string]time.Time
	// rewrittenAt is when a rewritten history was last reported.
	rewrittenAt time.Time
}

// rewriteQuiet is how long after a report of a rewritten history the
// other informers' reports of it are not repeated: one restore, one line.
const rewriteQuiet = time.Minute

func newHealth(errOut io.Writer, now func() time.Time) *health {
	return &health{errOut: errOut, now: now, failing: map[string]map[*Informer]bool{}, since: map[string]time.Time{}}
}

// failed records a failure of inf; the first failure of an outage prints
// the warning.
func (h *health) failed(inf *Informer, err error) {
	h.lock.Lock()
	defer h.lock.Unlock()
	ctx := inf.target.Context
	if len(h.failing[ctx]) == 0 {
		h.since[ctx] = h.now()
		h.failing[ctx] = map[*Informer]bool{}
		fmt.Fprintf(h.errOut, "warning: %s%s; retrying, nothing is lost: the watch resumes where it stopped, or relists\n", contextPrefix(ctx), oneLine(err))
	}
	h.failing[ctx][inf] = true
}

// recovered records that inf listed or watched successfully; the end of
// the outage is printed once.
func (h *health) recovered(inf *Informer) {
	h.lock.Lock()
	defer h.lock.Unlock()
	ctx := inf.target.Context
	if !h.failing[ctx][inf] {
		return
	}
	delete(h.failing[ctx], inf)
	if len(h.failing[ctx]) == 0 {
		fmt.Fprintf(h.errOut, "info: %sconnection restored after %s\n", contextPrefix(ctx), h.now().Sub(h.since[ctx]).Round(100*time.Millisecond))
	}
}

// forget drops a removed informer from the outage without a message: it
// will not recover.
func (h *health) forget(inf *Informer) {
	h.lock.Lock()
	defer h.lock.Unlock()
	delete(h.failing[inf.target.Context], inf)
}

// contextPrefix names the cluster in a message of a multi-cluster run:
// `context "prod": `; "" for one cluster.
func contextPrefix(ctx string) string {
	if ctx == "" {
		return ""
	}
	return fmt.Sprintf("context %q: ", ctx)
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
