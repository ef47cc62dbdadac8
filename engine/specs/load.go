package specs

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strconv"
	"unicode"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/reconcile-dev/reconcile/engine/diag"
	"github.com/reconcile-dev/reconcile/engine/value"
	"github.com/reconcile-dev/reconcile/internal/boundedfile"
	"github.com/reconcile-dev/reconcile/internal/intern"
	"github.com/reconcile-dev/reconcile/resources"
	"github.com/reconcile-dev/reconcile/schemas"
)

// Limits that keep hostile input within bounded time and memory.
const (
	maxNodes = 1_000_000 // YAML nodes visited per file, aliases expanded
	maxDepth = 64        // nesting of YAML collections
)

// projectKeys are top-level keys of a Pulumi project file that reconcile
// accepts and ignores.
var projectKeys = map[string]bool{"name": true, "runtime": true, "description": true, "pulumi": true,
	"main": true, "backend": true, "stackConfigDir": true, "options": true, "template": true, "plugins": true, "packages": true}

// releaseYAML lets the loader free the YAML tree of a section's entries as
// it loads them (see loadDocument); tests turn it off to compare.
var releaseYAML = true

// BuiltinRoot is the reserved name of Pulumi's built-in variables.
const BuiltinRoot = "pulumi"

type loader struct {
	opts  LoadOptions
	diags diag.Diagnostics
	file  string
	// configOnly is set while loading a Source that is ConfigOnly.
	configOnly bool
	lines      lineIndex // of the file being loaded, for positions inside scalars
	nodes      int
	spec       *Spec
	where      map[string]diag.Pos // every declared name, for duplicate checks
	// broken names were declared but could not be loaded (an error has been
	// reported): references to them are not checked further.
	broken map[string]bool
	// checked is set when the specs' Hash is LoadOptions.Checked.
	checked bool
	// name is the project's name a spec document gives (name:), at
	// nameAt; "" when none does.
	name   string
	nameAt diag.Pos
	// aliased is set while loading a document that holds an anchor or an
	// alias: no entry of it is cut out (see cutEnd).
	aliased bool
	// entry is the index in its mapping of the key eachKeyReleasing passes
	// to its callback, read by the callback before anything else.
	entry int
	// partial is set when part of the input could not be read at all, so
	// that names it may have declared are unknown: unknown references are
	// then not reported, since they would only repeat that error.
	partial bool
	// chunkNext is, while a chunk of a file's resources is loaded (see
	// loadChunks), the line of the first entry of the next chunk; 0 when
	// none follows.
	chunkNext int32
	// rechunk is set when a chunk did not parse: Load starts again,
	// every file parsed whole.
	rechunk bool
	// strs makes the keys and literal strings the Spec keeps, so that the
	// many equal ones of a large spec share their memory (and the YAML
	// tree's can be let go).
	strs *intern.Table
}

func (l *loader) errorf(pos diag.Pos, format string, args ...any) *diag.Diagnostic {
	l.diags = append(l.diags, diag.Errorf(pos, format, args...))
	return &l.diags[len(l.diags)-1]
}

func (l *loader) warnf(pos diag.Pos, format string, args ...any) {
	d := diag.Errorf(pos, format, args...)
	d.Severity = diag.Warning
	l.diags = append(l.diags, d)
}

func (l *loader) pos(n *yaml.Node) diag.Pos {
	if last := l.lines.count(); n.Line > last && last > 0 {
		// An empty node at the end of the stream is placed on the line
		// after the last: report the end of the last line instead.
		return diag.At(l.file, last, utf8.RuneCountInString(l.lines.line(last))+1)
	}
	return diag.At(l.file, n.Line, n.Column)
}

// Load parses, merges and checks spec sources. dir is the project directory.
// overrides are --config values as given on the command line. It reports
// every problem found; the Spec is nil when any is an error.
func Load(dir string, srcs []Source, overrides map[string]string) (*Spec, diag.Diagnostics) {
	return LoadWith(dir, srcs, overrides, LoadOptions{})
}

// LoadOptions change what Load accepts.
type LoadOptions struct {
	// Project and Stack are what ${pulumi.project} and ${pulumi.stack}
	// read; an empty Project is the name: a spec document gives (a
	// program that is its own project file), else the project
	// directory's name, an empty Stack "default".
	Project, Stack string
	// RootDir is the project's directory when the program's (dir) is
	// another, inside it (Pulumi.yaml's main:); "" when they are one.
	RootDir string
	// StackConfig holds the config values the stack's settings give
	// (Pulumi.<stack>.yaml), by config name; a key "NS:name" is the
	// setting name of the project named NS, for a caller that does not
	// know the project's name (the specs may give it), and is left out
	// when NS is another. A value overrides the
	// declaration's default and is overridden by --config; a name the
	// specs do not declare is declared by it, untyped, when some
	// expression refers to it, and is an error at its Pos otherwise.
	StackConfig map[string]StackValue
	// UnsetConfigUnknown takes a config entry that has neither a value nor
	// a default as Unknown instead of an error, for commands that never
	// evaluate the specs' inputs (destroy, drift): they must not demand
	// values, secrets least of all, that they do not use.
	UnsetConfigUnknown bool
	// Skip names, by source, the lines of resources to leave out, as
	// Spec.Cuts gave them when the same sources were loaded before: a
	// source whose bytes are no longer those is loaded whole. The Spec is
	// then Partial.
	Skip []FileCuts
	// Checked is the Hash of specs known to be valid under the schemas
	// of this build (schemas.Digest), as those a signed plan file made
	// with these schemas was made from: when the specs loaded have this
	// Hash, the literal values of resources and lookups are taken as valid
	// without validating them again. Everything else is checked as always.
	Checked string
	// Checkers are the drivers' checks of inputs their API would refuse
	// (resources.InputChecker), by type token: Load gives each the inputs
	// of the resources of its type as far as the specs alone give them
	// (literals, config values, the project and stack names) and reports
	// what it finds at the inputs' places. Nil checks nothing.
	Checkers map[string]resources.InputChecker
	// whole parses every file in one piece, not in chunks (see
	// loadChunks); chunkMin and chunkEntries, when not 0, replace
	// defaultChunkMin and defaultChunkEntries.
	whole                  bool
	chunkMin, chunkEntries int
	// unfolded leaves literal lists and objects as they were parsed, not
	// folded into Consts.
	unfolded bool
}

// StackValue is a config value from a stack's settings.
type StackValue struct {
	Value any // JSON-shaped
	// Secret is set for a value the settings gave encrypted: it is
	// secret whatever the declaration says.
	Secret bool
	// Pos is where the settings give it.
	Pos diag.Pos
	// Key is the key as the settings write it, such as "acme:region";
	// "" for the config name itself.
	Key string
}

// LoadWith is Load with options.
func LoadWith(dir string, srcs []Source, overrides map[string]string, opts LoadOptions) (*Spec, diag.Diagnostics) {
	l := &loader{
		opts: opts,
		spec: &Spec{
			Dir:       dir,
			RootDir:   cmp.Or(opts.RootDir, dir),
			Project:   opts.Project,
			Stack:     opts.Stack,
			Config:    map[string]*ConfigDecl{},
			Variables: map[string]*Variable{},
			Resources: map[string]*Resource{},
			Outputs:   map[string]*Output{},
			digests:   make(map[string]string, len(srcs)),
		},
		where:  map[string]diag.Pos{},
		broken: map[string]bool{},
		strs:   intern.New(),
	}
	h := sha256.New()
	sorted := append([]Source(nil), srcs...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	for _, src := range sorted {
		// The base name, not the path: a plan made from "-f specs" must
		// match the same files read later through an absolute path.
		fmt.Fprintf(h, "%s\x00%d\x00", filepath.Base(src.Name), len(src.Data))
		h.Write(src.Data)
		l.loadFile(src)
		if l.rechunk {
			opts.whole = true
			return LoadWith(dir, srcs, overrides, opts)
		}
	}
	if len(srcs) == 0 {
		l.errorf(diag.Pos{}, "no spec files found").Detail = "pass -f FILE or -f DIR, or run in a directory holding *.yaml specs"
	}
	l.projectName()
	if l.spec.Stack == "" {
		l.spec.Stack = "default"
	}
	l.opts.StackConfig = l.foldStackConfig()
	l.resolveConfig(overrides)
	keys := make([]string, 0, len(l.spec.Values))
	for k := range l.spec.Values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(h, "config\x00%s\x00%s\x00", k, value.CanonicalJSON(l.spec.Values[k]))
	}
	// The project and stack as given: a project named after its directory
	// must not change the digest when the specs are read from elsewhere.
	fmt.Fprintf(h, "project\x00%s\x00stack\x00%s\x00", opts.Project, opts.Stack)
	l.spec.Hash = hex.EncodeToString(h.Sum(nil))
	l.checked = opts.Checked != "" && opts.Checked == l.spec.Hash && !l.diags.HasErrors()
	l.check()
	ds := l.diags.Sort()
	if ds.HasErrors() {
		return nil, ds
	}
	if !opts.unfolded {
		l.foldInputs()
	}
	return l.spec, ds
}

func (l *loader) loadFile(src Source) {
	l.file = src.Name
	l.configOnly = src.ConfigOnly
	l.nodes = 0
	l.lines = lineIndex{}
	if len(src.Data) > boundedfile.DefaultLimit {
		l.errorf(diag.Pos{File: src.Name, Line: 1, Col: 1}, "file is %d bytes, over the limit of %d", len(src.Data), boundedfile.DefaultLimit).Detail = "split the spec over several files of a directory"
		l.partial = true
		return
	}
	data := src.Data
	if cut := l.skip(src); cut != nil {
		data = cut
	}
	l.lines = indexLines(data)
	if !l.opts.whole {
		if c, ok := planChunks(data, l.lines, cmp.Or(l.opts.chunkMin, defaultChunkMin), cmp.Or(l.opts.chunkEntries, defaultChunkEntries)); ok {
			l.rechunk = !l.loadChunks(data, l.lines, c)
			return
		}
	}
	docs, err := parseDocuments(data)
	if err != nil {
		l.yamlError(err, data)
		l.partial = true
		return
	}
	// Every document of a file is read, as the files of a directory are:
	// one namespace, a name declared twice is an error naming both places.
	for _, root := range docs {
		l.loadDocument(root)
	}
}

// parseDocuments parses every YAML document of src and returns the root
// node of each that is not empty.
func parseDocuments(src []byte) ([]*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(src))
	var roots []*yaml.Node
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return roots, nil
		}
		if err != nil {
			return nil, err
		}
		if doc.Kind == 0 || len(doc.Content) == 0 {
			continue
		}
		root := doc.Content[0]
		if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
			continue // an empty document declares nothing
		}
		roots = append(roots, root)
	}
}

// loadDocument loads the top-level mapping of one YAML document.
func (l *loader) loadDocument(root *yaml.Node) {
	if root.Kind != yaml.MappingNode {
		l.errorf(l.pos(root), "a spec document must be a mapping with keys such as resources, variables, outputs; got %s", kindName(root))
		l.partial = true
		return
	}
	l.aliased = false
	if !l.budget(root, 0) {
		l.partial = true
		return
	}
	l.loadSections(root)
}

// loadSections loads the sections of root, a document's top-level
// mapping whose nodes the budget has counted.
func (l *loader) loadSections(root *yaml.Node) {
	top := schemas.Document().Root
	// The entries of a section are let go once loaded, so that the YAML
	// tree of a large spec is freed while the Spec is built, when nothing
	// else can reach them: an alias reaches only a node with an anchor.
	release := releaseYAML && root.Anchor == ""
	l.eachKey(root, func(k, v *yaml.Node) {
		if l.configOnly && (k.Value == "variables" || k.Value == "resources" || k.Value == "outputs") {
			l.errorf(l.pos(k), "%s in the project file are not part of the program: main: puts the program in another directory", k.Value).Detail =
				"move them to the program's files in the directory main: names; Pulumi reads only the project's settings and config here"
			if v.Kind == yaml.MappingNode {
				for i := 0; i < len(v.Content); i += 2 {
					l.broken[v.Content[i].Value] = true
				}
			}
			return
		}
		switch k.Value {
		case "config", "configuration":
			if k.Value == "configuration" {
				l.warnf(l.pos(k), `"configuration" is deprecated; use "config"`)
			}
			l.loadConfig(v, release)
		case "variables":
			l.section(v)
			l.forSection(v, "variables", release, func(nk, nv *yaml.Node) {
				if !l.declare(nk) {
					return
				}
				l.spec.Variables[nk.Value] = &Variable{Name: nk.Value, Pos: l.pos(nk), Expr: l.expr(nv, nil)}
			})
		case "resources":
			l.section(v)
			l.forSection(v, "resources", release, func(nk, nv *yaml.Node) {
				end := l.cutEnd(v, l.entry)
				if !l.declare(nk) {
					return
				}
				if r := l.loadResource(nk, nv); r != nil {
					r.cutEnd = end
					l.spec.Resources[r.Name] = r
				} else {
					l.broken[nk.Value] = true
				}
			})
		case "outputs":
			l.forSection(v, "outputs", release, func(nk, nv *yaml.Node) {
				if !l.printableName(nk) {
					return
				}
				if o, dup := l.spec.Outputs[nk.Value]; dup {
					l.errorf(l.pos(nk), "output %q is declared twice", nk.Value).Detail = "also declared at " + o.Pos.String()
					return
				}
				l.spec.Outputs[nk.Value] = &Output{Name: nk.Value, Pos: l.pos(nk), Expr: l.expr(nv, nil)}
			})
		case "name":
			l.declareName(k, v)
		default:
			if projectKeys[k.Value] {
				return
			}
			names := make([]string, 0, len(top.Properties))
			for n := range top.Properties {
				names = append(names, n)
			}
			l.errorf(l.pos(k), "unknown top-level key %q%s", k.Value, diag.DidYouMean(k.Value, names)).Detail = diag.ValidList("keys", names)
			// A misspelt section such as "resource:" declares nothing, but
			// references to its entries are not worth a report each.
			if v.Kind == yaml.MappingNode {
				for i := 0; i < len(v.Content); i += 2 {
					l.broken[v.Content[i].Value] = true
				}
			}
		}
	})
}

// section notes a config, variables or resources section that is not a
// mapping: the names it was meant to declare are unknown.
func (l *loader) section(n *yaml.Node) {
	if n = deref(n); n.Kind != yaml.MappingNode && !(n.Kind == yaml.ScalarNode && n.Tag == "!!null") {
		l.partial = true
	}
}

// eachKey calls fn for each key of a mapping, reporting duplicate keys.
func (l *loader) eachKey(m *yaml.Node, fn func(k, v *yaml.Node)) {
	l.eachKeyReleasing(m, false, fn)
}

// eachKeyReleasing is eachKey that, with release, lets go of each value
// of m once fn returns, unless m has an anchor: the caller knows that
// nothing but m can reach its values then.
func (l *loader) eachKeyReleasing(m *yaml.Node, release bool, fn func(k, v *yaml.Node)) {
	m = deref(m)
	release = release && m.Anchor == ""
	seen := map[string]*yaml.Node{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], deref(m.Content[i+1])
		if k.Kind != yaml.ScalarNode {
			l.errorf(l.pos(k), "mapping keys must be strings")
			continue
		}
		if k.Value == "<<" {
			l.errorf(l.pos(k), "YAML merge keys (<<) are not supported")
			continue
		}
		if prev, dup := seen[k.Value]; dup {
			l.errorf(l.pos(k), "key %q appears twice in one mapping", k.Value).Detail = fmt.Sprintf("first at %s", l.pos(prev))
			continue
		}
		seen[k.Value] = k
		l.entry = i
		fn(k, v)
		if release {
			m.Content[i+1] = nil
		}
	}
}

// forMap checks that n is a mapping (an empty value is allowed) and calls fn
// for each entry.
func (l *loader) forMap(n *yaml.Node, what string, fn func(k, v *yaml.Node)) {
	l.forSection(n, what, false, fn)
}

// forSection is forMap for a top-level section of a document: with
// release, when no alias can reach the document's root, it lets go of each
// entry once loaded (see eachKeyReleasing).
func (l *loader) forSection(n *yaml.Node, what string, release bool, fn func(k, v *yaml.Node)) {
	n = deref(n)
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return
	}
	if n.Kind != yaml.MappingNode {
		l.errorf(l.pos(n), "%s must be a mapping, got %s", what, kindName(n))
		return
	}
	l.eachKeyReleasing(n, release, fn)
}

// declare records a name of the shared namespace (config, variables,
// resources) and reports a duplicate.
func (l *loader) declare(k *yaml.Node) bool {
	name := k.Value
	if !l.printableName(k) {
		return false
	}
	if name == BuiltinRoot {
		l.errorf(l.pos(k), "%q is a reserved name", name)
		return false
	}
	if prev, dup := l.where[name]; dup {
		l.errorf(l.pos(k), "%q is declared twice", name).Detail = fmt.Sprintf("also declared at %s; config, variables and resources share one namespace", prev)
		return false
	}
	l.where[name] = l.pos(k)
	return true
}

// printableName refuses a name holding a character that could rewrite what
// a terminal or log shows (a carriage return, an escape, a bidirectional
// override) or that is not UTF-8: names are printed in plans, progress
// lines and state listings, and the specs may come from anyone who can
// open a pull request.
func (l *loader) printableName(k *yaml.Node) bool {
	for i, r := range k.Value {
		if r == utf8.RuneError || unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp, unicode.Co, unicode.Cs) {
			l.errorf(l.pos(k), "name %s holds the character U+%04X at byte %d, which names may not hold", strconv.QuoteToASCII(k.Value), r, i).Detail =
				"control and formatting characters could rewrite what a terminal or log shows; use letters, digits, '-' and '_'"
			return false
		}
	}
	return true
}
