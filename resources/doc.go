// Package resources defines the contract between the engine and the drivers
// that manage remote objects: the Driver and Function interfaces, the Attrs
// value model, the sentinel errors and the Registry that maps type tokens to
// implementations. It imports the standard library only; each driver lives in
// a sub-package together with an emulator of the API it calls.
package resources
