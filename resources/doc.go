// Package resources defines the contract between the engine and the drivers
// that manage remote objects: the Driver and Function interfaces, the Attrs
// value model, the sentinel errors and the Registry that maps type tokens to
// implementations. It imports the standard library only.
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
