//go:build !linux

package plan

// mapped is memory mapped by mapBuffer; there is none on this system.
type mapped struct{ data []byte }

// mapBuffer maps no memory here: plan files are read into the Go heap.
func mapBuffer(int) *mapped { return nil }
