package main

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"
)

// savedTrailer is what plan --out adds after the plan in text: show prints
// the plan alone.
func savedTrailer(emulatorURL, file string) string {
	return fmt.Sprintf("\nSaved the plan to %s. To apply exactly it, run:\n  reconcile apply --emulator=%s %s\n", file, emulatorURL, file)
}

// TestE2EShowPlanFile saves plans with drift, an update, a create, a
// delete and a secret, and shows each in every format: byte for byte what
// plan printed, without a single cloud call.
func TestE2EShowPlanFile(t *testing.T) {
	needBinary(t)
	t.Parallel()
	e := startEmulator(t)
	w := newWS(t, e)
	keep, gone, fresh := rid(t, "keep"), rid(t, "gone"), rid(t, "fresh")
	w.write("main.yaml", spec(policySpec("keep", keep, "", ""), policySpec("gone", gone, "", "")))
	w.must(0, "apply", "--auto-approve")

	// Drift: a binding added by hand; then specs that update keep, delete
	// gone, and create fresh with a secret principal.
	org := e.orgID()
	e.setPolicy(keep, []binding{{Relation: "editor", Principals: []string{"org:" + org}}, {Relation: "viewer", Principals: []string{role2}}})
	w.write("main.yaml", "config:\n  team:\n    type: string\n    secret: true\n    default: team:s3cr3t-principal\n"+
		spec(policySpec("keep", keep, fmt.Sprintf("        - relation: viewer\n          principals: [%q]\n", role1), ""),
			policySpec("fresh", fresh, "        - relation: viewer\n          principals: [\"${team}\"]\n", "")))

	for _, format := range []string{"text", "json", "markdown"} {
		t.Run(format, func(t *testing.T) {
			file := "p-" + format + ".plan"
			r := w.must(2, "plan", "--out", file, "--output", format, "--detailed-exitcode")
			want := r.stdout
			if format == "text" {
				if !strings.HasSuffix(want, savedTrailer(e.URL, file)) {
					t.Fatalf("plan --out does not end with where it saved the plan:\n%s", r)
				}
				want = strings.TrimSuffix(want, savedTrailer(e.URL, file))
				wantStdout(t, r, "Objects changed outside reconcile", "will be updated", "will be created", "will be destroyed", "(sensitive value)")
			}
			if strings.Contains(want, "s3cr3t") {
				t.Fatalf("plan shows the secret:\n%s", r)
			}
			mark := e.mark()
			got := w.must(0, "show", file, "--output", format)
			if got.stdout != want {
				t.Errorf("show %s --output %s differs from what plan printed:\n--- plan\n%s\n--- show\n%s", file, format, want, got.stdout)
			}
			if got.stderr != "" {
				t.Errorf("show printed on stderr:\n%s", got)
			}
			if calls := e.callsSince(mark, ""); len(calls) != 0 {
				t.Errorf("show called the cloud: %v", calls)
			}
		})
	}

	// Without --emulator, and so without any driver, show works the same.
	r := w.rc("show", "p-text.plan")
	if r.code != 0 || !strings.Contains(r.stdout, "will be created") {
		t.Errorf("show without --emulator:\n%s", r)
	}
}

// TestE2EShowRefuses checks that show refuses an edited plan file, and
// says what it cannot verify or what moved on.
func TestE2EShowRefuses(t *testing.T) {
	needBinary(t)
	t.Parallel()
	e := startEmulator(t)
	w := newWS(t, e)
	id := rid(t, "")
	w.write("main.yaml", spec(policySpec("pol", id, "", "")))
	w.must(2, "plan", "--out", "p.plan", "--detailed-exitcode")

	// An edited plan file: the principal of the binding changed.
	data, err := os.ReadFile(w.path("p.plan"))
	if err != nil {
		t.Fatal(err)
	}
	edited := bytes.Replace(data, []byte(`"editor"`), []byte(`"viewer"`), 1)
	if bytes.Equal(edited, data) {
		t.Fatal("the plan file holds no \"editor\" to edit")
	}
	if err := os.WriteFile(w.path("edited.plan"), edited, 0o600); err != nil {
		t.Fatal(err)
	}
	r := w.must(1, "show", "edited.plan")
	wantStderr(t, r, "edited.plan", "changed after it was made", "reconcile plan --out FILE")
	if strings.Contains(r.stdout, "viewer") {
		t.Errorf("show printed the edited plan:\n%s", r)
	}

	// Not a plan file, no plan file, and arguments.
	w.write("junk.plan", "{}")
	wantStderr(t, w.must(1, "show", "junk.plan"), "not a reconcile plan file")
	wantStderr(t, w.must(1, "show", "missing.plan"), "missing.plan")
	wantStderr(t, w.must(1, "show"), "one argument, the plan file")
	// The plan is applied where it was made, and shown against that state.
	wantStderr(t, w.must(1, "show", "p.plan", "--state", w.path("other.db")), "it was made against the state at")

	// The state moved on: shown, with a note that apply would refuse it.
	w.must(0, "apply", "--auto-approve")
	r = w.must(0, "show", "p.plan")
	wantStdout(t, r, "will be created")
	wantStderr(t, r, "changed since the plan was made", "apply would refuse it")

	// The state cannot be read: shown, with a warning.
	if err := os.Rename(w.path(".reconcile/state.db"), w.path(".reconcile/moved.db")); err != nil {
		t.Fatal(err)
	}
	r = w.must(0, "show", "p.plan")
	wantStdout(t, r, "will be created")
	wantStderr(t, r, "could not be verified", "does not exist")
}
