package pgtest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Superuser is the name of every server's superuser.
const Superuser = "postgres"

// readyTimeout bounds the wait for a server to start or stop: long, for a
// loaded machine, and only ever reached when something is broken.
const readyTimeout = 2 * time.Minute

// readyLine is what the server logs once it accepts connections.
const readyLine = "database system is ready to accept connections"

// Server is a PostgreSQL server started for tests.
type Server struct {
	// Host and Port are where it listens for TCP connections: loopback.
	Host string
	Port int
	// SocketDir is the directory of its unix socket.
	SocketDir string
	// Password is the superuser's (Superuser) password. Connections over
	// TCP authenticate with passwords (SCRAM); over the unix socket they
	// are trusted.
	Password string

	bin  string // the directory of initdb and postgres
	dir  string // the temporary directory: SocketDir, and data inside
	data string
	cred *syscall.Credential // whom to run as; nil: as this process

	mu   sync.Mutex
	proc *proc // the running server, nil while stopped
}

// proc is one run of the postgres program.
type proc struct {
	cmd    *exec.Cmd
	log    *logWriter
	exited chan struct{} // closed once it exited
	frozen atomic.Bool
}

// Start starts a server for tb alone, stopped, and its directory removed,
// when tb ends. It fails tb when the server's programs are missing, and
// skips it under -short.
func Start(tb testing.TB) *Server {
	tb.Helper()
	if testing.Short() {
		tb.Skip("starts a PostgreSQL server: not under -short")
	}
	s, err := start()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(s.close)
	return s
}

var (
	mainUsed   atomic.Bool
	sharedOnce sync.Once
	shared     *Server
	sharedErr  error
)

// Main runs the tests of m and returns their exit code, stopping the
// server that Shared started, if any: call it from TestMain, as
// os.Exit(pgtest.Main(m)).
func Main(m *testing.M) int {
	mainUsed.Store(true)
	code := m.Run()
	if shared != nil {
		shared.close()
	}
	return code
}

// Shared returns the server that every test of the package shares,
// starting it on first use; the package's TestMain must call Main. Tests
// keep to databases of their own (CreateDatabase), and never stop it. It
// fails tb when the server's programs are missing, and skips it under
// -short.
func Shared(tb testing.TB) *Server {
	tb.Helper()
	if testing.Short() {
		tb.Skip("starts a PostgreSQL server: not under -short")
	}
	if !mainUsed.Load() {
		tb.Fatal("pgtest.Shared needs the package's TestMain to call pgtest.Main, which stops the server")
	}
	sharedOnce.Do(func() { shared, sharedErr = start() })
	if sharedErr != nil {
		tb.Fatal(sharedErr)
	}
	return shared
}

// start initializes a data directory and starts a server on it.
func start() (*Server, error) {
	bin, err := findBin()
	if err != nil {
		return nil, err
	}
	cred, err := credential()
	if err != nil {
		return nil, err
	}
	dir, err := tempDir(cred != nil)
	if err != nil {
		return nil, err
	}
	s := &Server{Host: "127.0.0.1", SocketDir: dir, Password: randomHex(12), bin: bin, dir: dir, data: filepath.Join(dir, "data"), cred: cred}
	if err := s.initdb(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	// A port found free may be taken before the server binds it: try
	// again with another.
	for range 5 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		s.Port = l.Addr().(*net.TCPAddr).Port
		l.Close()
		if err = s.boot(); err == nil {
			return s, nil
		}
		if !strings.Contains(err.Error(), "already in use") {
			break
		}
	}
	os.RemoveAll(dir)
	return nil, err
}

// debianBin is where Debian's postgresql packages put their programs.
var debianBin = "/usr/lib/postgresql/*/bin"

// tempDir makes the server's directory: in the system's temporary
// directory, unless the unix socket's path would be too long there, or,
// for another user, a directory above it closed to others; then in /tmp.
func tempDir(otherUser bool) (string, error) {
	dir, err := os.MkdirTemp("", "pgtest")
	if err != nil {
		return "", err
	}
	ok := len(dir) < 80
	for d := filepath.Dir(dir); ok && otherUser; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		ok = err == nil && fi.Mode().Perm()&0o001 != 0
		if d == filepath.Dir(d) {
			break
		}
	}
	if ok {
		return dir, nil
	}
	os.Remove(dir)
	return os.MkdirTemp("/tmp", "pgtest")
}

// findBin returns the directory of initdb and postgres: Debian's newest
// version, or the one on PATH.
func findBin() (string, error) {
	dirs, _ := filepath.Glob(debianBin)
	slices.SortFunc(dirs, func(a, b string) int { return version(b) - version(a) })
	for _, d := range dirs {
		if isExec(filepath.Join(d, "postgres")) && isExec(filepath.Join(d, "initdb")) {
			return d, nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		d := filepath.Dir(p)
		if isExec(filepath.Join(d, "postgres")) {
			return d, nil
		}
	}
	return "", errors.New("the tests need PostgreSQL's server programs (initdb and postgres, under /usr/lib/postgresql/*/bin or on PATH), and found none: install them with apt-get install postgresql (the tests start a server of their own; the system's service need not run)")
}

// version returns the major version of a /usr/lib/postgresql/N/bin path.
func version(dir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return n
}

func isExec(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// credential returns whom the server runs as: nobody when this process
// is root, which PostgreSQL refuses to run as; nil (this process's user)
// otherwise.
func credential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	uid, gid := uint32(65534), uint32(65534)
	if u, err := user.Lookup("nobody"); err == nil {
		if n, err := strconv.ParseUint(u.Uid, 10, 32); err == nil {
			uid = uint32(n)
		}
		if n, err := strconv.ParseUint(u.Gid, 10, 32); err == nil {
			gid = uint32(n)
		}
	}
	return &syscall.Credential{Uid: uid, Gid: gid}, nil
}

// initdb makes the data directory, owned by the server's user.
func (s *Server) initdb() error {
	if s.cred != nil {
		if err := os.Chown(s.dir, int(s.cred.Uid), int(s.cred.Gid)); err != nil {
			return err
		}
	}
	pwfile := filepath.Join(s.dir, "pwfile")
	if err := os.WriteFile(pwfile, []byte(s.Password+"\n"), 0o600); err != nil {
		return err
	}
	if s.cred != nil {
		if err := os.Chown(pwfile, int(s.cred.Uid), int(s.cred.Gid)); err != nil {
			return err
		}
	}
	cmd := exec.Command(filepath.Join(s.bin, "initdb"), "-D", s.data, "-U", Superuser, "--pwfile", pwfile,
		"--auth-local=trust", "--auth-host=scram-sha-256", "-E", "UTF8", "--locale=C", "--no-sync")
	cmd.Dir = s.dir
	cmd.Env = env()
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
	out, err := cmd.CombinedOutput()
	os.Remove(pwfile)
	if err != nil {
		return fmt.Errorf("initdb %s: %v\n%s", s.data, err, out)
	}
	return nil
}

// env is the environment of the server's programs.
func env() []string {
	return []string{"PATH=" + os.Getenv("PATH"), "LC_ALL=C", "LANG=C", "TZ=UTC"}
}

// boot starts the server on its data directory and waits until it accepts
// connections.
func (s *Server) boot() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc != nil {
		return errors.New("the server runs already")
	}
	args := []string{"-D", s.data, "-p", strconv.Itoa(s.Port),
		"-c", "listen_addresses=" + s.Host, "-c", "unix_socket_directories=" + s.SocketDir,
		"-c", "max_connections=300", "-c", "shared_buffers=16MB", "-c", "lc_messages=C",
		// What the operating system holds survives a crash of the server,
		// which is all a test makes: no need to wait for the disk.
		// synchronous_commit stays on: a commit answered is in the WAL.
		"-c", "fsync=off", "-c", "full_page_writes=off",
	}
	p := &proc{log: &logWriter{ready: make(chan struct{})}, exited: make(chan struct{})}
	p.cmd = exec.Command(filepath.Join(s.bin, "postgres"), args...)
	p.cmd.Dir = s.dir
	p.cmd.Env = env()
	p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
	p.cmd.WaitDelay = 10 * time.Second
	p.cmd.SysProcAttr = &syscall.SysProcAttr{
		Credential: s.cred,
		Setpgid:    true, // Freeze and close signal the server's every process
		// The server dies with this process, should it die without
		// stopping it.
		Pdeathsig: syscall.SIGKILL,
	}
	started := make(chan error, 1)
	go func() {
		// Pdeathsig fires when the thread that started the server ends:
		// keep this one until the server exits.
		runtime.LockOSThread()
		if err := p.cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		p.cmd.Wait()
		close(p.exited)
	}()
	if err := <-started; err != nil {
		return fmt.Errorf("start postgres: %w", err)
	}
	select {
	case <-p.log.ready:
		s.proc = p
		return nil
	case <-p.exited:
		return fmt.Errorf("postgres on port %d exited before it was ready: %v\n%s", s.Port, p.cmd.ProcessState, p.log.String())
	case <-time.After(readyTimeout):
		p.signal(syscall.SIGKILL)
		<-p.exited
		return fmt.Errorf("postgres on port %d not ready after %v:\n%s", s.Port, readyTimeout, p.log.String())
	}
}

// signal sends sig to every process of the server.
func (p *proc) signal(sig syscall.Signal) {
	syscall.Kill(-p.cmd.Process.Pid, sig)
}

// shutdown stops the server with sig (SIGINT: a fast shutdown that ends
// every session; SIGQUIT: an immediate one, as a crash) and waits until it
// exited, killing it if it takes too long.
func (s *Server) shutdown(sig syscall.Signal) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.proc
	if p == nil {
		return nil
	}
	s.proc = nil
	if p.frozen.Load() {
		p.signal(syscall.SIGCONT)
	}
	p.cmd.Process.Signal(sig)
	select {
	case <-p.exited:
		return nil
	case <-time.After(readyTimeout):
		p.signal(syscall.SIGKILL)
		<-p.exited
		return fmt.Errorf("postgres on port %d did not stop in %v:\n%s", s.Port, readyTimeout, p.log.String())
	}
}

// close stops the server and removes its directory.
func (s *Server) close() {
	s.shutdown(syscall.SIGINT)
	os.RemoveAll(s.dir)
}

// Stop stops the server as an administrator would: every session ends,
// and transactions in flight are rolled back.
func (s *Server) Stop(tb testing.TB) {
	tb.Helper()
	if err := s.shutdown(syscall.SIGINT); err != nil {
		tb.Fatal(err)
	}
}

// Crash stops the server at once, without a checkpoint, as a crash would:
// it recovers from its log on the next Boot.
func (s *Server) Crash(tb testing.TB) {
	tb.Helper()
	if err := s.shutdown(syscall.SIGQUIT); err != nil {
		tb.Fatal(err)
	}
}

// Boot starts the stopped server again, on the same port, and waits until
// it accepts connections.
func (s *Server) Boot(tb testing.TB) {
	tb.Helper()
	if err := s.boot(); err != nil {
		tb.Fatal(err)
	}
}

// Restart stops the server (Stop) and starts it again (Boot).
func (s *Server) Restart(tb testing.TB) {
	tb.Helper()
	s.Stop(tb)
	s.Boot(tb)
}

// Freeze stops every process of the server with SIGSTOP: connections stay
// open, and nothing answers, until Thaw.
func (s *Server) Freeze(tb testing.TB) { s.freeze(tb, true) }

// Thaw lets the frozen server run again (SIGCONT).
func (s *Server) Thaw(tb testing.TB) { s.freeze(tb, false) }

func (s *Server) freeze(tb testing.TB, stop bool) {
	tb.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil {
		tb.Fatal("the server is not running")
	}
	sig := syscall.SIGCONT
	if stop {
		sig = syscall.SIGSTOP
	}
	s.proc.frozen.Store(stop)
	s.proc.signal(sig)
}

// Log returns what the server logged since it last started.
func (s *Server) Log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil {
		return ""
	}
	return s.proc.log.String()
}

// Addr returns the host:port of the server's TCP listener.
func (s *Server) Addr() string { return net.JoinHostPort(s.Host, strconv.Itoa(s.Port)) }

// URL returns the URL of database db on the server for user with password
// (none when empty), over TCP without TLS.
func (s *Server) URL(user, password, db string) string {
	u := url.URL{Scheme: "postgres", Host: s.Addr(), Path: "/" + db, RawQuery: "sslmode=disable"}
	u.User = url.User(user)
	if password != "" {
		u.User = url.UserPassword(user, password)
	}
	return u.String()
}

// AdminURL returns the URL of database db for the superuser.
func (s *Server) AdminURL(db string) string { return s.URL(Superuser, s.Password, db) }

// Exec runs sql, with args, in database db as the superuser, failing tb
// on an error.
func (s *Server) Exec(tb testing.TB, db, sql string, args ...any) {
	tb.Helper()
	if err := s.exec(db, sql, args...); err != nil {
		tb.Fatalf("%s: %v", sql, err)
	}
}

func (s *Server) exec(db, sql string, args ...any) error {
	ctx, cancel := context.WithTimeout(context.Background(), readyTimeout)
	defer cancel()
	conn, err := pgx.Connect(ctx, s.AdminURL(db))
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql, args...)
	return err
}

var serial atomic.Int64

// unique returns a name for a database or role, unique on the server, that
// begins with prefix and says which test made it.
func unique(prefix string, tb testing.TB) string {
	var b strings.Builder
	for _, r := range strings.ToLower(tb.Name()) {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	name := fmt.Sprintf("%s%d_%s", prefix, serial.Add(1), b.String())
	return name[:min(len(name), 63)]
}

// CreateDatabase creates a database of its own for tb and returns its
// name. It is dropped when tb ends, with its sessions ended.
func (s *Server) CreateDatabase(tb testing.TB) string {
	tb.Helper()
	db := unique("db", tb)
	s.Exec(tb, "postgres", "CREATE DATABASE "+pgx.Identifier{db}.Sanitize())
	tb.Cleanup(func() {
		if err := s.exec("postgres", "DROP DATABASE IF EXISTS "+pgx.Identifier{db}.Sanitize()+" WITH (FORCE)"); err != nil {
			tb.Logf("drop database %s: %v", db, err)
		}
	})
	return db
}

// Role is a login role of a server.
type Role struct {
	Name, Password string
}

// CreateRole creates a login role with a password, and no other
// privilege than PUBLIC's, and returns it.
func (s *Server) CreateRole(tb testing.TB) Role {
	tb.Helper()
	r := Role{Name: unique("role", tb), Password: randomHex(12)}
	s.Exec(tb, "postgres", fmt.Sprintf("CREATE ROLE %s LOGIN PASSWORD '%s'", pgx.Identifier{r.Name}.Sanitize(), r.Password))
	return r
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// logWriter keeps what the server logs, and closes ready once it logs that
// it accepts connections.
type logWriter struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	ready chan struct{}
	seen  bool
}

func (w *logWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if !w.seen && bytes.Contains(w.buf.Bytes(), []byte(readyLine)) {
		w.seen = true
		close(w.ready)
	}
	if w.seen && w.buf.Len() > 1<<20 {
		keep := bytes.Clone(w.buf.Bytes()[w.buf.Len()-64<<10:])
		w.buf.Reset()
		w.buf.Write(keep)
	}
	return len(p), nil
}

// String returns the log, its last 16 KiB at most.
func (w *logWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	b := w.buf.Bytes()
	return string(b[max(0, len(b)-16<<10):])
}
