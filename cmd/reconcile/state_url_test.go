package main

import (
	"strings"
	"testing"
)

// A state location that looks like a URL but is not one this build reads
// is refused, with the URL meant; paths, however they are written, pass.
func TestParseBackendShapes(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		// Paths.
		".reconcile/state.db": "",
		"state/prod.db":       "",
		"./etcd.db":           "",
		"etcd.db":             "",
		"etcd":                "",
		"etcd/state.db":       "",
		"etcd//state.db":      `did you mean "etcd://state.db"?`,
		"/srv/state.db":       "",
		"./state:prod.db":     "",
		`C:\state\prod.db`:    "",
		"C:/state/prod.db":    "",
		"file://state.db":     "",
		"file:///tmp/s.db":    "",
		"etcd://h:2379/p":     "",
		"etcd://a:1,b:2/p":    "",
		// URLs meant, mistyped.
		"etcd//10.0.0.5:2379/reconcile/orders": `did you mean "etcd://10.0.0.5:2379/reconcile/orders"?`,
		"etcd:/h:2379/p":                       `did you mean "etcd://h:2379/p"?`,
		"etcd:h:2379/p":                        `did you mean "etcd://h:2379/p"?`,
		"etcd/h:2379/p":                        `did you mean "etcd://h:2379/p"?`,
		"etc://h:2379/p":                       `did you mean "etcd://h:2379/p"?`,
		"ETCD://h:2379/p":                      `did you mean "etcd://h:2379/p"?`,
		"etdc://h:2379/p":                      `did you mean "etcd://h:2379/p"?`,
		"redis://h:6379/0":                     `state backend "redis://" is not supported`,
		"fil://state.db":                       `did you mean "file://state.db"?`,
		"file:/tmp/s.db":                       `did you mean "file://tmp/s.db"?`,
		"h:2379/p":                             `it starts with HOST:PORT but names no scheme (did you mean "etcd://h:2379/p"?)`,
		"a:1,b:2/p":                            `did you mean "etcd://a:1,b:2/p"?`,
		"state:prod.db":                        `write ./state:prod.db for a file of that name`,
		// Other schemes.
		"postgres://u@db:5432/state?sslmode=require": "state on PostgreSQL (postgres://) is not supported by this build of reconcile yet",
		"postgresql://u@db/state":                    "not supported by this build of reconcile yet",
		"postgres//u@db:5432/state":                  "not supported by this build of reconcile yet",
		"s3://bucket/state":                          `state backend "s3://" is not supported`,
		"https://api.pulumi.com":                     `state backend "https://" is not supported`,
	} {
		_, err := parseBackend(in)
		switch {
		case want == "" && err != nil:
			t.Errorf("parseBackend(%q): %v, want a path or URL it reads", in, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("parseBackend(%q): %v, want an error containing %q", in, err, want)
		}
	}
}
