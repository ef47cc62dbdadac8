package main

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/reconcile-dev/reconcile/engine/diag"
	"github.com/reconcile-dev/reconcile/engine/specs"
	"github.com/reconcile-dev/reconcile/project"
	"github.com/reconcile-dev/reconcile/state"
	"github.com/reconcile-dev/reconcile/state/etcdstate"
)

// defaultStatePath is the state file of the default stack when neither
// --state, RECONCILE_STATE nor Pulumi.yaml's backend names one.
const defaultStatePath = ".reconcile/state.db"

// defaultStack is the stack used when neither --stack nor RECONCILE_STACK
// names one.
const defaultStack = "default"

// workspace is the project the command works on: its directory, its
// Pulumi.yaml, the stack and the backend holding the stack's state.
type workspace struct {
	dir     string           // the project directory (of the specs)
	project *project.Project // Pulumi.yaml; a zero Project without one
	// program is the program's directory when Pulumi.yaml's main: puts
	// it in another than dir; "" otherwise.
	program string
	stack   string
	// stackFrom names where stack was given, "--stack" or
	// "RECONCILE_STACK"; "" for the default.
	stackFrom string
	backend   backend

	// projectFile is what Pulumi.yaml holds; nil without one.
	projectFile []byte
}

// workspace resolves the project, stack and backend of the command, once.
func (c *cli) workspace() (*workspace, error) {
	if c.ws != nil {
		return c.ws, nil
	}
	dir := c.g.specPath
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		dir = filepath.Dir(dir) // a spec file (reading the specs reports what is wrong with it)
	}
	ws := &workspace{dir: dir, project: &project.Project{}}
	pf := filepath.Join(dir, project.FileName)
	if data, err := readInProject(dir, project.FileName, pf, "make Pulumi.yaml a file of the project"); err == nil {
		ws.projectFile = data
		p, err := project.ParseProject(pf, data)
		if err != nil {
			return nil, err
		}
		ws.project = p
		if fi, err := os.Stat(c.g.specPath); err == nil && fi.IsDir() && p.Main != "" {
			if ws.program, err = p.ProgramDir(dir); err != nil {
				return nil, err
			}
			if filepath.Clean(ws.program) == filepath.Clean(dir) {
				ws.program = "" // main: names the project's own directory
			}
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	ws.stack = c.g.stack
	if c.set["stack"] {
		ws.stackFrom = "--stack"
	} else if env := os.Getenv("RECONCILE_STACK"); env != "" {
		ws.stack, ws.stackFrom = env, "RECONCILE_STACK"
	}
	if !project.ValidStackName(ws.stack) {
		return nil, fmt.Errorf("stack name %q: use letters, digits, '-', '_' and '.'", ws.stack)
	}
	where, from := c.g.statePath, "--state"
	switch {
	case c.set["state"]:
	case os.Getenv("RECONCILE_STATE") != "":
		where, from = os.Getenv("RECONCILE_STATE"), "RECONCILE_STATE"
	case ws.project.Backend != "":
		where, from = ws.project.Backend, "backend: url: in "+filepath.Join(dir, project.FileName)
	}
	b, err := parseBackend(where)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", from, err)
	}
	ws.backend = b
	c.ws = ws
	return ws, nil
}

// backend is where the states of a project's stacks live: a local
// directory of bbolt files, or a key prefix on etcd.
type backend struct {
	// local is the state file of the default stack; the file of stack S
	// is beside it, its name with ".S" before the extension.
	local string
	// etcd is the etcd URL's parts, when the state is on etcd.
	etcd *etcdURL
}

// etcdURL is etcd://HOST:PORT[,HOST:PORT...]/PREFIX.
type etcdURL struct {
	endpoints []string
	prefix    string
}

// parseBackend reads a --state value: a path, file://PATH, or
// etcd://HOST:PORT[,HOST:PORT...]/PREFIX. A value that looks like a URL
// but is not one of these is refused (see checkStateShape).
func parseBackend(s string) (backend, error) {
	if s == "" {
		return backend{}, errors.New("no state location given")
	}
	if err := checkStateShape(s); err != nil {
		return backend{}, err
	}
	switch {
	case strings.HasPrefix(s, "etcd://"):
		rest := strings.TrimPrefix(s, "etcd://")
		hosts, prefix, _ := strings.Cut(rest, "/")
		if strings.Contains(hosts, "@") {
			return backend{}, errors.New("an etcd URL takes no credentials: set ETCDCTL_USER (and ETCDCTL_PASSWORD), or client certificates with ETCDCTL_CERT, ETCDCTL_KEY and ETCDCTL_CACERT")
		}
		var eps []string
		for _, h := range strings.Split(hosts, ",") {
			if h == "" {
				continue
			}
			if _, err := url.Parse("http://" + h); err != nil || !strings.Contains(h, ":") {
				return backend{}, fmt.Errorf("etcd endpoint %q: want HOST:PORT", h)
			}
			eps = append(eps, h)
		}
		if len(eps) == 0 {
			return backend{}, fmt.Errorf("%q names no etcd endpoint: want etcd://HOST:PORT[,HOST:PORT...]/PREFIX", s)
		}
		prefix = strings.Trim(prefix, "/")
		if prefix == "" {
			return backend{}, fmt.Errorf("%q has no key prefix: want etcd://HOST:PORT/PREFIX, one prefix per project, e.g. etcd://10.0.0.5:2379/reconcile/orders", s)
		}
		return backend{etcd: &etcdURL{endpoints: eps, prefix: "/" + prefix}}, nil
	case strings.HasPrefix(s, "file://"):
		p := strings.TrimPrefix(s, "file://")
		if p == "" {
			return backend{}, errors.New("file:// names no path")
		}
		if strings.HasPrefix(p, "~/") {
			home, err := os.UserHomeDir()
			if err != nil {
				return backend{}, err
			}
			p = filepath.Join(home, p[2:])
		}
		if fi, err := os.Stat(p); (err == nil && fi.IsDir()) || strings.HasSuffix(p, "/") {
			p = filepath.Join(p, "state.db") // a directory, as Pulumi's file backends are
		}
		return backend{local: p}, nil
	}
	return backend{local: s}, nil
}

// statePath is the state file of stack on a local backend.
func (b backend) statePath(stack string) string {
	if stack == defaultStack {
		return b.local
	}
	ext := filepath.Ext(b.local)
	return strings.TrimSuffix(b.local, ext) + "." + stack + ext
}

// describe names where stack's state lives, without credentials.
func (b backend) describe(stack string) string {
	if b.etcd != nil {
		return fmt.Sprintf("etcd://%s%s (stack %s)", strings.Join(b.etcd.endpoints, ","), b.etcd.prefix, stack)
	}
	if stack == defaultStack {
		return b.statePath(stack)
	}
	return fmt.Sprintf("%s (stack %s)", b.statePath(stack), stack)
}

// url is the backend as a URL to record in plan files: the etcd URL, or
// the absolute path of the default stack's file.
func (b backend) url() string {
	if b.etcd != nil {
		return "etcd://" + strings.Join(b.etcd.endpoints, ",") + b.etcd.prefix
	}
	abs, err := filepath.Abs(b.local)
	if err != nil {
		return b.local
	}
	return abs
}

// localStacks lists the stacks of a local backend: the default stack's
// file and the files beside it named for a stack.
func (b backend) localStacks() ([]string, error) {
	ext := filepath.Ext(b.local)
	stem := strings.TrimSuffix(filepath.Base(b.local), ext)
	entries, err := os.ReadDir(filepath.Dir(b.local))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		name := e.Name()
		if name == filepath.Base(b.local) {
			out = append(out, defaultStack)
			continue
		}
		mid, ok := strings.CutPrefix(name, stem+".")
		if !ok {
			continue
		}
		stack, ok := strings.CutSuffix(mid, ext)
		if ok && project.ValidStackName(stack) && !strings.Contains(stack, ".lock") {
			out = append(out, stack)
		}
	}
	return out, nil
}

// stackConfig reads the stack's settings file, Pulumi.<stack>.yaml, and
// returns the config values it gives the project: its keys of the
// project's namespace and its plain keys. Secure values are decrypted with
// the passphrase of PULUMI_CONFIG_PASSPHRASE or PULUMI_CONFIG_PASSPHRASE_FILE.
func (ws *workspace) stackConfig() (map[string]specs.StackValue, error) {
	path, data, err := ws.readStackFile()
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	st, err := project.ParseStack(path, data)
	if err != nil {
		return nil, err
	}
	if st.HasSecure() {
		phrase, err := passphrase()
		if err != nil {
			return nil, err
		}
		if err := st.Decrypt(phrase); err != nil {
			return nil, err
		}
	}
	out := map[string]specs.StackValue{}
	for _, set := range st.Config {
		name := set.Name
		if set.Namespace != "" && set.Namespace != ws.project.Name {
			if ws.project.Name != "" {
				continue // another package's (a provider's) settings
			}
			// The program may name the project (its name:): the loader
			// keeps the settings of that namespace.
			name = set.Key()
		}
		out[name] = specs.StackValue{Value: set.Value, Secret: set.Secure,
			Pos: diag.At(set.File, set.Line, set.Col), Key: set.Key()}
	}
	return out, nil
}

// stackConfigDir is the directory of the stacks' settings files: the
// project's, or the one stackConfigDir: names.
func (ws *workspace) stackConfigDir() string {
	if ws.project.StackConfigDir != "" {
		return filepath.Join(ws.dir, ws.project.StackConfigDir)
	}
	return ws.dir
}

// stackFile is the settings file of stack, Pulumi.<stack>.yaml.
func (ws *workspace) stackFile(stack string) string {
	return filepath.Join(ws.stackConfigDir(), project.StackFileName(stack))
}

// passphrase reads the passphrase of Pulumi's passphrase secrets provider
// from PULUMI_CONFIG_PASSPHRASE or the file PULUMI_CONFIG_PASSPHRASE_FILE
// names; "" when neither is set.
func passphrase() (string, error) {
	if p, ok := os.LookupEnv("PULUMI_CONFIG_PASSPHRASE"); ok {
		return p, nil
	}
	if f := os.Getenv("PULUMI_CONFIG_PASSPHRASE_FILE"); f != "" {
		b, err := readLimited(f)
		if err != nil {
			return "", fmt.Errorf("PULUMI_CONFIG_PASSPHRASE_FILE: %w", err)
		}
		return strings.TrimSpace(string(b)), nil
	}
	return "", nil
}

// etcdTLSHint adds to err, an error of package etcdstate, where etcd's
// TLS files are set, if it is about TLS.
func etcdTLSHint(err error) error {
	if errors.Is(err, etcdstate.ErrTLS) {
		return fmt.Errorf("%w (etcd's TLS files are set as for etcdctl: ETCDCTL_CACERT, the CA to trust; ETCDCTL_CERT and ETCDCTL_KEY, a client certificate and its key)", err)
	}
	return err
}

// etcdOptions are the options to open stack's state on the etcd backend.
// Credentials come from etcdctl's environment: ETCDCTL_USER ("name" or
// "name:password") and ETCDCTL_PASSWORD; ETCDCTL_CERT, ETCDCTL_KEY and
// ETCDCTL_CACERT for TLS.
func (b backend) etcdOptions(stack string, so state.Options, lockTTL time.Duration) (etcdstate.Options, error) {
	opts := etcdstate.Options{
		Endpoints: b.etcd.endpoints, Prefix: b.etcd.prefix, Stack: stack,
		CertFile: os.Getenv("ETCDCTL_CERT"), KeyFile: os.Getenv("ETCDCTL_KEY"), CAFile: os.Getenv("ETCDCTL_CACERT"),
		Options: so, LockTTL: lockTTL,
	}
	if (opts.CertFile == "") != (opts.KeyFile == "") {
		return opts, errors.New("ETCDCTL_CERT and ETCDCTL_KEY go together: set both for a client certificate, or neither")
	}
	if user := os.Getenv("ETCDCTL_USER"); user != "" {
		name, pass, hasPass := strings.Cut(user, ":")
		if p, ok := os.LookupEnv("ETCDCTL_PASSWORD"); ok {
			if hasPass {
				return opts, errors.New("ETCDCTL_USER holds a password and ETCDCTL_PASSWORD is set too: set the password in one of them")
			}
			pass = p
		}
		opts.Username, opts.Password = name, pass
	} else if os.Getenv("ETCDCTL_PASSWORD") != "" {
		return opts, errors.New("ETCDCTL_PASSWORD is set without ETCDCTL_USER: set the user name too")
	}
	return opts, nil
}
