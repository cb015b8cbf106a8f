package cmd

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-deltas/kubectl-deltas/internal/version"
)

// VersionOptions are the flags of kubectl deltas version.
type VersionOptions struct {
	configFlags *genericclioptions.ConfigFlags
	clientOnly  bool
	output      string
	genericiooptions.IOStreams
}

// versionOutput is the JSON/YAML form, kubectl style.
type versionOutput struct {
	ClientVersion version.Info   `json:"clientVersion"`
	ServerVersion *serverVersion `json:"serverVersion,omitempty"`
	ServerError   string         `json:"serverError,omitempty"`
}

type serverVersion struct {
	GitVersion string `json:"gitVersion"`
	Platform   string `json:"platform"`
}

// NewCmdVersion returns the version subcommand.
func NewCmdVersion(configFlags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &VersionOptions{configFlags: configFlags, IOStreams: streams}
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the client and server version information",
		Long:  "Print the version of kubectl deltas and, unless --client is given, of the server it would talk to.",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.Context())
		},
	}
	cmd.Flags().BoolVar(&o.clientOnly, "client", o.clientOnly, "If true, shows client version only (no server required).")
	cmd.Flags().StringVarP(&o.output, "output", "o", o.output, "One of 'yaml' or 'json'.")
	_ = cmd.RegisterFlagCompletionFunc("output", fixedCompletion("json", "yaml"))
	return cmd
}

// Validate checks --output.
func (o *VersionOptions) Validate() error {
	if o.output != "" && o.output != "json" && o.output != "yaml" {
		return fmt.Errorf("invalid --output %q for version: must be json or yaml", o.output)
	}
	return nil
}

// Run prints the versions. An unreachable server is reported, not fatal,
// as kubectl version does.
func (o *VersionOptions) Run(ctx context.Context) error {
	out := versionOutput{ClientVersion: version.Get()}
	if !o.clientOnly {
		sv, err := o.serverVersion(ctx)
		if err != nil {
			out.ServerError = err.Error()
		} else {
			out.ServerVersion = sv
		}
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
		c := out.ClientVersion
		fmt.Fprintf(o.Out, "Client Version: %s\n", c.Version)
		fmt.Fprintf(o.Out, "Git Commit: %s\n", c.Commit)
		fmt.Fprintf(o.Out, "Build Date: %s\n", c.BuildDate)
		fmt.Fprintf(o.Out, "Go Version: %s\n", c.GoVersion)
		fmt.Fprintf(o.Out, "Platform: %s\n", c.Platform)
		if out.ServerVersion != nil {
			fmt.Fprintf(o.Out, "Server Version: %s\n", out.ServerVersion.GitVersion)
		}
	}
	if out.ServerError != "" {
		fmt.Fprintf(o.ErrOut, "warning: unable to get the server version: %s\n", out.ServerError)
	}
	return nil
}

func (o *VersionOptions) serverVersion(context.Context) (*serverVersion, error) {
	config, err := o.configFlags.ToRESTConfig()
	if err != nil {
		return nil, kubeconfigError(err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(config)
	if err != nil {
		return nil, err
	}
	info, err := dc.ServerVersion()
	if err != nil {
		return nil, err
	}
	return &serverVersion{GitVersion: info.GitVersion, Platform: info.Platform}, nil
}
