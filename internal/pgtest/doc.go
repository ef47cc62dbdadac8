// Package pgtest runs real PostgreSQL servers for tests: the initdb and
// postgres programs of Debian's postgresql package (found under
// /usr/lib/postgresql/VERSION/bin, or on PATH), with a data directory of
// their own in a temporary directory, listening on a free loopback port and
// on a unix socket in that directory.
//
// PostgreSQL refuses to run as root, and CI runs as root: there the server
// runs as the unprivileged user nobody, its directory chowned to it. As any
// other user it runs as that user.
//
// Start gives a test a server of its own, stopped and removed when the test
// ends: for tests that stop, restart or freeze it. Shared gives every test
// of a package one server, started on first use and stopped when the
// package's tests end, which needs the package's TestMain to call Main; a
// test then makes a database of its own with CreateDatabase.
//
// Without the programs, tests that ask for a server fail, saying to run
// apt-get install postgresql; under -short they are skipped.
//
// Proxy stands between a client and a server to cut a connection at a
// chosen moment: once a transaction's COMMIT has reached the server, before
// its answer reaches the client, which then cannot tell whether the commit
// was made.
package pgtest
