// Package value is the value model of reconcile: the JSON-shaped values
// that specs evaluate to, with two marks that travel with them.
//
// Unknown stands for a value not known until apply (the id of an object
// still to be created, anything computed from it); it propagates through
// every expression and is shown as "(known after apply)".
//
// Secret wraps a value that must never be shown or stored in clear. It
// propagates outward to the smallest value that contains it. Where a
// value is stored (state, plan files) each Secret is sealed: replaced by a
// digest, HMAC-SHA256 under the state's own key (Sealer), which compares
// equal to the same value sealed again but cannot be read or guessed. To
// compare a desired value with a stored one, the desired value is sealed
// the way the stored one is (SealTo, Equal); to store what the cloud
// echoes of a secret input, the live value is sealed where the desired or
// stored one is secret (SealLike, SealAs): one walk (rewriteAlong) serves
// them all. UnsealForDisplay turns digests back into Secret marks without
// values, for renderers.
//
// Equality (Equal, CompareForm) is under a field's schema: set-like lists
// ignore order and repeats; null, an empty list and an empty map are the
// same. Redaction finds the clear text of secrets in free text, in every
// encoding output uses, as the last line of defence. Quote, PlainText and
// OneLine render values for people, escaping what could rewrite a
// terminal.
package value
