package postgres_test

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reconcile-dev/reconcile/internal/pgtest"
	"github.com/reconcile-dev/reconcile/state/kv"
	"github.com/reconcile-dev/reconcile/state/kv/kvtest"
	"github.com/reconcile-dev/reconcile/state/postgres"
)

func TestMain(m *testing.M) {
	if url := os.Getenv(childEnv); url != "" {
		os.Exit(child(url))
	}
	os.Exit(pgtest.Main(m))
}

// noEnv is a Getenv that finds no variable.
func noEnv(string) string { return "" }

var schemas atomic.Int64

// where is a backend's database and schema on a test server.
type where struct {
	srv    *pgtest.Server
	db     string
	schema string
}

// url returns the URL of w for role r (the superuser when empty).
func (w where) url(r pgtest.Role) string {
	if r.Name == "" {
		r = pgtest.Role{Name: pgtest.Superuser, Password: w.srv.Password}
	}
	return w.srv.URL(r.Name, r.Password, w.db) + "&schema=" + w.schema
}

// expire makes the lease of stack's lock lapse now, as the server sees it.
func (w where) expire(t *testing.T, stack string) {
	t.Helper()
	w.srv.Exec(t, w.db, "UPDATE "+w.schema+".locks SET expires = now() - interval '1 second' WHERE stack = $1", stack)
}

// newWhere returns a schema of its own on the shared server's database db
// (a new database when empty).
func newWhere(t *testing.T, db string) where {
	t.Helper()
	srv := pgtest.Shared(t)
	if db == "" {
		db = srv.CreateDatabase(t)
	}
	return where{srv: srv, db: db, schema: fmt.Sprintf("t%d", schemas.Add(1))}
}

// open returns a backend at w for r, closed when t ends.
func open(t *testing.T, url string, opts postgres.Options) *postgres.Backend {
	t.Helper()
	if opts.Getenv == nil {
		opts.Getenv = noEnv
	}
	b, err := postgres.New(url, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// openStore opens stack of b, closed when t ends.
func openStore(t *testing.T, b kv.Backend, stack string, opts kv.Options) kv.Store {
	t.Helper()
	s, err := b.Open(t.Context(), stack, opts)
	if err != nil {
		t.Fatalf("Open(%s, write %v): %v", stack, opts.Write, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func get(t *testing.T, s kv.Store, key string) []byte {
	t.Helper()
	var v []byte
	err := s.Read(t.Context(), func(vw kv.View) error {
		var err error
		v, err = vw.Get(key)
		return err
	})
	if err != nil {
		t.Fatalf("Get(%q): %v", key, err)
	}
	return v
}

var meta = []kv.Op{{Key: "meta/format", Value: []byte("format-2")}, {Key: "meta/serial", Value: []byte("0")}}

// TestContract runs the contract of kv backends, a schema of its own per
// test, in one database of the shared server.
func TestContract(t *testing.T) {
	db := pgtest.Shared(t).CreateDatabase(t)
	var mu sync.Mutex
	at := map[kv.Backend]where{}
	kvtest.Run(t, kvtest.Harness{
		New: func(t *testing.T) kv.Backend {
			w := newWhere(t, db)
			b := open(t, w.url(pgtest.Role{}), postgres.Options{})
			mu.Lock()
			at[b] = w
			mu.Unlock()
			return b
		},
		Expire: func(t *testing.T, b kv.Backend, stack string) {
			mu.Lock()
			w := at[b]
			mu.Unlock()
			w.expire(t, stack)
		},
	})
}

// TestEmptyValue: an empty value is a value, not an absent key.
func TestEmptyValue(t *testing.T) {
	w := newWhere(t, "")
	s := openStore(t, open(t, w.url(pgtest.Role{}), postgres.Options{}), "prod", kv.Options{Write: true, Init: meta})
	b := &kv.Batch{}
	b.Put("records/e", nil)
	if err := s.Write(t.Context(), b); err != nil {
		t.Fatal(err)
	}
	if v := get(t, s, "records/e"); v == nil || len(v) != 0 {
		t.Errorf("records/e = %#v, want an empty value", v)
	}
	b = &kv.Batch{}
	b.Expect("records/e", []byte{})
	b.Put("records/f", []byte("f"))
	if err := s.Write(t.Context(), b); err != nil {
		t.Errorf("a condition on an empty value: %v", err)
	}
}

// rolesSQL is what an administrator runs to let role apply write reconcile's
// state in schema, and role plan read it (docs: "Running in CI").
func rolesSQL(db, schema, apply, plan string) []string {
	return []string{
		fmt.Sprintf("GRANT CONNECT ON DATABASE %s TO %s, %s", db, apply, plan),
		fmt.Sprintf("CREATE SCHEMA %s AUTHORIZATION %s", schema, apply),
		fmt.Sprintf("GRANT USAGE ON SCHEMA %s TO %s", schema, plan),
		fmt.Sprintf("ALTER DEFAULT PRIVILEGES FOR ROLE %s IN SCHEMA %s GRANT SELECT ON TABLES TO %s", apply, schema, plan),
		fmt.Sprintf("GRANT SELECT ON ALL TABLES IN SCHEMA %s TO %s", schema, plan),
	}
}

// TestRoles: with the grants of the docs, the apply role makes reconcile's
// tables and writes; the plan role, with SELECT only, reads and is refused
// writes, saying so.
func TestRoles(t *testing.T) {
	w := newWhere(t, "")
	apply, plan := w.srv.CreateRole(t), w.srv.CreateRole(t)
	w.srv.Exec(t, w.db, "REVOKE ALL ON DATABASE "+w.db+" FROM PUBLIC")
	for _, sql := range rolesSQL(w.db, w.schema, apply.Name, plan.Name) {
		w.srv.Exec(t, w.db, sql)
	}
	// Before anything is written: the plan role sees no stack.
	pb := open(t, w.url(plan), postgres.Options{})
	if got, err := pb.Stacks(t.Context()); err != nil || len(got) != 0 {
		t.Fatalf("Stacks as the plan role before any apply: %v, %v", got, err)
	}
	r := openStore(t, pb, "prod", kv.Options{})
	if v := get(t, r, "meta/format"); v != nil {
		t.Errorf("a stack that does not exist holds %q", v)
	}
	r.Close()

	ab := open(t, w.url(apply), postgres.Options{})
	ws := openStore(t, ab, "prod", kv.Options{Write: true, Init: meta})
	b := &kv.Batch{}
	b.Put("records/a", []byte("1"))
	if err := ws.Write(t.Context(), b); err != nil {
		t.Fatal(err)
	}
	ws.Close()

	r = openStore(t, pb, "prod", kv.Options{})
	if v := get(t, r, "records/a"); string(v) != "1" {
		t.Errorf("the plan role reads records/a = %q, want 1", v)
	}
	if got, err := pb.Stacks(t.Context()); err != nil || len(got) != 1 {
		t.Errorf("Stacks as the plan role: %v, %v", got, err)
	}
	_, err := pb.Open(t.Context(), "prod", kv.Options{Write: true, LockTimeout: time.Minute})
	if err == nil || !strings.Contains(err.Error(), "permission denied") || !strings.Contains(err.Error(), "an apply a role that may write them") {
		t.Errorf("a writer as the plan role: %v, want the server's permission error and what it means", err)
	}
	if err := pb.Remove(t.Context(), "prod", time.Minute); err == nil || !strings.Contains(err.Error(), "permission denied") {
		t.Errorf("Remove as the plan role: %v, want permission denied", err)
	}
	if v := get(t, openStore(t, pb, "prod", kv.Options{}), "records/a"); string(v) != "1" {
		t.Errorf("records/a = %q after the plan role's attempts, want 1", v)
	}

	// A role without USAGE on the schema is told what to grant.
	other := w.srv.CreateRole(t)
	w.srv.Exec(t, w.db, "GRANT CONNECT ON DATABASE "+w.db+" TO "+other.Name)
	_, err = open(t, w.url(other), postgres.Options{}).Open(t.Context(), "prod", kv.Options{})
	if err == nil || !strings.Contains(err.Error(), "permission denied for schema") {
		t.Errorf("a reader without USAGE: %v", err)
	}
}

// TestFencedInDatabase: a writer whose lease lapsed without its knowing
// (its renewals stopped, as in a frozen process) and that another writer
// took over writes nothing: the database refuses it.
func TestFencedInDatabase(t *testing.T) {
	w := newWhere(t, "")
	b := open(t, w.url(pgtest.Role{}), postgres.Options{})
	first := openStore(t, b, "prod", kv.Options{Write: true, Init: meta, LockTTL: time.Minute})
	postgres.StopRenewal(first)
	w.expire(t, "prod")
	next := openStore(t, b, "prod", kv.Options{Write: true, LockTimeout: time.Minute})
	bt := &kv.Batch{}
	bt.Put("records/a", []byte("next"))
	if err := next.Write(t.Context(), bt); err != nil {
		t.Fatal(err)
	}
	if err := first.Held(); err != nil {
		t.Fatalf("Held = %v: the first writer must not know yet, for the database to be what refuses it", err)
	}
	bt = &kv.Batch{}
	bt.Put("records/a", []byte("stale"))
	if err := first.Write(t.Context(), bt); !errors.Is(err, kv.ErrLeaseLost) {
		t.Errorf("the stale writer's Write = %v, want ErrLeaseLost", err)
	}
	if v := get(t, next, "records/a"); string(v) != "next" {
		t.Errorf("records/a = %q: the stale writer wrote", v)
	}
	select {
	case <-first.Lost():
	default:
		t.Error("Lost is not closed after a Write found the lock taken")
	}
}

// TestMigrations: a fresh schema is made once by runners that start at
// once; a schema of a newer version is refused.
func TestMigrations(t *testing.T) {
	db := pgtest.Shared(t).CreateDatabase(t)
	for round := range 3 {
		w := newWhere(t, db)
		var wg sync.WaitGroup
		errs := make(chan error, 4)
		for i := range 4 {
			wg.Go(func() {
				// A backend each: connections of their own, as runners.
				b, err := postgres.New(w.url(pgtest.Role{}), postgres.Options{Getenv: noEnv})
				if err != nil {
					errs <- err
					return
				}
				defer b.Close()
				s, err := b.Open(t.Context(), fmt.Sprintf("s%d", i), kv.Options{Write: true, Init: meta})
				if err != nil {
					errs <- err
					return
				}
				s.Close()
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Errorf("round %d: %v", round, err)
		}
		got := open(t, w.url(pgtest.Role{}), postgres.Options{})
		if stacks, err := got.Stacks(t.Context()); err != nil || len(stacks) != 4 {
			t.Errorf("round %d: Stacks = %v, %v", round, stacks, err)
		}
		if round == 0 {
			w.srv.Exec(t, w.db, "INSERT INTO "+w.schema+".migrations (version) VALUES (99)")
			b := open(t, w.url(pgtest.Role{}), postgres.Options{})
			_, werr := b.Open(t.Context(), "s0", kv.Options{Write: true})
			_, rerr := b.Open(t.Context(), "s0", kv.Options{})
			_, serr := b.Stacks(t.Context())
			for _, err := range []error{werr, rerr, serr} {
				if !errors.Is(err, kv.ErrNewerSchema) || !strings.Contains(err.Error(), "version 99") || !strings.Contains(err.Error(), "upgrade reconcile") {
					t.Errorf("a schema of version 99: %v, want ErrNewerSchema saying to upgrade reconcile", err)
				}
			}
		}
	}
}

// TestSecrets: no error, and no description, shows a password given in the
// URL or by PGPASSWORD; PGPASSWORD, read through Getenv, is the password
// used when the URL has none.
func TestSecrets(t *testing.T) {
	w := newWhere(t, "")
	r := w.srv.CreateRole(t)
	w.srv.Exec(t, w.db, fmt.Sprintf("GRANT CREATE ON DATABASE %s TO %s", w.db, r.Name))
	const secret = "Pa55/w:rd@s3cr3t?"
	w.srv.Exec(t, "postgres", fmt.Sprintf("ALTER ROLE %s PASSWORD '%s'", r.Name, secret))
	withPW := pgtest.Role{Name: r.Name, Password: secret}
	wrong := pgtest.Role{Name: r.Name, Password: "wrong-" + secret}
	down := pgtest.NewProxy(t, w.srv.Addr())
	down.SetDown(true)
	env := func(pw string) func(string) string {
		return func(k string) string {
			if k == "PGPASSWORD" {
				return pw
			}
			return ""
		}
	}
	check := func(name string, err error, b *postgres.Backend) {
		t.Helper()
		if err == nil {
			t.Errorf("%s: no error", name)
			return
		}
		t.Logf("%s: %v", name, err)
		for _, s := range []string{secret, "wrong-"} {
			if strings.Contains(err.Error(), s) {
				t.Errorf("%s: the error shows the password: %v", name, err)
			}
		}
		if b != nil && strings.Contains(b.Describe(), secret) {
			t.Errorf("%s: Describe shows the password: %s", name, b.Describe())
		}
	}
	openErr := func(url string, getenv func(string) string) (*postgres.Backend, error) {
		b, err := postgres.New(url, postgres.Options{Getenv: getenv, RequestTimeout: 5 * time.Second})
		if err != nil {
			return nil, err
		}
		t.Cleanup(func() { b.Close() })
		_, err = b.Open(t.Context(), "prod", kv.Options{Write: true, Init: meta})
		return b, err
	}
	b, err := openErr(w.url(wrong), noEnv)
	check("a wrong password in the URL", err, b)
	b, err = openErr(w.url(pgtest.Role{Name: r.Name}), env("wrong-"+secret))
	check("a wrong PGPASSWORD", err, b)
	url := strings.Replace(w.url(withPW), w.srv.Addr(), down.Addr(), 1)
	b, err = openErr(url, noEnv)
	check("a server that does not answer", err, b)
	if !errors.Is(err, kv.ErrUnreachable) {
		t.Errorf("a server that does not answer: %v, want ErrUnreachable", err)
	}
	b, err = openErr(strings.Replace(w.url(withPW), "/"+w.db+"?", "/nosuchdb?", 1), noEnv)
	check("a database that does not exist", err, b)
	_, err = postgres.New(strings.Replace(w.url(withPW), fmt.Sprint(w.srv.Port), "99999999", 1), postgres.Options{Getenv: noEnv})
	check("a URL with a bad port", err, nil)
	_, err = postgres.New(strings.Replace(w.url(withPW), "sslmode=disable", "sslmode=bogus", 1), postgres.Options{Getenv: noEnv})
	check("a URL with a bad sslmode", err, nil)
	_, err = postgres.New(w.srv.URL(r.Name, secret, w.db)+"&schema=Bad-Name", postgres.Options{Getenv: noEnv})
	check("a bad schema name", err, nil)

	// The right password, from PGPASSWORD, works, and is never shown.
	b, err = openErr(w.url(pgtest.Role{Name: r.Name}), env(secret))
	if err != nil {
		t.Fatalf("the password from PGPASSWORD: %v", err)
	}
	s := openStore(t, b, "prod", kv.Options{})
	for _, d := range []string{b.Describe(), s.Describe()} {
		if strings.Contains(d, secret) || !strings.Contains(d, r.Name+"@") {
			t.Errorf("Describe = %q, want the user and no password", d)
		}
	}
}
