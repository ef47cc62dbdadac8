// Package docs holds reconcile's user guides, in Markdown, beside the
// README at the root of the module. It has no code: its tests keep the
// documentation true.
//
//   - TestWalkthroughs runs the README's quick start and every walkthrough
//     of the guides as written, with bash, in a fresh copy of the checkout,
//     each after every other, and checks the output each shows.
//   - TestLinks checks that every relative link of README.md and the guides
//     leads to a file that exists, and to a heading of it for a link with an
//     anchor, and that every guide is reached from the README.
//
// A walkthrough is one or more fenced sh blocks, each under the comment
// <!-- doctest: NAME --> (invisible once rendered); the blocks of one NAME
// run as one script, in the order of the files. A fenced block under
// <!-- doctest-output: NAME --> holds lines the run of NAME must print, in
// that order, among others: "..." in a line stands for any text, and a line
// that is only "..." for any lines.
package docs
