// Package server runs the emulator of the three cloud APIs on one loopback
// address: OCI AI Language under /20221001/ (and the tag namespaces of OCI
// Identity under /20160918/), GCP Service Management under
// /v1/ and Datadog under /api/v2/, plus the /_emulator/ admin API for
// credentials, latency and fault injection. State persists in a bbolt file.
package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/reconcile-dev/reconcile/resources/emulator"
	"github.com/reconcile-dev/reconcile/resources/emulator/datadog"
	"github.com/reconcile-dev/reconcile/resources/emulator/gcp"
	"github.com/reconcile-dev/reconcile/resources/emulator/oci"
)

// Fixed identities of the emulated OCI tenancy, so that specs written for
// the emulator (testdata/examples) name the same compartment and model on
// every machine. The signing key is generated per data directory.
const (
	Tenancy = "ocid1.tenancy.oc1..aaaaaaaaemulatortenancy"
	User    = "ocid1.user.oc1..aaaaaaaaemulatoruser"
)

// Options configure Start.
type Options struct {
	// Listen is a loopback host:port; empty means 127.0.0.1:0 (any free port).
	Listen string
	// DataDir holds emulator.db and credentials/.
	DataDir string
	// SeedFile, if set, names a JSON seed file (see SeedFile) whose objects
	// are created, besides the built-in ones, unless they exist already. A
	// file that does not read or check stops Start before it listens.
	SeedFile string
	// DatadogRateLimit is how many Datadog calls a minute each endpoint
	// family (restriction_policy, current_user) accepts before answering
	// 429, until the settings change it: 0 means
	// datadog.DefaultRateLimit (1000), a negative value no limit.
	DatadogRateLimit int
}

// Settings are the knobs of the admin API.
type Settings struct {
	LatencyMS     int     `json:"latencyMs"`     // added to every cloud API call
	FaultRate     float64 `json:"faultRate"`     // 0..1: share of cloud API calls that fail
	FaultStatuses []int   `json:"faultStatuses"` // statuses a failing call answers with, chosen at random; 0 drops the connection
	CreateDelayMS int     `json:"createDelayMs"` // how long an OCI endpoint stays CREATING
	UpdateDelayMS int     `json:"updateDelayMs"` // ... UPDATING
	DeleteDelayMS int     `json:"deleteDelayMs"` // ... DELETING
	// DatadogRateLimit is how many Datadog calls a minute each endpoint
	// family accepts before answering 429 (with X-RateLimit-Reset, the
	// seconds to the next minute). 0, or leaving it out, means the value
	// the emulator started with (Options.DatadogRateLimit, by default
	// 1000); a negative value means no limit (answers then carry no
	// X-RateLimit-* headers). The settings read back give the limit in
	// force: the start value for 0, -1 for no limit.
	DatadogRateLimit int `json:"datadogRateLimit"`
	// TrainingDelayMS is how long an OCI AI Language model trains (stays
	// CREATING). 0, or leaving it out, means oci.DefaultTrainingDelay (1s;
	// the real service takes minutes); a negative value means no delay
	// (the next read finds it trained). The settings read back give the
	// delay in force: 1000 for 0, -1 for none.
	TrainingDelayMS int `json:"trainingDelayMs"`
	// TrainingFailure, when set, makes every model training started from
	// then on end FAILED, with this text as the model's lifecycleDetails
	// and its work request's error.
	TrainingFailure string `json:"trainingFailure"`
}

// Server is a running emulator.
type Server struct {
	// URL is http://host:port with no trailing slash.
	URL   string
	Creds emulator.Credentials
	// Seeded says what was done with Options.SeedFile.
	Seeded SeedReport

	store *emulator.Store
	srv   *http.Server
	ln    net.Listener
	oci   *oci.Emulator
	gcp   *gcp.Emulator
	dd    *datadog.Emulator

	ddRateLimit int // Options.DatadogRateLimit, resolved: what settings of 0 mean

	mu       sync.Mutex
	settings Settings
	faults   struct{ injected, total int }
	conns    int // TCP connections accepted
}

// Stats counts what the emulator served since it started.
type Stats struct {
	Requests       int `json:"requests"`       // cloud API calls
	FaultsInjected int `json:"faultsInjected"` // of them, failed by faultRate
	Connections    int `json:"connections"`    // TCP connections accepted, the admin API's included
}

// Stats returns what the emulator served since it started.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Stats{Requests: s.faults.total, FaultsInjected: s.faults.injected, Connections: s.conns}
}

// Start opens (or creates) the emulator's data in opts.DataDir, writes the
// credentials files and serves until Close.
func Start(opts Options) (*Server, error) {
	listen := opts.Listen
	if listen == "" {
		listen = "127.0.0.1:0"
	}
	if err := checkLoopback(listen); err != nil {
		return nil, err
	}
	var seedData SeedFile
	if opts.SeedFile != "" {
		var err error
		if seedData, err = ReadSeedFile(opts.SeedFile); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(opts.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("emulator data directory: %w", err)
	}
	store, err := emulator.OpenStore(filepath.Join(opts.DataDir, "emulator.db"))
	if err != nil {
		return nil, err
	}
	creds, err := loadCredentials(store)
	if err != nil {
		store.Close()
		return nil, err
	}
	s := &Server{Creds: creds, store: store,
		oci: oci.New(store, creds), gcp: gcp.New(store, creds), dd: datadog.New(store, creds)}
	s.ddRateLimit = opts.DatadogRateLimit
	switch {
	case s.ddRateLimit == 0:
		s.ddRateLimit = datadog.DefaultRateLimit
	case s.ddRateLimit < 0:
		s.ddRateLimit = -1
	}
	s.settings.DatadogRateLimit = s.ddRateLimit
	s.settings.TrainingDelayMS = int(oci.DefaultTrainingDelay / time.Millisecond)
	s.dd.SetRateLimit(s.ddRateLimit)
	// The seed file comes after the built-in OCI and GCP data, which its
	// objects may refer to, and before the built-in Datadog user, which
	// its user replaces in a fresh data directory.
	seedFile := func() error {
		if opts.SeedFile == "" {
			return nil
		}
		rep, err := s.seedFrom(seedData)
		if err != nil {
			return fmt.Errorf("seed file %s: %w", opts.SeedFile, err)
		}
		s.Seeded = rep
		return nil
	}
	for _, seed := range []func() error{s.oci.Seed, s.gcp.Seed, seedFile, s.dd.Seed} {
		if err := seed(); err != nil {
			store.Close()
			return nil, err
		}
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		store.Close()
		return nil, fmt.Errorf("emulator listen on %s: %w", listen, err)
	}
	s.ln = ln
	s.URL = "http://" + ln.Addr().String()
	if err := writeCredentialFiles(filepath.Join(opts.DataDir, "credentials"), creds); err != nil {
		ln.Close()
		store.Close()
		return nil, err
	}
	s.srv = &http.Server{Handler: s.handler(), ReadHeaderTimeout: 10 * time.Second, ConnState: func(_ net.Conn, state http.ConnState) {
		if state == http.StateNew {
			s.mu.Lock()
			s.conns++
			s.mu.Unlock()
		}
	}}
	go s.srv.Serve(ln)
	return s, nil
}

// Close stops serving and closes the data file.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	return errors.Join(err, s.store.Close())
}

func checkLoopback(listen string) error {
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return fmt.Errorf("emulator --listen %q: want HOST:PORT on loopback, e.g. 127.0.0.1:8080", listen)
	}
	if host == "localhost" {
		return nil
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("emulator --listen %q: the emulator only listens on loopback (127.0.0.0/8 or [::1])", listen)
	}
	return nil
}

// loadCredentials returns the credentials stored with the data, making them
// on first start.
func loadCredentials(store *emulator.Store) (emulator.Credentials, error) {
	var creds emulator.Credentials
	err := store.Update(func(tx emulator.Tx) error {
		found, err := tx.Get("emulator", "credentials", &creds)
		if err != nil || found {
			return err
		}
		creds, err = emulator.NewCredentials()
		if err != nil {
			return err
		}
		creds.OCITenancy, creds.OCIUser = Tenancy, User
		return tx.Put("emulator", "credentials", creds)
	})
	if err != nil {
		return creds, fmt.Errorf("emulator credentials: %w", err)
	}
	return creds, nil
}

// OCIConfig is the text of an OCI config file for creds whose key_file is
// keyFile.
func OCIConfig(creds emulator.Credentials, keyFile string) string {
	return fmt.Sprintf("[DEFAULT]\nuser=%s\nfingerprint=%s\ntenancy=%s\nregion=%s\nkey_file=%s\n",
		creds.OCIUser, creds.OCIFingerprint, creds.OCITenancy, creds.OCIRegion, keyFile)
}

// Env lists the environment values a client of the emulator uses.
func Env(creds emulator.Credentials) map[string]string {
	return map[string]string{
		"DD_API_KEY":                creds.DatadogAPIKey,
		"DD_APP_KEY":                creds.DatadogAppKey,
		"GOOGLE_OAUTH_ACCESS_TOKEN": creds.GoogleAccessToken,
	}
}

func writeCredentialFiles(dir string, creds emulator.Credentials) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("emulator credentials: %w", err)
	}
	var env strings.Builder
	for _, k := range []string{"DD_API_KEY", "DD_APP_KEY", "GOOGLE_OAUTH_ACCESS_TOKEN"} {
		fmt.Fprintf(&env, "%s=%s\n", k, Env(creds)[k])
	}
	files := map[string]string{
		"oci_api_key.pem": creds.OCIPrivateKey,
		"oci_config":      OCIConfig(creds, filepath.Join(dir, "oci_api_key.pem")),
		"env":             env.String(),
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			return fmt.Errorf("emulator credentials: %w", err)
		}
		if err := os.Chmod(filepath.Join(dir, name), 0o600); err != nil {
			return fmt.Errorf("emulator credentials: %w", err)
		}
	}
	return nil
}

// CredentialsDoc is the body of GET /_emulator/credentials.
type CredentialsDoc struct {
	OCIConfig     string            `json:"ociConfig"` // key_file is "oci_api_key.pem", relative: write the key beside it
	OCIPrivateKey string            `json:"ociPrivateKeyPem"`
	Env           map[string]string `json:"env"`
}

func (s *Server) handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/20221001/", s.cloud(s.oci))
	mux.Handle("/20160918/", s.cloud(s.oci)) // OCI Identity: the tag namespaces
	mux.Handle("/v1/", s.cloud(s.gcp))
	mux.Handle("/api/v2/", s.cloud(s.dd))
	mux.Handle("/tokeninfo", s.cloud(http.HandlerFunc(s.gcp.TokenInfo)))
	mux.Handle("/oauth2/v2/tokeninfo", s.cloud(http.HandlerFunc(s.gcp.TokenInfoV2)))
	mux.HandleFunc("GET /_emulator/credentials", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, CredentialsDoc{OCIConfig: OCIConfig(s.Creds, "oci_api_key.pem"), OCIPrivateKey: s.Creds.OCIPrivateKey, Env: Env(s.Creds)})
	})
	mux.HandleFunc("GET /_emulator/health", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET /_emulator/settings", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		writeJSON(w, http.StatusOK, s.settings)
	})
	mux.HandleFunc("PUT /_emulator/settings", func(w http.ResponseWriter, r *http.Request) {
		var in Settings
		dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&in); err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "settings: " + err.Error()})
			return
		}
		if in.FaultRate < 0 || in.FaultRate > 1 || in.LatencyMS < 0 {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "settings: faultRate must be within 0..1 and latencyMs not negative"})
			return
		}
		writeJSON(w, http.StatusOK, s.Apply(in))
	})
	mux.HandleFunc("GET /_emulator/stats", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, s.Stats())
	})
	return mux
}

// Apply replaces the settings, and returns them as they are now in force:
// with the default faultStatuses when none are given, and datadogRateLimit
// and trainingDelayMs resolved (see Settings).
func (s *Server) Apply(in Settings) Settings {
	if len(in.FaultStatuses) == 0 {
		in.FaultStatuses = []int{429, 500, 503, 0}
	}
	switch {
	case in.DatadogRateLimit == 0:
		in.DatadogRateLimit = s.ddRateLimit
	case in.DatadogRateLimit < 0:
		in.DatadogRateLimit = -1
	}
	training := time.Duration(in.TrainingDelayMS) * time.Millisecond
	switch {
	case in.TrainingDelayMS == 0:
		training = oci.DefaultTrainingDelay
		in.TrainingDelayMS = int(training / time.Millisecond)
	case in.TrainingDelayMS < 0:
		training, in.TrainingDelayMS = 0, -1
	}
	s.mu.Lock()
	s.settings = in
	s.mu.Unlock()
	s.oci.SetTraining(training, in.TrainingFailure)
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	s.oci.SetDelays(ms(in.CreateDelayMS), ms(in.UpdateDelayMS), ms(in.DeleteDelayMS))
	s.dd.SetRateLimit(in.DatadogRateLimit)
	return in
}

// cloud wraps a vendor handler with the configured latency and faults.
func (s *Server) cloud(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		set := s.settings
		s.faults.total++
		fault := set.FaultRate > 0 && rand.Float64() < set.FaultRate
		if fault {
			s.faults.injected++
		}
		s.mu.Unlock()
		if set.LatencyMS > 0 {
			select {
			case <-time.After(time.Duration(set.LatencyMS) * time.Millisecond):
			case <-r.Context().Done():
				return
			}
		}
		if fault {
			status := set.FaultStatuses[rand.IntN(len(set.FaultStatuses))]
			if status == 0 {
				if hj, ok := w.(http.Hijacker); ok {
					if conn, _, err := hj.Hijack(); err == nil {
						conn.Close()
						return
					}
				}
				status = http.StatusServiceUnavailable
			}
			injectFault(w, r, status)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// injectFault answers with status in the error body of the API at r's path.
func injectFault(w http.ResponseWriter, r *http.Request, status int) {
	if status == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", "1")
		w.Header().Set("X-RateLimit-Reset", "1")
	}
	text := http.StatusText(status)
	switch {
	case strings.HasPrefix(r.URL.Path, "/20221001/"), strings.HasPrefix(r.URL.Path, "/20160918/"):
		code := map[int]string{429: "TooManyRequests", 500: "InternalServerError", 503: "ServiceUnavailable"}[status]
		if code == "" {
			code = strings.ReplaceAll(text, " ", "")
		}
		writeJSON(w, status, map[string]string{"code": code, "message": "injected by the emulator: " + text})
	case strings.HasPrefix(r.URL.Path, "/v1/"):
		st := map[int]string{429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"}[status]
		writeJSON(w, status, map[string]any{"error": map[string]any{"code": status, "message": "injected by the emulator: " + text, "status": st}})
	default:
		writeJSON(w, status, map[string]any{"errors": []string{"injected by the emulator: " + text}})
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}
