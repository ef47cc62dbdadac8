// Package gcp emulates the part of the GCP Service Management API
// (servicemanagement.googleapis.com, v1) that the gcp:endpoints lookups
// (reconcile/resources/endpointsiam) read, and the calls another user of the
// API would make to change what they read: services.list, services.get, and
// getIamPolicy, setIamPolicy and testIamPermissions on managed services and
// on their consumers. It also answers Google's OAuth 2 tokeninfo, in both of
// Google's shapes (TokenInfo, TokenInfoV2): the emulator's access token
// belongs to the service account Caller.
//
// Emulator serves them under /v1/ with Google's JSON bodies (a
// google.iam.v1.Policy with version, bindings, auditConfigs and etag) and
// Google's error bodies ({"error": {"code", "message", "status",
// "details"}}, with google.rpc ErrorInfo, BadRequest and PreconditionFailure
// details), checks the bearer token of its emulator.Credentials, and keeps
// its data in an emulator.Store under buckets named "gcp.*". Seed creates two
// managed services of project acme-prod and a consumer policy (the Seed*
// constants name them); SeedFrom adds those of a seed file.
//
// The JSON it reads and writes is declared here, from the discovery
// document of google.golang.org/api/servicemanagement/v1: this package
// imports neither the lookups nor the Google SDK, so a wrong field in either
// cannot be mirrored here. Its tests drive it with the official SDK.
//
// It takes the requests of both kinds of Google client: the discovery-based
// ones (google.golang.org/api), which send alt=json and a body of the
// request's fields but the resource, and the generated REST clients of
// cloud.google.com/go, which, as recorded from Google (the HTTP logs of
// Config Connector's tests), send $alt=json;enum-encoding=int, the whole
// request message as the body ("resource" next to "policy" or "options")
// and enums as numbers, and read enums as numbers in the answer. A field
// the request message lacks is 400 INVALID_ARGUMENT "Invalid JSON payload
// received. Unknown name "x": Cannot find field.", as Google words it.
//
// # Where it differs from Google
//
// Choices where Google's behaviour is not documented:
//
//   - An unknown service answers 403 PERMISSION_DENIED "Service 'NAME' not
//     found or permission denied." (observed), for every call on it and its
//     consumers.
//   - Any consumer of a known service exists: one whose policy was never set
//     answers the empty policy {"etag":"ACAB"} rather than 403 or 404, and
//     setIamPolicy on it creates the policy.
//   - setIamPolicy stores bindings as given (members deduplicated, bindings
//     without members dropped), without merging or sorting. A policy etag
//     that is not the current one is refused with 409 ABORTED ("There were
//     concurrent policy changes...", with the legacy errors list of reason
//     "aborted", as observed from Google); an empty etag overwrites
//     unconditionally. Every change gets a fresh random etag. updateMask
//     names the fields written ("bindings,etag" when it is empty).
//   - Versions are IAM's documented rules: a policy with a conditional
//     binding must be written in version 3 (400 otherwise), and so must any
//     change, with an etag, of a policy that has one (without an etag,
//     version 1 overwrites it and its conditions are lost). An answer is
//     version 1 unless the policy has conditional bindings and version 3
//     was asked for (requestedPolicyVersion 0, 1 or 3; other values are 400
//     INVALID_ARGUMENT). A conditional binding answered in version 1 has no
//     condition and its role gets "_withcond_" and a digest of the condition
//     appended, as IAM does; such a role is refused by setIamPolicy.
//   - A "resource" in the body of getIamPolicy or setIamPolicy that is not
//     the one of the path is ignored: the path names the resource, as
//     Google's transcoding of path variables over a "*" body does.
//   - services.list's deprecated consumerId filter ("project:ID") keeps the
//     services on which that project has a consumer policy; page tokens are
//     opaque.
//   - A member whose type prefix is not one of IAM's (user:, group:,
//     serviceAccount:, domain:, principal://, principalSet://, deleted:...,
//     the basic-role conveniences) or that has none is 400
//     INVALID_ARGUMENT with IAM's text, as observed from Google on other
//     services' setIamPolicy: "The member X is of an unknown type. Please
//     set a valid type prefix for the member." Members are not checked to
//     exist, nor their ids to be well formed.
//   - testIamPermissions grants every servicemanagement.* permission asked
//     for: the caller owns everything.
//
// Known simplifications: no quota (the documented 120 calls a minute) is
// enforced and no 429 is ever answered except through the server's fault
// injection; OAuth scopes are not checked; only alt=json is served; there
// are no other methods of the API (services.create, configs, rollouts).
package gcp
