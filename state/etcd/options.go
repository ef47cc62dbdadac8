package etcd

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
	"google.golang.org/grpc"
)

// Defaults of Options, and of kv.Options.LockTTL. The limits are etcd's
// own defaults (--max-txn-ops, --max-request-bytes).
const (
	DefaultLockTTL         = 15 * time.Second
	DefaultRequestTimeout  = 30 * time.Second
	DefaultDialTimeout     = 10 * time.Second
	DefaultContactTimeout  = 5 * time.Second
	DefaultMaxTxnOps       = 128
	DefaultMaxRequestBytes = 1536 * 1024
)

// Options say where the stacks are and how to reach them. String,
// GoString and every error of this package leave out the credentials.
type Options struct {
	// Endpoints are the etcd client endpoints, as host:port.
	Endpoints []string
	// Prefix is the key prefix of the stacks, the path of the state URL,
	// e.g. "/reconcile/acme": it starts with a slash; a trailing one is
	// ignored.
	Prefix string
	// CertFile and KeyFile are a client certificate and its key, PEM
	// files, given both or neither; CAFile holds the PEM certificates of
	// the CAs to trust. Any of them set turns TLS on.
	CertFile, KeyFile, CAFile string
	// Username and Password log in to etcd when Username is set.
	Username, Password string
	// RequestTimeout bounds each read, and each write whose context has no
	// deadline, retries included. DialTimeout bounds the login as New
	// connects. ContactTimeout bounds New's first contact, a TCP
	// connection to any endpoint: when none can be made by then, New
	// fails with an error matching kv.ErrUnreachable that says why for
	// each. Zero means the defaults.
	RequestTimeout, DialTimeout, ContactTimeout time.Duration
	// MaxTxnOps and MaxRequestBytes are the server's limits on one
	// transaction (its --max-txn-ops and --max-request-bytes); zero means
	// etcd's defaults.
	MaxTxnOps, MaxRequestBytes int

	dialOptions []grpc.DialOption // added to the client's, by tests
}

// String describes o without credentials, e.g.
// `etcd://10.0.0.1:2379,10.0.0.2:2379/reconcile/acme`.
func (o Options) String() string {
	eps := make([]string, len(o.Endpoints))
	for i, ep := range o.Endpoints {
		eps[i] = ep[strings.LastIndexByte(ep, '@')+1:] // user info given by mistake
	}
	return "etcd://" + strings.Join(eps, ",") + strings.TrimRight(o.Prefix, "/")
}

// GoString is String, so that %#v shows no credentials either.
func (o Options) GoString() string { return "etcd.Options{" + o.String() + "}" }

// withDefaults returns o with its zero values set to the defaults and its
// prefix cleaned, or an error saying what is wrong.
func (o Options) withDefaults() (Options, error) {
	o.Prefix = strings.TrimRight(o.Prefix, "/")
	switch {
	case len(o.Endpoints) == 0:
		return o, errors.New("no etcd endpoints")
	case o.Prefix != "" && !strings.HasPrefix(o.Prefix, "/"), strings.IndexByte(o.Prefix, 0) >= 0:
		return o, fmt.Errorf("key prefix %q: want one that starts with a slash, without zero bytes", o.Prefix)
	}
	for _, ep := range o.Endpoints {
		if ep == "" || strings.ContainsAny(ep, "@ ") {
			return o, errors.New("bad etcd endpoint: want host:port") // user info would carry a credential
		}
	}
	for _, d := range []struct {
		v   *time.Duration
		def time.Duration
	}{{&o.RequestTimeout, DefaultRequestTimeout}, {&o.DialTimeout, DefaultDialTimeout}, {&o.ContactTimeout, DefaultContactTimeout}} {
		if *d.v <= 0 {
			*d.v = d.def
		}
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
	if stack == "" || stack == "." || stack == ".." || strings.ContainsAny(stack, "/\x00") {
		return fmt.Errorf("stack name %q: want one without slashes or zero bytes", stack)
	}
	return nil
}

// ErrTLS is wrapped by the errors that come of TLS: a TLS file that
// cannot be used, a handshake that failed, etcd refusing the client's
// certificate or asking for one, or closing a plain connection unanswered.
// A caller can add where the TLS files are set.
var ErrTLS = errors.New("TLS")

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
		return nil, tlsErrorf("the client certificate %s is given without its key: give the key file too, or neither", o.CertFile)
	case o.KeyFile != "" && o.CertFile == "":
		return nil, tlsErrorf("the client key %s is given without its certificate: give the certificate file too, or neither", o.KeyFile)
	}
	// These checks word the errors better than transport would.
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
	cfg, err := transport.TLSInfo{CertFile: o.CertFile, KeyFile: o.KeyFile, TrustedCAFile: o.CAFile}.ClientConfig()
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
		if block, data = pem.Decode(data); block == nil {
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
