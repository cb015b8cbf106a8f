package replay

import (
	"errors"

	"github.com/spf13/pflag"
)

// Flags are the flags of a replay: the recording to play instead of a
// cluster.
type Flags struct {
	Files []string
}

// NewFlags returns the flags with their defaults: no replay.
func NewFlags() *Flags { return &Flags{Files: []string{}} }

// AddFlags declares the flags on fs.
func (f *Flags) AddFlags(fs *pflag.FlagSet) {
	fs.StringArrayVar(&f.Files, "replay", f.Files, "Play this recording (written by --record; - for standard input; plain, .gz or .zst) instead of watching a cluster: the records go through the same informer machinery, at the recording's time, so that types and names, -n, -l, --context, --where, --diff, --health, --until, --count and every -o work as on a live stream. Without -n every namespace recorded is played.")
}

// Active reports whether the run replays a recording.
func (f *Flags) Active() bool { return len(f.Files) > 0 }

// Validate checks the values.
func (f *Flags) Validate() error {
	if len(f.Files) > 1 {
		return errors.New("--replay takes one recording for now: replay them one at a time")
	}
	for _, name := range f.Files {
		if name == "" {
			return errors.New("--replay needs a file (or - for standard input)")
		}
	}
	return nil
}
