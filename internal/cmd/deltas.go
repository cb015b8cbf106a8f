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
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/klog/v2"

	"github.com/kubectl-deltas/kubectl-deltas/internal/celexpr"
	"github.com/kubectl-deltas/kubectl-deltas/internal/condition"
	"github.com/kubectl-deltas/kubectl-deltas/internal/connection"
	"github.com/kubectl-deltas/kubectl-deltas/internal/events"
	"github.com/kubectl-deltas/kubectl-deltas/internal/printer"
	"github.com/kubectl-deltas/kubectl-deltas/internal/record"
	"github.com/kubectl-deltas/kubectl-deltas/internal/targets"
	"github.com/kubectl-deltas/kubectl-deltas/internal/version"
)

const (
	deltasLong = `Print every change to Kubernetes resources as an informer sees it.

kubectl deltas lists and watches the given resources through its own informer
machinery (a Reflector feeding a DeltaFIFO whose known objects are an indexed
Store, with client-go's semantics) and prints every delta it pops: Replaced
for the objects of the initial list, then Added, Updated and Deleted as they
happen, Replaced and Deleted (final state unknown) after a relist, and Sync
on periodic resyncs.

It never exits because the server ended a watch: it re-watches from the last
resourceVersion, relists with tombstones when that expired, and backs off
while the server is unreachable. stdout carries data only; warnings go to
stderr.`

	deltasExample = `  # Watch ConfigMaps in the current namespace
  kubectl deltas configmaps

  # Several types in one stream, across all namespaces, as JSON lines
  kubectl deltas deployments.apps,configmaps -A -o json

  # Only deletions, piped into jq
  kubectl deltas pods -o json --types=Deleted | jq -c '{name: .name, finalStateUnknown}'

  # One object, what changed field by field
  kubectl deltas deployment/web --diff

  # Everything that changes in a namespace (categories work too: all, or one a CRD declares)
  kubectl deltas --all-types -n demo
  kubectl deltas all -n demo

  # A snapshot of the current state with delta types, then exit
  kubectl deltas secrets --until-synced -o name

  # A new Deployment and everything it owns (ReplicaSets, Pods), until it is Available
  kubectl deltas deployment/web --tree --until=condition=Available --timeout=5m

  # The same Deployment in two clusters, one stream
  kubectl deltas deployment/web --context=staging,prod

  # Stop after 10 deltas or 30 seconds, whichever comes first
  kubectl deltas cm --count=10 --timeout=30s`
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

// DeltasOptions holds the flags and the state of one run.
type DeltasOptions struct {
	configFlags *genericclioptions.ConfigFlags

	// Flags.
	output            string
	allNamespaces     bool
	labelSelector     string
	fieldSelector     string
	types             []string
	watchOnly         bool
	resync            time.Duration
	count             int
	timeout           time.Duration
	untilSynced       bool
	showManagedFields bool
	showSecretData    bool
	showManager       bool
	health            bool
	healthSet         bool
	events            bool
	timestamps        bool
	noHeaders         bool
	color             string
	chunkSize         int64
	watchList         string
	resourceVersion   string
	relist            string
	maxUpdatedBacklog int
	minWatchTimeout   time.Duration
	diff              bool
	changedOnly       bool
	status            bool
	ignorePaths       []string
	allTypes          bool
	metadataOnly      bool
	until             []string
	quiet             bool
	where             []string
	untilAny          []string
	failWhen          []string
	exclude           []string
	excludeSet        bool
	tree              bool
	contexts          []string
	allContexts       bool
	skipUnavailable   bool

	// Set by Complete.
	args []string
	// resourceArgs are args parsed; nil with --all-types.
	resourceArgs []targets.Arg
	chunkSizeSet bool
	// printer prints the records; stage makes them from popped deltas.
	printer printer.Printer
	stage   *record.Stage
	// contextNames are the contexts of a multi-cluster run (--context=a,b,
	// --all-contexts); nil for one cluster.
	contextNames []string
	// waiter holds the parsed --until, --until-any and --fail-when.
	waiter *condition.Waiter
	// join adds the Events of the watched objects (--events); set by
	// Run's buildEngine, nil without --events.
	join *events.Join

	genericiooptions.IOStreams
}

// NewDeltasOptions returns the options with every default set.
func NewDeltasOptions(streams genericiooptions.IOStreams) *DeltasOptions {
	return &DeltasOptions{
		configFlags:       connection.NewConfigFlags(streams),
		output:            "text",
		types:             []string{},
		color:             "auto",
		chunkSize:         500,
		watchList:         "auto",
		relist:            "changed",
		maxUpdatedBacklog: 10,
		status:            true,
		ignorePaths:       []string{},
		IOStreams:         streams,
	}
}

// NewCmdDeltas returns the kubectl deltas command.
func NewCmdDeltas(streams genericiooptions.IOStreams) *cobra.Command {
	o := NewDeltasOptions(streams)
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
		ValidArgsFunction: o.completeArgs,
	}
	cmd.SetVersionTemplate(versionTemplate())

	flags := cmd.Flags()
	// Declared here so that cobra adds no -v shorthand: kubectl users type
	// -v=6 out of habit. cobra still prints the version for it.
	flags.Bool("version", false, "Print the client version information and exit.")
	o.configFlags.AddFlags(flags)
	// --context takes several contexts (comma-separated, or repeated).
	if f := flags.Lookup("context"); f != nil {
		f.Value = &contextList{names: &o.contexts, single: o.configFlags.Context}
		f.Usage = "The name of the kubeconfig context to use; several (comma-separated or repeated) merge their clusters into one stream, each record naming its context"
	}
	flags.BoolVar(&o.allContexts, "all-contexts", o.allContexts, "Watch every context of the kubeconfig: one stream, each record naming its context.")
	flags.BoolVar(&o.skipUnavailable, "skip-unavailable", o.skipUnavailable, "With several contexts: a cluster that cannot be reached or watched at start is skipped with a warning instead of ending the run.")
	flags.StringVarP(&o.output, "output", "o", o.output, "Output format: "+strings.Join(printer.AllowedFormats(), "|")+" (text is the default).")
	flags.BoolVarP(&o.allNamespaces, "all-namespaces", "A", o.allNamespaces, "Watch the resources in all namespaces.")
	flags.StringVarP(&o.labelSelector, "selector", "l", o.labelSelector, "Label selector to filter on, supports '=', '==', '!=', 'in', 'notin' (e.g. -l key1=value1,key2=value2). Evaluated by the server.")
	flags.StringVar(&o.fieldSelector, "field-selector", o.fieldSelector, "Field selector to filter on, supports '=', '==', and '!=' (e.g. --field-selector metadata.name=demo). Evaluated by the server.")
	flags.StringSliceVar(&o.types, "types", o.types, "Print only these delta types: "+record.TypeList()+" (default: all).")
	flags.BoolVar(&o.watchOnly, "watch-only", o.watchOnly, "Do not print the initial list (it is still listed, to know the starting state).")
	flags.DurationVar(&o.resync, "resync", o.resync, "Emit Sync deltas for every known object this often (0 = never).")
	flags.IntVar(&o.count, "count", o.count, "Exit (0) after printing this many deltas (0 = no limit).")
	flags.DurationVar(&o.timeout, "timeout", o.timeout, "Exit after this long: 0, or 1 while waiting for an --until condition (0 = run until interrupted).")
	flags.BoolVar(&o.untilSynced, "until-synced", o.untilSynced, "Print the initial list, then exit (0).")
	flags.BoolVar(&o.showManagedFields, "show-managed-fields", o.showManagedFields, "Keep metadata.managedFields in printed objects (stripped by default).")
	flags.BoolVar(&o.showSecretData, "show-secret-data", o.showSecretData, "Print the values of Secrets (data, stringData, last-applied-configuration); redacted by default.")
	flags.BoolVar(&o.health, "health", o.health, "Judge each object's health as kstatus does: text lines end with it (\"Updated: replicaset.apps web-7d4 InProgress: Ready: 1/3\"). JSON and YAML records carry it unless --health=false.")
	flags.BoolVar(&o.events, "events", o.events, "Also print the Events whose subject is a watched object (by UID), in the same stream: text \"Event: pod web-x Warning FailedScheduling: …\", JSON a record of kind Event. A repetition is an Updated; Events' expiry is not printed. Events of other objects are not shown nor kept.")
	flags.BoolVar(&o.showManager, "show-manager", o.showManager, "Text output: name the field manager of each change (\"Updated: demo by kubectl-edit\").")
	flags.BoolVar(&o.timestamps, "timestamps", o.timestamps, "Prefix human-readable output with the time each delta was popped.")
	flags.BoolVar(&o.noHeaders, "no-headers", o.noHeaders, "Do not print the header of wide and custom-columns output.")
	flags.StringVar(&o.color, "color", o.color, "Color human-readable output: auto (on a terminal, unless NO_COLOR is set), always or never.")
	flags.Int64Var(&o.chunkSize, "chunk-size", o.chunkSize, "List in pages of this many objects (0 = one request).")
	flags.StringVar(&o.watchList, "watch-list", o.watchList, "Get the initial state as a stream of watch events (sendInitialEvents): true, false, or auto (the faster choice, currently list then watch). true falls back to list+watch if the server refuses.")
	flags.StringVar(&o.resourceVersion, "resource-version", o.resourceVersion, "Start watching from this resourceVersion instead of listing (resume a stream). An expired one falls back to a full relist.")
	flags.StringVar(&o.relist, "relist", o.relist, "After a relist, print Replaced for: changed (objects whose resourceVersion changed) or all.")
	flags.IntVar(&o.maxUpdatedBacklog, "max-update-backlog", o.maxUpdatedBacklog, "When output falls behind, fold more than this many queued updates of one object into the newest (the record says how many were coalesced; 0 = keep all).")
	flags.BoolVar(&o.diff, "diff", o.diff, "Show what changed in Updated deltas (and in Replaced deltas of objects that changed during a relist): indented lines in text, a \"changes\" JSON Patch in json/yaml, a CHANGES count in wide.")
	flags.BoolVar(&o.changedOnly, "changed-only", o.changedOnly, "Drop Updated deltas whose diff is empty once ignored paths (resourceVersion, managedFields, generation, --ignore-path) are left out.")
	flags.BoolVar(&o.status, "status", o.status, "Include status in diffs; --status=false ignores status changes (with --changed-only, status-only updates are dropped).")
	flags.StringArrayVar(&o.ignorePaths, "ignore-path", o.ignorePaths, "Leave this field out of diffs (repeatable): a JSON pointer (/metadata/labels/x) or a dotted path (metadata.labels.x).")
	flags.BoolVar(&o.allTypes, "all-types", o.allTypes, "Watch every resource type the server serves that can be listed and watched, CRDs and aggregated APIs included (cluster-scoped types with -A only). Types you may not list and watch are skipped with a note.")
	flags.StringArrayVar(&o.until, "until", o.until, "Exit 0 as soon as every watched object meets this condition (repeatable: all must hold), as kubectl wait --for: delete, create, condition=NAME[=VALUE] or jsonpath='{PATH}'[=VALUE], or cel='EXPR' (CEL, as --where). A named object that does not exist yet is waited for. With --timeout, running out of time exits 1.")
	flags.StringArrayVar(&o.where, "where", o.where, "Print only the deltas for which this CEL expression is true (repeatable: all must be), over object, oldObject, deltaType, kind, apiVersion, resource and name, in the CEL environment of Kubernetes' admission policies, e.g. --where='object.metadata.?labels.tier.orValue(\"\") == \"web\"' (an optional cel= prefix is allowed). Everything is still watched.")
	flags.BoolVar(&o.tree, "tree", o.tree, "Also print the deltas of everything the named or selected objects own, transitively (by metadata.ownerReferences): a Deployment's ReplicaSets and their Pods, a Job's Pods. Text shows the owner path, JSON an owners field; --until applies to the named objects, --fail-when to all.")
	flags.BoolVarP(&o.quiet, "quiet", "q", o.quiet, "With --until, --until-any or --fail-when: print no deltas, only the outcome on stderr (and the exit code).")
	flags.StringArrayVar(&o.untilAny, "until-any", o.untilAny, "Exit 0 as soon as one watched object meets this condition (repeatable: any may hold).")
	flags.StringArrayVar(&o.failWhen, "fail-when", o.failWhen, "Exit 2 as soon as any watched object meets this condition (repeatable), after printing the delta that made it hold, e.g. --fail-when=condition=Failed.")
	flags.BoolVar(&o.metadataOnly, "metadata-only", o.metadataOnly, "List and watch each object's metadata only (PartialObjectMetadata): far less to transfer and keep, for --all-types -A on large clusters. The printed object is the metadata object; --diff diffs metadata. Types that cannot serve it are watched whole, with a note.")
	flags.StringSliceVar(&o.exclude, "exclude", o.exclude, "With --all-types or a category (all, or one a CRD declares): leave these types out. Default: events, events.events.k8s.io and leases.coordination.k8s.io; --exclude= (empty) leaves nothing out.")
	flags.DurationVar(&o.minWatchTimeout, "min-watch-timeout", o.minWatchTimeout, "Shortest server-side watch timeout; each watch lasts a random time between this and twice this (default 5m).")
	_ = flags.MarkHidden("min-watch-timeout")

	_ = cmd.RegisterFlagCompletionFunc("output", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return printer.AllowedFormats(), cobra.ShellCompDirectiveNoFileComp
	})
	_ = cmd.RegisterFlagCompletionFunc("types", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return record.TypeNames(), cobra.ShellCompDirectiveNoFileComp
	})
	_ = cmd.RegisterFlagCompletionFunc("color", fixedCompletion("auto", "always", "never"))
	_ = cmd.RegisterFlagCompletionFunc("watch-list", fixedCompletion("auto", "true", "false"))
	_ = cmd.RegisterFlagCompletionFunc("relist", fixedCompletion("changed", "all"))
	o.registerConfigCompletions(cmd)

	cmd.AddCommand(NewCmdVersion(o.configFlags, streams))
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
	cmd := NewCmdDeltas(streams)
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

// Complete derives what the flags imply: the record stage (delta types,
// diff options) and the printer, which reads the template file of
// --output=…-file. It sends no request and leaves the kubeconfig alone:
// flag mistakes are reported before any server is touched.
func (o *DeltasOptions) Complete(cmd *cobra.Command, args []string) error {
	o.args = args
	if !o.allTypes && len(args) > 0 {
		var err error
		if o.resourceArgs, err = targets.ParseArgs(args); err != nil {
			return err
		}
	}
	o.chunkSizeSet = cmd.Flags().Changed("chunk-size")
	o.excludeSet = cmd.Flags().Changed("exclude")
	o.healthSet = cmd.Flags().Changed("health")

	types, err := record.ParseTypes(o.types)
	if err != nil {
		return err
	}
	where := make([]*celexpr.Program, 0, len(o.where))
	for _, expr := range o.where {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(expr), "cel="); ok {
			expr = celexpr.Unquote(rest) // --where=cel='EXPR', as --until=cel='EXPR'
		}
		p, err := celexpr.Compile("--where", expr)
		if err != nil {
			return err
		}
		where = append(where, p)
	}
	o.stage, err = record.NewStage(record.Options{
		Types:          types,
		WatchOnly:      o.watchOnly,
		RelistAll:      o.relist == "all",
		ShowSecretData: o.showSecretData,
		Where:          where,
		Health:         o.judgesHealth(),
		Rows:           o.output == "wide",
		Diff: record.DiffOptions{
			Show:         o.diff,
			ChangedOnly:  o.changedOnly,
			IgnoreStatus: !o.status,
			IgnorePaths:  o.ignorePaths,
		},
	})
	if err != nil {
		return err
	}
	until, err := parseConditions("--until", o.until)
	if err != nil {
		return err
	}
	untilAny, err := parseConditions("--until-any", o.untilAny)
	if err != nil {
		return err
	}
	failWhen, err := parseConditions("--fail-when", o.failWhen)
	if err != nil {
		return err
	}
	o.waiter = condition.NewWaiter(until, untilAny, failWhen, o.ErrOut)
	if o.metadataOnly {
		o.waiter.SetMetadataOnly()
	}
	if o.contextNames, err = connection.Contexts(o.configFlags, o.contexts, o.allContexts); err != nil {
		return err
	}
	color, err := resolveColor(o.color, o.Out)
	if err != nil {
		return err
	}
	o.printer, err = printer.New(printer.Options{
		ContextWidth:  contextWidth(o.contextNames),
		Format:        o.output,
		AllNamespaces: o.allNamespaces,
		Timestamps:    o.timestamps,
		NoHeaders:     o.noHeaders,
		Color:         color,
		ShowManager:   o.showManager,
		Health:        o.judgesHealth() && (o.health || o.output == "wide"),
		Diff:          o.diff,
	})
	return err
}

// judgesHealth reports whether records carry the objects' health: as
// --health says when given; else in the formats that print whole records
// (JSON, YAML, templates) and wide's HEALTH column, not in text and name;
// never under --metadata-only, whose objects have no status.
func (o *DeltasOptions) judgesHealth() bool {
	switch {
	case o.metadataOnly:
		return false
	case o.healthSet:
		return o.health
	}
	switch o.output {
	case "", "text", "name":
		return false
	}
	return true
}

// resolveColor turns --color into a yes or no.
func resolveColor(mode string, out io.Writer) (bool, error) {
	switch mode {
	case "always":
		return true, nil
	case "never":
		return false, nil
	case "auto":
		if _, set := os.LookupEnv("NO_COLOR"); set {
			return false, nil
		}
		f, ok := out.(*os.File)
		if !ok {
			return false, nil
		}
		info, err := f.Stat()
		return err == nil && info.Mode()&os.ModeCharDevice != 0, nil
	default:
		return false, fmt.Errorf("invalid --color value %q: must be auto, always or never", mode)
	}
}

// Validate checks flag values and combinations. It reads no file and sends
// no request.
func (o *DeltasOptions) Validate() error {
	switch {
	case o.allTypes && len(o.args) > 0:
		return fmt.Errorf("--all-types watches every type: drop the arguments %q or --all-types", strings.Join(o.args, " "))
	case o.allTypes:
	case len(o.args) == 0:
		return errors.New(`you must specify the type of resource to watch (or --all-types). Use "kubectl api-resources" for a complete list of supported resources`)
	case o.tree && o.resourceArgs[0].Name == "" && o.labelSelector == "" && o.fieldSelector == "":
		return fmt.Errorf("--tree follows what given objects own: name them (%s/NAME) or select them with -l/--selector", o.resourceArgs[0].Type)
	}
	for _, a := range o.resourceArgs {
		if a.Name != "" && o.allNamespaces {
			return errors.New("a resource cannot be watched by name across all namespaces: drop -A or the name")
		}
		if a.Name != "" && (o.labelSelector != "" || o.fieldSelector != "") {
			return errors.New("a name cannot be given together with --selector or --field-selector")
		}
	}
	if o.tree && o.allTypes {
		return errors.New("--tree cannot be used with --all-types: name the objects to follow (deployment/web) or select them with -l")
	}
	switch {
	case o.count < 0:
		return fmt.Errorf("invalid --count %d: must be 0 (no limit) or more", o.count)
	case o.timeout < 0:
		return fmt.Errorf("invalid --timeout %s: must be 0 (no limit) or more", o.timeout)
	case o.resync < 0:
		return fmt.Errorf("invalid --resync %s: must be 0 (off) or more", o.resync)
	case o.resync > 0 && o.resync < time.Second:
		return fmt.Errorf("invalid --resync %s: must be at least 1s", o.resync)
	case o.chunkSize < 0:
		return fmt.Errorf("invalid --chunk-size %d: must be 0 (no paging) or more", o.chunkSize)
	case o.maxUpdatedBacklog < 0:
		return fmt.Errorf("invalid --max-update-backlog %d: must be 0 (no limit) or more", o.maxUpdatedBacklog)
	case o.minWatchTimeout < 0:
		return fmt.Errorf("invalid --min-watch-timeout %s", o.minWatchTimeout)
	case o.watchList != "auto" && o.watchList != "true" && o.watchList != "false":
		return fmt.Errorf("invalid --watch-list value %q: must be auto, true or false", o.watchList)
	case o.relist != "changed" && o.relist != "all":
		return fmt.Errorf("invalid --relist value %q: must be changed or all", o.relist)
	case o.quiet && len(o.until)+len(o.untilAny)+len(o.failWhen) == 0:
		return errors.New("--quiet only applies when waiting for a condition: add --until, --until-any or --fail-when")
	case o.untilSynced && len(o.until)+len(o.untilAny)+len(o.failWhen) > 0:
		return errors.New("--until-synced cannot be used with --until, --until-any or --fail-when: use one way to stop")
	case o.untilSynced && o.watchOnly:
		return errors.New("--until-synced cannot be used with --watch-only: there would be nothing to print")
	case o.untilSynced && o.resourceVersion != "":
		return errors.New("--until-synced cannot be used with --resource-version: a resumed stream has no initial list")
	case o.resourceVersion == "0":
		return errors.New(`invalid --resource-version "0": give the resourceVersion of a previous delta to resume from`)
	}
	if o.metadataOnly && o.events {
		return errors.New("--events cannot be used with --metadata-only: an Event's message is not in its metadata; drop --metadata-only to see Events")
	}
	if o.metadataOnly && (o.healthSet && o.health || o.waiter != nil && o.waiter.OnHealth()) {
		return errors.New("--metadata-only objects carry no status to judge their health: drop --metadata-only, or --health and status= conditions")
	}
	if !o.diff && !o.changedOnly {
		if len(o.ignorePaths) > 0 {
			return errors.New("--ignore-path only applies to diffs: add --diff or --changed-only")
		}
		if !o.status {
			return errors.New("--status=false only applies to diffs: add --diff or --changed-only")
		}
	}
	return validateSelectors(o.labelSelector, o.fieldSelector)
}

// validateSelectors parses -l and --field-selector so that a bad one fails
// before any request.
func validateSelectors(labelSelector, fieldSelector string) error {
	if _, err := labels.Parse(labelSelector); err != nil {
		return fmt.Errorf("invalid --selector %q: %w", labelSelector, err)
	}
	if _, err := fields.ParseSelector(fieldSelector); err != nil {
		return fmt.Errorf("invalid --field-selector %q: %w", fieldSelector, err)
	}
	return nil
}

// parseConditions reads the values of one condition flag.
func parseConditions(flag string, values []string) ([]*condition.Condition, error) {
	out := make([]*condition.Condition, 0, len(values))
	for _, v := range values {
		c, err := condition.Parse(flag, v)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}
