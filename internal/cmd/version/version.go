// Package version is the version subcommand, as kubectl version: the
// client build, and the version of the server the connection flags reach.
package version

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	apimachineryversion "k8s.io/apimachinery/pkg/version"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-deltas/kubectl-deltas/internal/connection"
	build "github.com/kubectl-deltas/kubectl-deltas/internal/version"
)

// serverVersionTimeout bounds the server version request when
// --request-timeout is not given.
const serverVersionTimeout = 10 * time.Second

// Options are the flags of kubectl deltas version.
type Options struct {
	clusters   *connection.Flags
	clientOnly bool
	output     string
	genericiooptions.IOStreams
}

// versionOutput is the JSON/YAML form, shaped like kubectl version's.
type versionOutput struct {
	ClientVersion build.Info                `json:"clientVersion"`
	ServerVersion *apimachineryversion.Info `json:"serverVersion,omitempty"`
}

// NewCmdVersion returns the version subcommand.
func NewCmdVersion(clusters *connection.Flags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &Options{clusters: clusters, IOStreams: streams}
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the client and server version information",
		Long: `Print the version of kubectl deltas (version, git commit, build date, Go
version and platform) and the version of the server it would talk to.

Like kubectl version, it fails when the server cannot be reached, after
printing the client version; --client prints the client version only.`,
		Example: `  # Client and server versions
  kubectl deltas version

  # Client version only, as JSON
  kubectl deltas version --client -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.Context())
		},
	}
	// The connection flags, as on the root command: they are local to it,
	// and "kubectl deltas version --context x" must work as kubectl's does.
	clusters.ConfigFlags.AddFlags(cmd.Flags())
	cmd.Flags().BoolVar(&o.clientOnly, "client", o.clientOnly, "If true, shows client version only (no server required).")
	cmd.Flags().StringVarP(&o.output, "output", "o", o.output, "One of 'yaml' or 'json'.")
	_ = cmd.RegisterFlagCompletionFunc("output", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return []string{"json", "yaml"}, cobra.ShellCompDirectiveNoFileComp
	})
	return cmd
}

// Validate checks --output.
func (o *Options) Validate() error {
	if o.output != "" && o.output != "json" && o.output != "yaml" {
		return fmt.Errorf("invalid --output %q for version: must be json or yaml", o.output)
	}
	return nil
}

// Run prints the versions. As with kubectl version, an unreachable server
// is an error (exit 1) reported after the client version was printed.
func (o *Options) Run(context.Context) error {
	out := versionOutput{ClientVersion: build.Get()}
	var serverErr error
	if !o.clientOnly {
		out.ServerVersion, serverErr = o.serverVersion()
	}
	switch o.output {
	case "json":
		b, err := json.MarshalIndent(out, "", "  ")
		if err != nil {
			return err
		}
		fmt.Fprintln(o.Out, string(b))
	case "yaml":
		b, err := yaml.Marshal(out)
		if err != nil {
			return err
		}
		fmt.Fprint(o.Out, string(b))
	default:
		fmt.Fprint(o.Out, out.ClientVersion.Text())
		if out.ServerVersion != nil {
			fmt.Fprintf(o.Out, "Server Version: %s\n", out.ServerVersion.GitVersion)
		}
	}
	return serverErr
}

// serverVersion asks the server for its version, bounded by
// --request-timeout or serverVersionTimeout.
func (o *Options) serverVersion() (*apimachineryversion.Info, error) {
	info, err := connection.New(o.clusters.RESTClientGetter(), "").ServerVersion(serverVersionTimeout)
	if err != nil {
		return nil, fmt.Errorf("%w; check --server, --context and --kubeconfig, or use --client for the client version only", err)
	}
	return info, nil
}
