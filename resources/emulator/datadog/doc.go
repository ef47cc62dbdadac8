// Package datadog emulates the part of the Datadog API (v2) that the
// datadog:RestrictionPolicy driver and the datadog:getCurrentUser lookup
// (reconcile/resources/restrictionpolicy) call: POST, GET and DELETE
// /api/v2/restriction_policy/{resource_id}, GET /api/v2/current_user, and
// GET /api/v2/users/{user_id}/memberships (the user's teams).
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
// Recorded answers of the real API (the scenarios of datadog-api-client-go
// and the acceptance tests of Datadog's Terraform provider) fix the shapes
// and texts the emulator copies: GET of a resource never restricted is 200
// with "bindings": []; DELETE is 204 (with Content-Type application/json)
// whether or not there was a policy; members come in Datadog's order
// (type, id, attributes; relation, principals); a resource id without
// "type:" is 400 "Invalid resource: 'X' is not in a valid format", a type
// without restriction policies 400 "Invalid resource type: 'T' does not
// support restriction policies" (for GET, POST and DELETE alike), and a
// principal type outside org, role, team and user 400 "Invalid request:
// [PrincipalTypeInvalidForRelation] ...". A POST that would lower the
// caller's own access to the resource (the highest relation its user,
// role, teams or org get; full access where there is no policy) is 400
// "Invalid request: users cannot decrease their own level of access (from
// editor to viewer)" unless allow_self_lockout=true. GET
// /api/v2/current_user has the attributes, relationships (team_roles
// included, which the OpenAPI model lacks) and included role, permissions
// and org of a recorded answer, in its order. GET
// /api/v2/users/{id}/memberships answers a UserTeamsResponse of the seeded
// user's teams, each item shaped as a recorded team membership.
//
// Choices where neither the documentation nor a recording says:
//
//   - A relation the type does not support, a principal without "type:",
//     one whose id is not a UUID, a missing field, a body data.type other
//     than "restriction_policy" and an allow_self_lockout that is not a
//     boolean are 400 with texts of the emulator's own. Every error answer
//     holds one message, the first problem found, as Datadog's recorded
//     ones do. Ids of roles, teams and users are not checked to exist, nor
//     org ids to be the caller's.
//   - A self-lockout to no access at all says "(from editor to no access)";
//     Datadog's wording for that case was not recorded.
//   - The memberships of a user id that is no UUID are 404 "User not
//     found"; those of any user but the seeded one are [].
//   - "bindings": null in a POST is taken as no bindings; a body data.id is
//     ignored (the path names the resource).
//   - Bindings are stored and returned as given (no merging of duplicate
//     relations, no sorting of bindings or principals).
//   - The relations of each resource type are those of Datadog's API
//     reference (as of August 2026); a type added to Datadog since is
//     refused. (For a relation the type does not support, no recording
//     of Datadog's answer was found: public cassettes record only the
//     refusals of a resource type and of a principal type.)
//
// Known simplifications: the current user is always an admin (its role
// carries user_access_manage, so allow_self_lockout always lets it
// through), and its role lists a few of the permissions of Datadog's
// Admin role, not the several hundred; it is never a service account,
// never disabled, has never signed in to the UI (last_login_time null)
// and has no team roles (team_roles, whose content no recording shows),
// even when the seed puts it in teams (which count for its access, and
// are its memberships, all the same); the one key pair accepted may do
// everything; the rate limit (1000 requests a minute per route by default,
// SetRateLimit to change or lift it) is the emulator's own, as Datadog
// does not publish one; OAuth bearer tokens are not accepted; paths other
// than the five routes answer 404 before the keys are checked.
package datadog
