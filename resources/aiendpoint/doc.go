// Package aiendpoint manages OCI AI Language endpoints (the
// oci:AiLanguage:Endpoint resource type) through the official OCI Go SDK,
// and holds an emulator of the part of the OCI AI Language API it uses.
//
// # Driver
//
// Driver implements resources.Driver, resources.Normalizer and
// resources.VendorKeys (the defined tags of the Oracle-Tags namespace, which
// OCI's tag defaults add to every new resource, are the cloud's). Attributes
// use lowerCamelCase keys. Inputs: compartmentId, modelId, definedTags
// (flattened "namespace.key" → value, as Terraform and Pulumi show them),
// description, displayName, freeformTags, inferenceUnits (default 1).
// Outputs: id, lifecycleDetails, projectId, state, systemTags (flattened),
// timeCreated and timeUpdated (RFC 3339).
//
// Credentials come from the OCI config file (~/.oci/config, profile from
// OCI_CLI_PROFILE or DEFAULT), the region from the profile or OCI_REGION.
// The SDK reads the config file and the key it names whole, so the driver
// first checks that they are regular files of bounded size (1 MiB, 64 KiB):
// a path to a FIFO or /dev/zero fails at once. Configuration errors match
// resources.ErrRefused: no request is sent.
// The SDK's own retries and circuit breaker are turned off; an
// httpretry.Transport retries 429, 5xx except 501, 409 IncorrectState and
// LockConflict, and connection errors instead, until the context's
// deadline. Create, Update and Delete wait for the asynchronous operation
// to finish, polling the work request and the endpoint, within the
// context's deadline or DefaultTimeout. Create's errors say what it made
// (see Driver.Create): refused, an endpoint made but unusable (FAILED), or
// unknown.
//
// # Emulator
//
// Emulator serves /20221001/ endpoints, work requests, models and projects
// with the real wire protocol, checks OCI HTTP signatures, and keeps its
// data in an emulator.Store under buckets named "oci.*". Where Oracle's
// documentation leaves the behaviour open, it chooses:
//
//   - Status codes: CreateEndpoint 200, UpdateEndpoint and DeleteEndpoint 202
//     (empty body, opc-work-request-id), ChangeEndpointCompartment 200 with
//     no body and no work request.
//   - Lifecycles run on timestamps: an operation started at t with delay d
//     (SetDelays) is settled by the first read at or after t+d, so nothing
//     runs in the background and a restart resumes where it stopped. With
//     delay 0 the next read sees the final state; work requests report
//     IN_PROGRESS and a percentage proportional to the elapsed time.
//   - A create whose model is unknown is 400 RelatedResourceNotAuthorizedOrNotFound;
//     a create whose model exists but is not ACTIVE (or has disappeared when
//     the create finishes) is accepted and ends FAILED, with lifecycleDetails
//     explaining why and a FAILED work request with one error. An update to a
//     model that is not ACTIVE is refused with 400 InvalidParameter.
//   - Mutations of an endpoint in CREATING, UPDATING or DELETING are 409
//     IncorrectState (retryable); of a FAILED endpoint, other than delete,
//     409 Conflict (not retryable). Delete of an endpoint already DELETING
//     answers 202 with the running work request.
//   - A deleted endpoint stays readable in state DELETED (and listed) for one
//     hour after the delete finished, then GetEndpoint answers 404
//     NotAuthorizedOrNotFound. Mutations of a DELETED endpoint are 404.
//   - opc-retry-token (at most 64 characters, remembered 24 hours) is
//     honoured on CreateEndpoint and ChangeEndpointCompartment: the same token
//     with the same method, path and JSON body replays the original response;
//     with another request it is 409 Conflict; once the endpoint is deleted
//     it is 409 InvalidatedRetryToken.
//   - Etags are derived from the entity's JSON, so any visible change,
//     lifecycle transitions included, changes the etag; if-match "*" matches
//     any etag.
//   - Work request OCIDs look like ocid1.ailanguageworkrequest.oc1.iad.<x>;
//     their resources have entityType "endpoint", actionType IN_PROGRESS
//     until they finish, then CREATED, UPDATED or DELETED (RELATED when the
//     work failed). Lists default to 100 items (limit 1 to 1000); listing an
//     unknown compartment is 404 NotAuthorizedOrNotFound.
//   - Defined tags are not checked against tag namespaces; the endpoint's
//     systemTags are empty. No rate-limit headers are sent.
//   - The tenancy has the Oracle-Tags tag defaults every tenancy made since
//     2019 has: CreateEndpoint adds the defined tags Oracle-Tags.CreatedBy
//     (the caller's user OCID) and Oracle-Tags.CreatedOn (the time, as
//     timeCreated) unless the request sets them; an UpdateEndpoint that
//     replaces definedTags without them keeps them, as the service resets
//     them to the values of the create.
//   - Authentication failures are 401 NotAuthenticated whose message adds,
//     in parentheses, what was wrong (the real service says less).
package aiendpoint
