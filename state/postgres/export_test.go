package postgres

import "github.com/reconcile-dev/reconcile/state/kv"

// StopRenewal stops the renewals of s's lease, as a frozen process's stop,
// without its knowing.
func StopRenewal(s kv.Store) {
	st := s.(*Store)
	st.stopBg()
	st.bg.Wait()
}
