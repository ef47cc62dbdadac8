package main

import (
	"bytes"
	"testing"
)

func TestSanitizer(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		writes []string
		sgr    bool
		want   string
	}{
		"plain text passes":            {writes: []string{"a: Creating...\n\tok ü €\n"}, want: "a: Creating...\n\tok ü €\n"},
		"carriage return":              {writes: []string{"x\rApply complete!"}, want: `x\u000dApply complete!`},
		"escape without colour":        {writes: []string{"\x1b[2J\x1b[31mred"}, want: `\u001b[2J\u001b[31mred`},
		"colour passes with sgr":       {writes: []string{"\x1b[1m\x1b[31mred\x1b[0m"}, sgr: true, want: "\x1b[1m\x1b[31mred\x1b[0m"},
		"other sequences with sgr":     {writes: []string{"\x1b[2J\x1b]0;title\x07"}, sgr: true, want: `\u001b[2J\u001b]0;title\u0007`},
		"bidi override":                {writes: []string{"txt\u202eexe"}, want: `txt\u202eexe`},
		"line separator":               {writes: []string{"a\u2028b"}, want: `a\u2028b`},
		"C1 control":                   {writes: []string{"a\u0085b"}, want: `a\u0085b`},
		"invalid UTF-8":                {writes: []string{"a\xffb"}, want: `a\ufffdb`},
		"rune split across writes":     {writes: []string{"caf\xc3", "\xa9!"}, want: "café!"},
		"sequence split across writes": {writes: []string{"\x1b[3", "1mx"}, sgr: true, want: "\x1b[31mx"},
		"incomplete at the end":        {writes: []string{"ok\xe2\x82"}, want: `ok\u00e2\u0082`},
	} {
		t.Run(name, func(t *testing.T) {
			var b bytes.Buffer
			s := &sanitizer{w: &b, sgr: tc.sgr}
			for _, w := range tc.writes {
				if n, err := s.Write([]byte(w)); err != nil || n != len(w) {
					t.Fatalf("Write(%q) = %d, %v", w, n, err)
				}
			}
			s.flush()
			if b.String() != tc.want {
				t.Errorf("wrote %q, got %q, want %q", tc.writes, b.String(), tc.want)
			}
		})
	}
}
