package connection

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"
)

const twoContexts = `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:1"}
users:
- name: u
  user: {token: t}
contexts:
- name: prod
  context: {cluster: c, user: u}
- name: dev
  context: {cluster: c, user: u}
current-context: dev
`

func TestContexts(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(kubeconfig, []byte(twoContexts), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		names   []string
		all     bool
		server  string
		want    []string
		context string // what the flags' --context is afterwards
		wantErr string
	}{
		{name: "no --context: the current one", want: nil},
		// The --context flag itself sets the one context it names.
		{name: "one context: a plain run", names: []string{"prod"}, want: nil},
		{name: "two contexts, in the order given", names: []string{"prod", "dev"}, want: []string{"prod", "dev"}},
		{name: "all contexts, sorted", all: true, want: []string{"dev", "prod"}},
		{name: "both flags", names: []string{"prod"}, all: true, wantErr: "--context and --all-contexts cannot be used together"},
		{name: "unknown context", names: []string{"prod", "qa"}, wantErr: `context "qa" not found in the kubeconfig`},
		{name: "--server with several", all: true, server: "https://127.0.0.1:2", wantErr: "--server cannot be used with several contexts"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			flags := NewConfigFlags(genericiooptions.NewTestIOStreamsDiscard())
			*flags.KubeConfig = kubeconfig
			*flags.APIServer = tc.server
			got, err := Contexts(flags, tc.names, tc.all)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(got, tc.want) {
				t.Fatalf("got %v, %v; want %v", got, err, tc.want)
			}
			if *flags.Context != tc.context {
				t.Errorf("--context is %q, want %q", *flags.Context, tc.context)
			}
		})
	}
}

func TestCheckConfigPresent(t *testing.T) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "missing"))
	flags := NewConfigFlags(genericiooptions.NewTestIOStreamsDiscard())
	err := CheckConfigPresent(flags)
	if err == nil || !strings.Contains(err.Error(), "no cluster is configured (KUBECONFIG=") {
		t.Errorf("no kubeconfig: %v", err)
	}
	*flags.APIServer = "https://127.0.0.1:1"
	if err := CheckConfigPresent(flags); err != nil {
		t.Errorf("with --server: %v", err)
	}
}
