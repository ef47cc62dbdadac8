// Package ailanguage holds what the drivers of the OCI AI Language
// resources (reconcile/resources/aiendpoint, aiproject and aimodel) share:
// the official SDK client made lazily from an OCI config file (Client),
// with the checks of the local files the SDK reads whole, the retries of
// an httpretry.Transport in place of the SDK's own, and the context
// plumbing that keeps the SDK from racing when a call is cancelled; the
// conversion of SDK errors to *resources.APIError; opc-retry-tokens and
// the replay of interrupted creates; the wait for a work request and a
// lifecycle state (Client.Wait); and the attributes every AI Language
// object has (tags flattened to "namespace.key", the Oracle-Tags defaults
// that are the cloud's).
//
// It imports no emulator; the drivers' tests run it against the emulator of
// reconcile/resources/emulator/oci.
package ailanguage
