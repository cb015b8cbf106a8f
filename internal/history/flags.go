package history

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/kubectl-deltas/kubectl-deltas/internal/flaghelp"
	"github.com/kubectl-deltas/kubectl-deltas/internal/history/recording"
	"github.com/kubectl-deltas/kubectl-deltas/internal/history/replay"
)

// Flags are the flags of a run's history: --record, the recording the
// run writes, and --replay with --at, --from and --to, the recordings
// played instead of a cluster.
type Flags struct {
	// Record is --record: the recording every record also goes to.
	Record string
	// Replay is --replay: the recordings played (- for stdin).
	Replay []string
	// At, From and To look back in the recordings (replay.Window).
	At, From, To string
}

// NewFlags returns the flags with their defaults: no recording, no replay.
func NewFlags() *Flags { return &Flags{Replay: []string{}} }

// AddFlags declares the flags on fs.
func (f *Flags) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.Record, "record", f.Record, "Also write every record to `FILE` (.zst, .gz or JSON Lines)")
	fs.StringArrayVar(&f.Replay, "replay", f.Replay, "Play the recording `FILE` instead of watching a cluster (- for stdin)")
	fs.StringVar(&f.At, "at", f.At, "With --replay: print the state at `TIME` (10:40, +5m, -5m), then exit")
	fs.StringVar(&f.From, "from", f.From, "With --replay: start at `TIME`, its state as the initial list")
	fs.StringVar(&f.To, "to", f.To, "With --replay: stop at `TIME`")
	flaghelp.File(fs, flaghelp.History, "record", "replay", "at", "from", "to")
	flaghelp.Pair(fs, "from", "to", "With --replay: play from / stop at TIME (as --at takes it)")
}

// Recording reports whether the run records (--record).
func (f *Flags) Recording() bool { return f.Record != "" }

// Replaying reports whether the run replays recordings (--replay).
func (f *Flags) Replaying() bool { return len(f.Replay) > 0 }

// window is where the replay looks.
func (f *Flags) window() replay.Window { return replay.Window{At: f.At, From: f.From, To: f.To} }

// Validate checks the values.
func (f *Flags) Validate() error {
	for _, given := range []struct{ flag, value string }{{"--at", f.At}, {"--from", f.From}, {"--to", f.To}} {
		if given.value != "" && !f.Replaying() {
			return fmt.Errorf("%s looks back in a recording: give it --replay=FILE (recorded with --record)", given.flag)
		}
	}
	if f.At != "" && (f.From != "" || f.To != "") {
		return errors.New("--at is the state at one time: drop --from and --to, or --at")
	}
	stdin := 0
	for _, name := range f.Replay {
		if name == "-" {
			stdin++
		}
		if name == "" {
			return errors.New("--replay needs a file (or - for standard input)")
		}
	}
	if stdin > 1 {
		return errors.New("--replay=- reads standard input, which holds one recording: give it once")
	}
	return nil
}

// ReplayGiven are the flags of other groups that a replay must refuse:
// each asks a server.
type ReplayGiven struct {
	// ServerOnly are the names of the given flags that only mean
	// something to a server (--resource-version, --chunk-size, …).
	ServerOnly []string
	// Tree: --tree given with nothing named or selected to follow.
	Tree bool
}

// ValidateReplay checks what a replay cannot do with the other flags
// given, and with --record.
func (f *Flags) ValidateReplay(g ReplayGiven) error {
	if !f.Replaying() {
		return nil
	}
	switch {
	case len(g.ServerOnly) > 0:
		return fmt.Errorf("%s asks a server, and --replay plays a recording: drop one of them (--context picks contexts of the recording)", g.ServerOnly[0])
	case f.Recording():
		return errors.New("--record cannot be used with --replay: the recording is already one")
	case g.Tree:
		return errors.New("--tree follows what given objects own: name them (TYPE/NAME) or select them with -l/--selector")
	}
	return nil
}

// OpenReplay opens the recordings of --replay (stdin for "-") and reads
// their headers, initial lists and, for --at, --from and --to, their
// span. warn receives the replay's warnings. Close the Player when done.
func (f *Flags) OpenReplay(stdin io.Reader, warn io.Writer) (*replay.Player, error) {
	return replay.OpenFiles(f.Replay, f.window(), stdin, warn)
}

// OpenRecorder opens the recording of --record (nil without it): a new
// one, or, when the file holds one (recording.GoesOn), the same going on
// from where it ended (replay.ReadEnd). Its lock is taken first: a
// recording another process records is refused untouched. fill fills its
// records; warn receives its warnings.
func (f *Flags) OpenRecorder(fill recording.Filler, warn io.Writer) (*recording.Recorder, error) {
	if !f.Recording() {
		return nil, nil
	}
	lock, err := recording.LockRecording(f.Record)
	if err != nil {
		return nil, fmt.Errorf("--record: %w", err)
	}
	var end *recording.End
	if recording.GoesOn(f.Record) {
		if end, err = replay.ReadEnd(f.Record, io.Discard); err != nil {
			_ = lock.Unlock()
			return nil, fmt.Errorf("--record: %s is not a recording to go on with: %w; give a new file", f.Record, err)
		}
	}
	return recording.NewRecorder(f.Record, lock, end, fill, warn)
}
