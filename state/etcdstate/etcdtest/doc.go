// Package etcdtest starts real etcd servers inside a test process, for the
// tests of package etcdstate and of the packages that use it: one member
// (Start) or a cluster of several (StartCluster), listening on loopback at
// free ports, with their data in the test's temporary directory, stopped
// when the test ends. Their logging is off.
//
// It imports the etcd server, which is large and slow to compile: import
// it only from _test.go files, never from a package the reconcile binary
// builds.
package etcdtest
