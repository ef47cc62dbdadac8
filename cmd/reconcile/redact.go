package main

import (
	"bytes"
	"io"
	"sync"
)

// redactedText replaces a secret's clear text in the output.
const redactedText = "(sensitive value)"

// redactor writes to w with every secret text replaced by redactedText. It
// is the last line of defence: values marked secret are already shown as
// "(sensitive value)" and stored as digests, but a cloud API's error
// message may echo an input it refused, secret or not.
type redactor struct {
	w       io.Writer
	mu      sync.Mutex
	secrets [][]byte
}

func (r *redactor) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := p
	for _, s := range r.secrets {
		if bytes.Contains(out, s) {
			out = bytes.ReplaceAll(out, s, []byte(redactedText))
		}
	}
	if _, err := r.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// redactSecrets makes the command's output redact secrets, longest first.
func (c *cli) redactSecrets(secrets []string) {
	if len(secrets) == 0 {
		return
	}
	var bs [][]byte
	for _, s := range secrets {
		bs = append(bs, []byte(s))
	}
	for _, w := range []*io.Writer{&c.stdout, &c.stderr} {
		if r, ok := (*w).(*redactor); ok {
			r.mu.Lock()
			r.secrets = append(r.secrets, bs...)
			r.mu.Unlock()
			continue
		}
		*w = &redactor{w: *w, secrets: bs}
	}
}

// underlying returns the writer a redactor writes to, for telling whether
// the output is a terminal.
func underlying(w io.Writer) io.Writer {
	for {
		switch x := w.(type) {
		case *redactor:
			w = x.w
		case *sanitizer:
			w = x.w
		default:
			return w
		}
	}
}
