package main

import (
	"fmt"
	"slices"

	"reconcile/engine/render"
	"reconcile/state"
	"reconcile/state/etcdstate"
)

var stackCmd = &command{
	name: "stack", args: "ls", spec: true,
	summary: "List the stacks of the state backend.",
	detail: `ls lists the stacks whose state the backend holds, marking the current one
(--stack, RECONCILE_STACK, else "default") with *. The backend is --state, else
RECONCILE_STATE, else backend: url: in Pulumi.yaml, else the local file
.reconcile/state.db: on a local backend stack S lives beside the default
stack's file, as state.S.db; on etcd under PREFIX/S/.

A stack's config comes from Pulumi.<stack>.yaml beside Pulumi.yaml (config:
with <project>:<key> or plain keys; secure: values are decrypted with
PULUMI_CONFIG_PASSPHRASE or PULUMI_CONFIG_PASSPHRASE_FILE). Only plan and apply
start a new stack. --output json writes the document of docs/state-json.md.`,
	run: func(c *cli, o *cmdOpts, args []string) int {
		if len(args) != 1 || args[0] != "ls" {
			return c.errorf("stack takes one subcommand: ls")
		}
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
			fmt.Fprintf(c.stdout, "No stacks in %s yet: plan or apply starts one.\n", ws.backend.url())
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
	},
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
