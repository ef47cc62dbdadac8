package main

import (
	"bytes"
	"testing"
	"unicode/utf8"
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
		"control inside ASCII":         {writes: []string{"abc\x01def\n\x7f"}, want: "abc\\u0001def\n\\u007f"},
		"writes of each kind in turn":  {writes: []string{"long text with ü and \x01", "plain\n", "é\x02", "caf\xc3", "\xa9 ok"}, want: "long text with ü and \\u0001plain\né\\u0002café ok"},
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

// FuzzSanitizer checks that how the output is cut into writes changes
// nothing of what reaches the terminal, and that nothing but newline, tab
// and (with sgr) colour sequences escapes unescaped.
func FuzzSanitizer(f *testing.F) {
	f.Add([]byte("a: Creating...\n\x1b[31mred\x1b[0m caf\xc3\xa9 \u202e\r"), 7, true)
	f.Add([]byte("ok\xe2\x82\xac \x1b[3"), 3, false)
	f.Fuzz(func(t *testing.T, in []byte, cut int, sgr bool) {
		var whole, split bytes.Buffer
		s := &sanitizer{w: &whole, sgr: sgr}
		s.Write(in)
		s.flush()
		cut = min(max(cut, 0), len(in))
		s = &sanitizer{w: &split, sgr: sgr}
		s.Write(in[:cut])
		s.Write(in[cut:])
		s.flush()
		if whole.String() != split.String() {
			t.Fatalf("%q cut at %d: %q, whole %q", in, cut, split.String(), whole.String())
		}
		out := whole.Bytes()
		for i := 0; i < len(out); i++ {
			c := out[i]
			if c == 0x1b && sgr {
				if n, complete := sgrLen(out[i:]); n > 0 && complete {
					i += n - 1
					continue
				}
			}
			if c < ' ' && c != '\n' && c != '\t' || c == 0x7f {
				t.Fatalf("%q wrote control byte %#x: %q", in, c, out)
			}
		}
		if !utf8.Valid(out) {
			t.Fatalf("%q wrote invalid UTF-8: %q", in, out)
		}
	})
}
