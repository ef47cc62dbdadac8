// Package datadog emulates the part of the Datadog API (v2) that the
// datadog:RestrictionPolicy driver and the datadog:getCurrentUser lookup
// (reconcile/resources/restrictionpolicy) call: POST, GET and DELETE
// /api/v2/restriction_policy/{resource_id}, and GET /api/v2/current_user.
//
// Emulator serves them with Datadog's JSON:API documents and its error body
// ({"errors": ["..."]}), checks the DD-API-KEY and DD-APPLICATION-KEY
// headers against its emulator.Credentials, sends the X-RateLimit-* headers
// and keeps its data in an emulator.Store under buckets named "dd.*". Seed
// creates the current user, in an org with one role, with the same ids in
// every fresh emulator; SeedFrom adds the user and policies of a seed file.
//
// The JSON it reads and writes is declared in wire.go from Datadog's API
// specification (the models of datadog-api-client-go v2.67.0:
// RestrictionPolicyResponse, RestrictionPolicyUpdateRequest,
// RestrictionPolicyBinding, UserResponse, APIErrorResponse). It shares no
// type with the client of reconcile/resources/restrictionpolicy, so a field
// that client gets wrong is not mirrored here; the conformance tests
// (reconcile/resources/conformance) drive the emulator with the official
// client.
//
// # Where it differs from Datadog
//
// Choices where Datadog's behaviour is not documented:
//
//   - A resource id without "type:" is 400 "Invalid resource: 'X' is not in
//     a valid format" (observed). A type missing from the documented table,
//     a relation the type does not support, and a principal that is not
//     role:, team:, user: or org: followed by a UUID are 400 with one message
//     per problem; ids of roles, teams and users are not checked to exist.
//   - "bindings": null in a POST is taken as no bindings; a body data.id is
//     ignored (the path names the resource); data.type must be
//     "restriction_policy".
//   - Bindings are stored and returned as given (no merging of duplicate
//     relations, no sorting); allow_self_lockout is accepted and ignored, as
//     self-lockout is not emulated.
//   - The relations of each resource type are those of the v2.67.0
//     specification; a type added to Datadog since is refused.
//
// GET /api/v2/current_user has the attributes, relationships (team_roles
// included, which the OpenAPI model lacks) and included role, permissions
// and org of a recorded answer (Datadog's Terraform provider, 2026), in
// its order.
//
// Known simplifications: the current user's role lists a few of the
// permissions of Datadog's Admin role, not the several hundred; the user
// is never a service account, never disabled, has never signed in to the
// UI (last_login_time null) and has no team roles; the one key pair
// accepted may do everything; the rate limit (1000 requests a minute per route by default,
// SetRateLimit to change or lift it) is the emulator's own, as Datadog
// does not publish one; OAuth bearer tokens are
// not accepted; paths other than the four routes answer 404 before the keys
// are checked.
package datadog
