// Package emulator holds what the emulators of the three vendor APIs share:
// a bbolt-backed Store that survives restarts, and the Credentials the
// emulator issues and checks.
//
// Each vendor API has its own package below this one, which declares the
// wire types of that API itself and imports no driver:
//
//   - oci: OCI AI Language (endpoints, work requests, models, projects),
//     for reconcile/resources/aiendpoint;
//   - gcp: GCP Service Management (services and their IAM policies), for
//     reconcile/resources/endpointsiam;
//   - datadog: Datadog restriction policies and the current user, for
//     reconcile/resources/restrictionpolicy.
//
// Package server mounts every vendor's handler under its real path prefix
// on one loopback address, together with the /_emulator/ admin API
// (credentials, latency, fault injection, lifecycle delays) and seed files;
// it is what `reconcile emulate` and --emulator run.
package emulator
