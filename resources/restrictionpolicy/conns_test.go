package restrictionpolicy_test

import (
	"testing"

	"github.com/reconcile-dev/reconcile/internal/conntest"
	"github.com/reconcile-dev/reconcile/resources/restrictionpolicy"
)

// TestReadsReuseConnections reads one policy and the current user many
// times, parallelism calls at once, and counts the TCP connections the
// emulator accepted: the client's transport keeps enough idle connections
// for each call to reuse one where an earlier call ended, so the count
// stays within a small bound whatever the number of calls.
// (http.DefaultTransport, which keeps 2, opens most calls anew.)
func TestReadsReuseConnections(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "", nil, nil)
	cfg := e.config()
	d := restrictionpolicy.New(cfg)
	me := restrictionpolicy.NewCurrentUser(cfg)
	id, _, err := d.Create(t.Context(), attrs{"resourceId": "dashboard:conns", "bindings": []any{binding("editor", roleA)}})
	if err != nil {
		t.Fatal(err)
	}
	const parallelism = 10
	for name, call := range map[string]func() error{
		"Read": func() error {
			_, err := d.Read(t.Context(), id)
			return err
		},
		"current user": func() error {
			_, err := me.Invoke(t.Context(), attrs{})
			return err
		},
	} {
		total := int64(0)
		for _, n := range []int{100, 300} {
			before := e.conns.Count()
			if err := conntest.Run(n, parallelism, call); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			opened := e.conns.Count() - before
			total += opened
			t.Logf("%s: %d calls, %d at once: %d new connections", name, n, parallelism, opened)
		}
		// A call may start just before the connection of the call that
		// ended is back in the pool and dial one more: hence twice the
		// parallelism.
		if total > 2*parallelism {
			t.Errorf("%s: 400 calls, %d at once, opened %d connections; want at most %d", name, parallelism, total, 2*parallelism)
		}
	}
}
