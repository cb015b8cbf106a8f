package history

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

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
	// Segment and Keep are --record-segment and --record-keep: when a
	// recording directory starts a new segment, and how much of it is
	// kept (a size or a duration each).
	Segment, Keep string
	// policy is what Validate read of Segment and Keep.
	policy recording.DirPolicy
}

// NewFlags returns the flags with their defaults: no recording, no replay.
func NewFlags() *Flags { return &Flags{Replay: []string{}} }

// AddFlags declares the flags on fs.
func (f *Flags) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.Record, "record", f.Record, "Also write every record to `FILE` (.zst, .gz) or DIR/")
	fs.StringArrayVar(&f.Replay, "replay", f.Replay, "Play the recording `FILE` or DIR/ (- for stdin)")
	fs.StringVar(&f.At, "at", f.At, "With --replay: print the state at `TIME` (10:40, -5m)")
	fs.StringVar(&f.From, "from", f.From, "With --replay: start at `TIME`, its state as the initial list")
	fs.StringVar(&f.To, "to", f.To, "With --replay: stop at `TIME`")
	fs.StringVar(&f.Segment, "record-segment", f.Segment, "With --record=DIR/: start a new segment past `LIMIT`, a size or a duration (default 1h)")
	fs.StringVar(&f.Keep, "record-keep", f.Keep, "With --record=DIR/: delete the oldest segments past `LIMIT`, a size or a duration")
	flaghelp.File(fs, flaghelp.History, "record", "record-segment", "record-keep", "replay", "at", "from", "to")
	flaghelp.Pair(fs, "record-segment", "record-keep", "With DIR/: max segment / total kept, a size or age")
	flaghelp.Pair(fs, "from", "to", "With --replay: play from / stop at TIME")
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
	if err := f.validatePolicy(); err != nil {
		return err
	}
	if dir, ok := recording.SegmentDir(f.Record); ok && f.Recording() && !recording.IsDir(f.Record) {
		return fmt.Errorf("--record=%s is a segment of the recording directory %s, whose recorder writes it: record to %s to go on with it, or to another file", f.Record, dir, dir)
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
	if recording.IsDir(f.Record) {
		return f.openDirRecorder(fill, warn)
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

// openDirRecorder opens the recording directory of --record=DIR/: made
// when missing, locked, its index checked (and rebuilt from the segments
// where it must be), and, when it holds segments, going on from where
// its newest ended.
func (f *Flags) openDirRecorder(fill recording.Filler, warn io.Writer) (*recording.Recorder, error) {
	dir := f.Record
	if err := recording.PrepareDir(dir); err != nil {
		return nil, fmt.Errorf("--record: %w", err)
	}
	// A directory of something else is refused before the lock file is
	// made in it (LoadIndex lists the segments again, the lock held).
	if _, err := recording.ListSegments(dir); err != nil {
		return nil, fmt.Errorf("--record: %w", err)
	}
	lock, err := recording.LockDir(dir)
	if err != nil {
		return nil, fmt.Errorf("--record: %w", err)
	}
	fail := func(err error) (*recording.Recorder, error) {
		_ = lock.Unlock()
		return nil, fmt.Errorf("--record: %w", err)
	}
	recording.CleanDir(dir)
	ix, err := recording.LoadIndex(dir, warn, true)
	if err != nil {
		return fail(err)
	}
	if err := ix.Save(); err != nil {
		return fail(err)
	}
	var end *recording.End
	if len(ix.Segments) > 0 {
		if end, err = replay.ReadDirEnd(ix, io.Discard); err != nil {
			return fail(fmt.Errorf("%s is not a recording to go on with: %w; give a new directory", dir, err))
		}
	}
	return recording.NewDirRecorder(dir, lock, ix, end, f.policy, fill, warn)
}

// validatePolicy reads --record-segment and --record-keep.
func (f *Flags) validatePolicy() error {
	if (f.Segment != "" || f.Keep != "") && !recording.IsDir(f.Record) {
		flag := "--record-segment"
		if f.Segment == "" {
			flag = "--record-keep"
		}
		return fmt.Errorf("%s is for a recording directory: give --record=DIR/ (a path ending in /)", flag)
	}
	f.policy = recording.DirPolicy{SegmentAge: recording.DefaultSegmentAge}
	if f.Segment != "" {
		size, age, err := parseSizeOrDuration(f.Segment)
		if err != nil || (size <= 0 && age <= 0) {
			return fmt.Errorf("invalid --record-segment %q: give a size (64Mi, 1Gi) or a duration (30m, 1h) above 0", f.Segment)
		}
		f.policy.SegmentBytes, f.policy.SegmentAge = size, age
	}
	if f.Keep != "" {
		size, age, err := parseSizeOrDuration(f.Keep)
		if err != nil || (size <= 0 && age <= 0) {
			return fmt.Errorf("invalid --record-keep %q: give a size (10Gi) or a duration (7d, 24h) above 0", f.Keep)
		}
		f.policy.KeepBytes, f.policy.KeepAge = size, age
		switch {
		case size > 0 && f.policy.SegmentBytes > 0 && size < f.policy.SegmentBytes,
			age > 0 && f.policy.SegmentAge > 0 && age < f.policy.SegmentAge:
			return fmt.Errorf("--record-keep=%s is less than one segment (--record-segment=%s): the newest segment is always kept; keep more, or give smaller segments", f.Keep, segmentText(f.Segment))
		}
	}
	return nil
}

// segmentText is --record-segment as given, or its default.
func segmentText(s string) string {
	if s == "" {
		return recording.DefaultSegmentAge.String() + ", the default"
	}
	return s
}

// parseSizeOrDuration reads a size (a quantity: 64Mi, 1G, 500000) or a
// duration (90s, 30m, 1h, 7d): one of size and age is set.
func parseSizeOrDuration(s string) (size int64, age time.Duration, err error) {
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.ParseFloat(days, 64)
		if err != nil {
			return 0, 0, err
		}
		return 0, time.Duration(n * float64(24*time.Hour)), nil
	}
	if d, err := time.ParseDuration(s); err == nil {
		return 0, d, nil
	}
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return 0, 0, err
	}
	return q.Value(), 0, nil
}
