// Package aimodel manages OCI AI Language models (the oci:AiLanguage:Model
// resource type) through the official OCI Go SDK, with the client of
// reconcile/resources/ailanguage.
//
// Creating a model trains it, which takes minutes on OCI: Create waits for
// the create's work request, reporting its progress, within the context's
// deadline (options.customTimeouts.create, 60 minutes by default as in the
// Terraform provider). A training that fails leaves a FAILED model, which
// Create returns with its id and an error matching resources.ErrUnusable
// that carries the service's lifecycleDetails: the engine keeps it,
// tainted, and replaces it on the next apply.
//
// Attributes have the Pulumi provider's names and shapes: inputs
// compartmentId, projectId, modelDetails {modelType, languageCode,
// classificationMode {classificationMode, version}, version},
// trainingDataset {datasetType, datasetId, locationDetails {locationType,
// namespace, bucket, objectNames}}, testStrategy {strategyType,
// testingDataset, validationDataset}, displayName, description,
// freeformTags and definedTags; outputs id, state, lifecycleDetails,
// version, evaluationResults (a list of one entry whose metrics are a list
// of one entry and whose confusionMatrix is JSON text, as the provider has
// them), systemTags, timeCreated and timeUpdated. The API's names differ
// in the dataset's location (namespaceName, bucketName) and in the
// evaluation results (an object, metrics an object, the confusion matrix
// an object); the driver converts.
//
// UpdateModel changes only displayName, description and the tags, and
// ChangeModelCompartment the compartment: a change of projectId,
// modelDetails, trainingDataset or testStrategy replaces the model (the
// schema says so with x-replace-on-change). Normalize fills what the
// service fills when it is not given: modelDetails.languageCode "en" and a
// text classifier's classificationMode MULTI_CLASS, so that leaving them
// out is no change.
//
// CheckPlan (resources.PlanChecker) reads, for a plan, the project a
// model would be made in (it must exist and be ACTIVE) and the tenancy's
// tag namespaces for its defined tags. Whether the training data can be
// read and trains only the training tells.
package aimodel
