package aiendpoint

import (
	"testing"

	"github.com/reconcile-dev/reconcile/internal/conntest"
)

// TestReadsReuseConnections reads one endpoint many times, parallelism
// calls at once, and counts the TCP connections the emulator accepted.
// The driver's transport keeps enough idle connections for each call to
// reuse one where an earlier call ended, so the count stays within a small
// bound whatever the number of reads. (With http.DefaultTransport, which
// keeps 2, 100 reads opened about 55 connections and 400 about 200.)
func TestReadsReuseConnections(t *testing.T) {
	t.Parallel()
	env := newEnv(t, envOptions{})
	id, _ := env.create(env.inputs("conns"))
	const parallelism = 10
	total := int64(0)
	for _, n := range []int{100, 400} {
		before := env.conns.Count()
		err := conntest.Run(n, parallelism, func() error {
			_, err := env.driver.Read(t.Context(), id)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		opened := env.conns.Count() - before
		total += opened
		t.Logf("%d reads, %d at once: %d new connections", n, parallelism, opened)
	}
	// A call may start just before the connection of the call that ended
	// is back in the pool and dial one more: hence twice the parallelism.
	if total > 2*parallelism {
		t.Errorf("500 reads, %d at once, opened %d connections; want at most %d", parallelism, total, 2*parallelism)
	}
}
