// Package recordinginfo is the recording subcommand: what a recording
// holds — its span, segments, collections, records, gaps, checkpoints —
// read from a recording directory's index alone (a file is read
// through), as text for people or JSON for scripts.
package recordinginfo

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-deltas/kubectl-deltas/internal/history/recording"
)

// Options are the flags and argument of kubectl deltas recording.
type Options struct {
	path   string
	output string
	genericiooptions.IOStreams
}

// NewCmdRecording returns the recording subcommand.
func NewCmdRecording(streams genericiooptions.IOStreams) *cobra.Command {
	o := &Options{IOStreams: streams}
	cmd := &cobra.Command{
		Use:   "recording DIR|FILE",
		Short: "Say what a recording holds: span, segments, collections, records, gaps",
		Long: `Say what a recording of --record holds: the time it spans, its segments and
their sizes, the collections watched, how many records, its gaps and
checkpoints. A recording directory (--record=DIR/) is read from its index
alone, in well under a second whatever its size; a file is read through.`,
		Example: `  # What a recording directory keeps
  kubectl deltas recording rec/

  # Its span, for a script
  kubectl deltas recording rec/ -o json | jq -r '.start, .end'`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return errors.New("give one recording: kubectl deltas recording DIR|FILE (what --record wrote)")
			}
			return nil
		},
		RunE: func(_ *cobra.Command, args []string) error {
			o.Complete(args)
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run()
		},
	}
	cmd.Flags().StringVarP(&o.output, "output", "o", o.output, "One of 'json' or 'yaml' (default: text)")
	_ = cmd.RegisterFlagCompletionFunc("output", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return []string{"json", "yaml"}, cobra.ShellCompDirectiveNoFileComp
	})
	return cmd
}

// Complete takes the recording's path.
func (o *Options) Complete(args []string) { o.path = args[0] }

// Validate checks --output.
func (o *Options) Validate() error {
	if o.output != "" && o.output != "json" && o.output != "yaml" {
		return fmt.Errorf("invalid --output %q for recording: must be json or yaml (or none, for text)", o.output)
	}
	return nil
}

// Run says what the recording holds. A reader that went away (head, a
// closed pipe) is a normal end.
func (o *Options) Run() error {
	s, err := recording.ContentsOf(o.path, o.ErrOut)
	if err != nil {
		return err
	}
	if err := o.write(s); err != nil && !errors.Is(err, syscall.EPIPE) {
		return err
	}
	return nil
}

// write writes s in the output asked for.
func (o *Options) write(s *recording.Contents) error {
	switch o.output {
	case "json":
		data, err := json.Marshal(s)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(o.Out, "%s\n", data)
		return err
	case "yaml":
		data, err := yaml.Marshal(s)
		if err != nil {
			return err
		}
		_, err = o.Out.Write(data)
		return err
	}
	return writeText(o.Out, s)
}

// writeText writes s for people.
func writeText(out io.Writer, s *recording.Contents) error {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	what := "a file (read through: a recording directory, --record=DIR/, has an index)"
	if s.Kind == "directory" {
		what = fmt.Sprintf("a directory of %d segments", len(s.Segments))
		if len(s.Segments) == 1 {
			what = "a directory of 1 segment"
		}
	}
	fmt.Fprintf(w, "Recording:\t%s, %s, %s\n", s.Path, what, bytes(s.Bytes))
	fmt.Fprintf(w, "Span:\t%s to %s (%s)\n", stamp(s.Start), stamp(s.End), s.End.Sub(s.Start).Round(time.Second))
	rate := ""
	if d := s.End.Sub(s.Start).Seconds(); d >= 1 { // a rate of less than a second says nothing
		rate = fmt.Sprintf(" (%.1f a second)", float64(s.Records)/d)
	}
	fmt.Fprintf(w, "Records:\t%d%s\n", s.Records, rate)
	if s.Kind == "directory" {
		fmt.Fprintf(w, "Checkpoints:\t%d (where --at and --from start)\n", s.Checkpoints)
	}
	collections := make([]string, 0, len(s.Collections))
	for _, c := range s.Collections {
		collections = append(collections, describe(c))
	}
	if len(collections) == 0 {
		collections = append(collections, "none named (no header: -o json output, not --record's? --replay plays the types it holds)")
	}
	fmt.Fprintf(w, "Collections:\t%s\n", strings.Join(collections, ", "))
	if len(s.Servers) > 0 {
		servers := make([]string, 0, len(s.Servers))
		for _, server := range s.Servers {
			servers = append(servers, fmt.Sprintf("%s (context %q)", server.URL, server.Context))
		}
		fmt.Fprintf(w, "Clusters:\t%s\n", strings.Join(servers, ", "))
	}
	if len(s.Gaps) == 0 {
		fmt.Fprintf(w, "Gaps:\tnone\n")
	}
	for i, g := range s.Gaps {
		label := ""
		if i == 0 {
			label = "Gaps:"
		}
		fmt.Fprintf(w, "%s\t%s to %s (%s), %s\n", label, stamp(g.From), stamp(g.To), g.To.Sub(g.From).Round(time.Millisecond), g.Why)
	}
	switch {
	case s.Recording && s.RecordedBy > 0:
		fmt.Fprintf(w, "Recorder:\tpid %d is recording it now", s.RecordedBy)
	case s.Recording:
		fmt.Fprintf(w, "Recorder:\tanother kubectl deltas is recording it now")
	default:
		fmt.Fprintf(w, "Recorder:\tnone now")
	}
	if s.AsOf != nil {
		fmt.Fprintf(w, " (its newest segment as of %s)", stamp(*s.AsOf))
	}
	fmt.Fprintln(w)
	if len(s.Segments) > 0 {
		fmt.Fprintln(w, "\nSEGMENT\tSTART\tEND\tRECORDS\tSIZE\tCHECKPOINTS")
		for _, seg := range s.Segments {
			fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%s\t%d\n", seg.Name, stamp(seg.Start), stamp(seg.End), seg.Records, bytes(seg.Bytes), seg.Checkpoints)
		}
	}
	if len(s.Missing) > 0 {
		fmt.Fprintf(w, "Missing segments (deleted by hand?): %v\n", s.Missing)
	}
	return w.Flush()
}

// describe names a collection as a header says it.
func describe(c recording.Collection) string {
	out := c.Resource
	if c.Name != "" {
		out += "/" + c.Name
	}
	if c.Namespace != "" {
		out += " in " + c.Namespace
	}
	if c.Context != "" {
		out += " (" + c.Context + ")"
	}
	if c.Role != "root" {
		out += " [" + c.Role + "]"
	}
	return out
}

// stamp is a time as the summary says it.
func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05Z") }

// bytes is a size in binary units.
func bytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
