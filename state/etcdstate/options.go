package etcdstate

import (
	"crypto/tls"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"

	"reconcile/state"
)

// Defaults of Options.
const (
	DefaultLockTTL        = 15 * time.Second
	DefaultRequestTimeout = 30 * time.Second
	DefaultDialTimeout    = 10 * time.Second
	// DefaultMaxTxnOps and DefaultMaxRequestBytes are etcd's own defaults
	// (--max-txn-ops, --max-request-bytes).
	DefaultMaxTxnOps       = 128
	DefaultMaxRequestBytes = 1536 * 1024
)

// Options configures Open and Stacks. Options holds credentials: its
// String and GoString methods, and every error of this package, leave out
// the user name and password.
type Options struct {
	// Endpoints are the etcd client endpoints, as host:port.
	Endpoints []string
	// Prefix is the key prefix of the stacks, the path of the state URL,
	// e.g. "/reconcile/acme". It starts with a slash; a trailing slash is
	// ignored.
	Prefix string
	// Stack names the state under Prefix, e.g. "prod". It holds no slash
	// and no zero byte.
	Stack string

	// CertFile and KeyFile are the client certificate and key for TLS,
	// and CAFile the certificates of the CAs to trust; any of them set
	// turns TLS on.
	CertFile, KeyFile, CAFile string
	// Username and Password authenticate to etcd when Username is set.
	Username, Password string

	// Options are the options every state backend takes: ReadOnly,
	// Create, LockTimeout and Command, with package state's semantics.
	state.Options

	// LockTTL is the TTL of the lock's lease: how long after its holder
	// died, or was cut off, another runner can take the lock. Zero means
	// DefaultLockTTL. etcd counts whole seconds and raises a TTL below its
	// minimum (about 2 s with default timing).
	LockTTL time.Duration
	// RequestTimeout bounds each read and each write, including its retries
	// while the cluster elects a new leader. Zero means
	// DefaultRequestTimeout.
	RequestTimeout time.Duration
	// DialTimeout bounds the first connection. Zero means
	// DefaultDialTimeout.
	DialTimeout time.Duration
	// MaxTxnOps and MaxRequestBytes are the limits of one transaction the
	// server takes (its --max-txn-ops and --max-request-bytes). Zero means
	// etcd's defaults, DefaultMaxTxnOps and DefaultMaxRequestBytes.
	MaxTxnOps, MaxRequestBytes int
}

// String describes o without credentials, e.g.
// `etcd://10.0.0.1:2379,10.0.0.2:2379/reconcile/acme (stack prod)`.
func (o Options) String() string {
	return fmt.Sprintf("etcd://%s%s (stack %s)", endpoints(o.Endpoints), strings.TrimRight(o.Prefix, "/"), o.Stack)
}

// endpoints joins eps for a message, leaving out any user info one holds
// by mistake ("user:password@host:port").
func endpoints(eps []string) string {
	var b strings.Builder
	for i, ep := range eps {
		if i > 0 {
			b.WriteByte(',')
		}
		if at := strings.LastIndexByte(ep, '@'); at >= 0 {
			ep = ep[at+1:]
		}
		b.WriteString(ep)
	}
	return b.String()
}

// GoString is String, so that %#v shows no credentials either.
func (o Options) GoString() string { return "etcdstate.Options{" + o.String() + "}" }

// withDefaults returns o with zero values replaced by their defaults and
// the prefix cleaned, or an error naming what is wrong.
func (o Options) withDefaults() (Options, error) {
	o.Prefix = strings.TrimRight(o.Prefix, "/")
	switch {
	case len(o.Endpoints) == 0:
		return o, errors.New("no etcd endpoints")
	case o.Prefix != "" && !strings.HasPrefix(o.Prefix, "/"):
		return o, fmt.Errorf("key prefix %q does not start with a slash", o.Prefix)
	case strings.IndexByte(o.Prefix, 0) >= 0:
		return o, fmt.Errorf("key prefix %q holds a zero byte", o.Prefix)
	}
	for _, ep := range o.Endpoints {
		if ep == "" || strings.ContainsAny(ep, "@ ") {
			// An endpoint with user info would carry a credential.
			return o, errors.New("bad etcd endpoint: want host:port")
		}
	}
	if o.LockTTL <= 0 {
		o.LockTTL = DefaultLockTTL
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = DefaultRequestTimeout
	}
	if o.DialTimeout <= 0 {
		o.DialTimeout = DefaultDialTimeout
	}
	if o.MaxTxnOps <= 0 {
		o.MaxTxnOps = DefaultMaxTxnOps
	}
	if o.MaxRequestBytes <= 0 {
		o.MaxRequestBytes = DefaultMaxRequestBytes
	}
	return o, nil
}

// checkStack returns an error if stack cannot name a stack.
func checkStack(stack string) error {
	switch {
	case stack == "":
		return errors.New("empty stack name")
	case stack == "." || stack == "..":
		return fmt.Errorf("stack name %q", stack)
	case strings.ContainsAny(stack, "/\x00"):
		return fmt.Errorf("stack name %q holds a slash or a zero byte", stack)
	}
	return nil
}

// tlsConfig returns the client TLS configuration of o, or nil without TLS.
func (o Options) tlsConfig() (*tls.Config, error) {
	if o.CertFile == "" && o.KeyFile == "" && o.CAFile == "" {
		return nil, nil
	}
	info := transport.TLSInfo{CertFile: o.CertFile, KeyFile: o.KeyFile, TrustedCAFile: o.CAFile}
	cfg, err := info.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("TLS: %w", err)
	}
	return cfg, nil
}
