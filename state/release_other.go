//go:build !linux

package state

import bolt "go.etcd.io/bbolt"

// release does nothing but on Linux.
func release(*bolt.Tx) {}
