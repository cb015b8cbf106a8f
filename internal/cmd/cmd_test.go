package cmd

import (
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"
)

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
		{"unknown flag", []string{"cm", "--nope"}, "error: unknown flag: --nope\nSee 'kubectl deltas --help'"},
		{"kubectl get's -w", []string{"pods", "-wA"}, "error: unknown shorthand flag: 'w' in -wA: kubectl deltas always watches, as kubectl get -w does; drop it (--watch-only skips the initial list"},
		{"kubectl get's --watch", []string{"pods", "--watch"}, "error: unknown flag: --watch: kubectl deltas always watches"},
		{"a flag like --watch", []string{"pods", "--watchful"}, "error: unknown flag: --watchful\nSee"},
		{"short resync", []string{"cm", "--resync=10ms"}, "error: invalid --resync 10ms: must be at least 1s"},
		{"mixed forms", []string{"cm", "cm/a"}, "error: there is no need to specify a resource type"},
		{"name across all namespaces", []string{"cm/a", "-A"}, "error: a resource cannot be watched by name across all namespaces"},
		{"name with a selector", []string{"cm", "a", "-l", "x=y"}, "error: a name cannot be given together with --selector"},
		{"tree without a name", []string{"deploy", "--tree"}, "error: --tree follows what given objects own: name them (deploy/NAME)"},
		{"bad fifo", []string{"cm", "--handler", "--fifo=fast"}, `error: invalid --fifo value "fast": must be real`},
		{"fifo without handler", []string{"cm", "--fifo=delta"}, "error: --fifo chooses the queue whose handler calls --handler shows: add --handler"},
		{"queue without handler", []string{"cm", "--queue"}, "error: --queue feeds the handler calls into a workqueue: add --handler"},
		{"no workers", []string{"cm", "--handler", "--queue", "--workers=0"}, "error: invalid --workers 0: must be 1 or more"},
		{"negative reconcile time", []string{"cm", "--handler", "--queue", "--reconcile-time=-1s"}, "error: invalid --reconcile-time -1s"},
		{"bad queue key", []string{"cm", "--handler", "--queue", "--queue-key=parent"}, `error: invalid --queue-key value "parent": must be object or owner`},
		{"workers without queue", []string{"cm", "--handler", "--workers=2"}, "error: --workers applies to --queue's workqueue: add --queue --handler"},
		{"queue with -o name", []string{"cm", "--handler", "--queue", "-o", "name"}, "error: --queue prints its reconciles as text, JSON or YAML: drop -o name"},
		{"live off a terminal", []string{"cm", "--live"}, "error: --live needs a terminal on stdout; without it the stream prints lines"},
		{"bad live", []string{"cm", "--live=maybe"}, `error: invalid --live value "maybe": must be true, false or auto`},
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
