package cache

import (
	"math"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/clock"
)

// The Reflector's backoff is client-go's: 800ms doubling to 30s, jittered
// by up to as much again, started over after two minutes without a
// backoff, so that a fleet of plugins backs off from a struggling apiserver
// the way its controllers do.
const (
	backoffInitial    = 800 * time.Millisecond
	backoffCap        = 30 * time.Second
	backoffFactor     = 2.0
	backoffJitter     = 1.0
	backoffResetAfter = 2 * time.Minute
)

// BackoffManager hands out the timer to wait on before the next attempt.
// Tests substitute one whose timers fire at once and that counts calls.
type BackoffManager interface {
	// Backoff returns a timer that fires when the caller may try again.
	Backoff() clock.Timer
}

// delayBackoff is the default BackoffManager: timers on the Reflector's
// clock for the delays of apimachinery's wait.Backoff, as client-go's
// reflector builds it.
type delayBackoff struct {
	clock clock.Clock
	delay wait.DelayFunc
}

func newDelayBackoff(c clock.Clock) *delayBackoff {
	b := wait.Backoff{
		Duration: backoffInitial,
		Cap:      backoffCap,
		Steps:    int(math.Ceil(float64(backoffCap) / float64(backoffInitial))),
		Factor:   backoffFactor,
		Jitter:   backoffJitter,
	}
	return &delayBackoff{clock: c, delay: b.DelayWithReset(c, backoffResetAfter)}
}

// Backoff implements BackoffManager.
func (b *delayBackoff) Backoff() clock.Timer {
	return b.clock.NewTimer(b.delay())
}
