package specs

import (
	"time"

	"github.com/reconcile-dev/reconcile/engine/dag"
	"github.com/reconcile-dev/reconcile/engine/diag"
	"github.com/reconcile-dev/reconcile/schemas"
)

// Source is one spec file's name (as shown in diagnostics) and bytes.
type Source struct {
	Name string
	Data []byte
	// ConfigOnly marks the project file of a program that lives in
	// another directory (Pulumi.yaml's main:): only its config (and the
	// project's own keys) is read, as Pulumi reads it; a resource,
	// variable or output there is an error.
	ConfigOnly bool
}

// Spec is a loaded, merged and checked set of spec files.
type Spec struct {
	// Dir is the program's directory: the relative paths of the file
	// functions are read from it, and ${pulumi.cwd} is it.
	Dir string
	// RootDir is the project's directory, where Pulumi.yaml is: no file
	// function reads outside it, and ${pulumi.rootDirectory} is it. It is
	// Dir unless Pulumi.yaml's main: puts the program in a subdirectory.
	RootDir string
	// Project and Stack are what ${pulumi.project} and ${pulumi.stack}
	// read.
	Project, Stack string
	Config         map[string]*ConfigDecl
	Variables      map[string]*Variable
	Resources      map[string]*Resource
	Outputs        map[string]*Output
	// Values are the config values in force: overrides, then defaults.
	Values map[string]any
	// Hash is a digest of every source and every config value in force.
	Hash string
	// Partial is set when the loader left resources out of the sources as
	// LoadOptions.Skip asked: the Spec then holds the nodes that the apply
	// of a saved plan runs, not every node the sources declare.
	Partial bool

	graph *dag.Graph
	// digests are the SHA-256 of each source's bytes, by Source.Name, for
	// Cuts.
	digests map[string]string
}

// ConfigDecl is one config entry.
type ConfigDecl struct {
	Name string
	Pos  diag.Pos
	// Key is the setting the value is read from, in the stack's settings
	// and --config: the declaration's name: key, else Name.
	Key  string
	Type string // string, integer, number, boolean, array, object; "" for any
	// Items is the type of the items of an array (List<Items>), "" for
	// any.
	Items      string
	Default    any
	HasDefault bool
	Secret     bool
	// NotSecretPos is where the declaration says secret: false; the zero
	// Pos when it does not.
	NotSecretPos diag.Pos
}

// Variable is one entry of variables.
type Variable struct {
	Name string
	Pos  diag.Pos
	Expr Expr
}

// Output is one entry of outputs.
type Output struct {
	Name string
	Pos  diag.Pos
	Expr Expr
}

// Resource is one entry of resources.
type Resource struct {
	Name string
	Pos  diag.Pos // the position of the resource's key
	// LogicalName is the resource's name in its URN: the name: key, or
	// Name when there is none. References still use Name.
	LogicalName string
	Type        string
	TypePos     diag.Pos
	Schema      *schemas.Schema
	// Properties holds the inputs, keyed by canonical field names. Nil for
	// a resource read with get, and when the inputs are given as one
	// expression (PropertiesExpr).
	Properties *Object
	// PropertiesExpr is the inputs given as one expression, such as
	// properties: ${inputs} or properties: {fn::secret: {...}}, which must
	// give an object; nil when they are given as a mapping.
	PropertiesExpr Expr
	Get            *GetSpec
	// Options is never nil: a resource without options shares noOptions,
	// which nothing writes to.
	Options *Options
	// cutEnd is the line where the next entry of the resource's section
	// starts, when the lines from Pos.Line up to it hold the resource's
	// entry alone and a later load may leave them out (see Spec.Cuts); 0
	// otherwise.
	cutEnd int32
}

// LetInputsGo lets go of the resource's inputs expression, for a plan or
// apply that has evaluated it, the one time it does, and will not again:
// on a large spec these expressions are much of its memory. Evaluating
// them after is an error.
func (r *Resource) LetInputsGo() {
	r.Properties, r.PropertiesExpr = nil, nil
}

// Inputs is the expression giving the resource's inputs: the Properties
// mapping, or PropertiesExpr; nil for a resource read with get.
func (r *Resource) Inputs() Expr {
	switch {
	case r.PropertiesExpr != nil:
		return r.PropertiesExpr
	case r.Properties != nil:
		return r.Properties
	}
	return nil
}

// InputsRead returns the references in the resource's inputs expression,
// and false when the expression calls a function of the schemas
// (fn::invoke), whose result is not the specs' alone.
func (r *Resource) InputsRead() (read []*Ref, pure bool) {
	pure = true
	visit(r.Inputs(), func(e Expr) {
		switch x := e.(type) {
		case *Ref:
			read = append(read, x)
		case *Invoke:
			pure = false
		}
	})
	return read, pure
}

// GetSpec reads an existing resource by id.
type GetSpec struct {
	P     diag.Pos
	ID    Expr
	State *Object
}

// Options are the resource options reconcile honours.
type Options struct {
	P                   diag.Pos
	DependsOn           []*Ref
	Protect             Expr // bool
	IgnoreChanges       []PathOpt
	ReplaceOnChanges    []PathOpt
	DeleteBeforeReplace Expr // bool
	RetainOnDelete      Expr // bool
	Import              string
	ImportPos           diag.Pos
	// Parent is the resource named by parent: ${res}, which puts its type
	// in this resource's URN and orders this one after it; nil without.
	Parent         *Ref
	CustomTimeouts map[string]time.Duration // create, update, delete, read
	// AdditionalSecretOutputs are the fields (canonical names, inputs or
	// outputs) whose values are secret wherever they are shown or stored,
	// as if marked with fn::secret.
	AdditionalSecretOutputs []string
}

// noOptions are the options of every resource that gives none: most of a
// large spec's resources, which would otherwise hold a copy each.
var noOptions Options

// PathOpt is a property path in ignoreChanges or replaceOnChanges.
type PathOpt struct {
	Path string // as written, first segment canonicalised
	Top  string // canonical top-level field
	P    diag.Pos
}

// IsGet reports whether the resource is read with get and never managed.
func (r *Resource) IsGet() bool { return r.Get != nil }

// Graph is the dependency graph of the spec's config entries, variables
// and resources.
func (s *Spec) Graph() *dag.Graph { return s.graph }
