package replay

import (
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// Clock is a replay's time, the recording's: it moves only when the
// Player moves it (SetTime), and then fires the timers due, as the real
// clock of the recorded run fired them at those times. NextDeadline tells
// the Player when the next timer is due, so that it can stop the time
// there between two records: what changes with time alone — health, the
// waiter's checks, --timeout — is then judged at the time it was live.
//
// It implements clock.WithTicker; a timer's channel holds one value, as a
// time.Timer's does.
type Clock struct {
	// mu guards now and timers.
	mu  sync.Mutex
	now time.Time
	// timers are the timers and tickers not yet fired (a ticker: not yet
	// fired at its next tick), in no order.
	timers []*clockTimer
}

var _ clock.WithTicker = (*Clock)(nil)

// NewClock returns a Clock at now.
func NewClock(now time.Time) *Clock { return &Clock{now: now} }

// clockTimer is a timer or ticker of a Clock.
type clockTimer struct {
	c        *Clock
	ch       chan time.Time
	deadline time.Time
	// period is a ticker's; 0 for a timer.
	period time.Duration
}

// Now is the recording's time the replay has reached.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Since is the recording's time since t.
func (c *Clock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

// SetTime moves the time to t (back too, for the initial lists, which
// come in any order) and fires every timer due by then, each once, and
// a ticker's missed ticks as one, as time.Ticker drops them.
func (c *Clock) SetTime(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
	kept := c.timers[:0]
	for _, tm := range c.timers {
		if tm.deadline.After(t) {
			kept = append(kept, tm)
			continue
		}
		select {
		case tm.ch <- tm.deadline:
		default: // the last value not read yet: a tick dropped
		}
		if tm.period > 0 {
			for !tm.deadline.After(t) {
				tm.deadline = tm.deadline.Add(tm.period)
			}
			kept = append(kept, tm)
		}
	}
	clear(c.timers[len(kept):])
	c.timers = kept
}

// NextDeadline is when the next timer is due; ok is false without one.
func (c *Clock) NextDeadline() (next time.Time, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, tm := range c.timers {
		if !ok || tm.deadline.Before(next) {
			next, ok = tm.deadline, true
		}
	}
	return next, ok
}

// add starts tm: it fires at once when due.
func (c *Clock) add(tm *clockTimer) {
	c.mu.Lock()
	if !tm.deadline.After(c.now) {
		select {
		case tm.ch <- tm.deadline:
		default:
		}
		if tm.period > 0 {
			tm.deadline = tm.deadline.Add(tm.period)
			c.timers = append(c.timers, tm)
		}
	} else {
		c.timers = append(c.timers, tm)
	}
	c.mu.Unlock()
}

// remove stops tm; false when it was not pending (fired or stopped).
func (c *Clock) remove(tm *clockTimer) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, o := range c.timers {
		if o == tm {
			c.timers = append(c.timers[:i], c.timers[i+1:]...)
			return true
		}
	}
	return false
}

// newTimer is a timer (period 0) or ticker due d from now.
func (c *Clock) newTimer(d, period time.Duration) *clockTimer {
	tm := &clockTimer{c: c, ch: make(chan time.Time, 1), deadline: c.Now().Add(d), period: period}
	c.add(tm)
	return tm
}

// After fires once, d from now.
func (c *Clock) After(d time.Duration) <-chan time.Time { return c.newTimer(d, 0).ch }

// NewTimer is a timer due d from now.
func (c *Clock) NewTimer(d time.Duration) clock.Timer { return c.newTimer(d, 0) }

// Tick fires every d.
func (c *Clock) Tick(d time.Duration) <-chan time.Time {
	if d <= 0 {
		return nil
	}
	return c.newTimer(d, d).ch
}

// NewTicker fires every d.
func (c *Clock) NewTicker(d time.Duration) clock.Ticker { return tickerOf{c.newTimer(d, d)} }

// Sleep waits until the replay's time has moved d on.
func (c *Clock) Sleep(d time.Duration) { <-c.After(d) }

// C is the timer's channel.
func (tm *clockTimer) C() <-chan time.Time { return tm.ch }

// Stop stops the timer: false when it had fired or was stopped.
func (tm *clockTimer) Stop() bool { return tm.c.remove(tm) }

// Reset makes the timer due d from now; false when it had fired or was
// stopped.
func (tm *clockTimer) Reset(d time.Duration) bool {
	pending := tm.c.remove(tm)
	tm.deadline = tm.c.Now().Add(d)
	tm.c.add(tm)
	return pending
}

// tickerOf is a ticker as a clock.Ticker, whose Stop says nothing.
type tickerOf struct{ *clockTimer }

var _ clock.Ticker = tickerOf{}

func (t tickerOf) Stop() { t.clockTimer.Stop() }
