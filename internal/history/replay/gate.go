package replay

import "github.com/kubectl-deltas/kubectl-deltas/internal/informer"

// Gate returns the sink in front of next that tells the Player what the
// engine handed out: it sets the recording's time to the time of the
// record each delta came from, and lets Play feed the next record once
// the last one's deltas have passed. It must be the first sink of the
// chain: it counts every delta, before --tree or --events keep any back.
func (p *Player) Gate(next informer.Sink) informer.Sink { return &gate{p: p, next: next} }

type gate struct {
	p    *Player
	next informer.Sink
}

// Handle sets the clock, hands b on, then marks its deltas landed and
// wakes Play. They are landed only once the sink has them: Play waits for
// the deltas it expects (settled) before it moves the clock on, so that
// the sink stamps them with their record's time, not a later one.
// Handle is called by one goroutine at a time (the engine's sink).
func (g *gate) Handle(b informer.Batch) (bool, error) {
	p := g.p
	p.mu.Lock()
	f, n := p.byID[b.Informer.Target().ID()], 0
	if f != nil {
		if n = min(len(b.Items), len(f.expected)); n > 0 {
			// Exactly the record's time: the initial lists of several
			// collections come in any order.
			p.clock.SetTime(f.expected[n-1].time)
		}
	}
	p.mu.Unlock()
	done, err := g.next.Handle(b)
	if n > 0 {
		p.mu.Lock()
		for _, d := range f.expected[:n] {
			f.landed(d.key)
		}
		f.expected = f.expected[n:]
		p.cond.Broadcast()
		p.mu.Unlock()
	}
	return done, err
}

// Flush implements informer.Sink.
func (g *gate) Flush() error { return g.next.Flush() }
