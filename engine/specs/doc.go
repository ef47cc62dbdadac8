// Package specs reads spec files, in the Pulumi YAML dialect, into a
// checked Spec: the declarations, their expressions, and the dependency
// graph between them. It never evaluates an expression (package eval does)
// and never talks to a cloud.
//
// Load (LoadWith, for options) takes Sources, each a file's Name as shown
// in diagnostics and its bytes. Every YAML document of every source is read
// into one Spec, sources in name order; keys of a Pulumi project file are
// accepted and ignored, but for name:, which names the project when the
// caller does not (LoadOptions.Project). Every problem found is reported as a diagnostic
// with its position, and the Spec is nil when any is an error. Limits on
// size, YAML nodes and nesting keep hostile input within bounded time and
// memory. Spec.Hash, a digest of the sources and the config values in
// force, is what a plan records as SpecHash to tell that the specs moved.
//
// The kinds of node, each kept by name:
//
//   - config (ConfigDecl): a typed value given by --config, the stack's
//     settings or a default, in that order of precedence, read from the
//     setting the entry's name: key names (ConfigDecl.Key), else its own;
//     Spec.Values holds the values in force, wrapped in value.Secret when
//     the entry is secret. A list's items are of one type (List<T>, or
//     array with items, or inferred from a default of one type).
//     ${PROJECT:key} reads the entry key of the project PROJECT.
//   - variables (Variable): an expression. A variable whose expression is
//     exactly an fn::invoke is a lookup: the planner reads it and apply
//     records it in state (kind.Lookup). An fn::invoke anywhere else is
//     only evaluated.
//   - resources (Resource): a Type from the schemas, Properties keyed by
//     canonical lowerCamelCase field names (snake_case is accepted), or
//     PropertiesExpr, one expression that gives the object of the inputs
//     (validated once evaluated), and Options. A resource with a get block (GetSpec) is read by id and
//     never managed (IsGet, kind.Get).
//   - outputs (Output): an expression, evaluated once everything else is.
//
// Config, variables and resources share one namespace; "pulumi" is
// reserved for the built-ins (${pulumi.stack} and the like, BuiltinRoot).
// Every resource also has the field urn (URNField): Spec.URN is its URN as
// Pulumi makes it, from the stack, the project, the Pulumi type tokens of
// its parents (options.parent) and its own, and its logical name (the
// resource's name: key, else its name).
//
// An Expr is a tree: Lit (a scalar), Ref, Template, List, Object (entries in
// source order, Key canonical and Raw as written), Call and Invoke. A
// string is scanned for interpolations: without one it is a Lit; exactly
// one ${...} is a Ref, which keeps the type of what it reads
// (${res.field[0]["key"]}: a root name and a path of Accessors); anything
// else is a Template, which always yields a string. "$$" writes one "$",
// so "$${" is a literal "${". A mapping whose only key starts with "fn::"
// is a call: fn::invoke (or its shorthand fn::pkg:module:name) is an
// Invoke of a function of the schemas, with arguments and an optional
// return field; fn::join, split, select, toJSON, toBase64, fromBase64,
// secret, unsecret, length, singleOrNone, sha1, readFile, filebase64 and
// filebase64sha256 are a Call with its one argument, whose shape is
// checked when it is a literal. Pulumi's asset and archive functions and
// fn::stackReference are refused: nothing here takes what they make.
//
// Every Expr has a Pos (diag.Pos, printed FILE:LINE:COL), entries have the
// KeyPos of their key, and declarations the Pos of their name. Inside a
// string, a reference's position is exact in plain and quoted scalars on
// one line and in literal blocks (|); in folded scalars and quoted ones
// over several lines it is the scalar's start.
//
// After reading, Load checks: references name something declared (with a
// suggestion when not), dependsOn names resources, literal inputs and
// fn::invoke arguments fit their schemas (parts known only later are
// checked at plan time through ValueViolations, which validates only the
// values that are not literals Load validated: each value is validated
// once), and the graph has no cycle. Then, below each resource's inputs
// object, it folds every list or object of literals alone into a Const,
// which holds the value packed: what plans read of the specs is the same,
// in less than half of the memory.
// Graph returns the dag.Graph of config, variables and resources: each
// depends on every name its expressions and options reference; outputs
// are not in it. SecretTexts lists the secrets the specs hold in clear,
// for redacting free text.
package specs
