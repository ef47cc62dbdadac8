package pgtest

import (
	"bytes"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
)

// commitQuery is the message a client sends to commit a transaction (a
// simple query "commit", as pgx sends it): 'Q', its length, the text.
var commitQuery = []byte("Q\x00\x00\x00\x0bcommit\x00")

// Proxy forwards TCP connections on loopback to a server, and cuts them
// when told to.
type Proxy struct {
	// Host and Port are where clients connect.
	Host string
	Port int

	target string
	l      net.Listener
	cuts   atomic.Int64

	mu        sync.Mutex
	pairs     map[*pair]bool
	cutCommit int  // how many of the next commits to cut
	down      bool // refuse connections
	afterCut  func()
}

// pair is a client's connection and the proxy's to the server.
type pair struct {
	client, server net.Conn
	cutting        atomic.Bool // drop what the server answers, and cut
	once           sync.Once
}

func (c *pair) close() {
	c.once.Do(func() {
		c.client.Close()
		c.server.Close()
	})
}

// NewProxy starts a proxy to target (host:port) for tb, closed when tb
// ends.
func NewProxy(tb testing.TB, target string) *Proxy {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	p := &Proxy{Host: "127.0.0.1", Port: l.Addr().(*net.TCPAddr).Port, target: target, l: l, pairs: map[*pair]bool{}}
	go p.serve()
	tb.Cleanup(p.close)
	return p
}

// Addr returns the host:port that clients connect to.
func (p *Proxy) Addr() string { return net.JoinHostPort(p.Host, strconv.Itoa(p.Port)) }

// CutCommits makes the next n commits that clients send reach the server,
// and the server's answer to each never reach its client: the proxy closes
// both connections instead. Cuts counts them.
func (p *Proxy) CutCommits(n int) {
	p.mu.Lock()
	p.cutCommit = n
	p.mu.Unlock()
}

// AfterCut makes the proxy call f after each cut: for instance to take
// itself down before the client tries again.
func (p *Proxy) AfterCut(f func()) {
	p.mu.Lock()
	p.afterCut = f
	p.mu.Unlock()
}

// Cuts returns how many commits were cut.
func (p *Proxy) Cuts() int { return int(p.cuts.Load()) }

// SetDown, with down, cuts every connection and closes new ones at once,
// as a server that went away; without, the proxy forwards again.
func (p *Proxy) SetDown(down bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = down
	if down {
		for c := range p.pairs {
			c.close()
		}
	}
}

func (p *Proxy) close() {
	p.l.Close()
	p.SetDown(true)
}

func (p *Proxy) serve() {
	for {
		client, err := p.l.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		down := p.down
		p.mu.Unlock()
		if down {
			client.Close()
			continue
		}
		server, err := net.Dial("tcp", p.target)
		if err != nil {
			client.Close()
			continue
		}
		c := &pair{client: client, server: server}
		p.mu.Lock()
		p.pairs[c] = true
		p.mu.Unlock()
		go p.toServer(c)
		go p.toClient(c)
	}
}

// toServer copies what the client sends to the server, watching for
// commits to cut.
func (p *Proxy) toServer(c *pair) {
	defer p.drop(c)
	buf := make([]byte, 64<<10)
	var tail []byte // the end of the last read, for a message read in two
	for {
		n, err := c.client.Read(buf)
		if n > 0 {
			seen := append(tail, buf[:n]...)
			if bytes.Contains(seen, commitQuery) {
				p.mu.Lock()
				if p.cutCommit > 0 {
					p.cutCommit--
					c.cutting.Store(true)
				}
				p.mu.Unlock()
			}
			tail = append([]byte(nil), seen[max(0, len(seen)-len(commitQuery)+1):]...)
			if _, err := c.server.Write(buf[:n]); err != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// toClient copies what the server answers to the client, unless the
// connection is being cut.
func (p *Proxy) toClient(c *pair) {
	defer p.drop(c)
	buf := make([]byte, 64<<10)
	for {
		n, err := c.server.Read(buf)
		if n > 0 && c.cutting.Load() {
			// Counted, and afterCut done, before the client can see the
			// cut and go on.
			p.cuts.Add(1)
			p.mu.Lock()
			f := p.afterCut
			p.mu.Unlock()
			if f != nil {
				f()
			}
			c.close()
			return
		}
		if n > 0 {
			if _, err := c.client.Write(buf[:n]); err != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *Proxy) drop(c *pair) {
	c.close()
	p.mu.Lock()
	delete(p.pairs, c)
	p.mu.Unlock()
}
