package state

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Environment of the helper process that holds a lock for the lock tests.
const (
	helperPathEnv = "RECONCILE_STATE_TEST_HOLD_PATH"
	helperModeEnv = "RECONCILE_STATE_TEST_HOLD_MODE" // "write" or "read"
)

// TestHelperHoldLock is not a test: run by startHolder in a child process,
// it opens the state named in its environment, prints "locked", and holds
// the lock until its stdin is closed or it is killed.
func TestHelperHoldLock(t *testing.T) {
	path := os.Getenv(helperPathEnv)
	if path == "" {
		t.Skip("helper process for the lock tests")
	}
	s, err := Open(path, Options{Create: true, ReadOnly: os.Getenv(helperModeEnv) == "read", Command: "reconcile apply"})
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println("locked")
	_, _ = io.Copy(io.Discard, os.Stdin)
	if err := s.Close(); err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// holderProcess is a child process holding a state's lock.
type holderProcess struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
}

// startHolder starts a child process that opens path (read-only if
// readOnly) and returns once it holds the lock. The child is killed at the
// end of the test if still running.
func startHolder(t *testing.T, path string, readOnly bool) *holderProcess {
	t.Helper()
	mode := "write"
	if readOnly {
		mode = "read"
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperHoldLock$")
	// The race detector otherwise sleeps a second at exit.
	cmd.Env = append(os.Environ(), helperPathEnv+"="+path, helperModeEnv+"="+mode, "GORACE=atexit_sleep_ms=0")
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start lock holder: %v", err)
	}
	h := &holderProcess{cmd: cmd, stdin: stdin}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if strings.TrimSpace(line) != "locked" {
		t.Fatalf("lock holder said %q (%v), want %q", line, err, "locked")
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	return h
}

// release makes the holder close the state and exit, and waits for it.
func (h *holderProcess) release(t *testing.T) {
	t.Helper()
	h.stdin.Close()
	if err := h.cmd.Wait(); err != nil {
		t.Fatalf("lock holder: %v", err)
	}
}

// kill kills the holder with SIGKILL, so it cannot clean up, and waits.
func (h *holderProcess) kill(t *testing.T) {
	t.Helper()
	if err := h.cmd.Process.Kill(); err != nil {
		t.Fatalf("kill lock holder: %v", err)
	}
	_ = h.cmd.Wait()
}

// wantLocked checks that err is a *LockedError for path and returns it.
func wantLocked(t *testing.T, what string, err error, path string) *LockedError {
	t.Helper()
	var le *LockedError
	if !errors.As(err, &le) {
		t.Fatalf("%s = %v, want a *LockedError", what, err)
	}
	if le.Path != path {
		t.Errorf("%s: LockedError.Path = %q, want %q", what, le.Path, path)
	}
	return le
}

func TestLockHeldByOtherProcess(t *testing.T) {
	t.Parallel()
	path := statePath(t)
	host, _ := os.Hostname()
	h := startHolder(t, path, false)
	pid := h.cmd.Process.Pid

	const timeout = 300 * time.Millisecond
	start := time.Now()
	_, err := Open(path, Options{LockTimeout: timeout, Command: "reconcile plan"})
	elapsed := time.Since(start)
	le := wantLocked(t, "Open while another process writes", err, path)
	if le.Holder.PID != pid || le.Holder.Host != host || le.Holder.Command != "reconcile apply" {
		t.Errorf("LockedError.Holder = %+v, want pid %d on host %q running %q", le.Holder, pid, host, "reconcile apply")
	}
	if since := time.Since(le.Holder.Since); since < 0 || since > time.Minute {
		t.Errorf("LockedError.Holder.Since = %v, want about now", le.Holder.Since)
	}
	wantMsg := fmt.Sprintf("state %q is locked by pid %d on host %s (%q) since ", path, pid, host, "reconcile apply")
	if msg := err.Error(); !strings.HasPrefix(msg, wantMsg) || !strings.HasSuffix(msg, "; wait for it to finish or pass --lock-timeout") {
		t.Errorf("error = %q, want it to start with %q and suggest --lock-timeout", msg, wantMsg)
	}
	// bbolt stops one poll interval (50ms) before the timeout.
	if elapsed < timeout-100*time.Millisecond {
		t.Errorf("Open with LockTimeout %v gave up after %v", timeout, elapsed)
	}

	_, err = Open(path, Options{ReadOnly: true})
	if le := wantLocked(t, "read-only Open while another process writes", err, path); le.Holder.PID != pid {
		t.Errorf("read-only Open: LockedError.Holder.PID = %d, want %d", le.Holder.PID, pid)
	}

	// A killed holder leaves its .lock file behind but not its lock.
	h.kill(t)
	if _, err := os.Stat(holderPath(path)); err != nil {
		t.Fatalf("after killing the holder, stat %q: %v; want the stale file left behind", holderPath(path), err)
	}
	s := openStore(t, path, Options{Command: "reconcile apply"})
	if got := readHolder(path); got.PID != os.Getpid() {
		t.Errorf("after taking over a killed holder's lock, the holder file names %+v, want pid %d", got, os.Getpid())
	}
	mustPut(t, s, Record{Name: "a"})
}

func TestLockWaitsForHolder(t *testing.T) {
	t.Parallel()
	path := statePath(t)
	h := startHolder(t, path, false)
	done := make(chan error, 1)
	go func() {
		s, err := Open(path, Options{LockTimeout: time.Minute})
		if err == nil {
			err = s.Close()
		}
		done <- err
	}()
	h.release(t)
	if err := <-done; err != nil {
		t.Errorf("Open with a long LockTimeout while the holder finished = %v, want success", err)
	}
}

func TestLockHeldByReader(t *testing.T) {
	t.Parallel()
	path := statePath(t)
	openStore(t, path, Options{Create: true}).Close()
	startHolder(t, path, true)

	// Readers share the lock.
	r := openStore(t, path, Options{ReadOnly: true})
	if _, err := r.List(); err != nil {
		t.Errorf("List() beside another reader = %v", err)
	}

	_, err := Open(path, Options{})
	le := wantLocked(t, "Open for writing while another process reads", err, path)
	if le.Holder != (Holder{}) {
		t.Errorf("LockedError.Holder = %+v, want the zero Holder (readers do not record themselves)", le.Holder)
	}
	if want := fmt.Sprintf("state %q is locked by another process; wait for it to finish or pass --lock-timeout", path); err.Error() != want {
		t.Errorf("error = %q, want %q", err, want)
	}
}

func TestLockInProcess(t *testing.T) {
	t.Parallel()
	path := statePath(t)
	openStore(t, path, Options{Create: true, Command: "reconcile apply"})
	for name, opts := range map[string]Options{
		"writer": {},
		"reader": {ReadOnly: true},
	} {
		_, err := Open(path, opts)
		if le := wantLocked(t, name+" Open beside an open writer", err, path); le.Holder.PID != os.Getpid() {
			t.Errorf("%s: LockedError.Holder = %+v, want this process, pid %d", name, le.Holder, os.Getpid())
		}
	}
}

func TestReadersShareLock(t *testing.T) {
	t.Parallel()
	path := statePath(t)
	w := openStore(t, path, Options{Create: true})
	mustPut(t, w, Record{Name: "a"})
	w.Close()
	var stores []*Store
	for range 3 {
		stores = append(stores, openStore(t, path, Options{ReadOnly: true}))
	}
	for i, s := range stores {
		if _, ok, err := s.Get("a"); !ok || err != nil {
			t.Errorf("reader %d: Get(a) = %v, %v, want the record", i, ok, err)
		}
	}
}

// deadPID returns the pid of a process that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "GORACE=atexit_sleep_ms=0")
	if err := cmd.Run(); err != nil {
		t.Fatalf("run a short-lived process: %v", err)
	}
	return cmd.Process.Pid
}

func TestReadHolder(t *testing.T) {
	t.Parallel()
	host, _ := os.Hostname()
	since := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	dead := deadPID(t)
	for name, tc := range map[string]struct {
		content string // "" means no file
		want    Holder
	}{
		"no file":   {},
		"garbage":   {content: "pid=12"},
		"no pid":    {content: `{"host":"ci-7"}`},
		"this host": {content: jsonString(t, Holder{PID: os.Getpid(), Host: host, Command: "reconcile apply", Since: since}), want: Holder{PID: os.Getpid(), Host: host, Command: "reconcile apply", Since: since}},
		"dead here": {content: jsonString(t, Holder{PID: dead, Host: host, Since: since})},
		// The pid of another host cannot be checked: trust it.
		"other host": {content: jsonString(t, Holder{PID: dead, Host: "ci-7", Since: since}), want: Holder{PID: dead, Host: "ci-7", Since: since}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "state.db")
			if tc.content != "" {
				if err := os.WriteFile(holderPath(path), []byte(tc.content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if got := readHolder(path); got != tc.want {
				t.Errorf("readHolder with %s = %+v, want %+v", tc.content, got, tc.want)
			}
		})
	}
}

func TestStaleHolderFileIgnored(t *testing.T) {
	t.Parallel()
	for name, content := range map[string]string{
		"dead process": jsonString(t, Holder{PID: deadPID(t), Host: "ci-7", Command: "reconcile apply"}),
		"garbage":      "\x00\x01",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := statePath(t)
			openStore(t, path, Options{Create: true}).Close()
			if err := os.WriteFile(holderPath(path), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			s := openStore(t, path, Options{Command: "reconcile destroy"})
			if got := readHolder(path); got.PID != os.Getpid() || got.Command != "reconcile destroy" {
				t.Errorf("holder file after Open over a stale one = %+v, want this process running %q", got, "reconcile destroy")
			}
			if fi, err := os.Stat(holderPath(path)); err != nil || fi.Mode().Perm() != 0o600 {
				t.Errorf("holder file mode = %v (%v), want 0600", fi.Mode(), err)
			}
			s.Close()
			if _, err := os.Stat(holderPath(path)); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("after Close, %q still exists (stat: %v)", holderPath(path), err)
			}
			entries, _ := os.ReadDir(filepath.Dir(path))
			if len(entries) != 1 {
				t.Errorf("files left beside the state after Close: %v, want only state.db", entries)
			}
		})
	}
}

func TestLockedErrorMessage(t *testing.T) {
	t.Parallel()
	since := time.Date(2026, 11, 21, 13, 0, 0, 0, time.FixedZone("CET", 3600))
	for name, tc := range map[string]struct {
		holder Holder
		want   string
	}{
		"full": {
			holder: Holder{PID: 4242, Host: "ci-7", Command: "reconcile apply", Since: since},
			want:   `state ".reconcile/state.db" is locked by pid 4242 on host ci-7 ("reconcile apply") since 2026-11-21T12:00:00Z; wait for it to finish or pass --lock-timeout`,
		},
		"unknown": {
			want: `state ".reconcile/state.db" is locked by another process; wait for it to finish or pass --lock-timeout`,
		},
		"pid only": {
			holder: Holder{PID: 7},
			want:   `state ".reconcile/state.db" is locked by pid 7; wait for it to finish or pass --lock-timeout`,
		},
		"CI job": {
			holder: Holder{PID: 4242, Host: "runner-3", Command: "reconcile apply", Since: since, Job: "https://github.com/acme/infra/actions/runs/42"},
			want:   `state ".reconcile/state.db" is locked by pid 4242 on host runner-3 ("reconcile apply") since 2026-11-21T12:00:00Z in CI job https://github.com/acme/infra/actions/runs/42; wait for it to finish or pass --lock-timeout`,
		},
	} {
		err := &LockedError{Path: ".reconcile/state.db", Holder: tc.holder}
		if got := err.Error(); got != tc.want {
			t.Errorf("%s: Error() = %q, want %q", name, got, tc.want)
		}
	}
}

func TestCIJob(t *testing.T) {
	t.Parallel()
	github := map[string]string{
		"GITHUB_SERVER_URL": "https://github.com",
		"GITHUB_REPOSITORY": "acme/infra",
		"GITHUB_RUN_ID":     "42",
	}
	for name, tc := range map[string]struct {
		env  map[string]string
		want string
	}{
		"not in CI":       {},
		"GitHub Actions":  {env: github, want: "https://github.com/acme/infra/actions/runs/42"},
		"GitHub, no run":  {env: map[string]string{"GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": "acme/infra"}},
		"GitLab":          {env: map[string]string{"CI_JOB_URL": "https://gitlab.com/acme/infra/-/jobs/7"}, want: "https://gitlab.com/acme/infra/-/jobs/7"},
		"Buildkite":       {env: map[string]string{"BUILDKITE_BUILD_URL": "https://buildkite.com/acme/infra/builds/9"}, want: "https://buildkite.com/acme/infra/builds/9"},
		"CircleCI":        {env: map[string]string{"CIRCLE_BUILD_URL": "https://circleci.com/gh/acme/infra/11"}, want: "https://circleci.com/gh/acme/infra/11"},
		"Jenkins":         {env: map[string]string{"BUILD_URL": "https://ci.acme.example/job/infra/12/"}, want: "https://ci.acme.example/job/infra/12/"},
		"password in URL": {env: map[string]string{"BUILD_URL": "https://bot:hunter2@ci.acme.example/job/infra/12/"}, want: "https://ci.acme.example/job/infra/12/"},
		"not a URL":       {env: map[string]string{"BUILD_URL": "job 12"}},
	} {
		getenv := func(k string) string { return tc.env[k] }
		if got := ciJob(getenv); got != tc.want {
			t.Errorf("%s: ciJob with %v = %q, want %q", name, tc.env, got, tc.want)
		}
	}
}
