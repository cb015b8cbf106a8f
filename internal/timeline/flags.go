package timeline

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/kubectl-deltas/kubectl-deltas/internal/flaghelp"
)

// Flags are the flags of the page (--timeline).
type Flags struct {
	File string
}

// NewFlags returns the flags with their defaults: no page.
func NewFlags() *Flags { return &Flags{} }

// AddFlags declares the flags on fs.
func (f *Flags) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.File, "timeline", f.File, "Also draw the stream as an HTML page in `FILE`")
	flaghelp.File(fs, flaghelp.History, "timeline")
}

// Active reports whether the run draws a page.
func (f *Flags) Active() bool { return f.File != "" }

// Validate checks the path's form; whether it can be written is checked
// by ToTimeline, before any request.
func (f *Flags) Validate() error {
	if f.File == "-" {
		return errors.New("--timeline writes a file, not standard output (which carries the stream): give a path such as rollout.html")
	}
	if st, err := os.Stat(f.File); f.Active() && err == nil && st.IsDir() {
		return fmt.Errorf("--timeline %s is a directory: give a file in it, such as %s", f.File, strings.TrimSuffix(f.File, "/")+"/timeline.html")
	}
	return nil
}

// ToTimeline returns the Timeline of the flags, nil without --timeline,
// its page already written once (empty, live): a path that cannot be
// written is an error here, before any request. args are the command's
// arguments, which the page names; now is the stream's clock (nil:
// time.Now).
func (f *Flags) ToTimeline(args []string, now func() time.Time) (*Timeline, error) {
	if !f.Active() {
		return nil, nil
	}
	_, statErr := os.Stat(f.File)
	t := New(f.File, commandLine(args), now)
	t.created = errors.Is(statErr, os.ErrNotExist)
	if err := t.Write(true); err != nil {
		return nil, err
	}
	return t, nil
}

// commandLine is how the page names the run: as typed, quoted where a
// shell would need it.
func commandLine(args []string) string {
	var b strings.Builder
	b.WriteString("kubectl deltas")
	for _, a := range args {
		b.WriteByte(' ')
		if a != "" && !strings.ContainsAny(a, " \t\n'\"\\$`*?[]{}()<>|&;#~!") {
			b.WriteString(a)
			continue
		}
		b.WriteString("'" + strings.ReplaceAll(a, "'", `'\''`) + "'")
	}
	return b.String()
}
