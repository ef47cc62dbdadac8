package httpretry

import (
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
)

func TestRetryableError(t *testing.T) {
	t.Parallel()
	op := func(op string, err error) error {
		return &net.OpError{Op: op, Net: "tcp", Err: err}
	}
	for name, tc := range map[string]struct {
		err  error
		want bool
	}{
		"connection refused":  {op("dial", os.NewSyscallError("connect", syscall.ECONNREFUSED)), true},
		"connection reset":    {op("read", os.NewSyscallError("read", syscall.ECONNRESET)), true},
		"broken pipe":         {fmt.Errorf("write: %w", syscall.EPIPE), true},
		"closed early":        {fmt.Errorf("net/http: HTTP/1.x transport connection broken: %w", io.ErrUnexpectedEOF), true},
		"EOF":                 {io.EOF, true},
		"i/o timeout":         {op("read", os.ErrDeadlineExceeded), true},
		"DNS timeout":         {op("dial", &net.DNSError{Err: "timeout", Name: "api.datadoghq.com", IsTimeout: true}), true},
		"no such host":        {op("dial", &net.DNSError{Err: "no such host", Name: "api.datadoghq.con", IsNotFound: true}), false},
		"invalid header":      {errors.New(`net/http: invalid header field value for "Dd-Api-Key"`), false},
		"unknown authority":   {x509.UnknownAuthorityError{}, false},
		"unsupported scheme":  {errors.New(`unsupported protocol scheme "htp"`), false},
		"other socket errors": {op("dial", errors.New("network is unreachable")), true},
	} {
		if got := retryableError(tc.err); got != tc.want {
			t.Errorf("%s: retryableError(%v) = %v, want %v", name, tc.err, got, tc.want)
		}
	}
}
