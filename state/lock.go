package state

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Holder describes the process holding a state's write lock, as it recorded
// itself in the ".lock" file beside the state. It is information only: the
// lock itself is the flock on the state file.
type Holder struct {
	PID     int       `json:"pid"`
	Host    string    `json:"host"`
	Command string    `json:"command"` // e.g. "reconcile apply"
	Since   time.Time `json:"since"`   // when the lock was taken
}

// LockedError is returned by Open when another process held a conflicting
// lock on the state for longer than Options.LockTimeout. Holder is the zero
// Holder when the holder is unknown: it is a read-only process (plans do not
// record themselves), or its record is missing or names a dead process.
type LockedError struct {
	Path   string
	Holder Holder
}

// Error reads like
//
//	state ".reconcile/state.db" is locked by pid 4242 on host ci-7 ("reconcile apply") since 2026-11-21T12:00:00Z; wait for it to finish or pass --lock-timeout
func (e *LockedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "state %q is locked by ", e.Path)
	h := e.Holder
	if h.PID == 0 {
		b.WriteString("another process")
	} else {
		fmt.Fprintf(&b, "pid %d", h.PID)
	}
	if h.Host != "" {
		fmt.Fprintf(&b, " on host %s", h.Host)
	}
	if h.Command != "" {
		fmt.Fprintf(&b, " (%q)", h.Command)
	}
	if !h.Since.IsZero() {
		fmt.Fprintf(&b, " since %s", h.Since.UTC().Format(time.RFC3339))
	}
	b.WriteString("; wait for it to finish or pass --lock-timeout")
	return b.String()
}

// holderPath is the path of the holder file of the state at path.
func holderPath(path string) string { return path + ".lock" }

// writeHolder records this process as the holder of path's lock and returns
// the holder file's path, or "" if it could not be written. It is best
// effort: the lock is already held, and the file only helps a waiter name
// us. The file is written to a temporary name and renamed into place, so
// that a waiter never reads half of it.
func writeHolder(path, command string) string {
	host, _ := os.Hostname()
	data, err := json.Marshal(Holder{
		PID:     os.Getpid(),
		Host:    host,
		Command: command,
		Since:   time.Now().UTC().Truncate(time.Second),
	})
	if err != nil {
		return ""
	}
	dst := holderPath(path)
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(dst)+".*.tmp") // mode 0600
	if err != nil {
		return ""
	}
	_, err = f.Write(append(data, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), dst)
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return ""
	}
	return dst
}

// removeHolder removes the holder file written by writeHolder.
func removeHolder(file string) {
	_ = os.Remove(file)
}

// readHolder returns the holder recorded beside the state at path, or the
// zero Holder if there is no readable record or it names a process on this
// host that no longer runs (a holder killed before it could remove it).
func readHolder(path string) Holder {
	data, err := os.ReadFile(holderPath(path))
	if err != nil {
		return Holder{}
	}
	var h Holder
	if err := json.Unmarshal(data, &h); err != nil || h.PID <= 0 {
		return Holder{}
	}
	if host, _ := os.Hostname(); host != "" && host == h.Host && !processAlive(h.PID) {
		return Holder{}
	}
	return h
}
