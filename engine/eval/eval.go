package eval

import (
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/reconcile-dev/reconcile/engine/diag"
	"github.com/reconcile-dev/reconcile/engine/specs"
	"github.com/reconcile-dev/reconcile/engine/value"
	"github.com/reconcile-dev/reconcile/internal/boundedfile"
	"github.com/reconcile-dev/reconcile/schemas"

	"github.com/rivo/uniseg"
)

// Error is a problem found while evaluating an expression, at a position.
type Error struct {
	Pos diag.Pos
	Msg string
	// Err is the error Msg describes, if one did (a lookup's): errors.Is
	// and errors.As see it.
	Err error
}

func (e *Error) Error() string { return e.Pos.String() + ": " + e.Msg }

// Unwrap returns Err.
func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error at pos.
func Errorf(pos diag.Pos, format string, args ...any) error {
	return &Error{Pos: pos, Msg: fmt.Sprintf(format, args...)}
}

// Env resolves reference roots to values during evaluation.
type Env interface {
	Lookup(name string) (any, bool)
}

// Evaluator evaluates expressions of one spec.
type Evaluator struct {
	Spec *specs.Spec
	Env  Env
	// Invoke performs a lookup whose arguments are known; nil means lookups
	// are not performed and yield Unknown.
	Invoke func(inv *specs.Invoke, args map[string]any) (map[string]any, error)
	// sizes remembers the size of each list and map measured (by the
	// address of its contents), so that shared parts are measured once;
	// measured keeps them alive, so that no address is reused meanwhile.
	// The first is kept apart: most evaluations measure only one.
	first    sizeMemo
	sizes    map[uintptr]int64
	measured []any
}

// maxValueBytes bounds the size of every evaluated value, as its JSON text
// would be. Specs may come from anyone who can open a pull request: 30
// variables each doubling a string, or a list of two copies of the one
// before, would otherwise take gigabytes from a 1 KB spec.
const maxValueBytes = 16 << 20

// Eval evaluates e. Unknown values propagate; Secret marks propagate
// outward to the smallest value that contains them. A value larger than
// maxValueBytes is an error at the expression that made it so.
func (ev *Evaluator) Eval(e specs.Expr) (any, error) {
	v, err := ev.evalExpr(e)
	if err != nil {
		return nil, err
	}
	switch e.(type) {
	case *specs.Template, *specs.List, *specs.Object, *specs.Const, *specs.Call, *specs.Invoke:
		if n := ev.sizeOf(v); n > maxValueBytes {
			return nil, Errorf(e.Pos(), "this expression makes a value of more than %d MiB, the limit of any one value", maxValueBytes>>20)
		}
	}
	return v, nil
}

// sizeOf is about the length of v as JSON, counted at most once past
// maxValueBytes. Lists and maps are measured once each, however many times
// they are shared: a value built by repeating one that was measured before
// costs nothing to measure again.
func (ev *Evaluator) sizeOf(v any) int64 {
	// Most values are small trees: walked as they are, without
	// remembering what was measured, they cost nothing but the walk.
	budget := quickNodes
	if n, ok := quickSize(v, &budget); ok {
		return n
	}
	return ev.sizeShared(v)
}

// quickNodes is how many lists, maps and scalars sizeOf walks before it
// measures the value as one whose parts may be shared.
const quickNodes = 1024

// quickSize is sizeOf of a value of at most *budget nodes, walked as a
// tree; false when it has more.
func quickSize(v any, budget *int) (int64, bool) {
	if *budget--; *budget < 0 {
		return 0, false
	}
	switch x := v.(type) {
	case string:
		return int64(len(x)) + 2, true
	case value.Secret:
		return quickSize(x.Value, budget)
	case []any:
		n := int64(1) + max(int64(len(x)), 1)
		for _, e := range x {
			m, ok := quickSize(e, budget)
			if !ok {
				return 0, false
			}
			n += m
		}
		return n, true
	case map[string]any:
		n := int64(1) + max(int64(len(x)), 1)
		for k, e := range x {
			m, ok := quickSize(e, budget)
			if !ok {
				return 0, false
			}
			n += int64(len(k)) + 3 + m
		}
		return n, true
	}
	return 8, true
}

// sizeShared is sizeOf of a value whose lists and maps may be shared.
func (ev *Evaluator) sizeShared(v any) int64 {
	switch x := v.(type) {
	case string:
		return int64(len(x)) + 2
	case value.Secret:
		return ev.sizeShared(x.Value)
	case []any:
		if len(x) == 0 {
			return 2
		}
		key := reflect.ValueOf(x).Pointer()
		if n, ok := ev.sized(key); ok {
			return n
		}
		n := int64(1)
		for _, e := range x {
			if n += ev.sizeShared(e) + 1; n > maxValueBytes {
				break
			}
		}
		ev.remember(key, n, x)
		return n
	case map[string]any:
		if len(x) == 0 {
			return 2
		}
		key := reflect.ValueOf(x).Pointer()
		if n, ok := ev.sized(key); ok {
			return n
		}
		n := int64(1)
		for k, e := range x {
			if n += int64(len(k)) + 4 + ev.sizeShared(e); n > maxValueBytes {
				break
			}
		}
		ev.remember(key, n, x)
		return n
	}
	return 8
}

// sizeMemo is one remembered size: of v, at address key.
type sizeMemo struct {
	key uintptr
	n   int64
	v   any // nil when none
}

// sized returns the size remembered for the list or map at address key.
func (ev *Evaluator) sized(key uintptr) (int64, bool) {
	if ev.first.v != nil && ev.first.key == key {
		return ev.first.n, true
	}
	n, ok := ev.sizes[key]
	return n, ok
}

// remember records the size n of v, whose address is key, and keeps v so
// that its address is not reused while the evaluator lives.
func (ev *Evaluator) remember(key uintptr, n int64, v any) {
	if ev.first.v == nil {
		ev.first = sizeMemo{key: key, n: n, v: v}
		return
	}
	if ev.sizes == nil {
		ev.sizes = map[uintptr]int64{}
	}
	ev.sizes[key] = n
	ev.measured = append(ev.measured, v)
}

// evalExpr evaluates e; see eval.
func (ev *Evaluator) evalExpr(e specs.Expr) (any, error) {
	switch x := e.(type) {
	case nil:
		return nil, nil
	case *specs.Lit:
		return x.Value, nil
	case *specs.Ref:
		return ev.ref(x)
	case *specs.Template:
		var b strings.Builder
		secret := false
		for _, p := range x.Parts {
			if p.Ref == nil {
				b.WriteString(p.Text)
				continue
			}
			v, err := ev.ref(p.Ref)
			if err != nil {
				return nil, err
			}
			v, s := value.Unwrap(v)
			secret = secret || s
			if value.ContainsUnknown(v) {
				return value.Unknown{}, nil
			}
			str, err := toText(v)
			if err != nil {
				return nil, Errorf(p.Ref.P, "cannot interpolate %s: %v", p.Ref, err)
			}
			b.WriteString(str)
		}
		return value.Wrap(b.String(), secret), nil
	case *specs.List:
		out := make([]any, len(x.Items))
		for i, it := range x.Items {
			v, err := ev.Eval(it)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	case *specs.Object:
		out := make(map[string]any, len(x.Entries))
		for _, en := range x.Entries {
			v, err := ev.Eval(en.Value)
			if err != nil {
				return nil, err
			}
			out[en.Key] = v
		}
		return out, nil
	case *specs.Call:
		return ev.call(x)
	case *specs.Const:
		v, err := x.Value()
		if err != nil {
			return nil, Errorf(x.P, "%v", err)
		}
		return v, nil
	case *specs.Invoke:
		args, err := ev.Eval(x.Args)
		if err != nil {
			return nil, err
		}
		if value.ContainsUnknown(args) || ev.Invoke == nil {
			return value.Unknown{}, nil
		}
		plain, _ := value.Reveal(args)
		res, err := ev.Invoke(x, plain.(map[string]any))
		if err != nil {
			// A cloud API's message may echo an argument: never a secret one.
			return nil, SecretCallError(err, args)
		}
		return ResultOf(x, args, res).Value, nil
	}
	return nil, fmt.Errorf("unknown expression %T", e)
}

func (ev *Evaluator) ref(r *specs.Ref) (any, error) {
	if r.Root == specs.BuiltinRoot {
		return ev.builtin(r)
	}
	path := r.Path
	var v any
	if res, ok := ev.Spec.Resources[r.Root]; ok && len(path) > 0 && !path[0].IsIndex && path[0].Key == specs.URNField && res.Schema.Root.Properties[specs.URNField] == nil {
		// A resource's URN is known from the specs alone, before the
		// resource exists.
		v, path = ev.Spec.URN(r.Root), path[1:]
	} else if v, ok = ev.Env.Lookup(r.Root); !ok {
		return nil, Errorf(r.P, "%s has no value", r)
	}
	secret := false
	for i, acc := range path {
		var s bool
		v, s = value.Unwrap(v)
		secret = secret || s
		if _, unk := v.(value.Unknown); unk {
			return value.Unknown{}, nil
		}
		switch c := v.(type) {
		case map[string]any:
			if acc.IsIndex {
				return nil, Errorf(r.P, "%s: cannot index a map with [%d]", r, acc.Index)
			}
			next, ok := c[acc.Key]
			if !ok && i == 0 {
				next, ok = c[schemas.CamelCase(acc.Key)]
			}
			if !ok && !(i == 0 && ev.isObject(r.Root)) {
				if secret {
					// The keys of a secret object are secret too.
					return nil, Errorf(r.P, "%s: no key %q in a secret object", r, acc.Key)
				}
				return nil, Errorf(r.P, "%s: no key %q (keys: %s)", r, acc.Key, strings.Join(slices.Sorted(maps.Keys(c)), ", "))
			}
			// A field of a resource or lookup that has no value (an
			// optional input left unset, which the cloud did not fill
			// either) reads as null; the loader checked that the type
			// has the field.
			v = next
		case []any:
			if !acc.IsIndex {
				return nil, Errorf(r.P, "%s: cannot read field %q of a list", r, acc.Key)
			}
			if acc.Index >= len(c) {
				return nil, Errorf(r.P, "%s: index %d out of range (length %d)", r, acc.Index, len(c))
			}
			v = c[acc.Index]
		case nil:
			return nil, Errorf(r.P, "%s: cannot read %s of null", r, accessorText(acc))
		default:
			return nil, Errorf(r.P, "%s: cannot read %s of %s", r, accessorText(acc), value.Describe(c))
		}
	}
	return value.Wrap(v, secret), nil
}

// isObject reports whether name is a resource or a lookup returning its
// whole result: an object with the fields of its schema.
func (ev *Evaluator) isObject(name string) bool {
	if _, ok := ev.Spec.Resources[name]; ok {
		return true
	}
	if v, ok := ev.Spec.Variables[name]; ok {
		inv, isInvoke := v.Expr.(*specs.Invoke)
		return isInvoke && inv.Return == ""
	}
	return false
}

func accessorText(a specs.Accessor) string {
	if a.IsIndex {
		return "[" + strconv.Itoa(a.Index) + "]"
	}
	return strconv.Quote(a.Key)
}

func (ev *Evaluator) builtin(r *specs.Ref) (any, error) {
	switch r.Path[0].Key {
	case "stack":
		return ev.Spec.Stack, nil
	case "project":
		return ev.Spec.Project, nil
	case "organization":
		return "organization", nil
	case "cwd":
		// The program's directory, as Pulumi runs the program there,
		// wherever reconcile was started from.
		return ev.Spec.Dir, nil
	case "rootDirectory":
		return ev.Spec.RootDir, nil
	}
	return nil, Errorf(r.P, "unknown built-in %s", r)
}

func (ev *Evaluator) call(c *specs.Call) (any, error) {
	if c.Name == "pulumiResourceName" || c.Name == "pulumiResourceType" {
		// Known from the specs alone: the loader checked that the
		// argument names a resource.
		ref, _ := c.Arg.(*specs.Ref)
		if ref == nil || ev.Spec.Resources[ref.Root] == nil {
			return nil, Errorf(c.P, "fn::%s takes a resource, such as ${name}", c.Name)
		}
		r := ev.Spec.Resources[ref.Root]
		if c.Name == "pulumiResourceName" {
			return r.LogicalName, nil
		}
		return r.Schema.PulumiToken(), nil
	}
	arg, err := ev.Eval(c.Arg)
	if err != nil {
		return nil, err
	}
	if c.Name == "secret" {
		return value.Secret{Value: arg}, nil
	}
	if c.Name == "unsecret" {
		v, _ := value.Reveal(arg)
		return v, nil
	}
	orig := arg
	arg, secret := value.Reveal(arg)
	if value.ContainsUnknown(arg) {
		return value.Unknown{}, nil
	}
	out, err := ev.callKnown(c, arg)
	if err != nil {
		// The message may describe the argument: never a secret one.
		return nil, redactError(err, orig)
	}
	return value.Wrap(out, secret), nil
}

// redactError returns err with the clear text of the secrets v holds
// replaced, keeping an *Error's position; err itself when v holds none.
func redactError(err error, v any) error {
	red := value.RedactionOf(v)
	if red == nil {
		return err
	}
	var ee *Error
	if errors.As(err, &ee) {
		return &Error{Pos: ee.Pos, Msg: red.String(ee.Msg)}
	}
	return red.Error(err)
}

func (ev *Evaluator) callKnown(c *specs.Call, arg any) (any, error) {
	pair := func() (any, any, error) {
		l, ok := arg.([]any)
		if !ok || len(l) != 2 {
			return nil, nil, Errorf(c.P, "fn::%s takes a list of two items, got %s", c.Name, value.Describe(arg))
		}
		return l[0], l[1], nil
	}
	switch c.Name {
	case "join":
		d, l, err := pair()
		if err != nil {
			return nil, err
		}
		sep, ok := d.(string)
		items, ok2 := l.([]any)
		if !ok || !ok2 {
			return nil, Errorf(c.P, "fn::join takes [delimiter, list of values], got [%s, %s]", value.Describe(d), value.Describe(l))
		}
		parts := make([]string, len(items))
		for i, it := range items {
			s, err := toText(it)
			if err != nil {
				return nil, Errorf(c.P, "fn::join item %d: %v", i, err)
			}
			parts[i] = s
		}
		return strings.Join(parts, sep), nil
	case "split":
		d, s, err := pair()
		if err != nil {
			return nil, err
		}
		sep, ok := d.(string)
		str, ok2 := s.(string)
		if !ok || !ok2 {
			return nil, Errorf(c.P, "fn::split takes [delimiter, string], got [%s, %s]", value.Describe(d), value.Describe(s))
		}
		var out []any
		for _, p := range strings.Split(str, sep) {
			out = append(out, p)
		}
		return out, nil
	case "select":
		i, l, err := pair()
		if err != nil {
			return nil, err
		}
		idx, ok := i.(int64)
		items, ok2 := l.([]any)
		if !ok || !ok2 {
			return nil, Errorf(c.P, "fn::select takes [index, list], got [%s, %s]", value.Describe(i), value.Describe(l))
		}
		if idx < 0 || int(idx) >= len(items) {
			return nil, Errorf(c.P, "fn::select index %d out of range (length %d)", idx, len(items))
		}
		return items[idx], nil
	case "toJSON":
		return value.CanonicalJSON(arg), nil
	case "toBase64":
		s, ok := arg.(string)
		if !ok {
			return nil, Errorf(c.P, "fn::toBase64 takes a string, got %s", value.Describe(arg))
		}
		return base64.StdEncoding.EncodeToString([]byte(s)), nil
	case "fromBase64":
		s, ok := arg.(string)
		if !ok {
			return nil, Errorf(c.P, "fn::fromBase64 takes a string, got %s", value.Describe(arg))
		}
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return nil, Errorf(c.P, "fn::fromBase64: %v", err)
		}
		if !utf8.Valid(b) {
			return nil, Errorf(c.P, "fn::fromBase64: the decoded bytes are not UTF-8 text")
		}
		return string(b), nil
	case "readFile":
		b, err := ev.readFile(c, arg)
		return string(b), err
	case "filebase64":
		b, err := ev.readFile(c, arg)
		return base64.StdEncoding.EncodeToString(b), err
	case "filebase64sha256":
		b, err := ev.readFile(c, arg)
		sum := sha256.Sum256(b)
		return base64.StdEncoding.EncodeToString(sum[:]), err
	case "sha1":
		s, ok := arg.(string)
		if !ok {
			return nil, Errorf(c.P, "fn::sha1 takes a string, got %s", value.Describe(arg))
		}
		sum := sha1.Sum([]byte(s))
		return hex.EncodeToString(sum[:]), nil
	case "length":
		// Pulumi counts the characters of a string as a reader sees them:
		// grapheme clusters, not bytes nor code points.
		switch x := arg.(type) {
		case []any:
			return int64(len(x)), nil
		case map[string]any:
			return int64(len(x)), nil
		case string:
			return int64(uniseg.GraphemeClusterCount(x)), nil
		}
		return nil, Errorf(c.P, "fn::length takes a list, a mapping or a string, got %s", value.Describe(arg))
	case "singleOrNone":
		l, ok := arg.([]any)
		switch {
		case !ok:
			return nil, Errorf(c.P, "fn::singleOrNone takes a list, got %s", value.Describe(arg))
		case len(l) > 1:
			return nil, Errorf(c.P, "fn::singleOrNone takes a list of 0 or 1 items, got %d", len(l))
		case len(l) == 1:
			return l[0], nil
		}
		return nil, nil
	}
	return nil, Errorf(c.P, "unknown function fn::%s", c.Name)
}

// readFile reads the file whose path is the argument of c, a file
// function, under the rules of readProjectFile.
func (ev *Evaluator) readFile(c *specs.Call, arg any) ([]byte, error) {
	p, ok := arg.(string)
	if !ok {
		return nil, Errorf(c.P, "fn::%s takes a path, got %s", c.Name, value.Describe(arg))
	}
	b, err := readProjectFile(ev.Spec.RootDir, ev.Spec.Dir, p)
	if err != nil {
		return nil, Errorf(c.P, "fn::%s %q: %v", c.Name, p, err)
	}
	return b, nil
}

// readProjectFile reads the regular file at path, relative to the
// program's directory dir or absolute, inside the project directory
// rootDir, of at most boundedfile.DefaultLimit bytes. The specs may come
// from anyone who can open a pull request, and what the file holds can
// reach a plan comment: nothing outside rootDir is read, be it by an
// absolute path, by "..", or by a symbolic link that leads out (os.Root
// resolves every link inside rootDir). A named pipe or a device is refused
// before it is opened (a pipe would block the open, /dev/zero never ends).
func readProjectFile(rootDir, dir, path string) ([]byte, error) {
	abs := path
	if !filepath.IsAbs(path) {
		abs = filepath.Join(dir, path)
	}
	rel, err := filepath.Rel(rootDir, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		if filepath.IsAbs(path) {
			return nil, fmt.Errorf("absolute paths must be inside the project directory %q; reconcile reads no file outside it (the specs may come from anyone who can open a pull request): copy the file into the project", rootDir)
		}
		return nil, fmt.Errorf("the path leaves the project directory %q; reconcile reads no file outside it (the specs may come from anyone who can open a pull request): copy the file into the project", rootDir)
	}
	root, err := os.OpenRoot(rootDir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	b, err := boundedfile.ReadIn(root, rel, boundedfile.DefaultLimit)
	if err != nil {
		return nil, confinedErr(err, rootDir)
	}
	return b, nil
}

// confinedErr words an error of os.Root: a link that leads out of the
// project is said to; the operation and name of another *fs.PathError are
// dropped (the caller quotes the path as the specs give it).
func confinedErr(err error, dir string) error {
	if boundedfile.LeadsOut(err) {
		return fmt.Errorf("a symbolic link leads out of the project directory %q, or is absolute; reconcile follows only relative links that stay inside it: replace the link by the file, or copy the file into the project", dir)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Err != nil {
		return pe.Err
	}
	return err
}

// toText converts a scalar to its interpolated text form.
func toText(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case nil:
		return "", nil
	case bool:
		return strconv.FormatBool(x), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64), nil
	}
	return "", fmt.Errorf("%s is not a string, number or boolean", value.Describe(v))
}
