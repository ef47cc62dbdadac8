package etcd

import (
	"google.golang.org/grpc"

	"github.com/reconcile-dev/reconcile/state/kv"
)

// WithDialOptions returns o with opts added to its client's dial options.
func WithDialOptions(o Options, opts ...grpc.DialOption) Options {
	o.dialOptions = append(o.dialOptions[:len(o.dialOptions):len(o.dialOptions)], opts...)
	return o
}

// StopBackground stops the keep-alive of s's lease and its watch of the
// lock key, as a process stopped or cut off would: s then learns that its
// lock is lost only from a write, or from Held.
func StopBackground(s kv.Store) {
	st := s.(*Store)
	st.stopBg()
	st.bg.Wait()
}
