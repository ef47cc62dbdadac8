package value

import "github.com/reconcile-dev/reconcile/internal/untrusted"

// Texts that stand in for values a renderer must not or cannot show: the
// one place they are written.
const (
	UnknownText   = "(known after apply)"
	SensitiveText = "(sensitive value)"
)

// OneLine renders a value on one line for messages.
func OneLine(v any) string {
	if _, ok := v.(Unknown); ok {
		return "(known after apply)"
	}
	if ContainsSecret(v) {
		return SensitiveText
	}
	s := CanonicalJSON(v)
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return untrusted.Text(s)
}

// Quote returns s in double quotes, escaped as a JSON string is, and with
// every character that is not printable (controls, bidirectional overrides,
// invalid UTF-8) escaped as \uXXXX, so that a value can neither forge lines
// nor send escape sequences to a terminal: untrusted.Quote.
func Quote(s string) string { return untrusted.Quote(s) }
