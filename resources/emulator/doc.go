// Package emulator holds what the API emulators of the three vendors share:
// a bbolt-backed store that survives restarts, the credentials the emulator
// issues and checks, and the HTTP server that mounts every vendor's handler
// under its real path prefix together with the /_emulator/ admin API.
package emulator
