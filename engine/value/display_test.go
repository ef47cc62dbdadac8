package value_test

import (
	"testing"

	"github.com/reconcile-dev/reconcile/engine/value"
)

func TestQuote(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, quoted string }{
		{"", `""`},
		{"dashboard:c-1", `"dashboard:c-1"`},
		{`a"b\c`, `"a\"b\\c"`},
		{"line\nnext\r\tend", `"line\nnext\r\tend"`},
		{"héllo wörld", `"héllo wörld"`},
		{"\x7f\x00", `"\u007f\u0000"`},
		{"bad\xffbyte", `"bad\ufffdbyte"`},
		{"rtl\u202eoverride", `"rtl\u202eoverride"`},
		{"emoji 😀 and tag \U000e0041", `"emoji 😀 and tag \udb40\udc41"`},
		{"ends in escape\n", `"ends in escape\n"`},
	} {
		if got := value.Quote(tc.in); got != tc.quoted {
			t.Errorf("Quote(%q) = %s, want %s", tc.in, got, tc.quoted)
		}
	}
}
