package etcd

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/reconcile-dev/reconcile/state/kv"
)

// pageSize is the number of keys one request of a Scan reads.
const pageSize = 1000

// Read runs fn with a view at one revision: a reader's snapshot, or, for
// a writer, the latest when the view's first request is made.
func (s *Store) Read(ctx context.Context, fn func(kv.View) error) error {
	if s.closed.Load() {
		return s.errClosed()
	}
	v := &view{s: s, ctx: ctx}
	v.rev.Store(s.rev)
	return fn(v)
}

// view reads at rev, or, while rev is 0, at the latest revision, to which
// its first request pins it, holding mu.
type view struct {
	s   *Store
	ctx context.Context
	mu  sync.Mutex
	rev atomic.Int64
}

// at runs req at the view's revision (0: the latest), and pins the view to
// the revision req returns if it had none.
func (v *view) at(what string, req func(ctx context.Context, rev []clientv3.OpOption) (*pb.ResponseHeader, error)) error {
	rev := v.rev.Load()
	if rev == 0 {
		v.mu.Lock()
		defer v.mu.Unlock()
		rev = v.rev.Load()
	}
	var opts []clientv3.OpOption
	if rev > 0 {
		opts = append(opts, clientv3.WithRev(rev))
	}
	ctx, cancel := v.s.b.timeout(v.ctx)
	defer cancel()
	hdr, err := req(ctx, opts)
	if err != nil {
		return v.s.fail(what, err)
	}
	if rev == 0 {
		v.rev.Store(hdr.Revision)
	}
	return nil
}

// value is v, or an empty value for a key that holds one (etcd gives nil).
func value(v []byte) []byte {
	if v == nil {
		return []byte{}
	}
	return v
}

func (v *view) Get(key string) (val []byte, err error) {
	return val, v.at("read "+strconv.Quote(key)+" of", func(ctx context.Context, rev []clientv3.OpOption) (*pb.ResponseHeader, error) {
		resp, err := v.s.b.cli.Get(ctx, v.s.base+key, rev...)
		if err != nil {
			return nil, err
		}
		if len(resp.Kvs) > 0 {
			val = value(resp.Kvs[0].Value)
		}
		return resp.Header, nil
	})
}

// GetMany reads keys in transactions of gets, as many as one may hold.
func (v *view) GetMany(keys []string) ([][]byte, error) {
	out := make([][]byte, len(keys))
	for start := 0; start < len(keys); start += v.s.b.opts.MaxTxnOps {
		chunk := keys[start:min(len(keys), start+v.s.b.opts.MaxTxnOps)]
		err := v.at("read the keys", func(ctx context.Context, rev []clientv3.OpOption) (*pb.ResponseHeader, error) {
			gets := make([]clientv3.Op, len(chunk))
			for i, k := range chunk {
				gets[i] = clientv3.OpGet(v.s.base+k, rev...)
			}
			resp, err := v.s.b.cli.Txn(ctx).Then(gets...).Commit()
			if err != nil {
				return nil, err
			}
			for i, r := range resp.Responses {
				if kvs := r.GetResponseRange().Kvs; len(kvs) > 0 {
					out[start+i] = value(kvs[0].Value)
				}
			}
			return resp.Header, nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Scan reads a page of keys at a time. It never lists the lock key, which
// is no key of the model's.
func (v *view) Scan(prefix, after string, keysOnly bool, fn func(key string, value []byte) error) error {
	start, end := v.s.base+prefix, prefixEnd(v.s.base+prefix)
	if from := v.s.base + after + "\x00"; after != "" && from > start {
		start = from
	}
	for {
		var resp *clientv3.GetResponse
		err := v.at("list "+strconv.Quote(prefix)+" of", func(ctx context.Context, rev []clientv3.OpOption) (*pb.ResponseHeader, error) {
			opts := append(rev, clientv3.WithRange(end), clientv3.WithLimit(pageSize))
			if keysOnly {
				opts = append(opts, clientv3.WithKeysOnly())
			}
			var err error
			if resp, err = v.s.b.cli.Get(ctx, start, opts...); err != nil {
				return nil, err
			}
			return resp.Header, nil
		})
		if err != nil {
			return err
		}
		var last *mvccpb.KeyValue
		for _, kv := range resp.Kvs {
			last = kv
			if key := string(kv.Key); key != v.s.lockKey() {
				val := value(kv.Value)
				if keysOnly {
					val = nil
				}
				if err := fn(key[len(v.s.base):], val); err != nil {
					return err
				}
			}
		}
		if !resp.More || last == nil {
			return nil
		}
		start = string(last.Key) + "\x00"
	}
}
