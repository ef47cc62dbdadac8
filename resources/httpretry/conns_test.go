package httpretry_test

import (
	"net/http"
	"testing"

	"github.com/reconcile-dev/reconcile/resources/httpretry"
)

func TestNewBaseTransport(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ conns, want int }{
		{0, httpretry.DefaultConnsPerHost},
		{-3, httpretry.DefaultConnsPerHost},
		{4, httpretry.DefaultConnsPerHost},
		{64, 64},
	} {
		tr := httpretry.NewBaseTransport(tc.conns)
		if tr.MaxIdleConnsPerHost != tc.want || tr.MaxIdleConns < tc.want {
			t.Errorf("NewBaseTransport(%d): %d idle per host, %d in all; want %d per host", tc.conns, tr.MaxIdleConnsPerHost, tr.MaxIdleConns, tc.want)
		}
		if tr == http.DefaultTransport || tr.Proxy == nil || !tr.ForceAttemptHTTP2 {
			t.Errorf("NewBaseTransport(%d) is not a copy of http.DefaultTransport's settings", tc.conns)
		}
	}
}
