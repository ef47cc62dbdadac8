package etcd

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/reconcile-dev/reconcile/state/kv"
)

var (
	_ kv.Backend     = (*Backend)(nil)
	_ kv.Store       = (*Store)(nil)
	_ kv.RemoteReads = (*Store)(nil)
)

// Backend is the stacks under one key prefix of an etcd cluster, over one
// client connection. Its methods are safe for concurrent use.
type Backend struct {
	opts     Options // without the password
	password string  // kept only to keep it out of error texts
	cli      *clientv3.Client
	watch    *connWatch
	closed   atomic.Bool
}

// New connects to the cluster o names. It checks the TLS files first, and
// fails at once, with an error wrapping ErrTLS that names the file, if one
// cannot be used; then that an endpoint can be reached at all, or fails
// with an error matching kv.ErrUnreachable that says why for each. With a
// user name, it logs in. ctx bounds New only.
func New(ctx context.Context, o Options) (*Backend, error) {
	o, err := o.withDefaults()
	var tlsCfg *tls.Config
	if err == nil {
		tlsCfg, err = o.tlsConfig()
	}
	if err == nil {
		err = reach(ctx, o)
	}
	if err != nil {
		return nil, fmt.Errorf("open state %s: %w", o, err)
	}
	b := &Backend{opts: o, password: o.Password, watch: &connWatch{}}
	b.opts.Password = ""
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:          o.Endpoints,
		DialTimeout:        o.DialTimeout,
		TLS:                tlsCfg,
		Username:           o.Username,
		Password:           o.Password,
		Logger:             zap.NewNop(),
		MaxCallSendMsgSize: o.MaxRequestBytes + 64<<10,
		DialOptions:        append(b.watch.dialOptions(o.Endpoints, tlsCfg), o.dialOptions...),
	})
	if err != nil {
		// With a user name, the client logs in before it returns.
		return nil, b.fail(fmt.Errorf("open state %s: connect: %w", o, err))
	}
	b.cli = cli
	return b, nil
}

// fail returns err, an error of a request to etcd, explained (why the last
// connection failed, what to do about etcd's refusals) and without any
// credential in its text.
func (b *Backend) fail(err error) error {
	err = advise(b.watch.explain(err, b.opts))
	if b.password != "" && strings.Contains(err.Error(), b.password) {
		return withheld{err}
	}
	return err
}

// withheld is an error whose text held a credential: it matches what err
// matches, and says nothing of it.
type withheld struct{ err error }

func (w withheld) Error() string { return "error text withheld: it held a credential" }
func (w withheld) Unwrap() error { return w.err }

// advise adds what to do to an error of etcd's authentication or
// authorization, which etcd words for its operators.
func advise(err error) error {
	has := func(e error) bool {
		return errors.Is(err, e) || rpctypes.Error(err) == e || strings.Contains(err.Error(), e.Error())
	}
	for _, e := range []error{rpctypes.ErrUserEmpty, rpctypes.ErrAuthFailed, rpctypes.ErrInvalidAuthToken, rpctypes.ErrAuthOldRevision} {
		if has(e) {
			return fmt.Errorf("%w; give etcd's user and password in ETCDCTL_USER and ETCDCTL_PASSWORD (or ETCDCTL_USER=name:password), as etcdctl takes them", err)
		}
	}
	if has(rpctypes.ErrPermissionDenied) {
		return fmt.Errorf("%w; the etcd user needs read and write permission on the key prefix (etcdctl role grant-permission ROLE --prefix readwrite PREFIX/)", err)
	}
	return err
}

// timeout returns ctx bounded by RequestTimeout, unless it has a deadline.
func (b *Backend) timeout(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, b.opts.RequestTimeout)
}

// Stacks returns the names of the stacks under the prefix, those that
// hold meta/format, sorted, read at one revision.
func (b *Backend) Stacks(ctx context.Context) ([]string, error) {
	ctx, cancel := b.timeout(ctx)
	defer cancel()
	prefix := b.opts.Prefix + "/"
	var (
		stacks []string
		rev    int64
	)
	// Skip from one stack's keys to the next's: a stack's keys all start
	// with "<name>/", and "<name>0" is the first key past them.
	for start := prefix; ; {
		ropts := []clientv3.OpOption{clientv3.WithRange(prefixEnd(prefix)), clientv3.WithKeysOnly(), clientv3.WithLimit(1)}
		if rev > 0 {
			ropts = append(ropts, clientv3.WithRev(rev))
		}
		resp, err := b.cli.Get(ctx, start, ropts...)
		if err != nil {
			return nil, b.fail(fmt.Errorf("list stacks %s: %w", b.opts, err))
		}
		rev = resp.Header.Revision
		if len(resp.Kvs) == 0 {
			slices.Sort(stacks)
			return stacks, nil
		}
		name, _, nested := strings.Cut(string(resp.Kvs[0].Key)[len(prefix):], "/")
		if !nested {
			start = string(resp.Kvs[0].Key) + "\x00"
			continue
		}
		got, err := b.cli.Get(ctx, prefix+name+"/meta/format", clientv3.WithRev(rev), clientv3.WithCountOnly())
		if err != nil {
			return nil, b.fail(fmt.Errorf("list stacks %s: %w", b.opts, err))
		}
		if got.Count > 0 && checkStack(name) == nil {
			stacks = append(stacks, name)
		}
		start = prefix + name + "0" // '0' follows '/'
	}
}

// Remove deletes every key of stack, its lock's included, in one
// transaction, once it holds the stack's lock (waiting up to timeout for
// it), and fenced by it.
func (b *Backend) Remove(ctx context.Context, stack string, timeout time.Duration) error {
	st, err := b.Open(ctx, stack, kv.Options{Write: true, LockTimeout: timeout})
	if err != nil {
		return err
	}
	s := st.(*Store)
	defer s.Close()
	tctx, cancel := b.timeout(ctx)
	defer cancel()
	resp, err := b.cli.Txn(tctx).If(s.fence()...).Then(clientv3.OpDelete(s.base, clientv3.WithPrefix())).Commit()
	switch {
	case err != nil:
		return b.fail(fmt.Errorf("remove %s: %w", s.where, err))
	case !resp.Succeeded:
		return fmt.Errorf("remove %s: %w", s.where, kv.ErrLeaseLost)
	}
	return nil
}

// Shared is true: runners on many machines share a cluster.
func (b *Backend) Shared() bool { return true }

// Describe names the backend, `etcd://HOST:PORT,.../PREFIX`.
func (b *Backend) Describe() string { return b.opts.String() }

// Close closes the client connection. Close the Stores first. Closing
// twice does nothing.
func (b *Backend) Close() error {
	if b.closed.Swap(true) {
		return nil
	}
	if err := b.cli.Close(); err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("close %s: %w", b.opts, err)
	}
	return nil
}

// prefixEnd returns the key just past every key that starts with prefix,
// the end of a range over prefix.
func prefixEnd(prefix string) string {
	b := []byte(prefix)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] < 0xff {
			b[i]++
			return string(b[:i+1])
		}
	}
	return "\x00" // every key
}
