package expose

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"testing"
	"time"
)

// testPKI is a CA with a server certificate for 127.0.0.1 and a client
// certificate, made fresh for each test.
type testPKI struct {
	pool   *x509.CertPool
	server tls.Certificate
	client tls.Certificate
}

func newTestPKI(t *testing.T) *testPKI {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "expose test CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	leaf := func(serial int64, usage x509.ExtKeyUsage) tls.Certificate {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial),
			Subject:      pkix.Name{CommonName: "expose test"},
			NotBefore:    now.Add(-time.Hour),
			NotAfter:     now.Add(time.Hour),
			KeyUsage:     x509.KeyUsageDigitalSignature,
			ExtKeyUsage:  []x509.ExtKeyUsage{usage},
			IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	return &testPKI{
		pool:   pool,
		server: leaf(2, x509.ExtKeyUsageServerAuth),
		client: leaf(3, x509.ExtKeyUsageClientAuth),
	}
}

func (p *testPKI) serverConfig() *tls.Config {
	return &tls.Config{
		Certificates: []tls.Certificate{p.server},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    p.pool,
		MinVersion:   tls.VersionTLS12,
	}
}

func (p *testPKI) httpClient(withCert bool) *http.Client {
	cfg := &tls.Config{RootCAs: p.pool, MinVersion: tls.VersionTLS12}
	if withCert {
		cfg.Certificates = []tls.Certificate{p.client}
	}
	return &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}, Timeout: 10 * time.Second}
}

// serverOnlyTLS returns a TLS configuration that does not ask for client
// certificates.
func serverOnlyTLS(t *testing.T) *tls.Config {
	return &tls.Config{Certificates: []tls.Certificate{newTestPKI(t).server}}
}

func TestMutualTLS(t *testing.T) {
	pki := newTestPKI(t)
	// Mutual TLS alone is enough authentication, even where it is required.
	s := start(t, Options{RequireAuth: true, TLSConfig: pki.serverConfig(),
		ErrorLog: log.New(io.Discard, "", 0)}) // the refused handshake is expected
	url := s.URL() + "cmdline"
	if url[:8] != "https://" {
		t.Fatalf("URL() = %q, want https", s.URL())
	}

	if code, _ := get(t, pki.httpClient(true), url, ""); code != http.StatusOK {
		t.Errorf("with client certificate: status %d, want 200", code)
	}

	resp, err := pki.httpClient(false).Get(url)
	if err == nil {
		resp.Body.Close()
		t.Errorf("without client certificate: status %d, want the handshake to fail", resp.StatusCode)
	}
}

func TestMutualTLSAllowsNetworkAddress(t *testing.T) {
	pki := newTestPKI(t)
	s := start(t, Options{Addr: "0.0.0.0:0", TLSConfig: pki.serverConfig()})
	if code, _ := get(t, pki.httpClient(true), s.URL()+"cmdline", ""); code != http.StatusOK {
		t.Errorf("status %d, want 200", code)
	}
}
