// Package dag holds the dependency graph of named nodes and the parallel
// walk over it that planning, apply, drift and the resolution of
// interrupted creates all use. It knows nothing of specs or values: a node
// is a name, and what it depends on is a list of names.
//
// A Graph is built once by New from a map of each node to the nodes it
// depends on, and only read after. Order lists the nodes dependencies
// first, ties broken by name, so that it is the same on every run; a node
// on a cycle, or depending on a name that is not a node, is left out of
// it. Cycles lists each cycle (a node depending on itself is one of one)
// in edge order from its smallest name, for the loader to report. Deps
// and DepsMap give a node's dependencies, sorted, Dependents the nodes
// that depend on it.
//
// Walk calls a function once per node, each only after every one of its
// dependencies has returned, with at most parallelism calls at once:
// nodes on independent branches run in parallel, in no set order. The
// calls run on a pool of at most parallelism goroutines fed from a queue
// of the nodes whose dependencies have all returned, so that a walk of
// many nodes costs no goroutine per node. It takes
// the nodes and their dependencies as plain arguments, so that callers can
// walk a list with no edges (drift reads every record of state at once) or
// add nodes of their own (apply adds a node per delete, ordered after what
// depended on the deleted one). Dependencies that are not among the nodes
// are ignored. It returns the error of every node that did not succeed,
// by name; the other nodes are not in the map.
//
// When a node fails, only what depends on it is held back: its
// dependents, and theirs, are not called and get ErrSkipped, while every
// other branch goes on. The function decides what failure means; the walk
// only passes its error on.
//
// Stop behaviour. WalkStop takes a stop channel as well: once it is closed
// (a nil channel never is), no new call starts, the calls already running
// go on to their end, and the nodes that did not start get ErrStopped, as
// do their dependents, unless another of their dependencies failed (then
// they get ErrSkipped). Apply uses this for a graceful stop. When ctx ends,
// no new call starts either and the nodes not started, and the dependents
// of a call cut short, get ctx's error; the calls running see the ended
// ctx and end as they can. Walk is WalkStop without a stop channel.
package dag
