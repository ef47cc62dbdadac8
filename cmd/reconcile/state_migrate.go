package main

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/reconcile-dev/reconcile/engine/render"
	"github.com/reconcile-dev/reconcile/state"
)

// migrated is what state migrate did with one stack.
type migrated = render.MigratedStack

func stateMigrate(c *cli, o *cmdOpts, _ store, _ []string) int {
	if o.to == "" {
		return c.errorf("state migrate needs --to URL, the backend to copy the state to, e.g. --to etcd://10.0.0.5:2379/reconcile/orders")
	}
	ws, err := c.workspace()
	if err != nil {
		return c.errorf("%v", err)
	}
	to, err := parseBackend(o.to)
	if err != nil {
		return c.errorf("--to: %v", err)
	}
	if to.url() == ws.backend.url() {
		return c.errorf("--to names the backend the state is on already (%s): name another one", to.url())
	}
	stacks := []string{ws.stack}
	if o.allStacks {
		if stacks, err = c.stacks(); err != nil {
			return c.errorf("list the stacks of %s: %v", ws.backend.url(), err)
		}
		if len(stacks) == 0 {
			return c.errorf("%s holds no stack: nothing to migrate", ws.backend.url())
		}
	}
	var done []migrated
	for _, stack := range stacks {
		m, err := c.migrateStack(ws.backend, to, stack)
		if err != nil {
			msg := fmt.Sprintf("migrate stack %s to %s: %v", stack, to.describe(stack), err)
			if len(done) > 0 {
				msg += fmt.Sprintf(" (%s before it copied; running the command again copies the rest)", render.Count(len(done), "stack was", "stacks were"))
			}
			return c.errorf("%s", msg)
		}
		done = append(done, m)
		if c.g.output != "json" {
			verb := "Copied"
			if !m.Copied {
				verb = "Already copied:"
			}
			fmt.Fprintf(c.stdout, "%s stack %s (lineage %s, serial %d: %s, %s, %s, %s) from %s to %s.\n",
				verb, m.Stack, m.Lineage, m.Serial, render.Count(m.Records, "record", "records"), render.Count(m.Versions, "version", "versions"),
				render.Count(m.History, "history entry", "history entries"), render.Count(m.Intents, "interrupted create", "interrupted creates"),
				ws.backend.describe(stack), to.describe(stack))
		}
	}
	if c.g.output == "json" {
		return c.rendered(render.MigrateJSON(c.stdout, ws.backend.url(), to.url(), done))
	}
	fmt.Fprintf(c.stdout, "The old state is left as it was. Point --state, RECONCILE_STATE or backend: url: in Pulumi.yaml at %s.\n", to.url())
	return exitOK
}

// migrateStack copies stack's state from one backend to the other, holding
// the source's lock so that nothing changes it meanwhile, and checks the
// copy against the source.
func (c *cli) migrateStack(from, to backend, stack string) (migrated, error) {
	so := state.Options{LockTimeout: c.g.lockTimeout, Command: "reconcile state migrate"}
	src, err := c.openBackend(from, stack, so, c.say)
	if err != nil {
		return migrated{}, err
	}
	defer src.Close()
	snap, err := src.Dump()
	if err != nil {
		return migrated{}, fmt.Errorf("read %s: %w", from.describe(stack), err)
	}
	// Until its last write, the copy is marked incomplete, naming this
	// command: no other command takes it for a state meanwhile, and one
	// that meets it after an interruption says to run this again.
	so.Create = true
	source := from
	if abs, err := filepath.Abs(from.local); err == nil && from.etcd == nil {
		source.local = abs // the mark is read from anywhere
	}
	so.Copy = &state.CopyMark{From: source.describe(stack),
		Command: fmt.Sprintf("reconcile state migrate --state %s --stack %s --to %s", from.url(), stack, to.url())}
	so.OnLoad = func(done, total int) {
		if done == 1 && total > 1 {
			c.say(fmt.Sprintf("Copying stack %s in %d writes; until the last, %s is marked incomplete and no command uses it.\n", stack, total, to.describe(stack)))
		}
	}
	dst, err := c.openBackend(to, stack, so, c.say)
	if err != nil {
		return migrated{}, err
	}
	defer dst.Close()
	cur, err := dst.Dump()
	if err != nil {
		return migrated{}, fmt.Errorf("read %s: %w", to.describe(stack), err)
	}
	write, err := state.CheckLoad(cur, snap)
	if errors.Is(err, state.ErrNotEmpty) {
		return migrated{}, fmt.Errorf("%w: it holds another state (lineage %s, serial %d), or a later one of this state; nothing was written. Choose another prefix or stack, or remove that state first",
			err, cur.Meta.Lineage, cur.Meta.Serial)
	}
	if err != nil {
		return migrated{}, err
	}
	if write {
		if err := dst.Load(snap); err != nil {
			return migrated{}, fmt.Errorf("write: %w", err)
		}
		got, err := dst.Dump()
		if err != nil {
			return migrated{}, fmt.Errorf("read the copy back: %w", err)
		}
		if !got.Equal(snap) {
			return migrated{}, errors.New("the copy read back differs from the source; the source is unchanged")
		}
	}
	return migrated{Stack: stack, Lineage: snap.Meta.Lineage, Serial: snap.Meta.Serial, Records: len(snap.Records),
		Versions: len(snap.Versions), History: len(snap.History), Intents: len(snap.Intents), Copied: write}, nil
}
