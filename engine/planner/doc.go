// Package planner makes a plan.Plan: what apply would do to bring the
// cloud to what the specs declare. Plan reads state and, for lookups, gets
// and (with Options.Refresh) managed resources, the cloud; it never
// changes either. With Options.RefreshOnly it hands over to refresh.Plan.
//
// How a plan is made. Plan reads state's lineage, serial, records and
// secret key; with Refresh, it reads in bulk the objects of state whose
// driver can (refresh.ReadBulk), in a few list calls. Then it walks the
// spec's graph (dag.Walk, independent branches
// in parallel), evaluating each node once its dependencies are done, with
// an eval.Evaluator whose references see what planning the dependencies
// gave. Per kind of node:
//
//   - config: its value in force; plain variables: their value. Neither
//     has a Change.
//   - lookup (a variable that is an fn::invoke): a Read change. The lookup
//     is called now when its arguments are known, else it is Deferred to
//     apply (ReasonReadDeferred) and its value is Unknown.
//   - get: a Read change; the object is read now unless its id is unknown.
//   - resource: its inputs are evaluated, given schema defaults, validated
//     against the schema (specs.ValueViolations: what the loader did not
//     validate already) and normalised by the driver,
//     then compared with what state records (or, with Refresh, with the
//     live object: what the bulk read found, else what the driver's Read
//     returns, and Read again if the bulk read shows drift): Create,
//     Update, Replace, Import or NoOp. A create, update, replace or import
//     whose record state could not write (state.CheckRecordSize) is an
//     error at the resource: the apply would change the cloud and fail to
//     record it.
//
// Memory. The records of state are read lazily (state.LazyRecord): each
// node decodes its record's inputs and outputs when it is planned, and a
// resource's record lets them go once it is. A node's value is let go once
// every node that reads it is planned (dag.Readers), unless an output
// reads it. With Options.Pack, as the CLI plans, the values of each create
// and update are packed as soon as it is planned (plan.Change.Pack):
// renderers and the plan file's writer read them with Values, and apply
// unpacks them when the change runs. A plan of many changes so holds their
// values packed, not as maps. No-ops stay as they are: packing them made
// more garbage than it saved memory.
//
// Then come the Delete (or Forget) changes for managed resources in state
// that the specs no longer declare, in reverse dependency order, and the
// outputs. A destroy plan evaluates nothing and deletes every managed
// resource. A problem is a diagnostic at the expression or declaration
// that caused it, and only the nodes depending on the failed one are held
// back; a plan cut short by ctx gives one diagnostic, not one per node.
//
// Unknown values. A value not known until apply is value.Unknown: a
// resource being created is seen by references with Unknown for its id,
// its outputs and the inputs the specs leave to the cloud
// (eval.CreatedRefView), and Unknown propagates through every expression
// built on it. In a Change's After it stays Unknown, shown as "(known after
// apply)". Apply evaluates the inputs again once the dependencies exist,
// and refuses to go on if a value the plan showed as known came out
// different. Resource options must be known when planning.
//
// Secrets. Values marked secret (fn::secret, secret config, a lookup
// called with secret arguments) arrive as value.Secret and stay so in
// After. A lookup called with an argument that holds a secret, and a get
// whose id or state holds one, are secret as a whole (eval.ResultOf,
// eval.GetResultOf): every field of After is secret, the Change has no id,
// references see one Secret, and drift compares them sealed and shows
// secrets; state keeps such a get without its id. State holds them sealed (see package value): a desired value is
// compared with a stored one sealed the same way, and a live value echoed
// by the cloud is sealed where the desired one is secret (value.SealLike)
// before it is compared or put in Before. The fields a resource's
// additionalSecretOutputs names are secret too (eval.SecretOutputs): state
// keeps them as digests, so a plan that does not refresh reads the object
// for those that references need. Before shows sealed values as
// secrets without their value; an unchanged secret input is put in Before
// as it is in After, so that it shows as unchanged. Errors of a lookup
// with secret arguments are redacted.
//
// Why an action was chosen is data, plan.Reason on the Change:
// ReasonTainted (replace: the last create failed, or 'reconcile state
// taint' marked it), ReasonReplaceRequested (replace: --replace), ReasonCannotUpdate and
// ReasonReplaceOnChanges (replace, with ReplacePaths), ReasonDeletedOutside
// (create: refresh found the object gone), ReasonReadDeferred,
// ReasonImportThenUpdate and ReasonImportUnread (options.import, read or
// not read at plan time), ReasonOptionsChanged (only protect,
// retainOnDelete or deleteBeforeReplace change: an Update of state alone,
// with ReasonFields), ReasonNotDeclared and ReasonDestroy (delete),
// ReasonRetainOnDelete and ReasonGoneOutside (forget). A plain update has
// ReasonNone. Renderers word it; see plan.Change.ReasonText.
//
// Access. Each write to an access policy (a driver that is a
// resources.AccessReviewer: IAM policies, bindings and members, restriction
// policies) is reviewed against the live policy, read now whether or not
// the plan refreshes (an update passes what refresh read): the members it
// removes and adds go to plan.Change.Access. A write that would remove the
// caller's own access is an error diagnostic at the resource, naming the
// caller, the role and the policy and how to keep it, unless
// Options.AllowSelfLockout, which the plan records; then the change lists
// it (plan.Change.Lockouts). A write the vendor's API is known to refuse
// (the reviewer's resources.ErrRefused) is an error with its reason, the
// flag or not. Writes whose inputs are known only at apply, or hold a
// secret, are not reviewed.
//
// Selecting. Options.Targets limits the walk to the targets and what they
// depend on (dag.Graph.Closure): no other node is evaluated, read or
// changed, the deletes are those of the targets the specs no longer
// declare, and only the outputs whose dependencies were walked are
// evaluated; with Destroy, the deletes are the targets' and those of the
// resources that depend on them in state. The plan records its targets
// (plan.Plan.Targets), and apply runs only those nodes. Options.Replace
// turns the NoOp or Update of the resources it names into a Replace with
// ReasonReplaceRequested (a replacement forced otherwise keeps its own
// reason). A target or replace name that selects nothing is an error
// diagnostic with a suggestion. A replacement whose new object would have
// the old one's id (resources.NaturalID: a restriction policy is known by
// its resourceId) deletes the old object first.
//
// A replacement of a protected resource, and the delete of one that state
// records as protected, are error diagnostics. A name that now declares a
// resource of another type than state records is an error too.
package planner
