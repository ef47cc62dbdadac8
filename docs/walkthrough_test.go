//go:build unix

package docs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// tools are the programs the walkthroughs run besides what the checkout
// builds, with how to get each on Debian: the test fails without them, so
// that CI (.ci/run installs them) never passes without running a
// walkthrough.
var tools = []struct{ name, install string }{
	{"bash", "on Debian: apt-get install bash"},
	{"make", "on Debian: apt-get install make"},
	{"etcd", "on Debian: apt-get install etcd-server"},
	{"etcdctl", "on Debian: apt-get install etcd-client"},
}

// notRun are command lines of the walkthroughs that the test cannot run as
// written, each with the line it runs instead and why.
var notRun = map[string]struct{ instead, why string }{
	"make test": {
		instead: "make -n test >/dev/null",
		why:     "it runs every test of the module, this one included; .ci/run runs it as written, so CI does",
	},
}

// TestWalkthroughs runs the README's quick start and every walkthrough of
// the guides as a reader would, and checks what each printed against the
// output the text shows. Walkthroughs must work after one another, in any
// order, on one machine, as one reader in one shell would run them: the
// test runs them all in one bash, from the root of a fresh copy of the
// checkout, in the order of the documents and the first one again, then in
// the reverse order and its first one again in a second fresh copy at the
// same place (where the second build finds the first's compiled packages in
// Go's cache). Whatever happens, every process
// the walkthroughs started (the servers they run in the background) is
// stopped before the test ends; walkthroughs that leave one running, as a
// reader following them would, fail.
func TestWalkthroughs(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the documentation's walkthroughs, which build reconcile and start etcd: skipped in -short mode")
	}
	root := moduleRoot(t)
	all := walkthroughs(t, root, docFiles(t, root))
	if t.Failed() {
		t.FailNow()
	}
	if len(all) < 2 {
		t.Fatalf("found %d walkthroughs in README.md and docs/*.md; the quick start and the etcd walkthrough at least are marked with <!-- doctest: NAME -->", len(all))
	}
	var missing []string
	for _, tool := range tools {
		if _, err := exec.LookPath(tool.name); err != nil {
			missing = append(missing, fmt.Sprintf("%s (%s)", tool.name, tool.install))
		}
	}
	if len(missing) > 0 {
		t.Fatalf("the documentation's walkthroughs need programs that are not installed: %s. Install them (.ci/run does, in CI) and run the test again", strings.Join(missing, ", "))
	}
	ci := must(os.ReadFile(filepath.Join(root, ".ci", "run")))
	if !regexp.MustCompile(`(?m)^make test$`).Match(ci) {
		t.Errorf(".ci/run does not run 'make test' as the README's quick start says CI does")
	}
	unlock := lockMachine(t)
	defer unlock()

	work := filepath.Join(t.TempDir(), "reconcile")
	// Each order ends with its first walkthrough again: one that was run
	// before, with others since, runs again as well.
	reversed := slices.Clone(all)
	slices.Reverse(reversed)
	orders := [][]*walkthrough{append(slices.Clone(all), all[0]), append(reversed, reversed[0])}
	for _, order := range orders {
		var names []string
		for _, w := range order {
			names = append(names, w.name)
		}
		t.Run(strings.Join(names, "_then_"), func(t *testing.T) {
			if err := os.RemoveAll(work); err != nil {
				t.Fatal(err)
			}
			copyCheckout(t, root, work)
			run(t, work, order)
		})
	}
}

// startLine begins the output of each walkthrough.
const startLine = "doctest: walkthrough "

// run runs the walkthroughs of order, one after the other, in one bash
// started in dir.
func run(t *testing.T, dir string, order []*walkthrough) {
	t.Helper()
	// -e: stop at the first command that fails, and say which.
	script := "set -eo pipefail\ntrap 'echo \"doctest: exit status $? of: $BASH_COMMAND\" >&2' ERR\n"
	for _, w := range order {
		text := w.script()
		for cmd, alt := range notRun {
			re := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(cmd) + `([ \t]+#.*)?$`)
			text = re.ReplaceAllString(text, alt.instead+" # instead of '"+cmd+"': "+alt.why)
		}
		for _, addr := range regexp.MustCompile(`127\.0\.0\.1:[0-9]+`).FindAllString(text, -1) {
			if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
				c.Close()
				t.Fatalf("walkthrough %s: something listens on %s already, which the walkthrough's servers need: stop it (a server left running by an earlier run of the walkthrough?)", w.name, addr)
			}
		}
		// Each walkthrough starts from the root of the checkout, as the
		// text says.
		script += fmt.Sprintf("cd %q\necho %q\n%s", dir, startLine+w.name, text)
	}
	path := filepath.Join(t.TempDir(), "walkthroughs.sh")
	if err := os.WriteFile(path, []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	// The output goes to a file, not a pipe, so that a server left in the
	// background cannot keep Wait from returning.
	out, err := os.Create(filepath.Join(t.TempDir(), "walkthroughs.out"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()

	deadline := 10 * time.Minute
	if d, ok := t.Deadline(); ok && time.Until(d)-30*time.Second < deadline {
		deadline = time.Until(d) - 30*time.Second
	}
	ctx, cancel := context.WithTimeout(t.Context(), deadline)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "--noprofile", "--norc", path)
	cmd.Dir = dir
	cmd.Env = env()
	cmd.Stdout, cmd.Stderr = out, out
	// Its own process group: every process it starts, and those they start,
	// can be signalled at once, whether or not the script ended.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pgid := cmd.Process.Pid
	runErr := cmd.Wait()
	// Whatever remains of the group was left running by the script.
	left := syscall.Kill(-pgid, 0) == nil
	syscall.Kill(-pgid, syscall.SIGKILL)

	output := string(must(os.ReadFile(out.Name())))
	t.Logf("the walkthroughs ran for %v", time.Since(start).Round(100*time.Millisecond))
	switch {
	case ctx.Err() != nil:
		t.Errorf("the walkthroughs did not end within %v (a server that did not start? a wait that never ends?)", deadline)
	case runErr != nil:
		t.Errorf("the walkthroughs failed: %v", runErr)
	case left:
		t.Errorf("the walkthroughs left processes running when they ended: a reader who follows them would too; the last step of each should stop what it started")
	}
	// The output of each walkthrough run, in order; those that did not
	// start (an earlier one failed) have none. The text shows what a first
	// run prints (the quick start's second apply has nothing to create).
	outputs := splitOutput(output)
	for i, w := range order[:min(len(order), len(outputs))] {
		if slices.Index(order, w) < i {
			continue
		}
		for _, want := range w.outputs {
			if missing, ok := matchOutput(outputs[i], want.text); !ok {
				t.Errorf("walkthrough %s: the output shown at %s is not what it printed: no line matches %q (after the lines before it)", w.name, want.pos, missing)
			}
		}
	}
	if t.Failed() {
		t.Logf("script (%s):\n%s\noutput:\n%s", path, script, output)
		logs(t, dir)
	}
}

// splitOutput cuts the output of the walkthroughs into each run's, by the
// line that begins it.
func splitOutput(output string) []string {
	var parts []string
	for _, l := range strings.SplitAfter(output, "\n") {
		if strings.HasPrefix(l, startLine) {
			parts = append(parts, "")
			continue
		}
		if len(parts) > 0 {
			parts[len(parts)-1] += l
		}
	}
	return parts
}

// logs shows the logs the walkthroughs keep under .reconcile, where a
// server that did not start says why.
func logs(t *testing.T, dir string) {
	t.Helper()
	filepath.WalkDir(filepath.Join(dir, ".reconcile"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".log") {
			b, _ := os.ReadFile(p)
			if len(b) > 8<<10 {
				b = b[len(b)-8<<10:]
			}
			t.Logf("%s (its end):\n%s", must(filepath.Rel(dir, p)), b)
		}
		return nil
	})
}

// env is the walkthroughs' environment: the test's, with the Go toolchain
// running the test first in PATH, and without what would point reconcile,
// etcdctl or make elsewhere than the text says (a reader's own state,
// stack, credentials or make flags).
func env() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(k, "RECONCILE_"), strings.HasPrefix(k, "ETCDCTL_"), strings.HasPrefix(k, "PULUMI_"),
			strings.HasPrefix(k, "DD_"), strings.HasPrefix(k, "OCI_"), strings.HasPrefix(k, "GOOGLE_"),
			k == "MAKEFLAGS", k == "MFLAGS", k == "MAKELEVEL", k == "NO_COLOR":
			continue
		case k == "PATH":
			kv = "PATH=" + filepath.Join(runtime.GOROOT(), "bin") + string(os.PathListSeparator) + v
		}
		env = append(env, kv)
	}
	return env
}

// lockMachine keeps two runs of this test on one machine (two checkouts,
// two go test runs) from running the walkthroughs at once: they listen on
// the fixed ports the text gives.
func lockMachine(t *testing.T) func() {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(os.TempDir(), "reconcile-doctest.lock"), os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		t.Fatalf("lock for the walkthroughs: %v", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		t.Fatalf("lock for the walkthroughs: %v", err)
	}
	return func() { f.Close() }
}

// copyCheckout copies the files of the checkout at root to dst: those git
// knows (tracked, or untracked and not ignored), or where git cannot list
// them, every file but those of .git, bin, dist and .reconcile. Nothing a
// build or a walkthrough left in root comes along.
func copyCheckout(t *testing.T, root, dst string) {
	t.Helper()
	var files []string
	cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir = root
	if b, err := cmd.Output(); err == nil {
		for _, f := range strings.Split(string(b), "\x00") {
			if f != "" {
				files = append(files, f)
			}
		}
	} else {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel := must(filepath.Rel(root, p))
			switch {
			case d.IsDir() && slices.Contains([]string{".git", "bin", "dist", ".reconcile"}, rel):
				return filepath.SkipDir
			case !d.IsDir():
				files = append(files, rel)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range files {
		if err := copyFile(filepath.Join(root, f), filepath.Join(dst, f)); err != nil {
			t.Fatalf("copy the checkout: %v", err)
		}
	}
}

// copyFile copies a regular file with its permissions, or a symbolic link
// as a link. A file listed but gone (deleted, not yet committed) is skipped.
func copyFile(src, dst string) error {
	fi, err := os.Lstat(src)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	} else if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		target, err := os.Readlink(src)
		if err != nil {
			return err
		}
		return os.Symlink(target, dst)
	case !fi.Mode().IsRegular():
		return nil
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, fi.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
