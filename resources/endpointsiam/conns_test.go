package endpointsiam_test

import (
	"testing"

	"github.com/reconcile-dev/reconcile/internal/conntest"
	"github.com/reconcile-dev/reconcile/resources"
	"github.com/reconcile-dev/reconcile/resources/endpointsiam"
)

// TestInvokesReuseConnections invokes a lookup many times, parallelism
// calls at once, and counts the TCP connections the emulator accepted:
// the lookup's transport keeps enough idle connections for each call to
// reuse one where an earlier call ended, so the count stays within a small
// bound whatever the number of calls. (http.DefaultTransport, which keeps
// 2, opens most calls anew.)
func TestInvokesReuseConnections(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	fn := endpointsiam.NewServiceIamPolicy(e.config())
	const parallelism = 10
	total := int64(0)
	for _, n := range []int{100, 400} {
		before := e.conns.Count()
		err := conntest.Run(n, parallelism, func() error {
			_, err := fn.Invoke(t.Context(), resources.Attrs{"serviceName": orders})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		opened := e.conns.Count() - before
		total += opened
		t.Logf("%d calls, %d at once: %d new connections", n, parallelism, opened)
	}
	// A call may start just before the connection of the call that ended
	// is back in the pool and dial one more: hence twice the parallelism.
	if total > 2*parallelism {
		t.Errorf("500 calls, %d at once, opened %d connections; want at most %d", parallelism, total, 2*parallelism)
	}
}
