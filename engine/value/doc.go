// Package value is the value model of reconcile: the JSON-shaped values
// that specs evaluate to (nil, bool, int64, float64, string, []any,
// map[string]any), with two marks that travel with them.
//
// Unknown stands for a value not known until apply (the id of an object
// still to be created, anything computed from it); it propagates through
// every expression and is shown as "(known after apply)" (UnknownText).
//
// Secret wraps a value that must never be shown or stored in clear: one
// marked with fn::secret, a secret config value, or anything computed
// from one. Evaluation keeps the mark on the smallest value that contains
// the secret. Reveal unwraps every mark (for a driver, in memory only),
// and Wrap and Unwrap add and take off one; SecretFields marks each field
// of a result that is secret as a whole (a lookup called with a secret). Renderers show a Secret as
// "(sensitive value)" (SensitiveText).
//
// Where a value is stored (state, intents, plan files) each Secret is
// sealed (Seal): replaced by {"$secret": digest}, HMAC-SHA256 under the
// state's own key (Sealer), which compares equal to the same value sealed
// again but cannot be read or guessed. To compare a desired value with a
// stored one, the desired value is sealed the way the stored one is
// (SealTo, Equal); to store what the cloud echoes of a secret input, the
// live value is sealed where the desired or stored one is secret
// (SealLike, SealAs), or wrapped as Secret there (SecretAs); to seal the
// past versions of a record once an input turns secret, SealWhere. One
// walk (rewriteAlong) serves these five. UnsealForDisplay turns digests back
// into Secret marks without values, for renderers. States of format 1 hold
// digests salted with the node's name instead ("sha256:..."); Sealer still
// compares with them until the node is written again.
//
// Equality (Equal, CompareForm) is under a field's schema: set-like lists
// ignore order and repeats; null, an empty list and an empty map are the
// same; an Unknown desired value equals nothing. Redaction finds the clear
// text of secrets (of at least MinSecretLen bytes) in free text, in every
// encoding output uses, as the last line of defence. Quote and OneLine
// render values for people, escaping (with package untrusted) what could
// start a line or rewrite a terminal.
package value
