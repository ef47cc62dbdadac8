package main

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/reconcile-dev/reconcile/engine/render"
	"github.com/reconcile-dev/reconcile/project"
	"github.com/reconcile-dev/reconcile/state"
	"github.com/reconcile-dev/reconcile/state/etcdstate"
)

var stackCmd = &command{
	name: "stack", args: "ls | init NAME", spec: true,
	summary: "List the stacks of the state backend, or create one.",
	detail: `ls lists the stacks whose state the backend holds, marking the current one
(--stack, RECONCILE_STACK, else "default") with *. The backend is --state, else
RECONCILE_STATE, else backend: url: in Pulumi.yaml, else the local file
.reconcile/state.db: on a local backend stack S lives beside the default
stack's file, as state.S.db; on etcd under PREFIX/S/.

init NAME creates the stack NAME: an empty state on the backend. A stack that
exists already is refused.

A stack exists when the backend holds its state, or when its settings file,
Pulumi.<stack>.yaml, is beside Pulumi.yaml (or in stackConfigDir:). A
command that reads or writes state refuses a stack named with --stack or
RECONCILE_STACK that does neither, naming the stacks that do: a mistyped
name never starts an empty state. plan, apply and import start the state of
the default stack, and of a stack that has a settings file; create any other
with 'stack init NAME'. On etcd a plan writes nothing: it plans a stack that
does not exist yet from an empty state, every resource to be created, and
cannot save that plan with --out (a plan file is signed with a key the
stack's state holds); the first apply, or 'stack init NAME' run by a user
who may write, creates the stack.

A stack's config comes from Pulumi.<stack>.yaml (config: with <project>:<key>
or plain keys; secure: values are decrypted with PULUMI_CONFIG_PASSPHRASE or
PULUMI_CONFIG_PASSPHRASE_FILE). A key of the project's namespace that no
config entry of the specs reads, and that nothing refers to, is an error;
keys of other namespaces (a provider's, such as gcp:project) are left alone.
--output json writes the documents of docs/state-json.md.`,
	run: func(c *cli, o *cmdOpts, args []string) int {
		switch {
		case len(args) == 1 && args[0] == "ls":
			return stackList(c)
		case len(args) > 0 && args[0] == "init":
			if len(args) != 2 {
				return c.errorf("stack init takes one NAME, e.g. reconcile stack init staging")
			}
			return stackInit(c, args[1])
		case len(args) == 0:
			return c.errorf("stack takes a subcommand: ls, or init NAME")
		}
		return c.errorf("unknown stack subcommand %q%s; use ls, or init NAME", args[0], didYouMean(args[0], []string{"ls", "init"}))
	},
}

// stackList lists the stacks of the backend.
func stackList(c *cli) int {
	ws, err := c.workspace()
	if err != nil {
		return c.errorf("%v", err)
	}
	stacks, err := c.stacks()
	if err != nil {
		return c.errorf("list the stacks of %s: %v", ws.backend.url(), err)
	}
	slices.Sort(stacks)
	if c.g.output == "json" {
		return c.rendered(render.StacksJSON(c.stdout, ws.backend.url(), ws.stack, stacks))
	}
	if len(stacks) == 0 {
		fmt.Fprintf(c.stdout, "No stacks in %s yet: 'reconcile stack init NAME' creates one, and the first apply starts the default stack's.\n", ws.backend.url())
		return exitOK
	}
	for _, s := range stacks {
		mark := " "
		if s == ws.stack {
			mark = "*"
		}
		fmt.Fprintf(c.stdout, "%s %s\n", mark, s)
	}
	return exitOK
}

// stackInit creates the stack name: an empty state on the backend.
func stackInit(c *cli, name string) int {
	if !project.ValidStackName(name) {
		return c.errorf("stack name %q: use letters, digits, '-', '_' and '.', at most 100", name)
	}
	if c.set["stack"] && c.g.stack != name {
		return c.errorf("stack init names the stack to create as NAME (%q); --stack %q names another: drop --stack", name, c.g.stack)
	}
	ws, err := c.workspace()
	if err != nil {
		return c.errorf("%v", err)
	}
	b := ws.backend
	so := state.Options{ReadOnly: true, LockTimeout: c.g.lockTimeout, Command: "reconcile stack init " + name}
	// Two inits racing may both find no state; the store's creation is
	// atomic, so both then open the one state the first made.
	st, err := c.openBackend(b, name, so, c.say)
	switch {
	case err == nil:
		st.Close()
		return c.errorf("stack %q exists already: its state is %s", name, b.describe(name))
	case !errors.Is(err, state.ErrNoState):
		return c.errorf("%v", err)
	}
	so.Create = true
	if st, err = c.openBackend(b, name, so, c.say); err != nil {
		return c.errorf("create stack %q: %v", name, err)
	}
	meta, err := st.Meta()
	st.Close()
	if err != nil {
		return c.errorf("create stack %q: %v", name, err)
	}
	if c.g.output == "json" {
		return c.rendered(render.StackInitJSON(c.stdout, b.url(), name, meta.Lineage))
	}
	fmt.Fprintf(c.stdout, "Created stack %s: an empty state at %s.\nIts config goes in %s; work on it with --stack %s or RECONCILE_STACK=%s.\n",
		name, b.describe(name), ws.stackFile(name), name, name)
	return exitOK
}

// stacks lists the stacks of the command's backend.
func (c *cli) stacks() ([]string, error) {
	ws, err := c.workspace()
	if err != nil {
		return nil, err
	}
	if ws.backend.etcd != nil {
		opts, err := ws.backend.etcdOptions(ws.stack, state.Options{ReadOnly: true}, c.g.lockTTL)
		if err != nil {
			return nil, err
		}
		stacks, err := etcdstate.Stacks(c.ctx, opts)
		return stacks, etcdTLSHint(err)
	}
	return ws.backend.localStacks()
}

// declaredStacks lists the stacks that have a settings file,
// Pulumi.<stack>.yaml, in the project's stack config directory.
func (ws *workspace) declaredStacks() []string {
	entries, err := os.ReadDir(ws.stackConfigDir())
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		mid, ok := strings.CutPrefix(e.Name(), "Pulumi.")
		if !ok {
			continue
		}
		if stack, ok := strings.CutSuffix(mid, ".yaml"); ok && project.ValidStackName(stack) && !e.IsDir() {
			out = append(out, stack)
		}
	}
	return out
}

// declared reports whether the command's stack may be started when it has
// no state: the default stack, and a stack whose settings file exists.
func (ws *workspace) declared() bool {
	if ws.stack == defaultStack {
		return true
	}
	_, err := os.Stat(ws.stackFile(ws.stack))
	return err == nil
}

// noStack explains err, a state of the command's stack that does not
// exist. For a stack named with --stack or RECONCILE_STACK that has no
// settings file either, it names the stacks that exist (with state or a
// settings file), the one meant if one is close, and how to create it.
func (c *cli) noStack(ws *workspace, err error) error {
	if ws.stackFrom == "" || ws.declared() {
		if ws.backend.etcd != nil {
			return fmt.Errorf("%w; only apply, import and 'reconcile stack init %s' start a new stack on etcd (a plan writes nothing): check --state and --stack", err, ws.stack)
		}
		return fmt.Errorf("%w; only plan, apply and import start a new state: check --state and --stack", err)
	}
	known := ws.declaredStacks()
	if withState, lerr := c.stacks(); lerr == nil {
		known = append(known, withState...)
	}
	slices.Sort(known)
	known = slices.Compact(known)
	msg := fmt.Sprintf("stack %q (%s) does not exist%s: there is no state at %s and no %s",
		ws.stack, ws.stackFrom, didYouMean(ws.stack, known), ws.backend.describe(ws.stack), ws.stackFile(ws.stack))
	if len(known) > 0 {
		msg += fmt.Sprintf("; existing stacks: %s", strings.Join(known, ", "))
	}
	msg += fmt.Sprintf(". Fix %s, or create the stack with 'reconcile stack init %s' (or by writing %s)", ws.stackFrom, ws.stack, ws.stackFile(ws.stack))
	return &noStackError{msg: msg, err: err}
}

// noStackError is the error of a stack that does not exist; it wraps the
// store's error, of state.ErrNoState.
type noStackError struct {
	msg string
	err error
}

func (e *noStackError) Error() string { return e.msg }
func (e *noStackError) Unwrap() error { return e.err }
