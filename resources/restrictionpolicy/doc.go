// Package restrictionpolicy implements the datadog:RestrictionPolicy driver,
// the datadog:getCurrentUser lookup, a small typed client for the Datadog
// calls they make, and an emulator of those calls.
//
// # Client
//
// Client makes four calls: POST, GET and DELETE
// /api/v2/restriction_policy/{resource_id}, and GET /api/v2/current_user,
// authenticated with the DD-API-KEY and DD-APPLICATION-KEY headers. The
// base URL is https://api.<site>, the site coming from DD_SITE (default
// datadoghq.com), or an override. Throttled (429, waiting at least
// X-RateLimit-Reset seconds) and transient (5xx, connection) failures are
// retried by httpretry. Missing keys are reported at the first call, naming
// the variables; key values are never logged nor put in errors. The official
// Datadog Go client is deliberately not used: it is very large to compile
// for four calls.
//
// Failed calls are *resources.APIError values with Service "datadog", the
// HTTP status, and the API's "errors" list joined with "; " as Message.
//
// # Driver
//
// A policy's id is its resource id, "<type>:<id>". The API's POST is a
// full-replacement upsert, so Create and Update are both one POST with the
// whole binding set: Update never deletes first, which would leave the
// resource unrestricted, and Create on a resource that already has a policy
// replaces it. resourceId forces a replacement (declared in the schema).
// Read of a resource without a policy returns bindings [] rather than
// resources.ErrNotFound, because the API answers 200 with no bindings and an
// empty list shows the drift truthfully. Bindings are a set: Normalize and
// Read put them in one canonical order.
package restrictionpolicy
