// Package resources defines the contract between the engine and the drivers
// that manage remote objects: the Driver and Function interfaces, the Attrs
// value model, the sentinel errors and the Registry that maps type tokens to
// implementations. It imports the standard library only (and
// internal/untrusted, which escapes the vendors' text in APIError).
//
// # Errors
//
// A driver's error says what failed and why (a step of its own, such as
// "get IAM policy of \"services/x\"", then the API's answer as an APIError),
// not which resource or type it was for: the engine wraps it with the
// resource's name and position, the operation, the type token and the id
// ("pol (main.yaml:2:3): create datadog:RestrictionPolicy: datadog API:
// 400: ..."). It never begins with the driver's Go package name, which
// says nothing to a user. APIError's text is one line: the vendor's message
// often echoes a value of the specs, and is escaped.
//
// # Optional capabilities
//
// Beyond Driver and Function, an implementation may offer these interfaces;
// the engine finds them with a type assertion and does without them when
// they are missing:
//
//   - Normalizer (a Driver): fills server-side defaults into desired inputs.
//   - VendorKeys (a Driver): names the map entries the cloud adds by itself.
//   - Recoverer (a Driver): finds what an interrupted Create made.
//   - NaturalID (a Driver): tells the id an object made from given inputs
//     would have, so that a replacement keeping it deletes the old first.
//   - BulkReader (a Driver): reads many objects in a few list calls, for
//     refresh, before the engine reads the rest one by one.
//   - ResultComparer (a Function, or a Driver): compares two of its results
//     by meaning and describes how they differ, for drift detection; a
//     driver's describes how its inputs drifted.
//   - AccessDescriber (a ResultComparer): says member by member what an
//     access policy's drift added and removed.
//   - AccessReviewer (a Driver): reviews a planned write to an access
//     policy against the live one: the members it removes and adds, and
//     the caller's own roles it removes, or the vendor's refusal of it.
//     Its drivers also guard each write as it is sent, when the context
//     asks (WithSelfLockout), against removing the caller's own access.
//   - InputChecker (a Driver): finds, without a request, inputs the API
//     would refuse, for validate and plan to report at their place.
//   - PlanChecker (a Driver): finds at plan time, with reads, inputs the
//     API would refuse (a tag namespace the tenancy lacks).
//
// An implementation asserts at compile time each interface it offers,
// optional ones included, so that a changed signature fails the build
// instead of silently dropping the capability:
//
//	var (
//		_ resources.Driver    = (*Driver)(nil)
//		_ resources.Recoverer = (*Driver)(nil)
//	)
//
// cmd/reconcile's tests check that every driver and lookup of the real
// registry does so.
//
// Each driver lives in a sub-package named for what it manages
// (aiendpoint, endpointsiam, restrictionpolicy). The emulators of the vendor
// APIs those drivers call live apart, one package per vendor API under
// resources/emulator (oci, gcp, datadog), composed into one server by
// resources/emulator/server. An emulator declares its own wire types and
// never imports a driver, and a driver's code never imports an emulator:
// only the drivers' tests do, to run each driver over HTTP against the
// emulator of its API.
package resources
