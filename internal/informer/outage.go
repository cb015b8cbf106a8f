package informer

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/kubectl-deltas/kubectl-deltas/internal/textsafe"
)

// outages turn the reflectors' failure and recovery reports into one
// warning line per outage on errOut, and one line when it is over, however
// many retries and informers it spans. Outages are per cluster (with
// several clusters the lines name its context), and per aggregated API
// within a cluster: a metrics server that restarts is its own outage, not
// the cluster's. Safe for concurrent use.
type outages struct {
	errOut io.Writer
	now    func() time.Time
	// describe, if set, says what the cluster knows of an aggregated API's
	// outage (its APIService's condition). Called without lock held.
	describe func(Target) string

	// lock guards failing and since, and serialises writes to errOut.
	lock sync.Mutex
	// failing holds, by outage (outageOf), the informers whose last report
	// was a failure.
	failing map[outage]map[*Informer]bool
	// since is when each current outage began.
	since map[outage]time.Time
	// rewrittenAt is when a rewritten history was last reported.
	rewrittenAt time.Time
}

// outage is what fails together: a cluster (context), or one aggregated
// API (APIService) of a cluster.
type outage struct {
	context, apiService string
}

func outageOf(t Target) outage { return outage{context: t.Context, apiService: t.APIService} }

// rewriteQuiet is how long after a report of a rewritten history the
// other informers' reports of it are not repeated: one restore, one line.
const rewriteQuiet = time.Minute

func newOutages(errOut io.Writer, now func() time.Time, describe func(Target) string) *outages {
	return &outages{errOut: errOut, now: now, describe: describe, failing: map[outage]map[*Informer]bool{}, since: map[outage]time.Time{}}
}

// failed records a failure of inf; the first failure of an outage prints
// the warning.
func (h *outages) failed(inf *Informer, err error) {
	key := outageOf(inf.target)
	h.lock.Lock()
	first := len(h.failing[key]) == 0
	h.lock.Unlock()
	described := "APIService " + key.apiService
	if first && key.apiService != "" && h.describe != nil {
		if d := h.describe(inf.target); d != "" {
			described = d
		}
	}

	h.lock.Lock()
	defer h.lock.Unlock()
	if len(h.failing[key]) == 0 {
		h.since[key] = h.now()
		h.failing[key] = map[*Informer]bool{}
		if key.apiService == "" {
			fmt.Fprintf(h.errOut, "warning: %s%s; retrying, nothing is lost: the watch resumes where it stopped, or relists\n", textsafe.ContextPrefix(key.context), textsafe.OneLine(err.Error()))
		} else {
			fmt.Fprintf(h.errOut, "warning: %s%s is down (%s): %s; retrying, its objects are kept until the server says the type is gone\n",
				textsafe.ContextPrefix(key.context), inf.target.Resource.GroupResource(), textsafe.OneLine(described), textsafe.OneLine(err.Error()))
		}
	}
	h.failing[key][inf] = true
}

// recovered records that inf listed or watched successfully; the end of
// the outage is printed once.
func (h *outages) recovered(inf *Informer) {
	h.lock.Lock()
	defer h.lock.Unlock()
	key := outageOf(inf.target)
	if !h.failing[key][inf] {
		return
	}
	delete(h.failing[key], inf)
	if len(h.failing[key]) > 0 {
		return
	}
	after := h.now().Sub(h.since[key]).Round(100 * time.Millisecond)
	if key.apiService == "" {
		fmt.Fprintf(h.errOut, "info: %sconnection restored after %s\n", textsafe.ContextPrefix(key.context), after)
		return
	}
	fmt.Fprintf(h.errOut, "info: %sAPIService %s is back after %s: its types stream again\n", textsafe.ContextPrefix(key.context), key.apiService, after)
}

// forget drops a removed informer from the outage without a message: it
// will not recover.
func (h *outages) forget(inf *Informer) {
	h.lock.Lock()
	defer h.lock.Unlock()
	delete(h.failing[outageOf(inf.target)], inf)
}

// info prints a one-line note that is not part of an outage.
func (h *outages) info(msg string) {
	h.lock.Lock()
	defer h.lock.Unlock()
	fmt.Fprintf(h.errOut, "info: %s\n", msg)
}

// note prints a one-line warning that is not part of an outage.
func (h *outages) note(err error) {
	h.lock.Lock()
	defer h.lock.Unlock()
	fmt.Fprintf(h.errOut, "warning: %s\n", textsafe.OneLine(err.Error()))
}

// rewritten reports a rewritten history (an etcd restore) once for all
// the informers that relist because of it.
func (h *outages) rewritten(err error) {
	h.lock.Lock()
	defer h.lock.Unlock()
	now := h.now()
	if !h.rewrittenAt.IsZero() && now.Sub(h.rewrittenAt) < rewriteQuiet {
		return
	}
	h.rewrittenAt = now
	fmt.Fprintf(h.errOut, "warning: %s; deltas below are the difference to what the stream had shown\n", textsafe.OneLine(err.Error()))
}
