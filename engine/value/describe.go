package value

import (
	"fmt"
	"strconv"
)

// QuoteTrunc quotes s for a message, cut to 40 bytes.
func QuoteTrunc(s string) string {
	return strconv.Quote(trunc(s))
}

// trunc is s cut to 40 bytes, as QuoteTrunc quotes it; a Redaction looks
// for a secret in this form too.
func trunc(s string) string {
	if len(s) > 40 {
		s = s[:40] + "..."
	}
	return s
}

// TypeName names the JSON type of v as config declarations do: string,
// integer, number, boolean, array or object; "" for anything else.
func TypeName(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case int64:
		return "integer"
	case float64:
		return "number"
	case bool:
		return "boolean"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return ""
}

// Describe names v for a message: null, a string (quoted, cut short), or
// its type.
func Describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return "string " + QuoteTrunc(x)
	}
	if t := TypeName(v); t != "" {
		return t
	}
	return fmt.Sprintf("%T", v)
}
