package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/reconcile-dev/reconcile/engine/plan"
	"github.com/reconcile-dev/reconcile/resources"
)

// cloudOf returns where a plan touching vendors runs: the emulator, if the
// command uses one (plan.EmulatorKey), and the account of each vendor.
func (c *cli) cloudOf(reg resources.Registry, vendors []string) (map[string]string, error) {
	out := map[string]string{}
	switch c.g.emulator {
	case "":
	case "builtin":
		dir, err := filepath.Abs(builtinEmulatorDir)
		if err != nil {
			return nil, err
		}
		out[plan.EmulatorKey] = "builtin:" + dir
	default:
		out[plan.EmulatorKey] = c.g.emulator
	}
	for _, v := range vendors {
		account, ok := reg.Accounts[v]
		if !ok {
			continue
		}
		a, err := account(c.ctx)
		if err != nil {
			return nil, fmt.Errorf("tell which %s account the calls are made in: %w", v, err)
		}
		out[v] = a
	}
	return out, nil
}

// planVendors lists the vendors whose objects pl reads or changes.
func planVendors(pl *plan.Plan) []string {
	var out []string
	for _, ch := range pl.Changes {
		if v := resources.Vendor(ch.Type); !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return out
}

// checkPlanCloud refuses to apply pf, read from path, anywhere but in the
// emulator and accounts it was made in.
func (c *cli) checkPlanCloud(path string, pf *plan.File, reg resources.Registry) error {
	var vendors []string
	for k := range pf.Cloud {
		if k != plan.EmulatorKey {
			vendors = append(vendors, k)
		}
	}
	slices.Sort(vendors)
	// Another emulator, or none, is refused before any account is asked
	// of clouds the plan was not made in.
	if now, err := c.cloudOf(reg, nil); err != nil || now[plan.EmulatorKey] != pf.Cloud[plan.EmulatorKey] {
		if err == nil {
			err = pf.CheckCloud(now)
		}
		return fmt.Errorf("plan file %s: %w", path, err)
	}
	now, err := c.cloudOf(reg, vendors)
	if err != nil {
		return fmt.Errorf("plan file %s: %w", path, err)
	}
	if err := pf.CheckCloud(now); err != nil {
		return fmt.Errorf("plan file %s: %w", path, err)
	}
	return nil
}

// applyCommand is the command that applies the plan file saved at path,
// with every flag that its apply needs as this plan was given them: the
// emulator, and the state and stack when they were named (the plan file
// records both, and its apply refuses others).
func (c *cli) applyCommand(path string) string {
	args := []string{"reconcile", "apply"}
	switch c.g.emulator {
	case "":
	case "builtin":
		args = append(args, "--emulator")
	default:
		args = append(args, "--emulator="+c.g.emulator)
	}
	if c.set["state"] {
		args = append(args, "--state", shellQuote(c.g.statePath))
	}
	if c.set["stack"] {
		args = append(args, "--stack", shellQuote(c.g.stack))
	}
	return strings.Join(append(args, shellQuote(path)), " ")
}

// shellQuote returns s as a POSIX shell reads it back: as it is when it
// holds only characters no shell treats specially, in single quotes
// otherwise.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=@,+%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
