// Package oci emulates the part of the OCI AI Language API (version
// 20221001) that the drivers of reconcile/resources/aiendpoint, aiproject
// and aimodel and their users call: projects, models (whose create trains
// them) and endpoints (create, get, list, update, delete, change of
// compartment each), and their work requests (get, list, errors, logs);
// and the two calls of OCI Identity (version 20160918) that list the
// tenancy's tag namespaces and their keys, which plans read.
//
// Emulator serves them under /20221001/ with the real paths, JSON bodies,
// headers (etag, if-match, opc-request-id, opc-retry-token,
// opc-work-request-id, location), status codes and {"code","message"} error
// bodies, checks OCI HTTP signatures (draft-cavage-http-signatures-08,
// version "1") against the key of its emulator.Credentials, and keeps its
// data in an emulator.Store under buckets named "oci.*". Seed creates the
// objects a fresh tenancy needs (SeedIDs names them); SeedFrom adds those of
// a seed file.
//
// The JSON it reads and writes is declared here, from Oracle's API
// reference and the models of the SDK's ailanguage package: this package
// imports neither the driver nor the OCI SDK, so a wrong field in either
// cannot be mirrored here. Its tests drive it with the official SDK.
//
// # Where it differs from OCI
//
// Where Oracle's documentation leaves the behaviour open, the emulator
// chooses:
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
//   - OCI Identity's ListTagNamespaces and ListTags are answered under
//     /20160918/ (JSON arrays, paged as the AI Language lists are) from the
//     same tag namespaces, all in the tenancy's root compartment: listing
//     another compartment gives none, an unknown one is 404
//     NotAuthorizedOrNotFound. Their OCIDs are made from their names; none
//     is retired.
//   - Defined tags are checked against the tenancy's tag namespaces, as OCI
//     does: a namespace that does not exist is 400
//     RelatedResourceNotAuthorizedOrNotFound "The following tag namespaces
//     / keys are not authorized or not found: TagNamespace X does not
//     exists." (OCI's text); a key the namespace does not define gets the
//     same code with "TagDefinition K in TagNamespace X does not exists."
//     (the emulator's wording). Names compare without regard to case. Seed
//     makes the namespaces Oracle-Tags (CreatedBy, CreatedOn), Operations
//     (CostCenter, Environment, Owner) and Finance (Budget, Project).
//   - The tenancy is an Always Free one: every project, model and endpoint
//     created through the API carries the system tag
//     orcl-cloud.free-tier-retained = "true" (seeded objects have none).
//     No rate-limit headers are sent.
//   - Projects and models have the endpoints' lifecycles: a create answers
//     200 with the object CREATING and a work request (CREATE_PROJECT,
//     CREATE_MODEL), an update and a delete 202 with a work request, a
//     change of compartment 200 with none; the same delays apply to
//     projects as to endpoints. A model trains for SetTraining's delay
//     (DefaultTrainingDelay, 1s; minutes on OCI), then is ACTIVE with
//     made-up evaluationResults and version "1.0", or, when SetTraining
//     gave a failure, FAILED with it as lifecycleDetails and its work
//     request FAILED with one TrainingFailed error. A create fills in
//     modelDetails' languageCode "en" and a text classifier's MULTI_CLASS
//     classificationMode when they are not given; a custom model type
//     (TEXT_CLASSIFICATION, NAMED_ENTITY_RECOGNITION, PII, HEALTH_NLU)
//     needs a trainingDataset (400 InvalidParameter). A model can be made
//     only in an ACTIVE project (409 IncorrectState otherwise; an unknown
//     project is 400 RelatedResourceNotAuthorizedOrNotFound).
//   - As OCI documents (DeleteModel, DeleteProject: "fails with a 409
//     error unless all associated resources are in a DELETED state"),
//     deleting a model that an endpoint not yet DELETED deploys, or a
//     project that holds a model or an endpoint not yet DELETED, is 409
//     Conflict (the non-transient code: it is not retried), with a message
//     in the emulator's words naming what is in the way. Deleting a model
//     still training cancels the training.
//   - The tenancy has the Oracle-Tags tag defaults every tenancy made since
//     2019 has: CreateEndpoint adds the defined tags Oracle-Tags.CreatedBy
//     (the caller's user OCID) and Oracle-Tags.CreatedOn (the time, as
//     timeCreated) unless the request sets them; an UpdateEndpoint that
//     replaces definedTags without them keeps them, as the service resets
//     them to the values of the create.
//   - Authentication failures are 401 NotAuthenticated whose message adds,
//     in parentheses, what was wrong (the real service says less).
package oci
