package untrusted

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, text, quoted string }{
		{"", "", `""`},
		{"dashboard:c-1", "dashboard:c-1", `"dashboard:c-1"`},
		{`a"b\c`, `a"b\c`, `"a\"b\\c"`},
		{"line\nnext\r\tend", `line\nnext\r\tend`, `"line\nnext\r\tend"`},
		{"role:x\n::error::pwned\nNo changes.", `role:x\n::error::pwned\nNo changes.`, `"role:x\n::error::pwned\nNo changes."`},
		{"héllo wörld", "héllo wörld", `"héllo wörld"`},
		{"\x7f\x00", `\u007f\u0000`, `"\u007f\u0000"`},
		{"bad\xffbyte", `bad\ufffdbyte`, `"bad\ufffdbyte"`},
		{"rtl\u202eoverride", `rtl\u202eoverride`, `"rtl\u202eoverride"`},
		{"next line\u0085, separator\u2028, nbsp\u00a0", `next line\u0085, separator\u2028, nbsp\u00a0`, `"next line\u0085, separator\u2028, nbsp\u00a0"`},
		{"emoji 😀 and tag \U000e0041", `emoji 😀 and tag \udb40\udc41`, `"emoji 😀 and tag \udb40\udc41"`},
		{"ends in escape\n", `ends in escape\n`, `"ends in escape\n"`},
	} {
		if got := Text(tc.in); got != tc.text {
			t.Errorf("Text(%q) = %s, want %s", tc.in, got, tc.text)
		}
		if got := Quote(tc.in); got != tc.quoted {
			t.Errorf("Quote(%q) = %s, want %s", tc.in, got, tc.quoted)
		}
	}
}

func TestName(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"sentiment":          "sentiment",
		"my-policy_2":        "my-policy_2",
		"a.b:c/d@e":          "a.b:c/d@e",
		"_private":           "_private",
		"9lives":             "9lives",
		"café":               "café",
		"a::error::x":        "a::error::x",
		"::error::pwned":     `"::error::pwned"`,
		"##vso[task.x]":      `"##vso[task.x]"`,
		"-dash":              `"-dash"`,
		" ::error::x":        `" ::error::x"`,
		"\u00a0::error::x":   `"\u00a0::error::x"`,
		"No changes.":        `"No changes."`,
		"two\nlines":         `"two\nlines"`,
		"":                   `""`,
		"quote\"d":           `"quote\"d"`,
		"\u0301combining":    "\"\u0301combining\"", // quoted, mark kept
		"e\u0301":            "e\u0301",
		"ok\u202eexe":        `"ok\u202eexe"`,
		"[0]":                `"[0]"`,
		"tab\there":          `"tab\there"`,
		"Plan: 1 to create.": `"Plan: 1 to create."`,
	} {
		if got := Name(in); got != want {
			t.Errorf("Name(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestPath(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"main.yaml":              "main.yaml",
		"specs/main.yaml":        "specs/main.yaml",
		"./main.yaml":            "./main.yaml",
		"../up/main.yaml":        "../up/main.yaml",
		"/abs/main.yaml":         "/abs/main.yaml",
		"_x.yaml":                "_x.yaml",
		"::error::x.yaml":        "./::error::x.yaml",
		"##vso[x].yaml":          "./##vso[x].yaml",
		" lead.yaml":             "./ lead.yaml",
		"dir/\n::error::x.yaml":  `dir/\n::error::x.yaml`,
		"\n::error::x.yaml":      `./\n::error::x.yaml`,
		"my file.yaml":           "my file.yaml",
		"":                       "",
		"\u202egnp.yaml":         `./\u202egnp.yaml`,
		"Pulumi.dev.yaml":        "Pulumi.dev.yaml",
		"dir\\::error::win.yaml": "dir\\::error::win.yaml",
	} {
		if got := Path(in); got != want {
			t.Errorf("Path(%q) = %s, want %s", in, got, want)
		}
	}
}

// leads reports what a CI system would take s, printed at the start of a
// line, to begin with: the text after leading white space (GitHub Actions
// trims it before it looks for "::").
func leads(s string) string {
	return strings.TrimLeftFunc(s, unicode.IsSpace)
}

// FuzzText checks what every function of the package promises, whatever
// the input: nothing that can end a line, move the cursor or reorder text
// comes out; the output is UTF-8; escaping twice is escaping once; a quoted
// string reads back as what was quoted; and a name or a path, put at the
// start of a line, cannot begin it with a CI system's command.
func FuzzText(f *testing.F) {
	for _, s := range []string{"role:x\n::error::pwned\nNo changes.", "::add-mask::x", "\u2028##vso[", "caf\xc3", "\x1b[31m\r", "\u00a0::x", "a\\nb"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		text, quoted, name, path := Text(s), Quote(s), Name(s), Path(s)
		for what, out := range map[string]string{"Text": text, "Quote": quoted, "Name": name, "Path": path} {
			if !utf8.ValidString(out) {
				t.Fatalf("%s(%q) = %q: not UTF-8", what, s, out)
			}
			for _, r := range out {
				if r < ' ' || r == 0x7f || unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp, unicode.Co, unicode.Cs) || unicode.IsSpace(r) && r != ' ' {
					t.Fatalf("%s(%q) = %q holds %U", what, s, out, r)
				}
			}
		}
		if again := Text(text); again != text {
			t.Fatalf("Text(%q) = %q, but Text of that is %q", s, text, again)
		}
		if utf8.ValidString(s) {
			var back string
			if err := json.Unmarshal([]byte(quoted), &back); err != nil || back != s {
				t.Fatalf("Quote(%q) = %s reads back as %q, %v", s, quoted, back, err)
			}
		}
		if name != s && !strings.HasPrefix(name, `"`) {
			t.Fatalf("Name(%q) = %q: changed but not quoted", s, name)
		}
		for what, out := range map[string]string{"Name": name, "Path": path} {
			lead := leads(out)
			if lead != "" && lead != out {
				t.Fatalf("%s(%q) = %q begins with white space", what, s, out)
			}
			starts := []string{"::", "##"}
			if what == "Name" {
				starts = append(starts, "No changes") // a name alone on a line
			}
			for _, cmd := range starts {
				if strings.HasPrefix(lead, cmd) {
					t.Fatalf("%s(%q) = %q begins with %q", what, s, out, cmd)
				}
			}
		}
	})
}
