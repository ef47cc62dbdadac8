// Package conntest helps tests check that HTTP clients reuse their
// connections: it counts the TCP connections a server accepts, and runs
// many calls a few at a time.
package conntest

import (
	"net"
	"net/http"
	"sync"
	"sync/atomic"
)

// Counter counts the connections of an http.Server whose ConnState it is.
type Counter struct{ n atomic.Int64 }

// ConnState is an http.Server's ConnState hook: it counts each new
// connection.
func (c *Counter) ConnState(_ net.Conn, s http.ConnState) {
	if s == http.StateNew {
		c.n.Add(1)
	}
}

// Count returns how many connections the server accepted so far.
func (c *Counter) Count() int64 { return c.n.Load() }

// Run calls fn n times, parallelism calls at once, and returns the first
// error one returned (all n calls are made).
func Run(n, parallelism int, fn func() error) error {
	work := make(chan struct{})
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
	)
	for range max(parallelism, 1) {
		wg.Go(func() {
			for range work {
				if err := fn(); err != nil {
					once.Do(func() { first = err })
				}
			}
		})
	}
	for range n {
		work <- struct{}{}
	}
	close(work)
	wg.Wait()
	return first
}
