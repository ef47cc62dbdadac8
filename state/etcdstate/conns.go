package etcdstate

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"syscall"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

// connWatch records why the client's last connection to etcd failed
// before etcd answered on it: a TLS handshake that failed, or a
// connection closed with no answer, as when etcd refuses a client
// certificate. The client itself only waits for a connection and at the
// end of its time says that time ran out; connWatch lets the error say why.
type connWatch struct {
	last atomic.Pointer[connFailure]
}

// connFailure is how one connection to etcd failed.
type connFailure struct {
	addr      string // the endpoint, host:port
	handshake bool   // the TLS handshake failed, rather than a read after it
	err       error
}

// failed records that the connection to addr failed with err.
func (w *connWatch) failed(addr string, handshake bool, err error) {
	w.last.Store(&connFailure{addr: addr, handshake: handshake, err: err})
}

// answered records that a connection got an answer from etcd.
func (w *connWatch) answered() { w.last.Store(nil) }

// lastFailure returns the failure recorded last, or nil if the last
// connection got an answer.
func (w *connWatch) lastFailure() *connFailure { return w.last.Load() }

// dialOptions returns the options of a client of endpoints with the TLS
// configuration cfg (nil: plain connections) that make it report to w: the
// transport credentials the client itself would use, watched. The client
// applies them after its own. It chooses its own by the first endpoint's
// scheme; for one with a scheme dialOptions returns none, and w learns
// nothing.
func (w *connWatch) dialOptions(endpoints []string, cfg *tls.Config) []grpc.DialOption {
	if ep := endpoints[0]; strings.Contains(ep, "://") || strings.HasPrefix(ep, "unix:") || strings.HasPrefix(ep, "unixs:") {
		return nil
	}
	return []grpc.DialOption{grpc.WithTransportCredentials(w.credentials(cfg))}
}

// reach checks, before a client is made, that a connection can be made to
// at least one endpoint, within ContactTimeout: when none can (nothing
// listens, a name does not resolve, a host is not reached), the error says
// why for each, at once, rather than after the login's DialTimeout or the
// first request's RequestTimeout. Where a connection can be made, the
// client goes on as usual (an election, or a TLS failure that the error of
// its first request explains). Endpoints given with a scheme (unix://) are
// left to the client.
func reach(ctx context.Context, opts Options) error {
	ctx, cancel := context.WithTimeout(ctx, opts.ContactTimeout)
	defer cancel()
	type result struct {
		ep  string
		err error
	}
	results := make(chan result, len(opts.Endpoints))
	for _, ep := range opts.Endpoints {
		go func() {
			if strings.Contains(ep, "://") || strings.HasPrefix(ep, "unix:") {
				results <- result{ep, nil}
				return
			}
			var d net.Dialer
			conn, err := d.DialContext(ctx, "tcp", ep)
			if err == nil {
				conn.Close()
			}
			results <- result{ep, err}
		}()
	}
	dials := map[string]error{}
	for range opts.Endpoints {
		r := <-results
		if r.err == nil {
			return nil // cancel ends the other dials
		}
		dials[r.ep] = r.err
	}
	return &unreachableError{endpoints: opts.Endpoints, dials: dials}
}

// ErrUnreachable is matched by the error of Open and Stacks when no
// connection could be made to any endpoint of the cluster: nothing listens
// there, their names do not resolve, or they cannot be reached.
var ErrUnreachable = errors.New("etcd does not answer")

// unreachableError says why no connection could be made to any
// endpoint, and what to check.
type unreachableError struct {
	endpoints []string
	dials     map[string]error
}

func (e *unreachableError) Error() string {
	var why []string
	for _, ep := range e.endpoints {
		why = append(why, fmt.Sprintf("%s: %v", ep, e.dials[ep]))
	}
	return fmt.Sprintf("%v (%s): check that etcd runs and listens there, that the host names resolve and that no firewall blocks the port, "+
		"and that the state URL (--state, RECONCILE_STATE or backend: url: in Pulumi.yaml) names it", ErrUnreachable, strings.Join(why, "; "))
}

func (e *unreachableError) Unwrap() error { return ErrUnreachable }

// credentials returns the transport credentials of a client with the TLS
// configuration cfg (nil: plain connections), reporting to w.
func (w *connWatch) credentials(cfg *tls.Config) credentials.TransportCredentials {
	inner := insecure.NewCredentials()
	if cfg != nil {
		inner = credentials.NewTLS(cfg)
	}
	return watchedCreds{TransportCredentials: inner, w: w}
}

// watchedCreds are transport credentials that report to a connWatch.
type watchedCreds struct {
	credentials.TransportCredentials
	w *connWatch
}

func (c watchedCreds) ClientHandshake(ctx context.Context, authority string, raw net.Conn) (net.Conn, credentials.AuthInfo, error) {
	conn, info, err := c.TransportCredentials.ClientHandshake(ctx, authority, raw)
	if err != nil {
		if ctx.Err() == nil {
			c.w.failed(authority, true, err)
		}
		return nil, nil, err
	}
	return &watchedConn{Conn: conn, w: c.w, addr: authority}, info, nil
}

func (c watchedCreds) Clone() credentials.TransportCredentials {
	return watchedCreds{TransportCredentials: c.TransportCredentials.Clone(), w: c.w}
}

// watchedConn is a connection to etcd that reports to a connWatch whether
// etcd answered on it. (It hides the syscall.Conn of the connection it
// wraps, which gRPC uses only for its channelz statistics.)
type watchedConn struct {
	net.Conn
	w        *connWatch
	addr     string
	answered atomic.Bool
}

func (c *watchedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if !c.answered.Load() {
		switch {
		case n > 0:
			c.answered.Store(true)
			c.w.answered()
		case err != nil && !errors.Is(err, net.ErrClosed): // not closed by this side
			c.w.failed(c.addr, false, err)
		}
	}
	return n, err
}

// explain returns err, an error of a request made with the options opts
// that got no answer in time, with why the last connection to etcd
// failed, if it did, and what to do about it. Other errors it returns as
// they are.
func (w *connWatch) explain(err error, opts Options) error {
	f := w.lastFailure()
	if f == nil || !noAnswer(err) {
		return err
	}
	tlsOn := opts.CertFile != "" || opts.KeyFile != "" || opts.CAFile != ""
	var (
		verify  *tls.CertificateVerificationError
		header  tls.RecordHeaderError
		unknown x509.UnknownAuthorityError
		host    x509.HostnameError
		invalid x509.CertificateInvalidError
		op      *net.OpError
	)
	var what, advice string
	switch {
	case f.handshake && errors.As(f.err, &verify):
		what, advice = "etcd's certificate does not verify", ""
		switch {
		case errors.As(f.err, &unknown) && opts.CAFile != "":
			what = "etcd's certificate is not signed by the CA of the CA file " + opts.CAFile
			advice = "give the certificate of the CA that signed etcd's as the CA file"
		case errors.As(f.err, &unknown):
			what = "etcd's certificate is not signed by a CA this system trusts"
			advice = "give the certificate of the CA that signed etcd's as the CA file"
		case errors.As(f.err, &host):
			what = "etcd's certificate is not valid for " + hostOf(f.addr)
			advice = "use an endpoint its certificate names"
		case errors.As(f.err, &invalid) && invalid.Reason == x509.Expired:
			what = "etcd's certificate, or its CA's, has expired or is not valid yet"
			advice = "renew it, or set the clocks right"
		}
		what = fmt.Sprintf("the TLS handshake with etcd at %s failed: %s", f.addr, what)
	case f.handshake && errors.As(f.err, &header):
		what = fmt.Sprintf("etcd at %s does not speak TLS there", f.addr)
		advice = "leave TLS off, or use the endpoint where etcd serves TLS"
	case f.handshake && (errors.Is(f.err, io.EOF) || errors.Is(f.err, syscall.ECONNRESET)):
		// What etcd without TLS does with a TLS hello.
		what = fmt.Sprintf("etcd at %s closed the connection during the TLS handshake", f.addr)
		advice = "if etcd does not serve TLS there, leave TLS off, or use the endpoint where it does"
	case !f.handshake && errors.As(f.err, &op) && op.Op == "remote error":
		// etcd checks the client's certificate once the handshake is
		// done, as TLS 1.3 has it, and refuses it with an alert read
		// after the handshake.
		if opts.CertFile == "" {
			what = fmt.Sprintf("etcd at %s requires a client certificate, and none was given", f.addr)
			advice = "give a client certificate signed by a CA etcd trusts, and its key"
		} else {
			what = fmt.Sprintf("etcd at %s refused the client certificate %s", f.addr, opts.CertFile)
			advice = "give one signed by a CA etcd trusts, valid now, for client authentication"
		}
	case !f.handshake && !tlsOn:
		what = fmt.Sprintf("etcd at %s closed the connection without answering", f.addr)
		advice = "if etcd serves its clients over TLS, turn TLS on, with the certificate of the CA that signed etcd's as the CA file"
	default:
		return fmt.Errorf("%w (the last connection to etcd at %s failed: %v)", err, f.addr, f.err)
	}
	return &tlsConnError{err: err, what: what, cause: f.err, advice: advice}
}

// noAnswer reports whether err is that of a request that got no answer:
// its time ran out or no connection was available.
func noAnswer(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	st, ok := status.FromError(err)
	return ok && (st.Code() == codes.Unavailable || st.Code() == codes.DeadlineExceeded)
}

// hostOf returns the host of addr, host:port.
func hostOf(addr string) string {
	if h, _, err := net.SplitHostPort(addr); err == nil {
		return h
	}
	return addr
}

// tlsConnError is the error of a request that got no answer as its
// connection to etcd failed for a reason of TLS.
type tlsConnError struct {
	err    error  // the request's
	what   string // what went wrong
	cause  error  // the connection's error
	advice string // what to do about it, if known
}

func (e *tlsConnError) Error() string {
	s := fmt.Sprintf("%v: %v: %s (%v)", e.err, ErrTLS, e.what, e.cause)
	if e.advice != "" {
		s += ": " + e.advice
	}
	return s
}

func (e *tlsConnError) Unwrap() []error { return []error{e.err, ErrTLS} }
