// Package aiendpoint manages OCI AI Language endpoints (the
// oci:AiLanguage:Endpoint resource type) through the official OCI Go SDK.
//
// # Driver
//
// Driver implements resources.Driver, resources.Normalizer,
// resources.VendorKeys (the defined tags of the Oracle-Tags namespace, which
// OCI's tag defaults add to every new resource, are the cloud's) and
// resources.Recoverer (it replays an interrupted create with the same
// opc-retry-token). Attributes
// use lowerCamelCase keys. Inputs: compartmentId, modelId, definedTags
// (flattened "namespace.key" → value, as Terraform and Pulumi show them),
// description, displayName, freeformTags, inferenceUnits (default 1).
// Outputs: id, lifecycleDetails, projectId, state, systemTags (flattened),
// timeCreated and timeUpdated (RFC 3339).
//
// Credentials come from the OCI config file (~/.oci/config, profile from
// OCI_CLI_PROFILE or DEFAULT), the region from the profile or OCI_REGION,
// through the client of reconcile/resources/ailanguage, which the drivers
// of AI Language projects and models share: it checks the files the SDK
// reads whole (a path to a FIFO or /dev/zero fails at once), and turns the
// SDK's own retries and circuit breaker off for an httpretry.Transport
// that retries 429, 5xx except 501, 409 IncorrectState and LockConflict,
// and connection errors, until the context's deadline. Configuration
// errors match resources.ErrRefused: no request is sent. Create, Update and Delete wait for the asynchronous operation
// to finish, polling the work request and the endpoint, within the
// context's deadline or DefaultTimeout. Create's errors say what it made
// (see Driver.Create): refused, an endpoint made but unusable (FAILED), or
// unknown.
//
// # Plan-time checks
//
// CheckPlan (resources.PlanChecker) reads, for a plan, what OCI would
// refuse of what the apply would send: a model that does not exist or is
// not ACTIVE, and defined tags naming a tag namespace or key the tenancy
// lacks (ailanguage.Client.CheckDefinedTags). It cannot know what changes
// between the plan and the apply, permissions, or the tenancy's limits
// (inferenceUnits): the create tells those.
//
// # Tests
//
// The tests run the driver over HTTP against the emulator of the AI
// Language API in reconcile/resources/emulator/oci, which declares its own
// wire types: a field the driver and the SDK got wrong would not be
// mirrored there. The driver's own code never imports an emulator.
package aiendpoint
