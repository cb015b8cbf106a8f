package cmd

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-deltas/kubectl-deltas/internal/flaghelp"
)

// optionsHint is the last line of --help.
const optionsHint = `Commands: version, completion. "kubectl deltas options": kubeconfig, auth, impersonation flags.`

// setHelp makes --help of root show its flags under their headings
// (flaghelp), kubectl's connection flags left to the options command;
// the subcommands keep cobra's help.
func setHelp(root *cobra.Command) {
	cobraHelp := root.HelpFunc()
	root.SetHelpFunc(func(c *cobra.Command, args []string) {
		if c != root {
			cobraHelp(c, args)
			return
		}
		_ = writeHelp(c.OutOrStdout(), root)
	})
}

// writeHelp writes root's --help: what it does, its usage, the examples
// by task, the flags by heading, the subcommands and where the rest is.
func writeHelp(w io.Writer, root *cobra.Command) error {
	if _, err := fmt.Fprintf(w, "%s\nUsage: kubectl deltas TYPE[.VERSION][.GROUP][,TYPE...] [NAME ...] | TYPE/NAME ... [flags]\n\nExamples by task:\n%s\n\n", root.Long, root.Example); err != nil {
		return err
	}
	if err := flaghelp.Write(w, root.Flags(), flaghelp.Headings()...); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "%s\n", optionsHint)
	return err
}

// newCmdOptions returns the options command: root's kubectl flags (the
// kubeconfig, auth and impersonation ones), as kubectl options lists
// kubectl's. They are root's own flags: given to root, they work there.
func newCmdOptions(root *cobra.Command, streams genericiooptions.IOStreams) *cobra.Command {
	return &cobra.Command{
		Use:   "options",
		Short: "Print kubectl's flags that kubectl deltas takes too (kubeconfig, auth, impersonation)",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if _, err := fmt.Fprintln(streams.Out, "kubectl's flags, which kubectl deltas takes as kubectl does (-n and --context are in --help):"); err != nil {
				return err
			}
			for _, line := range flaghelp.Lines(root.Flags(), flaghelp.Global) {
				if _, err := fmt.Fprintln(streams.Out, line); err != nil {
					return err
				}
			}
			return nil
		},
	}
}
