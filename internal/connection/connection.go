// Package connection is how kubectl deltas reaches one cluster: its
// kubeconfig flags, a REST config fit for paging and watching, the limit of
// the requests made at start-up, and errors that name the server and say
// what to check. It sends no request of its own except reading the
// kubeconfig.
package connection

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-deltas/kubectl-deltas/internal/clientcert"
	"github.com/kubectl-deltas/kubectl-deltas/internal/textsafe"
)

const (
	// StartupTimeout bounds each start-up step that waits for the server
	// (discovery, the access checks) when --request-timeout is not set, so
	// that an unreachable server is reported instead of hanging.
	StartupTimeout = 30 * time.Second
	// clientQPS and clientBurst lift client-go's default rate limit of 5
	// requests/s, which would throttle paging through a large list.
	clientQPS   = 100
	clientBurst = 200
)

// Conn is the connection to one cluster. A Conn is used by one
// goroutine at a time; its REST config is built once, on first use.
type Conn struct {
	// Context is the cluster's kubeconfig context in a run over several
	// contexts; "" for the one cluster of a plain run.
	Context string
	// Flags are the cluster's connection flags (kubectl's ConfigFlags, or
	// cli-runtime's test flags); they cache the discovery client and the
	// RESTMapper.
	Flags genericclioptions.RESTClientGetter
	// Warnings is where kubectl's warnings go (a short name matching
	// several types); nil discards them.
	Warnings io.Writer

	config *rest.Config
	// mu guards discovery and mapper, built on first use: the Follower
	// reads them while the stream runs.
	mu        sync.Mutex
	discovery *onceDiscovery
	mapper    meta.RESTMapper
}

// New returns the connection that flags describe; context names it in a
// run over several contexts.
func New(flags genericclioptions.RESTClientGetter, context string) *Conn {
	return &Conn{Context: context, Flags: flags}
}

// NewConfigFlags returns the connection flags of one cluster. Its client
// certificate, when it is a pair of files, may be rotated on disk while the
// stream runs: the connections are then renewed (package clientcert). Its
// requests wait for the first one's connection, so that those sent at
// once share it (firstConn). Its gzip responses are inflated by
// klauspost/compress (withGunzip).
func NewConfigFlags(streams genericiooptions.IOStreams) *genericclioptions.ConfigFlags {
	renewer, gate := clientcert.New(), newFirstConn()
	wrap := func(config *rest.Config) *rest.Config { return gate.Wrap(renewer.Wrap(withGunzip(config))) }
	return genericclioptions.NewConfigFlags(true).WithWarningPrinter(streams).WithWrapConfigFn(wrap)
}

// ForContext returns the connection flags of one context of a run over
// several: every flag the user gave, and that context. Each has its own
// caches (REST config, discovery, RESTMapper).
func ForContext(f *genericclioptions.ConfigFlags, name string, streams genericiooptions.IOStreams) *genericclioptions.ConfigFlags {
	c := NewConfigFlags(streams)
	c.KubeConfig, c.CacheDir, c.Namespace = f.KubeConfig, f.CacheDir, f.Namespace
	c.TLSServerName, c.Insecure, c.CertFile, c.KeyFile, c.CAFile = f.TLSServerName, f.Insecure, f.CertFile, f.KeyFile, f.CAFile
	c.Impersonate, c.ImpersonateUID, c.ImpersonateGroup = f.Impersonate, f.ImpersonateUID, f.ImpersonateGroup
	c.Username, c.Password, c.Timeout, c.DisableCompression = f.Username, f.Password, f.Timeout, f.DisableCompression
	c.Context = &name
	return c
}

// RESTConfig is the cluster's REST config, with a rate limit fit for
// paging and watching.
func (c *Conn) RESTConfig() (*rest.Config, error) {
	if c.config != nil {
		return c.config, nil
	}
	config, err := c.Flags.ToRESTConfig()
	if err != nil {
		return nil, KubeconfigError(err)
	}
	config.QPS = clientQPS
	config.Burst = clientBurst
	c.config = config
	return config, nil
}

// RESTMapper is the cluster's RESTMapper: kubectl's, a deferred discovery
// mapper with the shortcut expander, over DiscoveryClient. Its warnings
// (a short name that matches several types) go to Warnings.
func (c *Conn) RESTMapper() (meta.RESTMapper, error) {
	dc, err := c.DiscoveryClient()
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mapper == nil {
		warnings := printers.NewWarningPrinter(c.warnings(), printers.WarningPrinterOptions{Color: printers.AllowsColorOutput(c.warnings())})
		c.mapper = restmapper.NewShortcutExpander(restmapper.NewDeferredDiscoveryRESTMapper(dc), dc, warnings.Print)
	}
	return c.mapper, nil
}

// DiscoveryClient is the cluster's discovery client: kubectl's discovery
// cache, read once until invalidated (onceDiscovery).
func (c *Conn) DiscoveryClient() (discovery.CachedDiscoveryInterface, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.discovery == nil {
		d, err := c.Flags.ToDiscoveryClient()
		if err != nil {
			return nil, KubeconfigError(err)
		}
		c.discovery = &onceDiscovery{CachedDiscoveryInterface: d}
	}
	return c.discovery, nil
}

// warnings is where the cluster's warnings go: Warnings, or nowhere.
func (c *Conn) warnings() io.Writer {
	if c.Warnings == nil {
		return io.Discard
	}
	return c.Warnings
}

// FreshDiscoveryClient reads discovery from the server, without kubectl's
// cache: with aggregated discovery only such a read reports the group
// versions whose aggregated API is down (freshness Stale), which the
// cache leaves out without a word.
func (c *Conn) FreshDiscoveryClient() (discovery.DiscoveryInterface, error) {
	config, err := c.RESTConfig()
	if err != nil {
		return nil, err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(config)
	if err != nil {
		return nil, fmt.Errorf("unable to create a discovery client: %w", err)
	}
	return dc, nil
}

// Namespace is the namespace of -n, or else of the kubeconfig context.
func (c *Conn) Namespace() (string, error) {
	ns, _, err := c.Flags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return "", KubeconfigError(err)
	}
	return ns, nil
}

// ServerVersion asks the server for its version, bounded by
// --request-timeout, or else by timeout.
func (c *Conn) ServerVersion(timeout time.Duration) (*version.Info, error) {
	config, err := c.RESTConfig()
	if err != nil {
		return nil, err
	}
	config = rest.CopyConfig(config)
	if config.Timeout == 0 {
		config.Timeout = timeout
	}
	dc, err := discovery.NewDiscoveryClientForConfig(config)
	if err != nil {
		return nil, fmt.Errorf("unable to create a discovery client: %w", err)
	}
	info, err := dc.ServerVersion()
	if err != nil {
		return nil, fmt.Errorf("unable to get the version of the server %s: %w", config.Host, err)
	}
	return info, nil
}

// RequestTimeout is --request-timeout as the REST config has it (0 means
// none).
func (c *Conn) RequestTimeout() time.Duration {
	config, err := c.RESTConfig()
	if err != nil {
		return 0
	}
	return config.Timeout
}

// StartupLimit bounds each step of the start-up that waits for the server
// (discovery, the access checks): --request-timeout, or StartupTimeout.
func (c *Conn) StartupLimit() time.Duration {
	if t := c.RequestTimeout(); t > 0 {
		return t
	}
	return StartupTimeout
}

// Prefix names the cluster in the messages of a run over several
// contexts: `context "prod": `; "" for one cluster.
func (c *Conn) Prefix() string { return textsafe.ContextPrefix(c.Context) }

// ServerURL is the URL of the cluster's API server as the kubeconfig
// and flags say it (never credentials); "" when they do not.
func (c *Conn) ServerURL() string {
	config, err := c.RESTConfig()
	if err != nil {
		return ""
	}
	return config.Host
}

// serverName is the server URL of the cluster, for messages.
func (c *Conn) serverName() string {
	if url := c.ServerURL(); url != "" {
		return url
	}
	return "(unknown server)"
}

// NoAnswerError is the error of a start-up step that limit ended.
func (c *Conn) NoAnswerError(limit time.Duration) error {
	return fmt.Errorf("the server %s did not answer within %s; check that it is reachable, or raise --request-timeout", c.serverName(), limit)
}

// ConnectionError explains a failure to reach the server, naming it and
// what to check; any other error is returned as it is.
func (c *Conn) ConnectionError(err error) error {
	switch {
	case utilnet.IsConnectionRefused(err):
		return fmt.Errorf("the connection to the server %s was refused - did you specify the right host or port? (%w)", c.serverName(), err)
	case IsNetworkError(err):
		return fmt.Errorf("unable to reach the server %s: %w; check --server, --context and --kubeconfig", c.serverName(), err)
	}
	return err
}

// IsNetworkError tells failures to reach the server at all.
func IsNetworkError(err error) bool {
	if err == nil {
		return false
	}
	var netErr net.Error
	return utilnet.IsConnectionRefused(err) || utilnet.IsConnectionReset(err) || utilnet.IsProbableEOF(err) || errors.As(err, &netErr)
}

// KubeconfigError explains a configuration that cannot be loaded.
func KubeconfigError(err error) error {
	if clientcmd.IsEmptyConfig(err) {
		return fmt.Errorf("no configuration has been provided: set KUBECONFIG, pass --kubeconfig, or run inside a cluster (%w)", err)
	}
	if clientcmd.IsConfigurationInvalid(err) {
		return fmt.Errorf("invalid kubeconfig: %w; check --kubeconfig, --context and --cluster", err)
	}
	return fmt.Errorf("unable to load the kubeconfig: %w", err)
}

// CheckConfigPresent fails when there is no configuration at all: no
// cluster in the kubeconfig files (KUBECONFIG naming files that do not
// exist, say), no --server, and not running in a cluster. client-go would
// otherwise fall back to http://localhost:8080 and report a refused
// connection to a server nobody named.
func CheckConfigPresent(flags *genericclioptions.ConfigFlags) error {
	if flags.APIServer != nil && *flags.APIServer != "" {
		return nil
	}
	if os.Getenv("KUBERNETES_SERVICE_HOST") != "" {
		return nil
	}
	raw, err := flags.ToRawKubeConfigLoader().RawConfig()
	if err != nil {
		return KubeconfigError(err)
	}
	if len(raw.Clusters) > 0 {
		return nil
	}
	where := "~/.kube/config"
	if env := os.Getenv("KUBECONFIG"); env != "" {
		where = "KUBECONFIG=" + env
	}
	if flags.KubeConfig != nil && *flags.KubeConfig != "" {
		where = *flags.KubeConfig
	}
	return fmt.Errorf("no cluster is configured (%s has none or does not exist): pass --kubeconfig, set KUBECONFIG, or use --server", where)
}
