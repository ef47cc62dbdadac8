package main

import (
	"bytes"
	"encoding/json"
	"io"
	"sync"

	"github.com/reconcile-dev/reconcile/engine/value"
)

// redactor writes to w with the secrets of the specs redacted (see
// value.Redaction): the last line of defence, for free text such as a
// cloud API's error message that echoes an input it refused.
//
// On a JSON stream (structured is set: the stdout of --output json and
// jsonl) only string values are searched, never object keys, and each is
// decoded, redacted and encoded again, so that the output stays valid JSON.
type redactor struct {
	w          io.Writer
	structured bool

	mu      sync.Mutex
	red     *value.Redaction
	pending []byte // structured: the start of a token not yet complete
}

func (r *redactor) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []byte
	if r.structured {
		out = r.redactJSON(append(r.pending, p...), false)
	} else {
		out = r.red.Bytes(p)
	}
	if len(out) > 0 {
		if _, err := r.w.Write(out); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// flush writes what a structured redactor held back.
func (r *redactor) flush() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if out := r.redactJSON(r.pending, true); len(out) > 0 {
		_, _ = r.w.Write(out)
	}
}

// redactJSON redacts the string values of the JSON text b and returns what
// can be written; at the end of the stream (final) it returns everything,
// else it keeps an incomplete string, and a string whose next token (":"
// for a key) is not there yet, in r.pending.
func (r *redactor) redactJSON(b []byte, final bool) []byte {
	r.pending = nil
	var out []byte
	for i := 0; i < len(b); {
		q := bytes.IndexByte(b[i:], '"')
		if q < 0 {
			return append(out, b[i:]...)
		}
		out = append(out, b[i:i+q]...)
		start := i + q
		end := stringEnd(b, start)
		next := len(b)
		if end >= 0 {
			next = end
			for next < len(b) && (b[next] == ' ' || b[next] == '\t' || b[next] == '\n' || b[next] == '\r') {
				next++
			}
		}
		if next >= len(b) {
			if final {
				return append(out, r.red.Bytes(b[start:])...)
			}
			r.pending = append([]byte(nil), b[start:]...)
			return out
		}
		token := b[start:end]
		if b[next] == ':' { // an object key: left as it is
			out = append(out, token...)
		} else {
			out = append(out, r.redactJSONString(token)...)
		}
		i = end
	}
	return out
}

// stringEnd returns the index just past the JSON string that starts at
// b[start] (a quote), or -1 when b ends inside it.
func stringEnd(b []byte, start int) int {
	for i := start + 1; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}

// redactJSONString redacts one JSON string token.
func (r *redactor) redactJSONString(token []byte) []byte {
	var s string
	if json.Unmarshal(token, &s) != nil {
		return r.red.Bytes(token)
	}
	red := r.red.String(s)
	if red == s {
		return token
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if enc.Encode(red) != nil {
		return r.red.Bytes(token)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// redactSecrets makes the command's output redact secrets.
func (c *cli) redactSecrets(secrets []string) {
	red := value.NewRedaction(secrets)
	if red == nil {
		return
	}
	for _, w := range []*io.Writer{&c.stdout, &c.stderr} {
		if w == &c.stdout && c.secretsOnStdout {
			// 'output --show-secrets': printing a secret in clear is
			// what was asked for, on stdout only.
			continue
		}
		if r, ok := (*w).(*redactor); ok {
			r.mu.Lock()
			r.red = r.red.Merge(red)
			r.mu.Unlock()
			continue
		}
		*w = &redactor{w: *w, red: red, structured: w == &c.stdout && (c.g.output == "json" || c.g.output == "jsonl")}
	}
}

// flushOutput writes what the writers of w held back, outermost first.
func flushOutput(w io.Writer) {
	for {
		switch x := w.(type) {
		case *redactor:
			x.flush()
			w = x.w
		case *sanitizer:
			x.flush()
			return
		default:
			return
		}
	}
}

// underlying returns the writer the redactor and sanitizer write to, for
// telling whether the output is a terminal.
func underlying(w io.Writer) io.Writer {
	for {
		switch x := w.(type) {
		case *redactor:
			w = x.w
		case *sanitizer:
			w = x.w
		case *exitGate:
			w = x.w
		default:
			return w
		}
	}
}
