package state

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"
)

// Holder describes the process holding a state's write lock, as it recorded
// itself: in the ".lock" file beside a bbolt state, in the lock key of an
// etcd one. It is information only: the lock itself is the flock on the
// state file, or the etcd lease.
type Holder struct {
	PID     int       `json:"pid"`
	Host    string    `json:"host"`
	Command string    `json:"command"` // e.g. "reconcile apply"
	Since   time.Time `json:"since"`   // when the lock was taken
	// Job is the URL of the CI job the holder runs in, when its
	// environment names one (see NewHolder), else empty.
	Job string `json:"job,omitempty"`
}

// NewHolder describes this process, running command, as a holder that
// takes a lock now. Its Job is the URL of the CI job this process runs in,
// taken from the environment that GitHub Actions
// ($GITHUB_SERVER_URL/$GITHUB_REPOSITORY/actions/runs/$GITHUB_RUN_ID),
// GitLab CI ($CI_JOB_URL), Buildkite ($BUILDKITE_BUILD_URL), CircleCI
// ($CIRCLE_BUILD_URL) or Jenkins ($BUILD_URL) give a job, without any user
// name or password the URL may hold; it is empty outside CI.
func NewHolder(command string) Holder {
	host, _ := os.Hostname()
	return Holder{
		PID:     os.Getpid(),
		Host:    host,
		Command: command,
		Since:   time.Now().UTC().Truncate(time.Second),
		Job:     ciJob(os.Getenv),
	}
}

// ciJob returns the URL of the CI job named by the environment getenv
// reads, or "" if it names none.
func ciJob(getenv func(string) string) string {
	job := ""
	if server, repo, run := getenv("GITHUB_SERVER_URL"), getenv("GITHUB_REPOSITORY"), getenv("GITHUB_RUN_ID"); server != "" && repo != "" && run != "" {
		job = strings.TrimSuffix(server, "/") + "/" + repo + "/actions/runs/" + run
	} else {
		for _, name := range []string{"CI_JOB_URL", "BUILDKITE_BUILD_URL", "CIRCLE_BUILD_URL", "BUILD_URL"} {
			if job = getenv(name); job != "" {
				break
			}
		}
	}
	if job == "" {
		return ""
	}
	// A URL is shown to other users in lock errors: never a password.
	u, err := url.Parse(job)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return ""
	}
	u.User = nil
	return u.String()
}

// LockedError is returned by Open when another process held a conflicting
// lock on the state for longer than Options.LockTimeout. Holder is the zero
// Holder when the holder is unknown: it is a read-only process (plans do not
// record themselves), or its record is missing or names a dead process.
type LockedError struct {
	// Path is the state's path, or for another backend its location
	// (see Store.Location).
	Path   string
	Holder Holder
}

// Error reads like
//
//	state ".reconcile/state.db" is locked by pid 4242 on host ci-7 ("reconcile apply") since 2026-11-21T12:00:00Z; wait for it to finish or pass --lock-timeout
//
// and names the holder's CI job when it recorded one:
//
//	... since 2026-11-21T12:00:00Z in CI job https://github.com/acme/infra/actions/runs/42; wait ...
func (e *LockedError) Error() string {
	return fmt.Sprintf("state %q is locked by %s; wait for it to finish or pass --lock-timeout", e.Path, e.Holder)
}

// String describes the holder, e.g. `pid 4242 on host ci-7 ("reconcile
// apply") since 2026-11-21T12:00:00Z in CI job https://...`, or "another
// process" when nothing is known of it.
func (h Holder) String() string {
	var b strings.Builder
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
	if h.Job != "" {
		fmt.Fprintf(&b, " in CI job %s", h.Job)
	}
	return b.String()
}

// encodeHolder returns what a writer records of h while it holds a
// lock: on a shared backend, h's stored form with its check (see
// EncodeHolder), as etcd stacks have always held it; in a local file's
// holder file, its JSON on a line, as it always was.
func encodeHolder(h Holder, shared bool) []byte {
	if shared {
		return EncodeHolder(h)
	}
	data, _ := json.Marshal(h) // a Holder always encodes
	return append(data, '\n')
}

// decodeHolder returns the holder that data records, the zero Holder if
// it records none that can be read. For a local backend, a holder that
// names a process of this host that no longer runs (one killed before it
// could remove its record) is none either.
func decodeHolder(data []byte, local bool) Holder {
	if data == nil {
		return Holder{}
	}
	h, err := DecodeHolder(data)
	if err != nil {
		h = Holder{}
		if err := json.Unmarshal(data, &h); err != nil {
			return Holder{}
		}
	}
	if h.PID <= 0 {
		return Holder{}
	}
	if host, _ := os.Hostname(); local && host != "" && host == h.Host && !processAlive(h.PID) {
		return Holder{}
	}
	return h
}
