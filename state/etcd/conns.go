package etcd

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

	"github.com/reconcile-dev/reconcile/state/kv"
)

// reach checks, before a client is made, that a TCP connection can be
// made to at least one endpoint within ContactTimeout. When none can
// (nothing listens, a name does not resolve, a host is not reached), the
// error says why for each, at once, rather than after a timeout kept for
// a cluster that can be reached (a login, an election). Endpoints with a
// scheme (unix://) are left to the client.
func reach(ctx context.Context, o Options) error {
	ctx, cancel := context.WithTimeout(ctx, o.ContactTimeout)
	defer cancel()
	errs := make([]chan error, len(o.Endpoints))
	for i, ep := range o.Endpoints {
		errs[i] = make(chan error, 1)
		go func() {
			if strings.Contains(ep, "://") || strings.HasPrefix(ep, "unix:") {
				errs[i] <- nil
				return
			}
			conn, err := new(net.Dialer).DialContext(ctx, "tcp", ep)
			if err == nil {
				conn.Close()
			}
			errs[i] <- err
		}()
	}
	var why []string
	for i, ep := range o.Endpoints {
		err := <-errs[i]
		if err == nil {
			return nil // cancel ends the other dials
		}
		why = append(why, fmt.Sprintf("%s: %v", ep, err))
	}
	return fmt.Errorf("%w: etcd does not answer (%s): check that etcd runs and listens there, that the host names resolve and that no firewall "+
		"blocks the port, and that the state URL (--state, RECONCILE_STATE or backend: url: in Pulumi.yaml) names it", kv.ErrUnreachable, strings.Join(why, "; "))
}

// connWatch records why the client's last connection to etcd failed
// before etcd answered on it: a TLS handshake that failed, or a connection
// closed unanswered, as when etcd refuses a client certificate. The
// client only says that its time ran out; connWatch lets the error say why.
type connWatch struct {
	last atomic.Pointer[connFailure] // nil once a connection got an answer
}

// connFailure is how one connection to etcd failed.
type connFailure struct {
	addr      string // the endpoint, host:port
	handshake bool   // the TLS handshake failed, rather than a read after it
	err       error
}

// dialOptions make a client of endpoints, with the TLS configuration cfg
// (nil: plain), report to w: the transport credentials the client would
// use, watched, which it applies after its own. For endpoints with a
// scheme, the client chooses its own, and w learns nothing.
func (w *connWatch) dialOptions(endpoints []string, cfg *tls.Config) []grpc.DialOption {
	if ep := endpoints[0]; strings.Contains(ep, "://") || strings.HasPrefix(ep, "unix:") || strings.HasPrefix(ep, "unixs:") {
		return nil
	}
	inner := insecure.NewCredentials()
	if cfg != nil {
		inner = credentials.NewTLS(cfg)
	}
	return []grpc.DialOption{grpc.WithTransportCredentials(watchedCreds{inner, w})}
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
			c.w.last.Store(&connFailure{addr: authority, handshake: true, err: err})
		}
		return nil, nil, err
	}
	return &watchedConn{Conn: conn, w: c.w, addr: authority}, info, nil
}

func (c watchedCreds) Clone() credentials.TransportCredentials {
	return watchedCreds{c.TransportCredentials.Clone(), c.w}
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
			c.w.last.Store(nil)
		case err != nil && !errors.Is(err, net.ErrClosed): // not closed by this side
			c.w.last.Store(&connFailure{addr: c.addr, err: err})
		}
	}
	return n, err
}

// explain returns err, of a request made with o, with why the last
// connection to etcd failed, if the request got no answer and a
// connection failed, and what to do about it. Other errors it returns as
// they are.
func (w *connWatch) explain(err error, o Options) error {
	f := w.last.Load()
	if c := code(err); f == nil || !errors.Is(err, context.DeadlineExceeded) && c != codes.Unavailable && c != codes.DeadlineExceeded {
		return err
	}
	var (
		verify  *tls.CertificateVerificationError
		header  tls.RecordHeaderError
		unknown x509.UnknownAuthorityError
		host    x509.HostnameError
		invalid x509.CertificateInvalidError
		op      *net.OpError
		what    string
		advice  string
	)
	switch {
	case f.handshake && errors.As(f.err, &verify):
		what = "etcd's certificate does not verify"
		switch {
		case errors.As(f.err, &unknown) && o.CAFile != "":
			what = "etcd's certificate is not signed by the CA of the CA file " + o.CAFile
			advice = "give the certificate of the CA that signed etcd's as the CA file"
		case errors.As(f.err, &unknown):
			what = "etcd's certificate is not signed by a CA this system trusts"
			advice = "give the certificate of the CA that signed etcd's as the CA file"
		case errors.As(f.err, &host):
			h, _, _ := net.SplitHostPort(f.addr)
			what, advice = "etcd's certificate is not valid for "+h, "use an endpoint its certificate names"
		case errors.As(f.err, &invalid) && invalid.Reason == x509.Expired:
			what, advice = "etcd's certificate, or its CA's, has expired or is not valid yet", "renew it, or set the clocks right"
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
		// done, as TLS 1.3 has it, and refuses it with an alert.
		what = fmt.Sprintf("etcd at %s requires a client certificate, and none was given", f.addr)
		advice = "give a client certificate signed by a CA etcd trusts, and its key"
		if o.CertFile != "" {
			what = fmt.Sprintf("etcd at %s refused the client certificate %s", f.addr, o.CertFile)
			advice = "give one signed by a CA etcd trusts, valid now, for client authentication"
		}
	case !f.handshake && o.CertFile == "" && o.KeyFile == "" && o.CAFile == "":
		what = fmt.Sprintf("etcd at %s closed the connection without answering", f.addr)
		advice = "if etcd serves its clients over TLS, turn TLS on, with the certificate of the CA that signed etcd's as the CA file"
	default:
		return fmt.Errorf("%w (the last connection to etcd at %s failed: %v)", err, f.addr, f.err)
	}
	if advice != "" {
		advice = ": " + advice
	}
	return fmt.Errorf("%w: %w: %s (%v)%s", err, ErrTLS, what, f.err, advice)
}
