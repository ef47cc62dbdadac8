package pgtest_test

import (
	"context"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/reconcile-dev/reconcile/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

func query(t *testing.T, url string) (int, error) {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		return 0, err
	}
	defer conn.Close(context.Background())
	var n int
	err = conn.QueryRow(t.Context(), "SELECT count(*) FROM t").Scan(&n)
	return n, err
}

// TestRestart: a server keeps its data across a stop and a crash, and
// answers again once booted.
func TestRestart(t *testing.T) {
	s := pgtest.Start(t)
	s.Exec(t, "postgres", "CREATE TABLE t (x int)")
	s.Exec(t, "postgres", "INSERT INTO t VALUES (1)")
	s.Restart(t)
	s.Exec(t, "postgres", "INSERT INTO t VALUES (2)")
	s.Crash(t)
	if _, err := query(t, s.AdminURL("postgres")); err == nil {
		t.Fatal("a crashed server answered")
	}
	s.Boot(t)
	if n, err := query(t, s.AdminURL("postgres")); err != nil || n != 2 {
		t.Errorf("after a restart and a crash: %d rows, %v; want 2", n, err)
	}
}

// TestShared: databases and roles of a shared server; a role's password
// is required over TCP.
func TestShared(t *testing.T) {
	s := pgtest.Shared(t)
	db := s.CreateDatabase(t)
	s.Exec(t, db, "CREATE TABLE t (x int)")
	r := s.CreateRole(t)
	s.Exec(t, db, "GRANT SELECT ON t TO "+pgx.Identifier{r.Name}.Sanitize())
	if n, err := query(t, s.URL(r.Name, r.Password, db)); err != nil || n != 0 {
		t.Errorf("as role %s: %d, %v", r.Name, n, err)
	}
	if _, err := query(t, s.URL(r.Name, "wrong", db)); err == nil {
		t.Error("a wrong password was taken")
	}
}

// TestProxyCut: a commit cut by the proxy is made, and its client cannot
// tell.
func TestProxyCut(t *testing.T) {
	s := pgtest.Shared(t)
	db := s.CreateDatabase(t)
	s.Exec(t, db, "CREATE TABLE t (x int)")
	p := pgtest.NewProxy(t, s.Addr())
	url := "postgres://" + pgtest.Superuser + ":" + s.Password + "@" + p.Addr() + "/" + db + "?sslmode=disable"
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	tx, err := conn.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(t.Context(), "INSERT INTO t VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	p.CutCommits(1)
	if err := tx.Commit(t.Context()); err == nil {
		t.Fatal("a cut commit returned no error")
	}
	if p.Cuts() != 1 {
		t.Errorf("Cuts = %d, want 1", p.Cuts())
	}
	if n, err := query(t, url); err != nil || n != 1 {
		t.Errorf("after the cut commit: %d rows, %v; want 1, made", n, err)
	}
	p.SetDown(true)
	if _, err := query(t, url); err == nil {
		t.Error("a proxy that is down forwarded a connection")
	}
}

// TestClosedTempDir: run as root, the server, which runs as another user,
// starts even when the temporary directory is closed to others.
func TestClosedTempDir(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only as root does the server run as another user")
	}
	dir := t.TempDir() // 0700
	t.Setenv("TMPDIR", dir)
	s := pgtest.Start(t)
	s.Exec(t, "postgres", "SELECT 1")
}
