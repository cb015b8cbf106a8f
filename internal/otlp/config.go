package otlp

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/kubectl-deltas/kubectl-deltas/internal/flaghelp"
)

// fromEnvironment is --otlp's value when it is given alone: the endpoint
// comes from the OpenTelemetry environment, else the default.
const fromEnvironment = "env"

// defaultEndpoint is the OTLP/HTTP endpoint of a collector on this host,
// the specification's default.
const defaultEndpoint = "http://localhost:4318"

// defaultServiceName is service.name when OTEL_SERVICE_NAME does not say.
const defaultServiceName = "kubectl-deltas"

// The signals' paths under an endpoint given as a base URL (the
// specification's OTEL_EXPORTER_OTLP_ENDPOINT rule, which --otlp follows).
const (
	logsPath   = "/v1/logs"
	tracesPath = "/v1/traces"
)

// Flags are the flags of the export: --otlp.
type Flags struct {
	// Endpoint is --otlp's value: "" (no export), fromEnvironment, or a
	// base URL.
	Endpoint string
}

// NewFlags returns the flags with their defaults: no export.
func NewFlags() *Flags { return &Flags{} }

// AddFlags declares --otlp on fs; alone it reads the endpoint from the
// environment.
func (f *Flags) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.Endpoint, "otlp", f.Endpoint, "Also export every record to OTLP `URL` (docs/otlp.md)")
	fs.Lookup("otlp").NoOptDefVal = fromEnvironment
	flaghelp.File(fs, flaghelp.History, "otlp")
}

// Enabled reports whether --otlp was given.
func (f *Flags) Enabled() bool { return f.Endpoint != "" }

// Settings are what the exporter needs, read from --otlp and the
// OpenTelemetry environment (getenv) by Config; they hold no connection.
type Settings struct {
	// LogsURL and TracesURL are where records and spans are posted.
	LogsURL, TracesURL string
	// Shown is the endpoint as messages name it (no user info, no query).
	Shown string
	// Headers are sent with every request (OTEL_EXPORTER_OTLP_HEADERS and
	// the signal's own, which wins).
	Headers map[string]string
	// TLS, for https, verifies the collector (OTEL_EXPORTER_OTLP_CERTIFICATE
	// adds a CA) and may present a client certificate; nil for http.
	TLS *tls.Config
	// Timeout bounds one request (OTEL_EXPORTER_OTLP_TIMEOUT, 10 s).
	Timeout time.Duration
	// Gzip compresses requests (OTEL_EXPORTER_OTLP_COMPRESSION=gzip).
	Gzip bool
	// ServiceName is service.name; Resource holds OTEL_RESOURCE_ATTRIBUTES
	// in their order.
	ServiceName string
	Resource    [][2]string
}

// Config reads the export's configuration: the flag wins over the
// environment, which wins over the defaults. Every mistake — a malformed
// endpoint, header or attribute variable, an unreadable certificate — is an
// error naming the flag or variable and the fix; nothing is sent.
func (f *Flags) Config(getenv func(string) string) (*Settings, error) {
	if !f.Enabled() {
		return nil, nil
	}
	c := &Settings{Timeout: 10 * time.Second, ServiceName: defaultServiceName}
	if err := c.readEndpoints(f.Endpoint, getenv); err != nil {
		return nil, err
	}
	var err error
	if c.Headers, err = readHeaders(getenv, "OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_LOGS_HEADERS"); err != nil {
		return nil, err
	}
	if c.TLS, err = readTLS(c.LogsURL, getenv); err != nil {
		return nil, err
	}
	if c.Timeout, err = readTimeout(getenv); err != nil {
		return nil, err
	}
	switch v := strings.TrimSpace(firstSet(getenv, "OTEL_EXPORTER_OTLP_LOGS_COMPRESSION", "OTEL_EXPORTER_OTLP_COMPRESSION")); v {
	case "", "none":
	case "gzip":
		c.Gzip = true
	default:
		return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_COMPRESSION=%q: want gzip or none", v)
	}
	if v := strings.TrimSpace(getenv("OTEL_SERVICE_NAME")); v != "" {
		c.ServiceName = v
	}
	if c.Resource, err = readResource(getenv("OTEL_RESOURCE_ATTRIBUTES")); err != nil {
		return nil, err
	}
	return c, nil
}

// readEndpoints sets the signals' URLs: --otlp=URL is a base URL, as
// OTEL_EXPORTER_OTLP_ENDPOINT is; a signal's own variable
// (OTEL_EXPORTER_OTLP_LOGS_ENDPOINT) is used as it is, as the
// specification says, when the flag names no URL.
func (c *Settings) readEndpoints(flag string, getenv func(string) string) error {
	base, what := flag, "--otlp"
	logs, traces := "", ""
	if flag == fromEnvironment {
		base, what = getenv("OTEL_EXPORTER_OTLP_ENDPOINT"), "OTEL_EXPORTER_OTLP_ENDPOINT"
		if base == "" {
			base, what = defaultEndpoint, "the default endpoint"
		}
		logs, traces = getenv("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT"), getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
	}
	u, err := parseEndpoint(base, what)
	if err != nil {
		return err
	}
	c.Shown = (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
	path := strings.TrimSuffix(u.Path, "/")
	c.LogsURL = withPath(u, path+logsPath)
	c.TracesURL = withPath(u, path+tracesPath)
	if logs != "" {
		lu, err := parseEndpoint(logs, "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT")
		if err != nil {
			return err
		}
		c.LogsURL = lu.String()
		c.Shown = (&url.URL{Scheme: lu.Scheme, Host: lu.Host, Path: lu.Path}).String()
	}
	if traces != "" {
		tu, err := parseEndpoint(traces, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
		if err != nil {
			return err
		}
		c.TracesURL = tu.String()
	}
	return nil
}

// parseEndpoint checks that s is an http or https URL with a host: what
// OTLP/HTTP can post to.
func parseEndpoint(s, what string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "" {
		if err == nil && u.Scheme == "grpc" {
			return nil, fmt.Errorf("%s %q: OTLP over gRPC is not built in; point it at the collector's OTLP/HTTP port instead (http://HOST:4318)", what, s)
		}
		return nil, fmt.Errorf("%s %q is not an OTLP/HTTP endpoint: want http://HOST:PORT or https://HOST:PORT (a collector's OTLP/HTTP receiver, port 4318 by default)", what, s)
	}
	if port := u.Port(); port != "" && !validPort(port) {
		return nil, fmt.Errorf("%s %q: bad port in %q: want http://HOST:PORT", what, s, u.Host)
	}
	return u, nil
}

// validPort reports whether p is a port number, 1 to 65535.
func validPort(p string) bool {
	n, err := strconv.Atoi(p)
	return err == nil && n > 0 && n < 1<<16
}

// withPath is u with path (and no query or fragment) as a string.
func withPath(u *url.URL, path string) string {
	v := *u
	v.Path, v.RawPath, v.RawQuery, v.Fragment = path, "", "", ""
	return v.String()
}

// readHeaders parses the header variables, in order (a later one wins a
// key): a comma-separated list of key=value, values percent-encoded, as
// the specification says.
func readHeaders(getenv func(string) string, names ...string) (map[string]string, error) {
	headers := map[string]string{}
	for _, name := range names {
		v := getenv(name)
		if strings.TrimSpace(v) == "" {
			continue
		}
		pairs, err := readPairs(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w: want key=value,key2=value2 (values percent-encoded)", name, err)
		}
		for _, p := range pairs {
			if strings.ContainsAny(p[0], " \t\r\n:()<>@,;\\\"/[]?={}") {
				return nil, fmt.Errorf("%s: %q is not a header name", name, p[0])
			}
			if strings.ContainsAny(p[1], "\r\n") {
				return nil, fmt.Errorf("%s: the value of %q holds a line break", name, p[0])
			}
			headers[p[0]] = p[1]
		}
	}
	return headers, nil
}

// readPairs parses key=value,key2=value2 with percent-encoded values.
func readPairs(v string) ([][2]string, error) {
	var pairs [][2]string
	for item := range strings.SplitSeq(v, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		key, value, ok := strings.Cut(item, "=")
		key = strings.TrimSpace(key)
		if !ok || key == "" {
			return nil, fmt.Errorf("%q is not key=value", item)
		}
		decoded, err := url.PathUnescape(strings.TrimSpace(value))
		if err != nil {
			return nil, fmt.Errorf("the value of %q is not percent-encoded: %w", key, err)
		}
		pairs = append(pairs, [2]string{key, decoded})
	}
	return pairs, nil
}

// readResource parses OTEL_RESOURCE_ATTRIBUTES.
func readResource(v string) ([][2]string, error) {
	pairs, err := readPairs(v)
	if err != nil {
		return nil, fmt.Errorf("OTEL_RESOURCE_ATTRIBUTES: %w: want key=value,key2=value2 (values percent-encoded)", err)
	}
	return pairs, nil
}

// readTimeout reads OTEL_EXPORTER_OTLP_TIMEOUT (milliseconds).
func readTimeout(getenv func(string) string) (time.Duration, error) {
	name := "OTEL_EXPORTER_OTLP_LOGS_TIMEOUT"
	v := getenv(name)
	if v == "" {
		name = "OTEL_EXPORTER_OTLP_TIMEOUT"
		v = getenv(name)
	}
	if strings.TrimSpace(v) == "" {
		return 10 * time.Second, nil
	}
	ms, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || ms <= 0 {
		return 0, fmt.Errorf("%s=%q: want a positive number of milliseconds (10000)", name, v)
	}
	return time.Duration(ms) * time.Millisecond, nil
}

// readTLS is the TLS configuration for an https endpoint: the system's
// roots, or OTEL_EXPORTER_OTLP_CERTIFICATE's CA file instead, and the
// client certificate of OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE and
// _CLIENT_KEY. nil for http.
func readTLS(endpoint string, getenv func(string) string) (*tls.Config, error) {
	if !strings.HasPrefix(endpoint, "https:") {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if name, file := firstNamed(getenv, "OTEL_EXPORTER_OTLP_LOGS_CERTIFICATE", "OTEL_EXPORTER_OTLP_CERTIFICATE"); file != "" {
		pem, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("%s: cannot read the collector's CA certificate: %w", name, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%s: %s holds no PEM certificate: want the CA that signed the collector's certificate", name, file)
		}
		cfg.RootCAs = pool
	}
	_, certFile := firstNamed(getenv, "OTEL_EXPORTER_OTLP_LOGS_CLIENT_CERTIFICATE", "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE")
	_, keyFile := firstNamed(getenv, "OTEL_EXPORTER_OTLP_LOGS_CLIENT_KEY", "OTEL_EXPORTER_OTLP_CLIENT_KEY")
	switch {
	case certFile != "" && keyFile != "":
		pair, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE and _CLIENT_KEY: %w", err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	case certFile != "" || keyFile != "":
		return nil, errors.New("OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE and OTEL_EXPORTER_OTLP_CLIENT_KEY go together: set both or neither")
	}
	return cfg, nil
}

// firstSet is the value of the first of names that is set.
func firstSet(getenv func(string) string, names ...string) string {
	_, v := firstNamed(getenv, names...)
	return v
}

// firstNamed is the first of names that is set, and its value.
func firstNamed(getenv func(string) string, names ...string) (name, value string) {
	for _, n := range names {
		if v := getenv(n); v != "" {
			return n, v
		}
	}
	return "", ""
}
