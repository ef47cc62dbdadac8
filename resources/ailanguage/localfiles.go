package ailanguage

import (
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/reconcile-dev/reconcile/internal/boundedfile"
)

// checkConfigFiles checks the files the OCI SDK reads whole for profile of
// the config file: the config file itself, the key_file of profile and of
// DEFAULT (the SDK falls back to it), and the key TF_VAR_private_key_path
// names (its last fallback). Each must be a regular file of bounded size,
// so that a path to a FIFO or to /dev/zero fails at once instead of
// hanging or filling memory; a key file that is not there is left to the
// SDK, which may not need it.
func checkConfigFiles(file, profile string) error {
	raw, err := boundedfile.Read(file, maxConfigFile)
	if err != nil {
		return fmt.Errorf("OCI config file: %w", err)
	}
	profiles := []string{profile}
	if profile != "DEFAULT" {
		profiles = append(profiles, "DEFAULT")
	}
	for _, p := range profiles {
		if err := checkIfThere(expandHome(keyFileOf(raw, p)), maxKeyFile); err != nil {
			return fmt.Errorf("OCI config %q profile %q: key_file: %w", file, p, err)
		}
	}
	if key := os.Getenv("TF_VAR_private_key_path"); key != "" {
		if err := checkIfThere(expandHome(key), maxKeyFile); err != nil {
			return fmt.Errorf("TF_VAR_private_key_path: %w", err)
		}
	}
	return nil
}

// checkIfThere is boundedfile.Check for a file the SDK reads only if it can:
// one that cannot be examined (missing, not permitted) is left to the SDK,
// which reports it when it needs it, without hanging.
func checkIfThere(path string, limit int64) error {
	if path == "" {
		return nil
	}
	if _, err := os.Stat(path); err != nil {
		return nil
	}
	return boundedfile.Check(path, limit)
}

// checkSDKFiles checks the optional files the OCI SDK reads whole when it
// makes a client, if they exist: its developer tool configuration
// ($OCI_DEVELOPER_TOOL_CONFIGURATION_FILE_PATH, else
// ~/.oci/developer-tool-configuration.json) and its region metadata
// (~/.oci/regions-config.json).
func checkSDKFiles() error {
	dir := filepath.Join(sdkHome(), ".oci")
	devTool := os.Getenv("OCI_DEVELOPER_TOOL_CONFIGURATION_FILE_PATH")
	if devTool == "" {
		devTool = filepath.Join(dir, "developer-tool-configuration.json")
	}
	for _, f := range []string{devTool, filepath.Join(dir, "regions-config.json")} {
		if err := checkIfThere(f, maxConfigFile); err != nil {
			return fmt.Errorf("OCI SDK configuration: %w", err)
		}
	}
	return nil
}

// profileLine is the SDK's pattern of a profile header.
var profileLine = regexp.MustCompile(`^\[(.*)\]`)

// keyFileOf returns the key_file of profile in the config file's text, as
// the SDK parses it: the first section of that name, its last key_file
// line, the text between the first and second "=", trimmed. It returns ""
// when there is none.
func keyFileOf(config []byte, profile string) string {
	lines := strings.Split(string(config), "\n")
	start := -1
	for i, line := range lines {
		if m := profileLine.FindStringSubmatch(line); len(m) > 1 && m[1] == profile {
			start = i + 1
			break
		}
	}
	if start < 0 {
		return ""
	}
	key := ""
	for _, line := range lines[start:] {
		if profileLine.MatchString(line) {
			break
		}
		parts := strings.Split(line, "=")
		if len(parts) > 1 && strings.ToLower(strings.TrimSpace(parts[0])) == "key_file" {
			key = strings.TrimSpace(parts[1])
		}
	}
	return key
}

// expandHome cleans path and expands a leading "~" as the SDK does.
func expandHome(path string) string {
	if path == "" {
		return ""
	}
	path = filepath.Clean(path)
	if strings.HasPrefix(path, "~") && len(path) > 1 {
		return filepath.Join(sdkHome(), path[2:])
	}
	return path
}

// sdkHome is the home directory as the OCI SDK finds it.
func sdkHome() string {
	if u, err := user.Current(); err == nil {
		return u.HomeDir
	}
	if h := os.Getenv("HOME"); h != "" {
		return h
	}
	return os.Getenv("USERPROFILE")
}
