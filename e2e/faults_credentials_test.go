//go:build faults

package e2e

// Credentials that expire (issue 14, scenario 5): a kubeconfig exec plugin
// of the test's hands out tokens that the API server accepts for 20 s only,
// through a token webhook authenticator of the test's on loopback.

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// tokenLife is how long the webhook accepts a token after it was made.
const tokenLife = 20 * time.Second

// tokenWebhook answers TokenReviews: "tok-UNIXSECONDS" is the user
// rotating-admin (system:masters) for tokenLife after that second, and
// nobody after. It counts the tokens it saw and the ones it refused.
type tokenWebhook struct {
	mu       sync.Mutex
	seen     map[string]bool
	expired  int
	rejected []string
}

func (h *tokenWebhook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var review authenticationv1.TokenReview
	if err := json.NewDecoder(r.Body).Decode(&review); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	token := review.Spec.Token
	review.Status = authenticationv1.TokenReviewStatus{}
	secs, err := strconv.ParseInt(strings.TrimPrefix(token, "tok-"), 10, 64)
	h.mu.Lock()
	switch {
	case err != nil || !strings.HasPrefix(token, "tok-"):
		h.rejected = append(h.rejected, token)
	case time.Since(time.Unix(secs, 0)) > tokenLife:
		h.expired++
		review.Status.Error = "token expired"
	default:
		h.seen[token] = true
		review.Status.Authenticated = true
		review.Status.User = authenticationv1.UserInfo{Username: "rotating-admin", Groups: []string{"system:masters", "system:authenticated"}}
	}
	h.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(review)
}

// credentialPlugin is the exec plugin: a token made now, which client-go
// may use for 15 s (the server takes it for 20).
const credentialPlugin = `#!/bin/sh
now=$(date +%s)
exp=$(date -u -d "@$((now + 15))" +%Y-%m-%dT%H:%M:%SZ)
echo "$now" >> "$(dirname "$0")/calls"
printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"tok-%s","expirationTimestamp":"%s"}}\n' "$now" "$exp"
`

// TestFaultCredentialsExpire: the stream runs 90 s on tokens that live
// 20 s, across many re-watches (each watch lasts 5–10 s), with writes all
// along: no error, no warning, nothing lost.
func TestFaultCredentialsExpire(t *testing.T) {
	hook := &tokenWebhook{seen: map[string]bool{}}
	srv := httptest.NewServer(hook)
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	webhookConfig := clientcmdapi.NewConfig()
	webhookConfig.Clusters["webhook"] = &clientcmdapi.Cluster{Server: srv.URL}
	webhookConfig.AuthInfos["apiserver"] = &clientcmdapi.AuthInfo{}
	webhookConfig.Contexts["webhook"] = &clientcmdapi.Context{Cluster: "webhook", AuthInfo: "apiserver"}
	webhookConfig.CurrentContext = "webhook"
	webhookFile := filepath.Join(dir, "webhook.kubeconfig")
	must(t, clientcmd.WriteToFile(*webhookConfig, webhookFile))

	c := startCluster(t,
		"--authentication-token-webhook-config-file="+webhookFile,
		"--authentication-token-webhook-version=v1",
		// The server caches a successful review for 2 minutes by default:
		// the 20 s life would never show.
		"--authentication-token-webhook-cache-ttl=1s",
	)
	ns := c.namespace(t)

	plugin := filepath.Join(dir, "credential-plugin")
	must(t, os.WriteFile(plugin, []byte(credentialPlugin), 0o755))
	kubeconfig := rotatingKubeconfig(t, c, ns, dir, &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{
		APIVersion: "client.authentication.k8s.io/v1", Command: plugin, InteractiveMode: clientcmdapi.NeverExecInteractiveMode,
	}})
	d, steps := watchUnderWrites(t, c, ns, kubeconfig, 90*time.Second)

	calls, err := os.ReadFile(filepath.Join(dir, "calls"))
	must(t, err)
	hook.mu.Lock()
	tokens, expired, rejected := len(hook.seen), hook.expired, hook.rejected
	hook.mu.Unlock()
	t.Logf("%d writes; the plugin ran %d times, the webhook took %d tokens and refused %d expired ones", steps, strings.Count(string(calls), "\n"), tokens, expired)
	if tokens < 4 {
		t.Errorf("the webhook saw %d tokens in 90 s; want at least 4 (a new one every 15 s)", tokens)
	}
	if len(rejected) > 0 {
		t.Errorf("tokens not made by the plugin reached the webhook: %q", rejected)
	}
	if errs := d.stderr.String(); errs != "" {
		t.Errorf("stderr is not empty:\n%s", errs)
	}
	if code := d.stop(); code != 130 {
		t.Errorf("exit code after SIGINT = %d, want 130", code)
	}
}

// rotatingKubeconfig writes a kubeconfig for c's API server whose user is
// user, its namespace ns, and returns its path.
func rotatingKubeconfig(t *testing.T, c *cluster, ns, dir string, user *clientcmdapi.AuthInfo) string {
	t.Helper()
	admin, err := clientcmd.LoadFromFile(c.cp.AdminKubeconfig())
	must(t, err)
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["local"] = admin.Clusters[admin.Contexts[admin.CurrentContext].Cluster]
	cfg.AuthInfos["rotating"] = user
	cfg.Contexts["rotating"] = &clientcmdapi.Context{Cluster: "local", AuthInfo: "rotating", Namespace: ns}
	cfg.CurrentContext = "rotating"
	kubeconfig := filepath.Join(dir, "kubeconfig")
	must(t, clientcmd.WriteToFile(*cfg, kubeconfig))
	return kubeconfig
}

// watchUnderWrites streams the ConfigMaps of ns with kubeconfig, re-watching
// every 5–10 s, while a writer changes 20 of them for the given time; it
// returns once the stream equals the server, with the number of writes.
func watchUnderWrites(t *testing.T, c *cluster, ns, kubeconfig string, writing time.Duration) (*deltasRun, int) {
	t.Helper()
	d := startJSON(t, kubeconfig, "cm", "--min-watch-timeout=5s")
	d.waitWatchingJSON(c, ns, 30*time.Second)
	w := newWriter(c.client, ns)
	stop := w.runPaced(names("cm", 20), 300*time.Millisecond, 3)
	time.Sleep(writing)
	steps := stop()
	d.converge(c, ns, 60*time.Second)
	return d, steps
}
