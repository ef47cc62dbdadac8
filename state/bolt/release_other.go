//go:build !linux

package bolt

import "go.etcd.io/bbolt"

// release does nothing but on Linux.
func release(*bbolt.Tx) {}
