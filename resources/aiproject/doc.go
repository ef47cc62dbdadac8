// Package aiproject manages OCI AI Language projects (the
// oci:AiLanguage:Project resource type) through the official OCI Go SDK,
// with the client of reconcile/resources/ailanguage.
//
// Driver implements resources.Driver, resources.Normalizer,
// resources.VendorKeys (the Oracle-Tags defined tags are the cloud's) and
// resources.Recoverer (it replays an interrupted create with the same
// opc-retry-token). Inputs: compartmentId, definedTags (flattened
// "namespace.key" → value), description, displayName, freeformTags.
// Outputs: id, lifecycleDetails, state, systemTags (flattened),
// timeCreated and timeUpdated. Every input updates in place: compartmentId
// through ChangeProjectCompartment, the others through UpdateProject.
// Create, update and delete wait for their work requests.
//
// CheckPlan (resources.PlanChecker) reads, for a plan, the tenancy's tag
// namespaces for the project's defined tags.
package aiproject
