package etcdstate

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"

	"github.com/reconcile-dev/reconcile/state"
)

// Defaults of Options.
const (
	DefaultLockTTL        = 15 * time.Second
	DefaultRequestTimeout = 30 * time.Second
	DefaultDialTimeout    = 10 * time.Second
	// DefaultContactTimeout bounds the first contact with the cluster.
	DefaultContactTimeout = 5 * time.Second
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
	// PEM files, given both or neither, and CAFile the PEM certificates
	// of the CAs to trust; any of them set turns TLS on.
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
	// DialTimeout bounds the login with Username and Password as the
	// client connects. The connection itself is made by the first
	// request, and RequestTimeout bounds it. Zero means
	// DefaultDialTimeout.
	DialTimeout time.Duration
	// ContactTimeout bounds the first contact with the cluster, a TCP
	// connection to any endpoint, made before the client: when none can be
	// made by then (nothing listens, a name does not resolve, a host is not
	// reached), Open and Stacks fail with an error matching ErrUnreachable
	// that says why for each endpoint, rather than waiting out DialTimeout
	// or RequestTimeout, which are kept for a cluster that can be reached
	// (a login, an election). Zero means DefaultContactTimeout.
	ContactTimeout time.Duration
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
	if o.ContactTimeout <= 0 {
		o.ContactTimeout = DefaultContactTimeout
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

// ErrTLS is wrapped by the errors of Open and Stacks that come of TLS: a
// TLS file that cannot be used, a TLS handshake with etcd that failed,
// etcd refusing the client's certificate or asking for one, or etcd
// closing a plain connection unanswered, as a server that speaks only TLS
// does. A caller that takes the TLS files from its own settings can add
// where they are set.
var ErrTLS = errors.New("TLS")

// tlsErrorf returns an error wrapping ErrTLS, with the text format makes
// of args after "TLS: ".
func tlsErrorf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrTLS, fmt.Sprintf(format, args...))
}

// tlsConfig returns the client TLS configuration of o, or nil without TLS.
// Its errors wrap ErrTLS and name the file at fault, never its contents.
func (o Options) tlsConfig() (*tls.Config, error) {
	if o.CertFile == "" && o.KeyFile == "" && o.CAFile == "" {
		return nil, nil
	}
	switch {
	case o.CertFile != "" && o.KeyFile == "":
		return nil, tlsErrorf("the client certificate %s is given without its key: give the key file too (KeyFile), or neither", o.CertFile)
	case o.KeyFile != "" && o.CertFile == "":
		return nil, tlsErrorf("the client key %s is given without its certificate: give the certificate file too (CertFile), or neither", o.KeyFile)
	}
	// The checks below only word the errors: transport reads the files
	// again, and would fail on the same problems with less to say.
	if o.CAFile != "" {
		if err := checkCAFile(o.CAFile); err != nil {
			return nil, err
		}
	}
	if o.CertFile != "" {
		if err := checkKeyPair(o.CertFile, o.KeyFile); err != nil {
			return nil, err
		}
	}
	info := transport.TLSInfo{CertFile: o.CertFile, KeyFile: o.KeyFile, TrustedCAFile: o.CAFile}
	cfg, err := info.ClientConfig()
	if err != nil {
		return nil, tlsErrorf("%v", err)
	}
	return cfg, nil
}

// checkCAFile returns an error naming path unless it can be read and
// holds PEM certificates only, at least one.
func checkCAFile(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return tlsErrorf("cannot read the CA file: %v", err)
	}
	n := 0
	for {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			break
		}
		if _, err := x509.ParseCertificate(block.Bytes); err != nil {
			return tlsErrorf("the CA file %s holds a PEM block of type %q that is not a certificate (%v): give the certificate of etcd's CA", path, block.Type, err)
		}
		n++
	}
	if n == 0 {
		return tlsErrorf("the CA file %s holds no PEM certificate: give the certificate of etcd's CA", path)
	}
	return nil
}

// checkKeyPair returns an error naming the files unless certFile and
// keyFile can be read and hold a certificate and its private key.
func checkKeyPair(certFile, keyFile string) error {
	cert, err := os.ReadFile(certFile)
	if err != nil {
		return tlsErrorf("cannot read the client certificate: %v", err)
	}
	key, err := os.ReadFile(keyFile)
	if err != nil {
		return tlsErrorf("cannot read the client key: %v", err)
	}
	if _, err := tls.X509KeyPair(cert, key); err != nil {
		return tlsErrorf("the client certificate %s and key %s cannot be used (%v): give a PEM certificate and the PEM private key that goes with it", certFile, keyFile, err)
	}
	return nil
}
