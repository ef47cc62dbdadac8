// Package endpointsiam implements the lookups gcp:endpoints:getServiceIamPolicy
// and gcp:endpoints:getServiceConsumersIamPolicy, and the IAM resources
// gcp:endpoints:ServiceIam{Policy,Binding,Member} and
// gcp:endpoints:ConsumersIam{Policy,Binding,Member}, on the Service
// Management API (google.golang.org/api/servicemanagement/v1).
//
// # Lookups
//
// NewServiceIamPolicy reads the IAM policy of a managed service
// (POST v1/services/NAME:getIamPolicy); NewConsumersIamPolicy reads the one of
// a service-consumer binding (POST v1/services/NAME/consumers/PROJECT:getIamPolicy).
// Both ask for the policy in version 3, so that conditional role bindings
// read whole (the Terraform data sources send no version, and would read
// them without their conditions). Both connect lazily, on their first Invoke, so that a spec without GCP
// lookups never needs Google credentials. Credentials are Application Default
// Credentials with the cloud-platform scope, or a static access token (the
// emulator's) when Config.AccessToken is set. The credentials file the
// Google library reads whole (GOOGLE_APPLICATION_CREDENTIALS, or gcloud's
// well-known file) is first checked to be a regular file of at most 1 MiB,
// so that a path to a FIFO or /dev/zero fails at once; credential errors
// match resources.ErrRefused. Throttled (429) and transient (5xx,
// connection) failures are retried by httpretry, underneath the OAuth 2
// transport, until the context's deadline.
//
// Arguments accept the forms the Terraform provider accepts: serviceName is
// "NAME" or "services/NAME"; consumerProject is "PROJECT", "NAME/PROJECT" or
// "services/NAME/consumers/PROJECT".
//
// Results follow the Terraform data sources the Pulumi functions are bridged
// from: id is "services/NAME" or "services/NAME/consumers/PROJECT", etag is
// the policy's etag verbatim, and policyData is the JSON text of the policy's
// auditConfigs and bindings only (no etag, no version; empty fields omitted;
// members in the order the API returned them; "{}" for an empty policy).
// The arguments are echoed exactly as written, not rewritten to resource
// names as the Terraform provider does, because a Pulumi program that refers
// to ${lookup.serviceName} expects the value it wrote.
//
// Failed calls are returned as *resources.APIError with Service "gcp", the
// HTTP status, the Google status name (PERMISSION_DENIED, ...) as Code and
// Google's message. Service Management answers an unknown service with 403
// PERMISSION_DENIED, not 404, so a lookup never returns resources.ErrNotFound.
//
// # Comparing results
//
// Both lookups implement resources.ResultComparer, for drift detection.
// policyData compares by meaning: two policies are equal when they hold the
// same role bindings (role, condition, set of members) and the same audit
// configs, whatever the order of bindings, members and audit configs,
// repeated members and bindings without members left out; text that does
// not parse compares as text. A changed policy is described one line per
// role whose members changed, roles sorted, removed members first:
//
//	binding roles/viewer: -user:alice@example.com +user:bob@example.com
//
// Members count per role whatever their conditions; a change of conditions
// or audit configs alone is shown by the field, without a line. Every other
// field compares with resources.Equal.
//
// # IAM resources
//
// The drivers follow the Pulumi GCP provider (bridged from the Terraform
// google provider's google_endpoints_service[_consumers]_iam_*): the same
// fields, ids and semantics. PolicyDriver is authoritative for a whole
// policy (policyData, a gcpiam document; its delete clears the policy),
// BindingDriver for one role under one condition (its delete removes that
// binding), MemberDriver adds one member (its delete removes it). Ids are
// the provider's import ids: "RESOURCE", "RESOURCE ROLE [TITLE]" and
// "RESOURCE ROLE MEMBER [TITLE]", RESOURCE being "services/S" or
// "services/S/consumers/C" (also "S" and "S/C" on import), TITLE the title
// of the binding's condition. They share a Client (NewClient).
//
// Every write is a read-modify-write of the whole policy in version 3
// (conditions whole) with the etag read: when another writer changed the
// policy in between, the API answers 409 ABORTED, and the write starts
// again from a fresh read after a growing random pause, until it succeeds
// or the operation's deadline passes; each such retry is reported as a
// retry. Within one process the writes of one policy take turns (a lock
// per policy, as the provider's mutex), so one apply's writers do not make
// each other retry. A write finding the policy already as wanted sends
// nothing. Policy writes send updateMask "bindings,etag,auditConfigs", so
// that the audit configs of policyData are set too (the provider sends no
// mask, and the API then leaves audit configs alone); binding and member
// writes send none, leaving audit configs to whoever owns them.
//
// Reads put policies in canonical form (gcpiam.Policy.Canonical), which
// Normalize gives desired policyData too, and serviceName and
// consumerProject in the provider's spelling ("services/S" for a
// service's policy; "S" and "services/S/consumers/C" for a consumer's). A
// binding whose role has no members left, and a member no longer granted,
// read as resources.ErrNotFound; a policy always exists. Recover reads
// what an interrupted create would have written: found as wanted, it is
// adopted; otherwise the create made nothing that remains, and is planned
// again (the writes are idempotent). The policy and binding drivers are
// ResultComparers: their drift names the members added to and removed
// from each role.
//
// # Access and the caller
//
// The three drivers are resources.AccessReviewers: ReviewAccess reads the
// policy a write changes and applies the write's edit to it (the same edit
// the write makes), and lists binding by binding (role and condition) the
// members removed and added; a policy create lists what it replaces. It
// also lists the roles the write takes from the caller (Client.Caller): a
// role the caller has now through a member that names it (user: or
// serviceAccount: its email, without regard to case; domain: the domain of
// a user's email; allUsers, allAuthenticatedUsers) and that the policy
// after the write grants to no such member nor to a group or a principal
// set, whose members cannot be told from the policy and may hold the
// caller. Members count per role whatever their conditions. The caller is
// asked for only when a write removes members; when it cannot be told, the
// review fails unless the write may lock the caller out. Each write, as it
// is sent (modify), refuses with resources.ErrRefused, writing nothing, to
// remove the caller's own role, when its context asks for that guard
// (resources.WithSelfLockout) and does not allow it: the policy may have
// changed since the plan reviewed it. The policy and binding drivers and
// the two lookups are resources.AccessDescribers too, for drift.
//
// Ids name a condition by its title only, as the provider's imports do, so
// a create refuses a condition whose title another condition of the same
// role has; to change a condition and keep its title, replace with
// deleteBeforeReplace.
//
// # Checks of inputs
//
// The policy, binding and member drivers are resources.InputCheckers: the
// members of their inputs are checked offline, as IAM reads them
// (gcpiam.CheckMember), so that validate and plan report a member IAM
// would refuse at its place. Whether an account, group or service account
// exists, and whether the caller may set the policy, only IAM tells.
//
// # Tests
//
// The tests run the lookups and drivers over HTTP against the emulator of Service
// Management in reconcile/resources/emulator/gcp, which declares its own
// wire types; the package's own code never imports an emulator.
package endpointsiam
