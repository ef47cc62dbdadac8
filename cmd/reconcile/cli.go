package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/reconcile-dev/reconcile/engine/apply"
	"github.com/reconcile-dev/reconcile/engine/diag"
	"github.com/reconcile-dev/reconcile/engine/render"
	"github.com/reconcile-dev/reconcile/engine/specs"
	"github.com/reconcile-dev/reconcile/internal/untrusted"
)

// Exit codes.
const (
	exitOK      = 0
	exitError   = 1
	exitChanges = 2
)

// globals are the flags every command accepts.
type globals struct {
	statePath   string
	stack       string
	lockTimeout time.Duration
	lockTTL     time.Duration
	output      string
	config      configFlag
	noColor     bool
	emulator    string // "" off, "builtin" in-process, or a URL
	specPath    string
	parallelism int
}

type configFlag map[string]string

func (c configFlag) String() string { return "" }
func (c configFlag) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return fmt.Errorf("want KEY=VALUE, got %q", s)
	}
	c[k] = v
	return nil
}

type emulatorFlag struct{ v *string }

func (e emulatorFlag) String() string { return "" }
func (e emulatorFlag) Set(s string) error {
	switch s {
	case "true", "":
		*e.v = "builtin"
	case "false":
		*e.v = ""
	default:
		u, err := url.Parse(s)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") {
			return fmt.Errorf("want --emulator or --emulator=URL (http://127.0.0.1:PORT), got %q", s)
		}
		// The emulator hands out its private key to whoever asks: it is
		// only ever reached on this machine, never over a network.
		if !isLoopback(u.Hostname()) {
			return fmt.Errorf("--emulator=%s: the emulator must be on this machine (127.0.0.1, ::1 or localhost): its credentials, private key included, would cross the network", s)
		}
		*e.v = strings.TrimRight(s, "/")
	}
	return nil
}

// isLoopback reports whether host names this machine: localhost or a
// loopback address.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
func (e emulatorFlag) IsBoolFlag() bool { return true }

// cli is one invocation.
type cli struct {
	ctx    context.Context
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	g      globals
	cmd    string
	set    map[string]bool // flags given on the command line
	ws     *workspace      // the project, stack and backend, once resolved
	// secretsOnStdout leaves stdout out of the redaction of the specs'
	// secrets: 'output --show-secrets' prints them there by request.
	secretsOnStdout bool
	// planSpecHash is the spec hash of the plan file being applied: specs
	// with that hash were validated when the plan was made (the signature,
	// checked before anything is applied, vouches for it).
	planSpecHash string
	// planCuts are the lines of the specs that the plan file being
	// applied lets its apply load without (plan.File.Cuts).
	planCuts []specs.FileCuts
	// events is the event stream on stdout of --output jsonl; nil otherwise.
	events *render.EventStream
}

type command struct {
	name    string
	args    string
	summary string
	detail  string
	flags   func(fs *flag.FlagSet, c *cli, o *cmdOpts)
	run     func(c *cli, o *cmdOpts, args []string) int
	spec    bool // takes -f
}

// cmdOpts holds the per-command flags.
type cmdOpts struct {
	out            string
	refresh        bool
	refreshOnly    bool
	detailed       bool
	autoApprove    bool
	typ            string
	serial         int64
	listen, data   string
	ddRateLimit    int
	seed           string
	progressPeriod time.Duration
	to             string
	allStacks      bool
	format         string   // graph: dot or mermaid
	destroy        bool     // plan --destroy, apply --destroy
	showSecrets    bool     // output --show-secrets
	targets        listFlag // --target NAME, repeatable
	replaces       listFlag // --replace NAME, repeatable
	allowLockout   bool     // plan, apply, destroy --allow-self-lockout
}

// listFlag is a flag that may be given several times; each adds a value.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }
func (l *listFlag) Set(s string) error {
	if s == "" {
		return errors.New("want a name")
	}
	*l = append(*l, s)
	return nil
}

func commands() []*command {
	return []*command{
		validateCmd, planCmd, showCmd, applyCmd, destroyCmd, driftCmd, outputCmd, graphCmd, importCmd, stateCmd, stackCmd, schemaCmd, emulateCmd, versionCmd,
	}
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	c := &cli{ctx: ctx, stdin: stdin, stdout: &sanitizer{w: stdout}, stderr: &sanitizer{w: stderr}}
	defer func() {
		flushOutput(c.stdout)
		flushOutput(c.stderr)
	}()
	if len(args) == 0 {
		c.usage(stderr)
		return exitError
	}
	name := args[0]
	switch name {
	case "-h", "-help", "--help", "help":
		if len(args) > 1 {
			for _, cmd := range commands() {
				if cmd.name == args[1] {
					fs, _ := c.flagSet(cmd)
					fs.SetOutput(stdout)
					fs.Usage()
					return exitOK
				}
			}
		}
		c.usage(stdout)
		return exitOK
	case "-v", "--version":
		name = "version"
	}
	for _, cmd := range commands() {
		if cmd.name == name {
			c.cmd = name
			return c.runCommand(cmd, args[1:])
		}
	}
	var names []string
	for _, cmd := range commands() {
		names = append(names, cmd.name)
	}
	fmt.Fprintf(stderr, "reconcile: unknown command %q%s\nRun 'reconcile help' for the list of commands.\n", name, didYouMean(name, names))
	return exitError
}

func (c *cli) usage(w io.Writer) {
	fmt.Fprintf(w, "reconcile manages cloud resources declared in YAML specs.\n\nUsage:\n  reconcile COMMAND [flags]\n\nCommands:\n")
	for _, cmd := range commands() {
		fmt.Fprintf(w, "  %-10s %s\n", cmd.name, cmd.summary)
	}
	fmt.Fprintf(w, "\nRun 'reconcile COMMAND -h' for what a command does and its flags.\n")
	fmt.Fprintf(w, "\nGlobal flags, which every command takes:\n")
	fs := flag.NewFlagSet("reconcile", flag.ContinueOnError)
	(&cli{}).globalFlags(fs)
	printFlags(w, fs, nil)
	fmt.Fprint(w, `
Environment:
  RECONCILE_STATE    where state lives, as --state: a path, or etcd://HOST:PORT[,...]/PREFIX
  RECONCILE_STACK    the stack, as --stack
  ETCDCTL_USER, ETCDCTL_PASSWORD, ETCDCTL_CERT, ETCDCTL_KEY, ETCDCTL_CACERT
                     etcd's credentials and TLS files, as etcdctl takes them
  PULUMI_CONFIG_PASSPHRASE, PULUMI_CONFIG_PASSPHRASE_FILE
                     the passphrase of secure: values in Pulumi.<stack>.yaml
  NO_COLOR           never colour the output
`)
}

// globalFlags declares the flags every command takes.
func (c *cli) globalFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.g.statePath, "state", defaultStatePath, "where state lives: a file path, or etcd://HOST:PORT[,HOST:PORT...]/PREFIX (also RECONCILE_STATE, or backend: url: in Pulumi.yaml)")
	fs.StringVar(&c.g.stack, "stack", defaultStack, "the stack to work on; its config comes from Pulumi.<stack>.yaml (also RECONCILE_STACK)")
	fs.DurationVar(&c.g.lockTimeout, "lock-timeout", 0, "how long to wait for another process holding the state (e.g. 30s)")
	fs.DurationVar(&c.g.lockTTL, "lock-ttl", 15*time.Second, "on etcd: how long a lock outlives its holder's last sign of life (at least 5s); a run stalled longer loses the lock and stops")
	fs.StringVar(&c.g.output, "output", "text", "output format: text, json or markdown; plan, apply and destroy also take jsonl, a stream of events (docs/events-jsonl.md)")
	fs.Var(c.g.config, "config", "set a config value, `KEY=VALUE` (repeatable)")
	fs.BoolVar(&c.g.noColor, "no-color", false, "never colour the output (also NO_COLOR)")
	fs.Var(emulatorFlag{&c.g.emulator}, "emulator", "use the built-in emulator of the cloud APIs, or with =URL a running 'reconcile emulate'")
}

// isGlobal reports whether name is a flag every command takes.
func isGlobal(name string) bool {
	fs := flag.NewFlagSet("", flag.ContinueOnError)
	(&cli{}).globalFlags(fs)
	return fs.Lookup(name) != nil
}

func (c *cli) flagSet(cmd *command) (*flag.FlagSet, *cmdOpts) {
	fs := flag.NewFlagSet("reconcile "+cmd.name, flag.ContinueOnError)
	o := &cmdOpts{}
	c.g.config = configFlag{}
	c.globalFlags(fs)
	if cmd.spec {
		fs.StringVar(&c.g.specPath, "f", ".", "spec file, or directory of *.yaml specs and Main.json (a Pulumi project: with main: in its Pulumi.yaml, the program is in that subdirectory)")
	}
	if cmd.flags != nil {
		cmd.flags(fs, c, o)
	}
	fs.Usage = func() { commandUsage(fs.Output(), cmd) }
	return fs, o
}

// commandUsage writes the help of cmd: its usage line, what it does, its
// own flags, then the names of the global flags, which 'reconcile help'
// describes. This is what kubectl and Terraform users find: a command's
// help is about that command, and the flags every command takes are
// described once, where the commands are listed.
func commandUsage(w io.Writer, cmd *command) {
	fmt.Fprintf(w, "Usage: %s\n\n%s\n", strings.TrimSpace("reconcile "+cmd.name+" "+cmd.args), cmd.summary)
	if cmd.detail != "" {
		fmt.Fprintf(w, "\n%s\n", strings.TrimSpace(cmd.detail))
	}
	// A new set, so that the defaults shown are the declared ones, not
	// what flags given before -h set.
	fs, _ := (&cli{}).flagSet(cmd)
	var own, global []string
	fs.VisitAll(func(f *flag.Flag) {
		if isGlobal(f.Name) {
			global = append(global, dashed(f.Name))
		} else {
			own = append(own, f.Name)
		}
	})
	if len(own) > 0 {
		fmt.Fprintf(w, "\nFlags:\n")
		printFlags(w, fs, func(f *flag.Flag) bool { return !isGlobal(f.Name) })
	}
	fmt.Fprintf(w, "\nGlobal flags (every command takes them; 'reconcile help' describes them):\n  %s\n", strings.Join(global, ", "))
}

// printFlags writes the flags of fs that keep selects (all when it is
// nil), sorted by name, each as "--name TYPE" then its description and
// default.
func printFlags(w io.Writer, fs *flag.FlagSet, keep func(*flag.Flag) bool) {
	fs.VisitAll(func(f *flag.Flag) {
		if keep != nil && !keep(f) {
			return
		}
		arg, usage := flag.UnquoteUsage(f)
		line := "  " + dashed(f.Name)
		if arg != "" {
			line += " " + arg
		}
		fmt.Fprintf(w, "%s\n      %s", line, strings.ReplaceAll(usage, "\n", "\n      "))
		if def := f.DefValue; def != "" && def != "0" && def != "0s" && def != "false" && def != "[]" {
			if arg == "string" {
				def = strconv.Quote(def)
			}
			fmt.Fprintf(w, " (default %s)", def)
		}
		fmt.Fprintln(w)
	})
}

// dashed is a flag's name as the command line spells it: -f, --output.
func dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// flagError says in one line what is wrong with the flags given to cmd
// (the flag package's error err), with a suggestion for an unknown flag,
// and where the flags are described.
func flagError(fs *flag.FlagSet, cmd *command, err error) string {
	msg := err.Error()
	help := fmt.Sprintf("'reconcile %s -h' lists its flags", cmd.name)
	what := msg
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		var names []string
		fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
		what = "unknown flag " + untrusted.Text(dashed(name))
		if s := diag.Suggest(name, names); s != "" {
			what += " (did you mean " + dashed(s) + "?)"
		} else if others := commandsTaking(name); len(others) > 0 {
			what += " (a flag of " + strings.Join(others, " and ") + ")"
		}
	} else if name, ok := strings.CutPrefix(msg, "flag needs an argument: -"); ok {
		what = dashed(name) + " needs a value"
		if f := fs.Lookup(name); f != nil {
			if arg, _ := flag.UnquoteUsage(f); arg != "" && arg != "string" && arg != "value" {
				what += ": " + dashed(name) + " " + arg
			}
		}
	} else if m := badValue.FindStringSubmatch(msg); m != nil {
		value, name, cause := m[1], m[2], m[3]
		flagName := dashed(name)
		switch {
		case strings.HasPrefix(cause, flagName):
			what = cause // the flag's own message names it
		case cause == "parse error" || cause == "value out of range":
			what = fmt.Sprintf("%s %s: %s", flagName, untrusted.Quote(mustUnquote(value)), wantOf(fs.Lookup(name), cause))
		default:
			what = flagName + ": " + cause
		}
	}
	return fmt.Sprintf("reconcile %s: %s; %s", cmd.name, what, help)
}

// badValue matches the flag package's errors for a value a flag refuses:
// the value (quoted), the flag's name and the cause.
var badValue = regexp.MustCompile(`^invalid (?:boolean )?value ("(?:[^"\\]|\\.)*") for (?:flag )?-([^:]+): (.*)$`)

// mustUnquote undoes the quoting of a value in the flag package's error.
func mustUnquote(q string) string {
	if s, err := strconv.Unquote(q); err == nil {
		return s
	}
	return q
}

// wantOf says what flag f takes, for a value it could not parse.
func wantOf(f *flag.Flag, cause string) string {
	if cause == "value out of range" {
		return "out of range"
	}
	if f != nil {
		if g, ok := f.Value.(flag.Getter); ok {
			switch g.Get().(type) {
			case bool:
				return "want true or false"
			case int, int64, uint, uint64:
				return "want a whole number"
			case float64:
				return "want a number"
			case time.Duration:
				return "want a duration such as 30s or 5m"
			}
		}
	}
	return cause
}

// commandsTaking lists the commands that take the flag name.
func commandsTaking(name string) []string {
	var out []string
	for _, cmd := range commands() {
		if fs, _ := (&cli{}).flagSet(cmd); fs.Lookup(name) != nil {
			out = append(out, cmd.name)
		}
	}
	return out
}

// runCommand parses flags (which may come before or after positional
// arguments) and runs cmd.
func (c *cli) runCommand(cmd *command, args []string) int {
	fs, o := c.flagSet(cmd)
	// The flag package prints its error and the usage on -h and on errors
	// alike, to its output: help belongs on stdout, and an error is one
	// line of ours, so it prints nothing itself.
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				commandUsage(c.stdout, cmd)
				return exitOK
			}
			fmt.Fprintln(c.stderr, flagError(fs, cmd, err))
			return exitError
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
	c.set = map[string]bool{}
	fs.Visit(func(f *flag.Flag) { c.set[f.Name] = true })
	if san, ok := c.stdout.(*sanitizer); ok && c.color() {
		san.sgr = true // reconcile's own colours pass; nothing else does
	}
	if c.g.parallelism < 1 && c.set["parallelism"] {
		fmt.Fprintf(c.stderr, "reconcile %s: --parallelism must be at least 1, got %d\n", cmd.name, c.g.parallelism)
		return exitError
	}
	if c.g.lockTTL < 5*time.Second {
		fmt.Fprintf(c.stderr, "reconcile %s: --lock-ttl must be at least 5s, got %s: the lock is renewed every third of it, and a shorter one is lost to any pause of a busy machine\n", cmd.name, c.g.lockTTL)
		return exitError
	}
	if c.g.lockTimeout < 0 {
		fmt.Fprintf(c.stderr, "reconcile %s: --lock-timeout must not be negative, got %s\n", cmd.name, c.g.lockTimeout)
		return exitError
	}
	switch c.g.output {
	case "text", "json", "markdown":
	case "jsonl":
		if !streams(cmd.name) {
			fmt.Fprintf(c.stderr, "reconcile %s: --output jsonl is the event stream of plan, apply and destroy; use --output json for one document\n", cmd.name)
			return exitError
		}
		c.startEvents(cmd.name)
	default:
		fmt.Fprintf(c.stderr, "reconcile %s: --output must be text, json or markdown (or jsonl for plan, apply and destroy), got %q\n", cmd.name, c.g.output)
		return exitError
	}
	code := cmd.run(c, o, pos)
	// A command that received a stop signal never reports success, even
	// when the work it had started was the last: what it was asked to do
	// may not be what it did. 'emulate' runs until it is stopped.
	if reason := apply.StopReason(c.ctx); reason != "" && code == exitOK && cmd.name != "emulate" {
		code = c.errorf("reconcile %s was stopped by %s", cmd.name, reason)
	}
	return code
}

// errorf prints an error the way every command does, and returns exitError.
// With --output jsonl it is a diagnostic event too. An error is one line:
// what it holds from the specs or a cloud (a vendor's message echoing a
// value) is escaped, newlines included, so that it cannot start a line of
// its own.
func (c *cli) errorf(format string, args ...any) int {
	msg := fmt.Sprintf(format, args...)
	fmt.Fprintf(c.stderr, "Error: %s\n", untrusted.Text(msg))
	if c.events != nil {
		c.events.Diagnostic(diag.Diagnostic{Severity: diag.Error, Summary: msg})
	}
	return exitError
}

// color reports whether output may be coloured.
func (c *cli) color() bool {
	if c.g.noColor || os.Getenv("NO_COLOR") != "" || c.g.output != "text" {
		return false
	}
	f, ok := underlying(c.stdout).(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// interactive reports whether a person can answer a prompt.
func (c *cli) interactive() bool {
	f, ok := c.stdin.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return false
	}
	o, ok := underlying(c.stdout).(*os.File)
	return ok && term.IsTerminal(int(o.Fd()))
}

func (c *cli) printDiags(ds diag.Diagnostics) {
	for _, d := range ds {
		fmt.Fprintln(c.stderr, d.String())
		if c.events != nil {
			c.events.Diagnostic(d)
		}
	}
}

func didYouMean(name string, names []string) string {
	if s := diag.Suggest(name, names); s != "" {
		return fmt.Sprintf(" (did you mean %q?)", s)
	}
	return ""
}

func sortedNames[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
