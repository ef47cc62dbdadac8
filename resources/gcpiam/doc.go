// Package gcpiam holds the Google IAM policy document the way the Pulumi
// GCP provider (bridged from the Terraform google provider) writes it as
// policyData, and the lookup gcp:organizations:getIAMPolicy that builds one
// offline.
//
// # Policy documents
//
// A Policy is the JSON text of a google.iam.v1 policy reduced to its
// auditConfigs and bindings, the form policyData takes everywhere in the
// provider: keys in the order of the generated Go types of
// google.golang.org/api/cloudresourcemanager/v1 (auditConfigs, bindings;
// condition, members, role; description, expression, location, title;
// auditLogConfigs, service; exemptedMembers, logType), empty fields left
// out, "{}" for a policy that grants nothing, and encoding/json's escaping
// ("<" as \u003c). Parse reads one; Canonical puts one in the order the
// provider's data source sorts it in, so that two documents granting the
// same thing have the same text.
//
// # getIAMPolicy
//
// GetIAMPolicy is the lookup gcp:organizations:getIAMPolicy. It reads
// nothing: from its arguments bindings (role, members, an optional
// condition of title, expression and description) and auditConfigs
// (service, auditLogConfigs of logType and exemptedMembers) it computes
// policyData as the Terraform data source google_iam_policy does: bindings
// of one role and condition merged, each binding's members sorted, bindings
// sorted by role, then those without a condition first, then by the
// condition's expression, title and description. Its id is the decimal
// CRC-32 (IEEE) of policyData, as the data source's is. The one departure:
// the data source orders auditConfigs by a hash of each block (a Terraform
// set), which Pulumi passes through; here they are sorted by service, their
// auditLogConfigs by logType and exempted members by name, so that the text
// depends on nothing but the arguments. Members starting "deleted:" are
// refused, as by the data source.
package gcpiam
