// Package eval evaluates the expressions of a loaded spec: interpolations,
// references to config, variables, resources and the built-ins, the fn::
// functions, and a resource's options. It also holds the views of a
// resource's attributes that planning and apply share.
//
// An Evaluator reads the values of other nodes through its Env, which the
// planner and apply fill as they walk the graph, and never talks to a
// cloud itself: an fn::invoke goes through its Invoke hook, and a nil hook
// makes every fn::invoke Unknown. Lookup is the one way planning, apply
// and drift call a lookup function (in clear, through the registry), and
// Invoker makes an Invoke hook of it. A problem is an *Error at the
// position of the expression (Errorf); a value over 16 MiB as JSON is one,
// and the file functions (fn::readFile, fn::filebase64,
// fn::filebase64sha256) read only regular files inside the project
// directory, of a bounded size.
//
// Unknown (value.Unknown, known only after apply) propagates: a reference
// that reads into an Unknown, an interpolation with an Unknown part, an
// fn:: call whose argument holds one, and an fn::invoke whose arguments
// hold one all yield Unknown. Lists and objects keep it in place. Resource
// options (ResourceOptions) must be known booleans.
//
// Secret (value.Secret) marks travel with the value: fn::secret adds one,
// fn::unsecret removes every one inside its argument. Secrecy flows from
// any argument to every result: interpolating a secret into a string, and
// calling a function on an argument that holds a secret anywhere in it,
// give a secret result; an fn::invoke, or a lookup, called so is secret as
// a whole (ResultOf: each of its fields, its id too), and so is a get whose
// id or state holds a secret (GetIsSecret, GetResultOf). Lists and objects
// keep the marks on their elements, and reading into a value follows them:
// a field or item of a value marked secret as a whole is secret, while one
// reached through an object that holds secrets only in some of its fields
// is secret only if it is, or holds, one of them. A function's or a
// lookup's error about a secret argument is redacted, a cloud API's
// message about a call with one withheld (SecretCallError), and an error
// about a secret object does not list its keys. Evaluation never seals: that is
// done where values are stored (see package value).
//
// Evaluator.Inputs gives a resource's inputs, from its properties mapping
// or from the one expression that gives them (canonical keys, a secret
// object making every input secret), with the fields its
// additionalSecretOutputs names made secret; SecretOutputs makes those
// fields secret in any view of the resource. ${res.urn},
// fn::pulumiResourceName and fn::pulumiResourceType are known from the
// specs alone (specs.Spec.URN); ${pulumi.cwd} is the program's directory
// and ${pulumi.rootDirectory} the project's.
//
// Offline evaluates, for validate, what the specs alone give: every
// variable (used or not), output and resource input, with what only the
// cloud gives Unknown, reporting the errors plan would.
//
// The views: CreatedView is a created resource's planned After (Unknown
// for the id and outputs), CreatedRefView what references to it see
// (Unknown also for inputs the specs leave unset), UpdatedView a resource
// after an in-place update, and Outputs what state keeps as its outputs.
// ManagedInputs keeps the inputs reconcile manages (set now or at the last
// apply); DiffInputs names those that differ under their schema, after
// ignoreChanges (ApplyIgnore) and with secrets compared sealed; DiffManaged
// is the two together, when there is no ignoreChanges. Normalize
// applies the driver's normalisation to known, non-secret inputs, and
// WithoutVendorKeys drops the map entries the cloud adds by itself.
package eval
