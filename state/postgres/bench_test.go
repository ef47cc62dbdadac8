package postgres_test

import (
	"fmt"
	"testing"

	"github.com/reconcile-dev/reconcile/internal/pgtest"
	"github.com/reconcile-dev/reconcile/state/kv"
	"github.com/reconcile-dev/reconcile/state/postgres"
)

// benchStore opens stack prod for writing, in a database of its own.
func benchStore(b *testing.B) kv.Store {
	srv := pgtest.Shared(b)
	be, err := postgres.New(srv.AdminURL(srv.CreateDatabase(b)), postgres.Options{Getenv: noEnv})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { be.Close() })
	s, err := be.Open(b.Context(), "prod", kv.Options{Write: true, Init: meta})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

// BenchmarkWrite writes one change as the model does: a condition on the
// serial, the serial (the marker), a record, its version and a history
// entry.
func BenchmarkWrite(b *testing.B) {
	s := benchStore(b)
	value := make([]byte, 1024)
	b.ResetTimer()
	for i := range b.N {
		bt := &kv.Batch{Marker: "meta/serial"}
		bt.Expect("meta/serial", []byte(fmt.Sprint(i)))
		bt.Put("meta/serial", []byte(fmt.Sprint(i+1)))
		bt.Put(fmt.Sprintf("records/r%06d", i), value)
		bt.Put(fmt.Sprintf("versions/r%06d\x00%020d", i, i+1), value)
		bt.Put(fmt.Sprintf("history/%020d/%020d", i+1, 1), []byte("h"))
		bt.Delete(fmt.Sprintf("intents/r%06d", i))
		if i == 0 {
			bt.Conds[0].Value = []byte("0")
		}
		if err := s.Write(b.Context(), bt); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkScan10k reads 10,000 records of 1 KiB from a reader.
func BenchmarkScan10k(b *testing.B) {
	s := benchStore(b)
	value := make([]byte, 1024)
	bt := &kv.Batch{}
	for i := range 10000 {
		bt.Put(fmt.Sprintf("records/r%06d", i), value)
	}
	if err := s.Write(b.Context(), bt); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		n := 0
		err := s.Read(b.Context(), func(vw kv.View) error {
			return vw.Scan("records/", "", false, func(string, []byte) error { n++; return nil })
		})
		if err != nil || n != 10000 {
			b.Fatalf("%d records, %v", n, err)
		}
	}
}
