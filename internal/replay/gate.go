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

// Handle sets the clock, hands b on, then wakes Play.
func (g *gate) Handle(b informer.Batch) (bool, error) {
	p := g.p
	p.mu.Lock()
	f := p.byID[b.Informer.Target().ID()]
	took := false
	if f != nil {
		for range b.Items {
			if len(f.expected) == 0 {
				break
			}
			// Exactly the record's time: the initial lists of several
			// collections come in any order.
			d := f.expected[0]
			p.clock.SetTime(d.time)
			f.expected = f.expected[1:]
			f.landed(d.key)
			took = true
		}
	}
	p.mu.Unlock()
	done, err := g.next.Handle(b)
	if took {
		p.mu.Lock()
		p.cond.Broadcast()
		p.mu.Unlock()
	}
	return done, err
}

// Flush implements informer.Sink.
func (g *gate) Flush() error { return g.next.Flush() }
