package cache

import (
	"math/rand/v2"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// Backoff tunables of the Reflector: the delays client-go's reflector uses,
// so that a fleet of plugins backs off from a struggling apiserver the way
// its controllers do.
const (
	// backoffInitial is the first delay after a failure.
	backoffInitial = 800 * time.Millisecond
	// backoffFactor multiplies the delay after each failure.
	backoffFactor = 2.0
	// backoffJitter adds up to this fraction of the delay, at random, so
	// that clients that failed together do not retry together.
	backoffJitter = 1.0
	// backoffCap bounds the delay before jitter.
	backoffCap = 30 * time.Second
	// backoffResetAfter is how long without a backoff resets the delay to
	// backoffInitial.
	backoffResetAfter = 2 * time.Minute
)

// BackoffManager hands out the timer to wait on before the next attempt.
// Tests substitute one whose timers fire at once and that counts calls.
type BackoffManager interface {
	// Backoff returns a timer that fires when the caller may try again.
	Backoff() clock.Timer
}

// exponentialBackoff is the default BackoffManager: 800ms doubling to 30s,
// jittered, reset after two minutes without a failure.
type exponentialBackoff struct {
	clock clock.Clock
	// rand returns a float in [0, 1) for the jitter.
	rand func() float64

	// lock guards next and lastBackoff.
	lock sync.Mutex
	// next is the un-jittered delay of the next Backoff call.
	next time.Duration
	// lastBackoff is when the last returned delay ends.
	lastBackoff time.Time
}

func newExponentialBackoff(c clock.Clock, random func() float64) *exponentialBackoff {
	if random == nil {
		random = rand.Float64
	}
	return &exponentialBackoff{clock: c, rand: random, next: backoffInitial}
}

// Backoff implements BackoffManager.
func (b *exponentialBackoff) Backoff() clock.Timer {
	return b.clock.NewTimer(b.delay())
}

// delay returns the next jittered delay and advances the sequence.
func (b *exponentialBackoff) delay() time.Duration {
	b.lock.Lock()
	defer b.lock.Unlock()
	now := b.clock.Now()
	if !b.lastBackoff.IsZero() && now.Sub(b.lastBackoff) > backoffResetAfter {
		b.next = backoffInitial
	}
	d := b.next
	b.next = min(time.Duration(float64(b.next)*backoffFactor), backoffCap)
	d += time.Duration(b.rand() * backoffJitter * float64(d))
	b.lastBackoff = now.Add(d)
	return d
}

// retryWithDeadline decides whether an error may be retried at once: only
// errors accepted by isRetryable, and only while they have kept coming for
// at most maxRetryDuration. A quiet spell of resetPeriod starts over.
type retryWithDeadline struct {
	firstErrorTime   time.Time
	lastErrorTime    time.Time
	maxRetryDuration time.Duration
	resetPeriod      time.Duration
	isRetryable      func(error) bool
	clock            clock.Clock
}

func newRetryWithDeadline(maxRetryDuration time.Duration, isRetryable func(error) bool, c clock.Clock) *retryWithDeadline {
	return &retryWithDeadline{
		maxRetryDuration: maxRetryDuration,
		resetPeriod:      internalErrorResetPeriod,
		isRetryable:      isRetryable,
		clock:            c,
	}
}

func (r *retryWithDeadline) reset() {
	r.firstErrorTime = time.Time{}
	r.lastErrorTime = time.Time{}
}

// After records err if it is retryable.
func (r *retryWithDeadline) After(err error) {
	if r.isRetryable(err) {
		if r.clock.Now().Sub(r.lastErrorTime) >= r.resetPeriod {
			r.reset()
		}
		if r.firstErrorTime.IsZero() {
			r.firstErrorTime = r.clock.Now()
		}
		r.lastErrorTime = r.clock.Now()
	}
}

// ShouldRetry reports whether the errors recorded so far may be retried.
func (r *retryWithDeadline) ShouldRetry() bool {
	if r.maxRetryDuration <= time.Duration(0) {
		return false
	}
	if r.clock.Now().Sub(r.firstErrorTime) <= r.maxRetryDuration {
		return true
	}
	r.reset()
	return false
}
