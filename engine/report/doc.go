// Package report holds what running the engine reports, as data for the
// renderers:
//
//   - Apply, the result of apply.Apply and apply.RefreshOnly: counts of the
//     actions completed, the nodes that failed, were skipped (a dependency
//     failed), interrupted (running when ctx was cancelled) or not started
//     (the apply was stopped), the replaced objects left deposed, why it
//     stopped, and the outputs. Complete and Err sum it up.
//   - Event, the progress apply sends while it runs: a node's Started,
//     Running (a heartbeat with the driver's last message), Done, Failed
//     or Skipped phase.
//   - Drift, the result of refresh.Drift: each node that drifted
//     (DriftItem: its inputs changed, its object was deleted, or its get or
//     lookup returns something else), with the fields that differ, and the
//     nodes that could not be read.
//   - Intents, what apply.ResolveIntents did with each create an earlier
//     run left open: adopted, recorded, cleared, superseded or kept.
//
// Values in it follow the value model: secrets are value.Secret marks or
// sealed, never in clear. Apply redacts a node's secrets from the errors
// and messages it puts here; the CLI redacts the secrets the specs hold
// from all of its output once more.
//
// It depends only on diag, plan and kind: it knows nothing of the state
// store, the drivers or the network.
package report
