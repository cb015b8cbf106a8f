package cmd

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// isFatal tells errors that retrying cannot fix: the user's rights or
// request are wrong.
func isFatal(err error) bool {
	return apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err) || apierrors.IsBadRequest(err) ||
		apierrors.IsInvalid(err) || apierrors.IsMethodNotSupported(err) || apierrors.IsNotAcceptable(err)
}

func isExpired(err error) bool {
	return apierrors.IsResourceExpired(err) || apierrors.IsGone(err)
}

// fatalError adds a hint on how to recover.
func fatalError(err error) error {
	switch {
	case apierrors.IsForbidden(err):
		return fmt.Errorf("%w\nkubectl deltas needs the list and watch verbs on the resource; check with \"kubectl auth can-i list <resource>\" and \"kubectl auth can-i watch <resource>\"", err)
	case apierrors.IsUnauthorized(err):
		return fmt.Errorf("%w: the server rejected the credentials (expired token?); log in again or check --kubeconfig, --context and --token", err)
	case apierrors.IsMethodNotSupported(err):
		return fmt.Errorf("%w: this resource cannot be listed and watched", err)
	}
	return err
}

// health turns the reflectors' failure and recovery reports into one
// warning line per outage on stderr, and one line when it is over, however
// many retries and resources it spans. Safe for concurrent use.
type health struct {
	errOut io.Writer
	now    func() time.Time

	// lock guards failing and since.
	lock sync.Mutex
	// failing holds the informers whose last report was a failure.
	failing map[*informer]bool
	// since is when the current outage began.
	since time.Time
}

func newHealth(errOut io.Writer, now func() time.Time) *health {
	return &health{errOut: errOut, now: now, failing: map[*informer]bool{}}
}

// failed records a failure of inf; the first failure of an outage prints
// the warning.
func (h *health) failed(inf *informer, err error) {
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
func (h *health) recovered(inf *informer) {
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

// oneLine keeps a message on one line.
func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}
