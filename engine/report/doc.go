// Package report holds what running the engine reports, as data for the
// renderers: an apply's result (Apply: counts by action, the nodes that
// failed, were skipped, interrupted or not started, and the outputs) and the
// progress Events it sends while it runs; a drift report (Drift: each node
// that changed, was deleted, or whose lookup returns something new, and the
// nodes that could not be read); and what the resolution of interrupted
// creates did with each intent (Intents).
//
// Like package plan, it depends only on the value model: it knows nothing
// of the state store, the drivers or the network.
package report
