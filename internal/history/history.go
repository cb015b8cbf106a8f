// Package history is what a run keeps and plays back: its flags
// (--record, --replay, --at, --from, --to), the recorder a run writes and
// how it rides the run (Attach: its header, positions and heartbeats),
// over recording (the file format: lines, header, lock, writer, reader)
// and replay (the player of recordings through the engine). The command
// opens a recorder or a player with Flags and calls Attach once its
// engine is built; nothing here climbs back up to the command.
package history

import (
	"slices"
	"time"

	"github.com/kubectl-deltas/kubectl-deltas/internal/history/recording"
	"github.com/kubectl-deltas/kubectl-deltas/internal/informer"
	"github.com/kubectl-deltas/kubectl-deltas/internal/version"
)

// Recorded is what a recorder records of a run: its engine, the selectors its
// lists and watches use, and whether the Events' join parks an Event.
type Recorded struct {
	Engine                       *informer.Engine
	LabelSelector, FieldSelector string
	// Parked reports whether an Event waits for its subject (nil: never).
	Parked func() bool
	// Servers are the API servers the run watches, each with its
	// context: the header names them, and a recording of another
	// cluster is not gone on with.
	Servers []recording.APIServer
}

// Attach has rec record run: it writes the recording's header (what the
// engine starts watching) and returns the Gap a recording that goes on
// has (nil for none), then has runOpts write a Heartbeat once the initial
// lists are out, every recording.HeartbeatInterval, and as the run ends,
// each saying where the roots and the Events stand. The Events' position
// is left out while the join parks an Event (it is in no record yet): a
// recorder that goes on from there relists them. Call it before the
// engine runs.
func Attach(rec *recording.Recorder, run Recorded, runOpts *informer.RunOptions) (*recording.Gap, error) {
	rec.Watches(run.Servers)
	if err := rec.Begin(run.Engine.Targets(), version.Get().Version, run.LabelSelector, run.FieldSelector); err != nil {
		return nil, err
	}
	rec.PositionsFrom(func() []informer.Position {
		parked := run.Parked != nil && run.Parked()
		// The roots and the Events: what a recorder resumes (--tree's
		// scouts and owned types list again).
		return slices.DeleteFunc(run.Engine.Positions(), func(p informer.Position) bool {
			role := p.Target.Role
			return !role.IsRoot() && (role != informer.RoleEvents || parked)
		})
	})
	rec.TargetsFrom(run.Engine.Targets)
	beat := func() error { return rec.Tick(time.Now()) }
	runOpts.Tick, runOpts.TickEvery = beat, recording.HeartbeatInterval
	initialOut := runOpts.InitialOut
	runOpts.InitialOut = func(ending bool) {
		if initialOut != nil {
			initialOut(ending)
		}
		_ = beat() // a failed write shows at the next
	}
	return rec.Gap(), nil
}
