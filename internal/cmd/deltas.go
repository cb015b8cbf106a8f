// Package cmd is the kubectl deltas command: flags, validation, and the run
// loop that merges the deltas of one informer pipeline per resource into one
// output stream.
package cmd

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/klog/v2"

	"github.com/kubectl-deltas/kubectl-deltas/internal/condition"
	"github.com/kubectl-deltas/kubectl-deltas/internal/connection"
	"github.com/kubectl-deltas/kubectl-deltas/internal/flaghelp"
	"github.com/kubectl-deltas/kubectl-deltas/internal/history"

	"github.com/kubectl-deltas/kubectl-deltas/internal/cmd/completion"
	"github.com/kubectl-deltas/kubectl-deltas/internal/cmd/recordinginfo"
	versioncmd "github.com/kubectl-deltas/kubectl-deltas/internal/cmd/version"
	"github.com/kubectl-deltas/kubectl-deltas/internal/informer"
	"github.com/kubectl-deltas/kubectl-deltas/internal/live"
	"github.com/kubectl-deltas/kubectl-deltas/internal/otlp"
	"github.com/kubectl-deltas/kubectl-deltas/internal/printer"
	"github.com/kubectl-deltas/kubectl-deltas/internal/progress"
	"github.com/kubectl-deltas/kubectl-deltas/internal/reconcile"
	"github.com/kubectl-deltas/kubectl-deltas/internal/stage"
	"github.com/kubectl-deltas/kubectl-deltas/internal/targets"
	"github.com/kubectl-deltas/kubectl-deltas/internal/timeline"
	"github.com/kubectl-deltas/kubectl-deltas/internal/version"
)

const (
	deltasLong = `Print every change to Kubernetes resources as an informer sees it (docs/guarantees.md).`

	// deltasExample is one line per task the README's quick start shows.
	deltasExample = `  Watch a type               kubectl deltas configmaps -n demo
  What changed, by whom      kubectl deltas deploy/web --diff --show-manager
  Follow a rollout, wait     kubectl deltas deploy/web --tree --until=status=Current --timeout=5m
  Record, then look back     kubectl deltas cm --record=s.zst, later --replay=s.zst --at=-10s
  Draw a timeline            kubectl deltas deploy/web --tree --timeline=web.html
  Several clusters           kubectl deltas deploy/web --context=staging,prod`
)

// Exit codes: 0 for a normal end (--count, --timeout, --until-synced, the
// reader went away), 1 for an error, 2 when a --fail-when held, 130 when
// interrupted.
const (
	exitOK              = 0
	exitError           = 1
	exitConditionFailed = 2
	exitInterrupted     = 130
)

// ExitError ends the command with Code. A nil Err means the message was
// already printed (or there is none to print).
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// DeltasOptions holds the flag groups of the command, each owned by the
// package that acts on it, and the state of one run.
type DeltasOptions struct {
	// Clusters: which clusters (kubectl's connection flags, --context,
	// --all-contexts, --skip-unavailable).
	Clusters *connection.Flags
	// Targets: what to watch besides the arguments (--all-types,
	// --exclude, -A, --tree, --events).
	Targets *targets.Flags
	// ListWatch: how lists and watches are made (selectors,
	// --metadata-only, paging, --watch-list, --resource-version, …).
	ListWatch *informer.ListWatchFlags
	// Records: what a record holds and which are printed (--types,
	// --watch-only, --where, --diff, Secrets, --health, …).
	Records *stage.Flags
	// Wait: when the run stops (--until, --fail-when, --timeout,
	// --count, --until-synced, -q).
	Wait *condition.Flags
	// Output: the format and what human formats show (-o, --color, …).
	Output *printer.Flags
	// History: the recording written (--record) or played instead of a
	// cluster (--replay, --at, --from, --to).
	History *history.Flags
	// Progress: the progress line of long initial lists and replays.
	Progress *progress.Flags
	// Timeline: the page drawn of the stream (--timeline).
	Timeline *timeline.Flags
	// Queue: the workqueue fed with the handler calls (--queue).
	Queue *reconcile.Flags
	// Live: the view redrawn in place on a terminal (--live).
	Live *live.Flags
	// Export: the records sent to an OpenTelemetry collector (--otlp).
	Export *otlp.Flags

	// Set by Complete: the arguments as given and parsed (nil with
	// --all-types), and the contexts of a multi-cluster run (nil for one
	// cluster).
	args         []string
	resourceArgs []targets.Arg
	contextNames []string
	// asRecorded: a replay given no type, --tree nor --events plays what was recorded, as it was.
	asRecorded bool
	// exportTo is --otlp's configuration, read by Validate (nil without it).
	exportTo *otlp.Settings
	// exportFeed takes the records: the exporter's, or run.resend's.
	exportFeed *otlp.Feed

	// clients makes a cluster's clients from its REST config; tests give
	// client-go's fakes.
	clients targets.ClientMaker

	genericiooptions.IOStreams
}

// binaryName is the plugin's executable. Shell completion scripts are
// generated for the root command's Name(), so that must be this name
// (cobra's convention for kubectl plugins: Use "kubectl-deltas …" and the
// display name "kubectl deltas" for help and usage).
const binaryName = "kubectl-deltas"

// NewDeltasOptions returns the options with every default set.
func NewDeltasOptions(streams genericiooptions.IOStreams) *DeltasOptions {
	return &DeltasOptions{
		Clusters:  connection.NewFlags(streams),
		Targets:   targets.NewFlags(),
		ListWatch: informer.NewListWatchFlags(),
		Records:   stage.NewFlags(),
		Wait:      condition.NewFlags(),
		Output:    printer.NewFlags(),
		History:   history.NewFlags(),
		Progress:  progress.NewFlags(),
		Timeline:  timeline.NewFlags(),
		Queue:     reconcile.NewFlags(),
		Live:      live.NewFlags(),
		Export:    otlp.NewFlags(),
		clients:   targets.RealClients,
		IOStreams: streams,
	}
}

// newCmdDeltas is the command of o's flags.
func newCmdDeltas(o *DeltasOptions) *cobra.Command {
	cmd := &cobra.Command{
		// The name is the binary's, so that generated completion scripts
		// complete kubectl-deltas; help shows "kubectl deltas" through the
		// display-name annotation.
		Use:     binaryName + " TYPE[.VERSION][.GROUP][,TYPE...] [NAME ...] | TYPE/NAME ... [flags]",
		Short:   "Print every delta an informer pops for Kubernetes resources",
		Long:    deltasLong,
		Example: deltasExample,
		Annotations: map[string]string{
			cobra.CommandDisplayNameAnnotation: "kubectl deltas",
		},
		Version:       version.Get().Version,
		Args:          cobra.ArbitraryArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Complete(cmd, args); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.Context())
		},
	}
	cmd.SetVersionTemplate(version.Get().Text()) // the client build, as "version --client" prints it
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return withHabitHint(err) })

	flags := cmd.Flags()
	// Declared here so that cobra adds no -v shorthand: kubectl users type
	// -v=6 out of habit. cobra still prints the version for it.
	flags.Bool("version", false, "Print the client version information and exit.")
	// The groups file their flags under --help's headings as they declare
	// them; within a heading, --help keeps this order.
	o.Clusters.AddFlags(flags)
	o.Targets.AddFlags(flags)
	o.Output.AddFlags(flags)
	o.Live.AddFlags(flags)
	o.Progress.AddFlags(flags)
	o.Wait.AddFlags(flags)
	o.Records.AddFlags(flags)
	o.ListWatch.AddFlags(flags)
	o.History.AddFlags(flags)
	o.Timeline.AddFlags(flags)
	o.Export.AddFlags(flags)
	flaghelp.Pair(flags, "no-headers", "timestamps", "No header line in wide and columns / each line's time first")
	o.Queue.AddFlags(flags)
	setHelp(cmd)

	_ = cmd.RegisterFlagCompletionFunc("output", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return printer.AllowedFormats(), cobra.ShellCompDirectiveNoFileComp
	})
	_ = cmd.RegisterFlagCompletionFunc("types", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return stage.TypeNames(), cobra.ShellCompDirectiveNoFileComp
	})
	_ = cmd.RegisterFlagCompletionFunc("color", fixedCompletion("auto", "always", "never"))
	_ = cmd.RegisterFlagCompletionFunc("watch-list", fixedCompletion("auto", "true", "false"))
	_ = cmd.RegisterFlagCompletionFunc("relist", fixedCompletion("changed", "all"))
	_ = cmd.RegisterFlagCompletionFunc("fifo", fixedCompletion("real", "delta"))
	_ = cmd.RegisterFlagCompletionFunc("queue-key", fixedCompletion("object", "owner"))
	completion.Register(cmd, o.Clusters, func() bool { return o.Targets.AllNamespaces })

	cmd.AddCommand(versioncmd.NewCmdVersion(o.Clusters, o.IOStreams), recordinginfo.NewCmdRecording(o.IOStreams), newCmdOptions(cmd, o.IOStreams))
	return cmd
}

func fixedCompletion(values ...string) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return values, cobra.ShellCompDirectiveNoFileComp
	}
}

// Execute runs the command with args and returns the process exit code.
// Errors are printed kubectl-style, "error: …", on stderr.
func Execute(streams genericiooptions.IOStreams, args []string) int {
	// A closed stdout must give EPIPE errors (exit 0), not kill the
	// process with SIGPIPE.
	signal.Ignore(syscall.SIGPIPE)
	silenceKlog()
	return execute(NewDeltasOptions(streams), args)
}

// execute runs the command of o with args and returns the exit code,
// having printed its error.
func execute(o *DeltasOptions, args []string) int {
	streams := o.IOStreams
	cmd := newCmdDeltas(o)
	cmd.SetArgs(args)
	cmd.SetOut(streams.Out)
	cmd.SetErr(streams.ErrOut)
	err := cmd.ExecuteContext(context.Background())
	if err == nil {
		return exitOK
	}
	var exit *ExitError
	if errors.As(err, &exit) {
		if exit.Err != nil {
			fmt.Fprintf(streams.ErrOut, "error: %v\n", exit.Err)
		}
		return exit.Code
	}
	msg := err.Error()
	fmt.Fprintf(streams.ErrOut, "error: %s\n", msg)
	if isUsageError(msg) {
		fmt.Fprintf(streams.ErrOut, "See 'kubectl deltas --help' for usage.\n")
	}
	return exitError
}

// silenceKlog stops client-go's klog lines ("Unhandled Error" from
// discovery and the like) from reaching stderr: the command reports what
// matters itself, kubectl-style, once.
func silenceKlog() {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	for name, value := range map[string]string{"logtostderr": "false", "alsologtostderr": "false", "stderrthreshold": "FATAL", "one_output": "true"} {
		_ = fs.Set(name, value)
	}
	klog.SetOutput(io.Discard)
}

// withHabitHint adds a hint to the error of a flag that kubectl get takes
// and this command does not, because it does what the flag asks always:
// -w/--watch.
func withHabitHint(err error) error {
	msg := err.Error()
	if msg == "unknown flag: --watch" || strings.HasPrefix(msg, "unknown flag: --watch=") || strings.HasPrefix(msg, "unknown shorthand flag: 'w' in ") {
		return fmt.Errorf("%w: kubectl deltas always watches, as kubectl get -w does; drop it (--watch-only skips the initial list, --until-synced lists and exits)", err)
	}
	return err
}

// isUsageError tells cobra's flag and argument errors, which deserve a
// pointer to --help.
func isUsageError(msg string) bool {
	for _, p := range []string{"unknown flag", "unknown shorthand flag", "flag needs an argument", "invalid argument", "bad flag syntax"} {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}

// Complete parses the arguments and reads, for several contexts, the
// kubeconfig: it sends no request, so that flag mistakes are reported
// before any server is touched.
func (o *DeltasOptions) Complete(cmd *cobra.Command, args []string) error {
	o.args = args
	o.asRecorded = len(args) == 0 && (cmd == nil || !cmd.Flags().Changed("tree") && !cmd.Flags().Changed("events"))
	if !o.Targets.AllTypes && len(args) > 0 {
		var err error
		if o.resourceArgs, err = targets.ParseArgs(args); err != nil {
			return err
		}
	}
	if o.History.Replaying() {
		return nil // the contexts are the recording's
	}
	var err error
	o.contextNames, err = o.Clusters.ContextNames()
	return err
}

// Validate checks every group's values, then the combinations across
// groups. It reads no file and sends no request.
func (o *DeltasOptions) Validate() error {
	lw := o.ListWatch
	targetsValidate := func() error { return o.Targets.Validate(o.args, o.resourceArgs, lw.Selected(), lw.MetadataOnly) }
	if o.History.Replaying() {
		targetsValidate = o.validateReplay
	}
	for _, validate := range []func() error{
		o.Output.Validate,
		lw.Validate,
		o.Records.Validate,
		o.Wait.Validate,
		func() error { return o.Wait.ValidateQuiet(o.History.Recording() || o.Export.Enabled()) },
		o.History.Validate,
		o.Timeline.Validate,
		func() error { return o.Queue.Validate(o.ListWatch.Handler) },
		func() error { return o.Live.Validate(o.Output.Output, o.Wait.Quiet, o.Queue.Queue, o.Out) },
		targetsValidate,
		func() (err error) { o.exportTo, err = o.Export.Config(os.Getenv); return err },
	} {
		if err := validate(); err != nil {
			return err
		}
	}
	switch {
	case o.Wait.UntilSynced && o.Records.WatchOnly:
		return errors.New("--until-synced cannot be used with --watch-only: there would be nothing to print")
	case o.Wait.UntilSynced && lw.Resuming():
		return errors.New("--until-synced cannot be used with --resource-version: a resumed stream has no initial list")
	case o.Records.FailAfterSet() && !o.Wait.OnHealth():
		return errors.New("--fail-after says when a transient failure counts as Failed, for status= conditions: add --until=status=… or --fail-when=status=…")
	case lw.FIFO != "" && !lw.Handler:
		return errors.New("--fifo chooses the queue whose handler calls --handler shows: add --handler (the deltas printed without it are the DeltaFIFO's)")
	case lw.MetadataOnly && (o.Records.AsksHealth() || o.Wait.OnHealth()):
		return errors.New("--metadata-only objects carry no status to judge their health: drop --metadata-only, or --health and status= conditions")
	}
	return nil
}

// buildOutput builds what the flags configure for the stream's output —
// the record stage (--types, --where and --ignore-path compiled), the
// waiter and the printer (a template file read and parsed) — before any
// request: their mistakes are errors naming the flag.
func (r *run) buildOutput() error {
	// An export holds what -o json prints, as a recording does.
	judges := r.Records.Judges(r.Output.HealthByDefault() || r.exportTo != nil || r.exportFeed != nil, r.ListWatch.MetadataOnly)
	if r.live = r.Live.ToRun(r.Out, r.ErrOut, r.Output.Color, strings.Join(os.Args[1:], " "), r.Records.Diff, r.replayClock()); r.live != nil {
		r.ErrOut = r.live.Stderr() // held while the view is drawn
	}
	var err error
	if r.stage, err = r.Records.ToStage(r.Output.TableRows(), judges, r.ListWatch.Handler); err != nil {
		return err
	}
	// A recording holds what -o json prints: health unless --health=false
	// (or --metadata-only), whatever -o is.
	fill, err := r.Records.ToRecordStage(r.Records.Judges(true, r.ListWatch.MetadataOnly))
	if err != nil {
		return err
	}
	if r.recorder, err = r.History.OpenRecorder(fill, r.ErrOut); err != nil {
		return err
	}
	if err = r.newObservers(); err != nil {
		return err
	}
	r.waiter = r.Wait.ToWaiter(r.ErrOut, r.ListWatch.MetadataOnly, r.Records.FailAfter, r.replayClock())
	opts := printer.Options{
		ContextWidth:  connection.ContextWidth(r.contextNames),
		AllNamespaces: r.Targets.AllNamespaces,
		Health:        judges && (r.Records.Health || r.Output.TableRows()),
		Diff:          r.Records.Diff,
	}
	if r.player != nil {
		opts.Now = r.replayClock() // AGE in a replay is at the recording's time
		// As the recorded run showed it: one namespace without its name.
		opts.AllNamespaces = r.replayNamespace() == "" && r.player.OneNamespace() == ""
	}
	if r.printer, err = r.Output.ToPrinter(r.Out, opts); err != nil {
		return err
	}
	if r.live != nil {
		r.printer = live.Discard{} // the view draws the records
	}
	if _, ok := r.printer.(printer.QueuePrinter); r.Queue.Queue && !ok && r.live == nil {
		return fmt.Errorf("--queue prints its reconciles as text, JSON or YAML: drop -o %s", r.Output.Output)
	}
	return r.buildExporter()
}

// buildExporter builds --otlp's exporter; its records' cluster is the
// context of a run on one cluster (several: each record's; a replay: the
// recorded run's).
func (r *run) buildExporter() (err error) {
	if r.exportTo == nil {
		return nil
	}
	cluster := ""
	switch {
	case r.player != nil:
		cluster = r.player.Cluster() // the recorded run's
	case len(r.contextNames) == 0:
		cluster, _ = r.Clusters.CurrentContext()
	}
	if r.exporter, err = otlp.Open(r.exportTo, cluster, version.Get().Version, r.ErrOut, r.waiter.Active(), r.player == nil); err == nil {
		r.exportFeed = r.exporter.Feed()
	}
	return err
}
