// Package docs holds reconcile's user guides, in Markdown, beside the
// README at the root of the module. It has no code: its tests keep the
// documentation true. TestLinks checks that every relative link of
// README.md and the guides leads to a file that exists, and to a heading of
// it for a link with an anchor, and that every guide is reached from the
// README.
package docs
