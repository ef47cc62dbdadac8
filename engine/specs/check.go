package specs

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/reconcile-dev/reconcile/engine/diag"
	"github.com/reconcile-dev/reconcile/schemas"
)

// check resolves references, validates inputs against the schemas and builds
// the dependency graph, reporting every problem.
func (l *loader) check() {
	s := l.spec
	for _, name := range sortedKeys(s.Variables) {
		v := s.Variables[name]
		l.checkRefs(v.Expr, name)
		l.checkInvokes(v.Expr)
	}
	for _, name := range sortedKeys(s.Resources) {
		r := s.Resources[name]
		if r.Properties != nil {
			l.checkRefs(r.Properties, name)
			l.checkInvokes(r.Properties)
			l.validateStatic(r.Schema, r.Properties, fmt.Sprintf("%s %q", r.Type, r.Name))
		}
		if r.PropertiesExpr != nil {
			// Validated against the schema once evaluated.
			l.checkRefs(r.PropertiesExpr, name)
			l.checkInvokes(r.PropertiesExpr)
		}
		if r.Get != nil {
			if r.Get.ID != nil {
				l.checkRefs(r.Get.ID, name)
			}
			if r.Get.State != nil {
				l.checkRefs(r.Get.State, name)
				for _, e := range r.Get.State.Entries {
					if _, ok := r.Schema.Root.Properties[e.Key]; !ok {
						l.errorf(e.KeyPos, "unknown field %q on %s%s", e.Raw, r.Type, diag.DidYouMean(e.Key, r.Schema.Outputs())).Detail = diag.ValidList("fields", r.Schema.Outputs())
					}
				}
			}
		}
		for _, e := range []Expr{r.Options.Protect, r.Options.DeleteBeforeReplace, r.Options.RetainOnDelete} {
			if e != nil {
				l.checkRefs(e, name)
			}
		}
		if pr := r.Options.Parent; pr != nil && l.checkRef(pr, name) && !l.broken[pr.Root] {
			if _, ok := s.Resources[pr.Root]; !ok {
				l.errorf(pr.P, "parent %s must name a resource; %q is not one", pr, pr.Root)
			}
		}
		for _, d := range r.Options.DependsOn {
			if l.checkRef(d, name) && !l.broken[d.Root] {
				if _, ok := s.Resources[d.Root]; !ok {
					l.errorf(d.P, "dependsOn %s must name a resource; %q is not one", d, d.Root)
				}
			}
		}
	}
	for _, name := range sortedKeys(s.Outputs) {
		l.checkRefs(s.Outputs[name].Expr, "")
		l.checkInvokes(s.Outputs[name].Expr)
	}
	l.checkIAMConflicts()
	l.checkInputs()
	// Cycles are looked for even when other errors were found, so that all
	// are reported at once; names that failed to load are not in the graph.
	g := buildGraph(s)
	for _, cyc := range g.Cycles() {
		first := cyc[0]
		parts := make([]string, 0, len(cyc)+1)
		var where []string
		for _, n := range cyc {
			parts = append(parts, n)
			where = append(where, fmt.Sprintf("%s is declared at %s", n, s.DeclaredAt(n)))
		}
		parts = append(parts, first)
		l.errorf(s.DeclaredAt(first), "dependency cycle: %s", strings.Join(parts, " -> ")).Detail = strings.Join(where, "\n") + "\nbreak the cycle by removing one of these references"
	}
	s.graph = g
}

// checkRefs checks every reference in e.
func (l *loader) checkRefs(e Expr, self string) {
	refs(e, func(r *Ref) { l.checkRef(r, self) })
}

// checkRef checks that a reference names something declared and, for
// resources and lookups, a field it has. It canonicalises the first field
// name to lowerCamelCase. It reports whether the root exists.
func (l *loader) checkRef(r *Ref, self string) bool {
	s := l.spec
	if r.Root == BuiltinRoot {
		if len(r.Path) != 1 || r.Path[0].IsIndex || !builtinVars[r.Path[0].Key] {
			l.errorf(r.P, "unknown built-in %s", r).Detail = "valid: ${pulumi.stack}, ${pulumi.project}, ${pulumi.organization}, ${pulumi.cwd}, ${pulumi.rootDirectory}"
		}
		return true
	}
	if key, ok := strings.CutPrefix(r.Root, s.Project+":"); ok && s.Config[key] != nil {
		// ${project:key} reads the project's config key, as in Pulumi.
		r.Root = key
	}
	_, isConfig := s.Config[r.Root]
	v, isVar := s.Variables[r.Root]
	res, isRes := s.Resources[r.Root]
	if l.broken[r.Root] {
		return true // its own error has been reported
	}
	if !isConfig && !isVar && !isRes {
		if l.partial {
			return false // it may be declared in what could not be read
		}
		var names []string
		for _, m := range []map[string]diag.Pos{l.where} {
			for n := range m {
				names = append(names, n)
			}
		}
		sort.Strings(names)
		d := l.errorf(r.P, "unknown reference %s: nothing named %q is declared%s", r, r.Root, diag.DidYouMean(r.Root, names))
		if ns, key, ok := strings.Cut(r.Root, ":"); ok && ns != s.Project {
			d.Detail = fmt.Sprintf("${%s:%s} reads config of the project %q; this project is %q (its name:, else its directory's name), so its config %q is ${%s} or ${%s:%s}",
				ns, key, ns, s.Project, key, key, s.Project, key)
		}
		return false
	}
	if len(r.Path) == 0 || r.Path[0].IsIndex {
		return true
	}
	// The schema whose fields the reference reads, and how to name its
	// owner in a message.
	var fs *schemas.Schema
	var owner func() string
	switch {
	case isRes:
		fs, owner = res.Schema, func() string { return fmt.Sprintf("resource %q (%s)", res.Name, res.Type) }
	case isVar:
		if inv, ok := v.Expr.(*Invoke); ok && inv.Return == "" && inv.Function != "" {
			fs, _ = schemas.Lookup(inv.Function)
			owner = func() string { return fmt.Sprintf("lookup %q (%s)", v.Name, inv.Function) }
		}
	}
	if fs == nil {
		return true
	}
	key := r.Path[0].Key
	canon := snakeToCamel(key)
	if _, ok := fs.Root.Properties[canon]; ok { // every field is an output
		r.Path[0].Key = canon
		return true
	}
	if isRes && key == URNField {
		return true
	}
	fields := fs.Outputs()
	l.errorf(r.P, "%s has no field %q%s", owner(), key, diag.DidYouMean(canon, fields)).Detail = diag.ValidList("fields", fields)
	return true
}

var builtinVars = map[string]bool{"stack": true, "project": true, "organization": true, "cwd": true, "rootDirectory": true}

// checkInvokes validates the literal arguments of every fn::invoke in e.
func (l *loader) checkInvokes(e Expr) {
	var walk func(Expr)
	walk = func(e Expr) {
		switch x := e.(type) {
		case *Invoke:
			if s, ok := schemas.Lookup(x.Function); ok && x.Args != nil {
				l.validateStatic(s, x.Args, "fn::invoke "+s.Token)
			}
			if x.Args != nil {
				walk(x.Args)
			}
		case *List:
			for _, it := range x.Items {
				walk(it)
			}
		case *Object:
			for _, en := range x.Entries {
				walk(en.Value)
			}
		case *Call:
			if ref, ok := x.Arg.(*Ref); ok && (x.Name == "pulumiResourceName" || x.Name == "pulumiResourceType") && !l.broken[ref.Root] {
				if _, isRes := l.spec.Resources[ref.Root]; !isRes && l.declaredName(ref.Root) {
					l.errorf(ref.P, "fn::%s takes a resource; %q is not one", x.Name, ref.Root)
				}
			}
			walk(x.Arg)
		}
	}
	walk(e)
}

// declaredName reports whether name is a config entry or a variable: the
// names that are declared but are not resources.
func (l *loader) declaredName(name string) bool {
	_, isConfig := l.spec.Config[name]
	_, isVar := l.spec.Variables[name]
	return isConfig || isVar
}

// validateStatic validates the literal parts of obj against a schema. Values
// computed from expressions are checked at plan time, when they are known
// (ValueViolations); obj remembers that its literals fit s.
func (l *loader) validateStatic(s *schemas.Schema, obj *Object, what string) {
	if l.checked {
		obj.validated = s
		return
	}
	l.checkTypes(s.Root, obj, nil)
	if s.AcceptsTree((*objectTree)(obj)) {
		// Validate would find nothing but the values left to plan time
		// missing, which are not reported.
		obj.validated = s
		return
	}
	inst, dyn := staticValue(obj)
	m, _ := inst.(map[string]any)
	ds := Violations(s, obj, m, dyn, what)
	if len(ds) == 0 {
		obj.validated = s
	}
	l.diags = append(l.diags, ds...)
}

// Violations validates inst, the value of obj, against s and returns the
// violations as diagnostics at the positions of the expressions that gave
// the values. dyn holds the paths (joined by "/") of the values not known:
// left out of inst, or null in a list; nothing is reported at them, nor
// missing below them. what names the object in messages of missing
// fields, such as `oci:AiLanguage:Endpoint "api"`.
func Violations(s *schemas.Schema, obj *Object, inst map[string]any, dyn map[string]bool, what string) diag.Diagnostics {
	return diagnose(s, obj, s.Validate(inst), dyn, what)
}

// diagnose turns violations of s into diagnostics; see Violations.
func diagnose(s *schemas.Schema, obj Expr, vs []schemas.Violation, dyn map[string]bool, what string) diag.Diagnostics {
	var out diag.Diagnostics
	// A misspelt field is reported as unknown; the required field it was
	// meant to be is then not reported missing as well.
	meant := map[string]bool{}
	for _, v := range vs {
		if v.Kind == schemas.Unknown {
			parent := v.Path[:len(v.Path)-1]
			if m := diag.Suggest(v.Path[len(v.Path)-1], fieldNames(s.Root, parent)); m != "" {
				meant[strings.Join(append(parent[:len(parent):len(parent)], m), "/")] = true
			}
		}
	}
	for _, v := range vs {
		key := strings.Join(v.Path, "/")
		if dyn[key] {
			continue
		}
		switch v.Kind {
		case schemas.Missing:
			parent := v.Path[:len(v.Path)-1]
			if dyn[strings.Join(parent, "/")] || meant[key] {
				continue
			}
			pos, _ := exprPos(obj, parent)
			out = append(out, diag.Errorf(pos, "%s: %s", what, v.Message))
		case schemas.Unknown:
			field := v.Path[len(v.Path)-1]
			pos, raw := exprKeyPos(obj, v.Path)
			if raw == "" {
				raw = field
			}
			siblings := fieldNames(s.Root, v.Path[:len(v.Path)-1])
			d := diag.Errorf(pos, "unknown field %q on %s%s", raw, s.Token, diag.DidYouMean(field, siblings))
			d.Detail = diag.ValidList("fields", siblings)
			out = append(out, d)
		case schemas.OutputOnly:
			pos, _ := exprKeyPos(obj, v.Path)
			out = append(out, diag.Errorf(pos, "field %q of %s is an output and cannot be set", strings.Join(v.Path, "."), s.Token))
		default:
			pos, _ := exprPos(obj, v.Path)
			if v.Kind == schemas.TypeMismatch {
				// A block list or mapping starts on the line after its
				// key: point at the key, which the message names.
				if e, ok := exprAt(obj, v.Path); ok && isCollection(e) {
					if kp, raw := exprKeyPos(obj, v.Path); raw != "" {
						pos = kp
					}
				}
			}
			out = append(out, diag.Errorf(pos, "field %q: %s", displayPath(v.Path), v.Message))
		}
	}
	return out
}

// fieldNames lists the input names of the object schema at path.
func fieldNames(root *schemas.Prop, path []string) []string {
	p := root
	for _, seg := range path {
		if p == nil {
			return nil
		}
		if _, err := strconv.Atoi(seg); err == nil && p.Items != nil {
			p = p.Items
			continue
		}
		if q, ok := p.Properties[seg]; ok {
			p = q
		} else {
			p = p.AdditionalProperties
		}
	}
	if p == nil {
		return nil
	}
	var out []string
	for k, q := range p.Properties {
		if !q.ReadOnly {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

func displayPath(path []string) string {
	var b strings.Builder
	for i, seg := range path {
		if _, err := strconv.Atoi(seg); err == nil {
			b.WriteString("[" + seg + "]")
			continue
		}
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(seg)
	}
	return b.String()
}

// staticValue converts the literal parts of an expression to a value. It
// leaves out values that need evaluation and returns their paths.
func staticValue(e Expr) (any, map[string]bool) {
	dyn := map[string]bool{}
	var walk func(e Expr, path []string) (any, bool)
	walk = func(e Expr, path []string) (any, bool) {
		switch x := e.(type) {
		case *Lit:
			return x.Value, true
		case *List:
			out := make([]any, 0, len(x.Items))
			for i, it := range x.Items {
				v, ok := walk(it, append(path, strconv.Itoa(i)))
				if !ok {
					// keep the index stable: a dynamic item is a placeholder
					// that only type checks at plan time.
					dyn[strings.Join(append(path, strconv.Itoa(i)), "/")] = true
					v = dynamicPlaceholder{}
				}
				out = append(out, v)
			}
			return out, true
		case *Object:
			out := map[string]any{}
			for _, en := range x.Entries {
				if v, ok := walk(en.Value, append(path, en.Key)); ok {
					out[en.Key] = v
				} else {
					dyn[strings.Join(append(path, en.Key), "/")] = true
				}
			}
			return out, true
		}
		return nil, false
	}
	v, ok := walk(e, nil)
	if !ok {
		dyn[""] = true
	}
	return stripPlaceholders(v), dyn
}

type dynamicPlaceholder struct{}

// The literal parts of an expression as a schemas.Tree, read where they
// lie: AcceptsTree checks them without building their value. Any other
// expression is a value not known yet.
type (
	litTree    Lit
	listTree   List
	objectTree Object
)

// treeOf returns e as a schemas.Tree; nil when e needs evaluation.
func treeOf(e Expr) schemas.Tree {
	switch x := e.(type) {
	case *Lit:
		return (*litTree)(x)
	case *List:
		return (*listTree)(x)
	case *Object:
		return (*objectTree)(x)
	}
	return nil
}

func (t *litTree) Shape() (schemas.TreeKind, any, int) { return schemas.TreeScalar, t.Value, 0 }
func (t *litTree) Child(int) (string, schemas.Tree)    { return "", nil }

func (t *listTree) Shape() (schemas.TreeKind, any, int) { return schemas.TreeList, nil, len(t.Items) }
func (t *listTree) Child(i int) (string, schemas.Tree)  { return "", treeOf(t.Items[i]) }

func (t *objectTree) Shape() (schemas.TreeKind, any, int) {
	return schemas.TreeObject, nil, len(t.Entries)
}
func (t *objectTree) Child(i int) (string, schemas.Tree) {
	return t.Entries[i].Key, treeOf(t.Entries[i].Value)
}

// stripPlaceholders replaces list placeholders by nil so that the schema
// library sees JSON values; the violations at their paths are ignored.
func stripPlaceholders(v any) any {
	switch x := v.(type) {
	case []any:
		for i, e := range x {
			x[i] = stripPlaceholders(e)
		}
	case map[string]any:
		for k, e := range x {
			x[k] = stripPlaceholders(e)
		}
	case dynamicPlaceholder:
		return nil
	}
	return v
}

// descend follows path from e through objects (by key) and lists (by
// index), and returns the deepest expression reached and how many segments
// of path led to it. It is the one walk of a spec expression by path.
func descend(e Expr, path []string) (Expr, int) {
	for n, seg := range path {
		var next Expr
		switch x := e.(type) {
		case *Object:
			if en := x.Get(seg); en != nil {
				next = en.Value
			}
		case *List:
			if i, err := strconv.Atoi(seg); err == nil && i >= 0 && i < len(x.Items) {
				next = x.Items[i]
			}
		}
		if next == nil {
			return e, n
		}
		e = next
	}
	return e, len(path)
}

// InputPos returns the position in the specs of the input at path (field
// names and list indexes) inside inputs, a resource's inputs expression:
// where the value at path is written, or, when an expression computes
// part of the path (a reference, a function), where that expression is.
func InputPos(inputs Expr, path []string) diag.Pos {
	pos, _ := exprPos(inputs, path)
	return pos
}

// exprPos returns the position of the expression at path inside e, or of
// the deepest expression on the way.
func exprPos(e Expr, path []string) (diag.Pos, bool) {
	d, n := descend(e, path)
	return d.Pos(), n == len(path)
}

// exprAt returns the expression at path inside e.
func exprAt(e Expr, path []string) (Expr, bool) {
	d, n := descend(e, path)
	if n < len(path) {
		return nil, false
	}
	return d, true
}

func isCollection(e Expr) bool {
	switch e.(type) {
	case *List, *Object, *Const:
		return true
	}
	return false
}

// exprKeyPos returns the position of the key at the end of path and its
// spelling as written.
func exprKeyPos(e Expr, path []string) (diag.Pos, string) {
	if len(path) == 0 {
		return e.Pos(), ""
	}
	parent, n := descend(e, path[:len(path)-1])
	if o, ok := parent.(*Object); ok && n == len(path)-1 {
		if en := o.Get(path[len(path)-1]); en != nil {
			return en.KeyPos, en.Raw
		}
	}
	return parent.Pos(), ""
}
