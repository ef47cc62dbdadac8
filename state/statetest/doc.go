// Package statetest is the contract every state backend meets: one suite
// of tests, Run, that the bbolt store (package state) and the etcd store
// (package etcdstate) both pass, so that the engine and the CLI can use
// either through one interface, and RunCopy, which copies a state from one
// backend to another with Dump and Load and checks that nothing is lost.
//
// A backend's test calls Run with a function that opens the backend's state
// of a test: every call with the same *testing.T opens the same state, and
// calls with different ones different states. The Store it returns may also
// implement Damager and CommitObserver, which reach under the Store to
// damage a stored value and to watch commits; the tests that need them are
// skipped otherwise.
package statetest
