// Package etcdtest starts real etcd servers inside a test process, for the
// tests of package etcdstate and of the packages that use it: one member
// (Start) or a cluster of several (StartCluster), listening on loopback at
// free ports, with their data in the test's temporary directory, stopped
// when the test ends. Their logging is off.
//
// StartTLS starts one member that serves its clients over TLS only, and,
// if asked, requires a client certificate of them. It makes its
// certificates itself with a throwaway CA (NewCA): ECDSA P-256 keys and
// certificates valid for two hours from their making, written as PEM
// files to the test's temporary directory, whose paths it returns. A test
// can make another CA with NewCA, to trust the wrong CA or to present a
// client certificate etcd does not trust. Traffic between members stays
// plain.
//
// It imports the etcd server, which is large and slow to compile: import
// it only from _test.go files, never from a package the reconcile binary
// builds.
package etcdtest
