// Package restrictionpolicy implements the datadog:RestrictionPolicy driver,
// the datadog:getCurrentUser lookup, and a small typed client for the
// Datadog calls they make.
//
// # Client
//
// Client makes five calls: POST, GET and DELETE
// /api/v2/restriction_policy/{resource_id}, GET /api/v2/current_user and
// GET /api/v2/users/{id}/memberships, authenticated with the DD-API-KEY and DD-APPLICATION-KEY headers. The
// base URL is https://api.<site>, the site coming from DD_SITE (default
// datadoghq.com), or an override. Throttled (429, waiting at least
// X-RateLimit-Reset seconds) and transient (5xx, connection) failures are
// retried by httpretry until the context's deadline; a throttle lasting
// past it fails at once. Missing keys, and keys holding a control character
// (a newline left by the file they were read from), are reported at the
// first call, naming the variables, as errors matching resources.ErrRefused;
// key values are never logged nor put in errors. The official Datadog Go
// client is deliberately not used: it is very large to compile for five
// calls.
//
// Failed calls are *resources.APIError values with Service "datadog", the
// HTTP status, and the API's "errors" list joined with "; " as Message.
//
// # Driver
//
// A policy's id is its resource id, "<type>:<id>". The API's POST is a
// full-replacement upsert, so Update is one POST with the whole binding
// set, never a delete first, which would leave the resource unrestricted.
// Create reads first and refuses, with a *resources.ExistsError, to
// overwrite a policy it finds (made in the UI or by another stack); Recover
// adopts a policy only when its bindings are the ones the interrupted create
// would have written. resourceId forces a replacement (declared in the
// schema).
//
// Datadog refuses (400 "users cannot decrease their own level of access")
// bindings that would lower the access of the user whose application key
// makes the call, unless the call passes allow_self_lockout=true. The
// driver never passes it, as Datadog's Terraform and Pulumi providers do
// not (their resource has no such input), so that an apply cannot lock its
// own key out of the policy it manages; Create and Update add to the
// refusal what to do (keep the user, one of its roles or teams, or its org
// among the principals of the relation it has).
//
// Driver is a resources.AccessReviewer: a plan reads the current user (its
// roles from current_user, its teams from GET
// /api/v2/users/{id}/memberships, Client.CurrentUserTeams) and predicts the
// refusal above, with the API's reason, before anything is written; see
// Driver.ReviewAccess for how levels of access are ordered and what is
// taken when the teams cannot be read.
//
// The API cannot tell a policy without bindings from no policy: GET answers
// 200 with "bindings": [] for any resource. So a policy needs at least one
// binding (the schema requires it; removing the resource lifts the
// restriction), and Read of a resource without bindings returns
// resources.ErrNotFound. Bindings are a set: Normalize and Read put them in
// one canonical order.
//
// # Checks of inputs
//
// Relations keeps, from Datadog's API reference, the relations of each
// resource type. CheckInputs (resources.InputChecker) refuses, offline, a
// relation the type of resourceId does not have, at the relation, naming
// those it has; Create and Update refuse it too, before any request, for
// values known only at apply. CheckPlan (resources.PlanChecker) asks the
// API about a type Relations lacks, for a policy to be made: Datadog
// refuses types without restriction policies even to a GET, and its
// refusal is reported at resourceId. Not checked before the apply: the
// relations of a type Datadog added since the table, and whether the
// roles, teams and users named exist (it would take a read of each).
//
// # Tests
//
// The tests run the client, the driver and the lookup over HTTP against the
// Datadog emulator in reconcile/resources/emulator/datadog, which declares
// its own wire types from Datadog's API specification, so that a field the
// client gets wrong is not mirrored on both sides; the package's own code
// never imports an emulator.
package restrictionpolicy
