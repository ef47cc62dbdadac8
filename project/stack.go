package project

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/pbkdf2"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

// Setting is one entry of a stack's config.
type Setting struct {
	// Namespace is the part of the key before the first ':' ("" for a
	// plain key); Name the rest. A key "acme:region" of project acme
	// sets the config entry region.
	Namespace, Name string
	// Value is the value, JSON-shaped; for a secure value, the clear text
	// once Decrypt has run (a string).
	Value any
	// Secure marks a value given encrypted ("secure: v1:..."): it is
	// secret.
	Secure bool
	// Line and Col locate the key in File.
	File      string
	Line, Col int
	// cipher is the encrypted text of a secure value.
	cipher string
}

// Key is the key as written.
func (s Setting) Key() string {
	if s.Namespace == "" {
		return s.Name
	}
	return s.Namespace + ":" + s.Name
}

// Stack is what Pulumi.<stack>.yaml says of one stack.
type Stack struct {
	Config []Setting
	// EncryptionSalt is "encryptionsalt:", the passphrase provider's
	// state; "" when no value is encrypted with a passphrase.
	EncryptionSalt string
	// SecretsProvider is "secretsprovider:"; "" or "passphrase" for the
	// passphrase provider, the one reconcile can decrypt.
	SecretsProvider string
	file            string
}

// ParseStack reads a Pulumi.<stack>.yaml. file names it in errors. A secure
// value stays encrypted until Decrypt.
func ParseStack(file string, data []byte) (*Stack, error) {
	s := &Stack{file: file}
	root, err := parseRoot(file, data)
	if err != nil || root == nil {
		return s, err
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		switch k.Value {
		case "encryptionsalt":
			if s.EncryptionSalt, err = scalar(file, k, v); err != nil {
				return nil, err
			}
		case "secretsprovider":
			if s.SecretsProvider, err = scalar(file, k, v); err != nil {
				return nil, err
			}
		case "config":
			if v.Kind == yaml.ScalarNode && v.ShortTag() == "!!null" {
				continue
			}
			if v.Kind != yaml.MappingNode {
				return nil, posErr(file, v, "config must be a mapping, got %s", kindOf(v))
			}
			for j := 0; j+1 < len(v.Content); j += 2 {
				set, err := parseSetting(file, v.Content[j], v.Content[j+1])
				if err != nil {
					return nil, err
				}
				s.Config = append(s.Config, set)
			}
		}
	}
	return s, nil
}

func parseSetting(file string, k, v *yaml.Node) (Setting, error) {
	if k.Kind != yaml.ScalarNode || k.Value == "" {
		return Setting{}, posErr(file, k, "config keys must be strings")
	}
	set := Setting{File: file, Line: k.Line, Col: k.Column}
	set.Namespace, set.Name, _ = strings.Cut(k.Value, ":")
	if !strings.Contains(k.Value, ":") {
		set.Namespace, set.Name = "", k.Value
	}
	if set.Name == "" {
		return Setting{}, posErr(file, k, "config key %q has no name after its namespace", k.Value)
	}
	if v.Kind == yaml.MappingNode && len(v.Content) == 2 && v.Content[0].Value == "secure" {
		c, err := scalar(file, v.Content[0], v.Content[1])
		if err != nil {
			return Setting{}, err
		}
		set.Secure, set.cipher = true, c
		return set, nil
	}
	val, err := plain(file, v)
	if err != nil {
		return Setting{}, err
	}
	set.Value = val
	return set, nil
}

// plain converts a YAML value to a JSON-shaped one. A secure value inside
// a structured one is refused: reconcile decrypts whole values only.
func plain(file string, n *yaml.Node) (any, error) {
	switch n.Kind {
	case yaml.AliasNode:
		return plain(file, n.Alias)
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!null":
			return nil, nil
		case "!!bool":
			var v bool
			if n.Decode(&v) == nil {
				return v, nil
			}
		case "!!int":
			var i int64
			if n.Decode(&i) == nil {
				return i, nil
			}
		case "!!float":
			var f float64
			if n.Decode(&f) == nil {
				return f, nil
			}
		}
		return n.Value, nil
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			v, err := plain(file, c)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case yaml.MappingNode:
		if len(n.Content) == 2 && n.Content[0].Value == "secure" {
			return nil, posErr(file, n, "a secure value inside a structured config value is not supported: make it a config entry of its own")
		}
		out := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			v, err := plain(file, n.Content[i+1])
			if err != nil {
				return nil, err
			}
			out[n.Content[i].Value] = v
		}
		return out, nil
	}
	return nil, posErr(file, n, "unsupported config value")
}

// HasSecure reports whether some value is encrypted.
func (s *Stack) HasSecure() bool {
	for _, set := range s.Config {
		if set.Secure {
			return true
		}
	}
	return false
}

// Decrypt decrypts every secure value with the passphrase, as Pulumi's
// passphrase secrets provider encrypted it: AES-256-GCM under a key derived
// from the passphrase with PBKDF2 (SHA-256, 1,000,000 iterations) and the
// salt of "encryptionsalt". With no secure value it does nothing; with one
// and no passphrase it returns ErrNoPassphrase. A wrong passphrase is an
// error saying so; neither the passphrase nor any value is ever in an error.
func (s *Stack) Decrypt(passphrase string) error {
	if !s.HasSecure() {
		return nil
	}
	switch s.SecretsProvider {
	case "", "passphrase", "default":
	default:
		return fmt.Errorf("%s: secretsprovider %q: reconcile decrypts only values of the passphrase secrets provider", s.file, s.SecretsProvider)
	}
	if s.EncryptionSalt == "" {
		return fmt.Errorf("%s: secure values without encryptionsalt: the file was not written by the passphrase secrets provider", s.file)
	}
	if passphrase == "" {
		return fmt.Errorf("%s: %w", s.file, ErrNoPassphrase)
	}
	gcm, err := passphraseCipher(passphrase, s.EncryptionSalt)
	if err != nil {
		return fmt.Errorf("%s: encryptionsalt: %w", s.file, err)
	}
	for i := range s.Config {
		set := &s.Config[i]
		if !set.Secure {
			continue
		}
		text, err := decrypt(gcm, set.cipher)
		if err != nil {
			return fmt.Errorf("%s:%d:%d: secure value of %q: %w", set.File, set.Line, set.Col, set.Key(), err)
		}
		set.Value = text
	}
	return nil
}

// errWrongPassphrase is the error of a passphrase that does not open the
// stack's values.
var errWrongPassphrase = errors.New("the passphrase is not the one that encrypted this stack's values (PULUMI_CONFIG_PASSPHRASE)")

// passphraseCipher derives the AES-GCM cipher from the passphrase and the
// provider's state "v1:<salt>:v1:<nonce>:<ciphertext of 'pulumi'>", and
// checks it opens the known text.
func passphraseCipher(passphrase, state string) (cipher.AEAD, error) {
	parts := strings.SplitN(state, ":", 3)
	if len(parts) != 3 || parts[0] != "v1" {
		return nil, errors.New("not a passphrase provider state (v1:SALT:...)")
	}
	salt, err := base64.StdEncoding.DecodeString(parts[1])
	if err != nil {
		return nil, errors.New("the salt is not base64")
	}
	key, err := pbkdf2.Key(sha256.New, passphrase, salt, 1000000, 32)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	if check, err := decrypt(gcm, parts[2]); err != nil || check != "pulumi" {
		return nil, errWrongPassphrase
	}
	return gcm, nil
}

// decrypt opens "v1:<nonce>:<ciphertext>", both base64.
func decrypt(gcm cipher.AEAD, value string) (string, error) {
	parts := strings.Split(value, ":")
	if len(parts) != 3 || parts[0] != "v1" {
		return "", errors.New("not an encrypted value (v1:NONCE:CIPHERTEXT)")
	}
	nonce, err := base64.StdEncoding.DecodeString(parts[1])
	if err != nil || len(nonce) != gcm.NonceSize() {
		return "", errors.New("bad nonce")
	}
	ct, err := base64.StdEncoding.DecodeString(parts[2])
	if err != nil {
		return "", errors.New("the ciphertext is not base64")
	}
	msg, err := gcm.Open(nil, nonce, ct, nil)
	if err != nil {
		return "", errWrongPassphrase
	}
	return string(msg), nil
}
