package emulator

import (
	"crypto/md5"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"strings"
)

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

// NewCredentials generates a fresh set: an RSA key pair for OCI signing (with
// its fingerprint in OCI's colon-separated MD5 form), Datadog API and
// application keys, and a Google access token. Region is us-ashburn-1.
func NewCredentials() (Credentials, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return Credentials{}, fmt.Errorf("generate OCI key: %w", err)
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return Credentials{}, err
	}
	sum := md5.Sum(pub)
	fp := make([]string, len(sum))
	for i, b := range sum {
		fp[i] = hex.EncodeToString([]byte{b})
	}
	return Credentials{
		OCITenancy:        "ocid1.tenancy.oc1..emulator" + randomHex(12),
		OCIUser:           "ocid1.user.oc1..emulator" + randomHex(12),
		OCIFingerprint:    strings.Join(fp, ":"),
		OCIRegion:         "us-ashburn-1",
		OCIPrivateKey:     string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})),
		OCIPublicKey:      string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub})),
		DatadogAPIKey:     randomHex(16),
		DatadogAppKey:     randomHex(20),
		GoogleAccessToken: "ya29.emulator-" + randomHex(24),
	}, nil
}

// OCIKeyID is the keyId a request signed with these credentials carries.
func (c Credentials) OCIKeyID() string {
	return c.OCITenancy + "/" + c.OCIUser + "/" + c.OCIFingerprint
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return hex.EncodeToString(b)
}
