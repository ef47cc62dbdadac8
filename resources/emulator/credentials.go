package emulator

// Credentials are what the emulator issues on start and accepts afterwards.
// The server writes them to DIR/credentials/ and serves them at
// GET /_emulator/credentials; vendor handlers check requests against them.
type Credentials struct {
	// OCI API-key signing: keyId is "<Tenancy>/<User>/<Fingerprint>".
	OCITenancy     string `json:"ociTenancy"`
	OCIUser        string `json:"ociUser"`
	OCIFingerprint string `json:"ociFingerprint"`
	OCIRegion      string `json:"ociRegion"`
	OCIPrivateKey  string `json:"ociPrivateKeyPem"` // PKCS#1 or PKCS#8 PEM
	OCIPublicKey   string `json:"ociPublicKeyPem"`  // PKIX PEM

	DatadogAPIKey string `json:"ddApiKey"`
	DatadogAppKey string `json:"ddAppKey"`

	GoogleAccessToken string `json:"googleAccessToken"`
}
