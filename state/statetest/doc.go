// Package statetest is the contract of reconcile's state model: one suite
// of tests, Run, that a state passes on every kv backend (Model opens the
// model, package state, over one), so that the engine and the CLI can use
// any backend through one interface, and RunCopy, which copies a state
// from one backend to another with Dump and Load and checks that nothing
// is lost.
//
// A backend's test calls Run with a function that opens the backend's state
// of a test: every call with the same *testing.T opens the same state, and
// calls with different ones different states. The Store it returns may also
// implement Damager, KeyDeleter and CommitObserver, which reach under the
// Store to damage a stored value, delete a key and watch commits; the
// tests that need them are skipped otherwise. The Stores of Model
// implement them all.
package statetest
