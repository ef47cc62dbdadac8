// Package schemas holds the JSON Schemas of reconcile: one per resource or
// lookup type, and one for the spec document itself. They are embedded in
// the binary and are the one source of truth for field types, defaults,
// output-only fields and updatability.
//
// Schemas are JSON Schema draft 2020-12 with a few annotations of our own:
//
//	x-token              canonical type token, e.g. "oci:AiLanguage:Endpoint"
//	x-aliases            other tokens that name the same type
//	x-kind               "resource" or "function" (a lookup)
//	x-replace-on-change  a change to this input forces a replacement
//	x-set                a list whose order and duplicates do not matter
//	x-expression         document only: a ${...} expression may stand here
//	x-ignored            document only: accepted for Pulumi compatibility, no effect
//	x-message            beside "pattern" or "minItems": the message for a value that breaks it
//	x-iam                a resource writing (part of) an IAM policy: which object's, how much (IAMGrant)
//
// Output-only fields carry the standard "readOnly": true. Properties are
// keyed by lowerCamelCase names; callers turn snake_case spellings into
// lowerCamelCase (see CamelCase) before they look fields up or validate.
//
// Validate reports problems as Violations whose Path leads from the top of
// the validated value to the offending one, like a JSON Pointer. The package
// knows nothing of YAML or source positions: the engine maps paths to them.
// ValidateParts validates only some values of an instance whose other parts
// were validated before (the engine's literals, checked when the specs are
// loaded), each against the schema at its path, and reports what Validate
// would report for the whole; it declines when the schema on the way to a
// part looks at more than the part (a choice, uniqueItems, propertyNames).
package schemas
