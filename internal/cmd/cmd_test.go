package cmd

import (
	"reflect"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"
)

func TestParseArgs(t *testing.T) {
	cases := []struct {
		args    []string
		want    []resourceArg
		wantErr string
	}{
		{[]string{"cm"}, []resourceArg{{typ: "cm"}}, ""},
		{[]string{"cm,secrets"}, []resourceArg{{typ: "cm"}, {typ: "secrets"}}, ""},
		{[]string{"cm", "a", "b"}, []resourceArg{{typ: "cm", name: "a"}, {typ: "cm", name: "b"}}, ""},
		{[]string{"cm/a", "deploy.apps/b"}, []resourceArg{{typ: "cm", name: "a"}, {typ: "deploy.apps", name: "b"}}, ""},
		{[]string{"cm", "cm/a"}, nil, "there is no need to specify a resource type as a separate argument"},
		{[]string{"cm/"}, nil, "must have a single resource and name"},
		{[]string{"cm/a/b"}, nil, "must have a single resource and name"},
		{[]string{"cm,,x"}, nil, "empty type"},
		{nil, nil, "no resource type"},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			got, err := parseArgs(tc.args)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

// TestValidate runs the command up to Validate through Execute, as a user
// would, and checks the message and that nothing reached stdout.
func TestValidate(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no type", nil, "error: you must specify the type of resource to watch"},
		{"bad selector", []string{"cm", "-l", "a=(b"}, `error: invalid --selector "a=(b"`},
		{"bad field selector", []string{"cm", "--field-selector", "a"}, `error: invalid --field-selector "a"`},
		{"bad duration", []string{"cm", "--timeout", "soon"}, `error: invalid argument "soon" for "--timeout" flag`},
		{"negative count", []string{"cm", "--count=-1"}, "error: invalid --count -1"},
		{"bad output", []string{"cm", "-o", "foo"}, `error: unable to match a printer suitable for the output format "foo"`},
		{"bad types", []string{"cm", "--types", "Modified"}, `error: invalid --types value "Modified"`},
		{"conflict until-synced watch-only", []string{"cm", "--until-synced", "--watch-only"}, "error: --until-synced cannot be used with --watch-only"},
		{"conflict until-synced resource-version", []string{"cm", "--until-synced", "--resource-version=5"}, "error: --until-synced cannot be used with --resource-version"},
		{"bad color", []string{"cm", "--color", "pink"}, `error: invalid --color value "pink"`},
		{"bad watch-list", []string{"cm", "--watch-list", "maybe"}, `error: invalid --watch-list value "maybe"`},
		{"bad relist", []string{"cm", "--relist", "some"}, `error: invalid --relist value "some"`},
		{"ignore-path without diff", []string{"cm", "--ignore-path", "status"}, "error: --ignore-path only applies to diffs"},
		{"bad ignore-path", []string{"cm", "--diff", "--ignore-path", "a[x"}, `error: invalid --ignore-path "a[x"`},
		{"unknown flag", []string{"cm", "--nope"}, "error: unknown flag: --nope"},
		{"short resync", []string{"cm", "--resync=10ms"}, "error: invalid --resync 10ms: must be at least 1s"},
		{"mixed forms", []string{"cm", "cm/a"}, "error: there is no need to specify a resource type"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			streams, _, out, errOut := genericiooptions.NewTestIOStreams()
			code := Execute(streams, append(tc.args, "--kubeconfig=/nonexistent/kubeconfig"))
			if code != 1 {
				t.Errorf("exit code %d, want 1", code)
			}
			if out.Len() != 0 {
				t.Errorf("stdout %q, want nothing", out.String())
			}
			if !strings.HasPrefix(errOut.String(), tc.want) {
				t.Errorf("stderr %q, want prefix %q", errOut.String(), tc.want)
			}
		})
	}
}

func TestVersionFlag(t *testing.T) {
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	if code := Execute(streams, []string{"--version"}); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if strings.TrimSpace(out.String()) == "" {
		t.Error("--version printed nothing")
	}
}
