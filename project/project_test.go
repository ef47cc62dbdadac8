package project

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseProject(t *testing.T) {
	t.Parallel()
	p, err := ParseProject("Pulumi.yaml", []byte("name: orders\nruntime: yaml\nbackend:\n  url: etcd://10.0.0.1:2379/reconcile/orders\nmain: infra/\nresources: {}\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := &Project{Name: "orders", Backend: "etcd://10.0.0.1:2379/reconcile/orders", Main: "infra/", mainAt: posOf{"Pulumi.yaml", 5, 7}}
	if !reflect.DeepEqual(p, want) {
		t.Errorf("ParseProject = %+v, want %+v", p, want)
	}
	for src, msg := range map[string]string{
		"name: [a]\n":          "Pulumi.yaml:1:7: name must be a string",
		"name: 'a b'\n":        `Pulumi.yaml:1:7: name "a b" is not a valid project name`,
		"backend: etcd://x\n":  "Pulumi.yaml:1:10: backend must be a mapping with url:",
		"backend:\n  uri: x\n": `Pulumi.yaml:2:3: unknown key "uri" in backend`,
		"- a\n":                "Pulumi.yaml:1:1: want a mapping",
	} {
		if _, err := ParseProject("Pulumi.yaml", []byte(src)); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("ParseProject(%q) = %v, want an error containing %q", src, err, msg)
		}
	}
}

func TestIsStackFile(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]bool{
		"Pulumi.dev.yaml": true, "Pulumi.prod.yml": true, "Pulumi.a.b.yaml": true,
		"Pulumi.yaml": false, "main.yaml": false, "Pulumi..yaml": false, "pulumi.dev.yaml": false,
	} {
		if got := IsStackFile(name); got != want {
			t.Errorf("IsStackFile(%q) = %v, want %v", name, got, want)
		}
	}
}

// encryptState and encrypt do what Pulumi's passphrase secrets provider
// does (pkg/secrets/passphrase, sdk/go/common/resource/config/crypt.go).
func encryptState(t *testing.T, passphrase string) (string, cipher.AEAD) {
	t.Helper()
	salt := make([]byte, 8)
	rand.Read(salt)
	key, err := pbkdf2.Key(sha256.New, passphrase, salt, 1000000, 32)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := aes.NewCipher(key)
	gcm, _ := cipher.NewGCM(block)
	return fmt.Sprintf("v1:%s:%s", base64.StdEncoding.EncodeToString(salt), encrypt(gcm, "pulumi")), gcm
}

func encrypt(gcm cipher.AEAD, text string) string {
	nonce := make([]byte, 12)
	rand.Read(nonce)
	return fmt.Sprintf("v1:%s:%s", base64.StdEncoding.EncodeToString(nonce), base64.StdEncoding.EncodeToString(gcm.Seal(nil, nonce, []byte(text), nil)))
}

func TestStackConfig(t *testing.T) {
	t.Parallel()
	state, gcm := encryptState(t, "correct horse")
	src := fmt.Sprintf(`encryptionsalt: %s
config:
  orders:region: us-ashburn-1
  replicas: 2
  orders:tags:
    team: nlp
    list: [1, "two"]
  orders:apiToken:
    secure: %s
  aws:region: eu-west-1
`, state, encrypt(gcm, "s3cr3t&\"value"))
	s, err := ParseStack("Pulumi.dev.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if !s.HasSecure() {
		t.Fatal("HasSecure = false")
	}
	if err := s.Decrypt(""); !errors.Is(err, ErrNoPassphrase) {
		t.Errorf("Decrypt without a passphrase = %v, want ErrNoPassphrase", err)
	}
	if err := s.Decrypt("wrong horse"); err == nil || !strings.Contains(err.Error(), "not the one that encrypted") || strings.Contains(err.Error(), "wrong horse") {
		t.Errorf("Decrypt with a wrong passphrase = %v, want it to say so without the passphrase", err)
	}
	if err := s.Decrypt("correct horse"); err != nil {
		t.Fatal(err)
	}
	got := map[string]any{}
	secure := map[string]bool{}
	for _, set := range s.Config {
		got[set.Key()] = set.Value
		secure[set.Key()] = set.Secure
	}
	want := map[string]any{
		"orders:region": "us-ashburn-1", "replicas": int64(2), "aws:region": "eu-west-1",
		"orders:tags":     map[string]any{"team": "nlp", "list": []any{int64(1), "two"}},
		"orders:apiToken": "s3cr3t&\"value",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("config = %#v, want %#v", got, want)
	}
	if !secure["orders:apiToken"] || secure["orders:region"] {
		t.Errorf("secure = %v, want only orders:apiToken", secure)
	}
}

func TestStackConfigErrors(t *testing.T) {
	t.Parallel()
	for src, msg := range map[string]string{
		"config: 3\n":                                                   "Pulumi.dev.yaml:1:9: config must be a mapping",
		"config:\n  proj:: 1\n":                                         `Pulumi.dev.yaml:2:3: config key "proj:" has no name`,
		"config:\n  a:\n    b: {secure: v1:x:y}\n":                      "Pulumi.dev.yaml:3:8: a secure value inside a structured config value is not supported",
		"config:\n  a: {secure: v1:a:b}\n":                              "secure values without encryptionsalt",
		"secretsprovider: awskms://k\nconfig:\n  a: {secure: v1:a:b}\n": "reconcile decrypts only values of the passphrase secrets provider",
	} {
		s, err := ParseStack("Pulumi.dev.yaml", []byte(src))
		if err == nil {
			err = s.Decrypt("p")
		}
		if err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%q: %v, want an error containing %q", src, err, msg)
		}
	}
}

// main: names the program's directory inside the project, as Pulumi
// reads it; a file there stands for its directory.
func TestProgramDir(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	outside := t.TempDir()
	for _, d := range []string{"infra/prod", "outside-link-target"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "infra", "Main.yaml"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("infra", filepath.Join(root, "in")); err != nil {
		t.Fatal(err)
	}
	for main, want := range map[string]string{
		"":                     root,
		"infra":                filepath.Join(root, "infra"),
		"infra/":               filepath.Join(root, "infra"),
		"./infra/prod/../prod": filepath.Join(root, "infra", "prod"),
		"infra/Main.yaml":      filepath.Join(root, "infra"),
		"in":                   filepath.Join(root, "in"),
		"/etc":                 `error: Pulumi.yaml:3:7: main "/etc" must be a path relative to the project directory`,
		"../x":                 `error: Pulumi.yaml:3:7: main "../x" leads out of the project directory`,
		"infra/../../x":        `error: Pulumi.yaml:3:7: main "infra/../../x" leads out of the project directory`,
		"out":                  `error: Pulumi.yaml:3:7: main "out" leads out of the project directory through a symbolic link`,
		"missing":              `error: Pulumi.yaml:3:7: main "missing": no such file or directory`,
	} {
		src := "name: orders\nruntime: yaml\n"
		if main != "" {
			src += "main: " + main + "\n"
		}
		p, err := ParseProject("Pulumi.yaml", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		got, err := p.ProgramDir(root)
		if msg, isErr := strings.CutPrefix(want, "error: "); isErr {
			if err == nil || !strings.Contains(err.Error(), msg) {
				t.Errorf("main %q: %q, %v; want an error containing %q", main, got, err, msg)
			}
			continue
		}
		if err != nil || got != want {
			t.Errorf("main %q: %q, %v; want %q", main, got, err, want)
		}
	}
}

// The stack's settings file is in the project directory, or in the
// directory stackConfigDir: names inside it; one that leads out is an
// error at stackConfigDir:.
func TestStackFile(t *testing.T) {
	t.Parallel()
	for dir, want := range map[string]string{
		"":                       "Pulumi.dev.yaml",
		"config":                 "config/Pulumi.dev.yaml",
		"./config/":              "config/Pulumi.dev.yaml",
		"config/../settings":     "settings/Pulumi.dev.yaml",
		".":                      "Pulumi.dev.yaml",
		"..":                     `error: Pulumi.yaml:3:17: stackConfigDir ".." leads out of the project directory`,
		"../..":                  `error: Pulumi.yaml:3:17: stackConfigDir "../.." leads out of the project directory`,
		"config/../../elsewhere": `error: Pulumi.yaml:3:17: stackConfigDir "config/../../elsewhere" leads out of the project directory`,
		"/etc":                   `error: Pulumi.yaml:3:17: stackConfigDir "/etc" leads out of the project directory`,
	} {
		src := "name: orders\nruntime: yaml\n"
		if dir != "" {
			src += "stackConfigDir: " + dir + "\n"
		}
		p, err := ParseProject("Pulumi.yaml", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		got, err := p.StackFile("dev")
		if msg, isErr := strings.CutPrefix(want, "error: "); isErr {
			if err == nil || !strings.Contains(err.Error(), msg) {
				t.Errorf("stackConfigDir %q: %q, %v; want an error containing %q", dir, got, err, msg)
			}
			continue
		}
		if err != nil || got != want {
			t.Errorf("stackConfigDir %q: %q, %v; want %q", dir, got, err, want)
		}
	}
}
