package httpretry

import (
	"net"
	"net/http"
	"time"
)

// DefaultConnsPerHost is the fewest idle connections per host that a
// transport of NewBaseTransport keeps: the engine's default parallelism.
const DefaultConnsPerHost = 10

// NewBaseTransport returns the transport that the calls of one vendor's API
// share for one run, to be the Base of a Transport: the settings of
// http.DefaultTransport (proxy from the environment, dial, TLS and idle
// timeouts, HTTP/2), keeping up to conns idle connections per host (at
// least DefaultConnsPerHost).
//
// Give it how many calls run at once (the parallelism), so that each call
// finds idle the connection an earlier one ended on. http.DefaultTransport
// keeps 2 per host: at 10 calls at once, most calls would open a
// connection of their own (a TCP and TLS handshake) and close it when
// done, and a refresh of thousands of objects would open thousands.
func NewBaseTransport(conns int) *http.Transport {
	var t *http.Transport
	if dt, ok := http.DefaultTransport.(*http.Transport); ok {
		t = dt.Clone()
	} else { // replaced by a program: the standard library's defaults
		t = &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			DialContext:           (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			ForceAttemptHTTP2:     true,
			MaxIdleConns:          100,
			IdleConnTimeout:       90 * time.Second,
			TLSHandshakeTimeout:   10 * time.Second,
			ExpectContinueTimeout: time.Second,
		}
	}
	conns = max(conns, DefaultConnsPerHost)
	t.MaxIdleConnsPerHost = conns
	t.MaxIdleConns = max(t.MaxIdleConns, 4*conns)
	return t
}
