package main

import (
	"context"
	"crypto/ed25519"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/felixbroker/felix/auth"
)

// reloader is what SIGHUP reloads from its files. On any error it keeps
// what it had, logs why, and returns the error.
type reloader interface {
	reload() error
}

// watchReloads reloads each of rs on each SIGHUP until ctx is done;
// nothing to reload, nothing watched.
func watchReloads(ctx context.Context, rs []reloader) {
	if len(rs) == 0 {
		return
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	go func() {
		defer signal.Stop(hup)
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				reloadAll(rs)
			}
		}
	}()
}

// reloadAll reloads each of rs, as one SIGHUP does.
func reloadAll(rs []reloader) error {
	var errs []error
	for _, r := range rs {
		errs = append(errs, r.reload())
	}
	return errors.Join(errs...)
}

// trustedKeys is a broker's token verifier and the --auth-keys files its
// keys come from. On reload a key added to the files is trusted from then
// on; a key removed is trusted no more, and each connection whose token it
// signed is refused (unauthenticated, the connection closes) at its next
// request or by the sweep.
type trustedKeys struct {
	files []string
	// refresh, when set, names the files again at each reload (the config
	// file may list others by then).
	refresh func() ([]string, error)
	v       *auth.Verifier
	log     *slog.Logger
}

// reload finds the key files again, reads them, and trusts exactly the
// keys they hold now; settings that no longer resolve or name no file, a
// file missing or unreadable, or no key at all, keep the old keys (auth
// is not turned off on a running broker).
func (k *trustedKeys) reload() error {
	files, err := k.filesNow()
	var keys []ed25519.PublicKey
	if err == nil {
		keys, err = auth.LoadPublicKeys(files...)
	}
	if err == nil {
		err = k.v.SetKeys(keys)
	}
	if err != nil {
		k.log.Error("could not reload the trusted keys; the ones before stay trusted", "files", strings.Join(files, ","), "err", err)
		return err
	}
	k.files = files
	k.log.Info("trusted keys reloaded", "files", strings.Join(files, ","), "keys", keyIDs(keys))
	return nil
}

// filesNow returns the files to read: refreshed when it can be.
func (k *trustedKeys) filesNow() ([]string, error) {
	if k.refresh == nil {
		return k.files, nil
	}
	files, err := k.refresh()
	if err == nil && len(files) == 0 {
		err = errors.New("--auth-keys names no file now; a running broker keeps auth on")
	}
	return files, err
}

func keyIDs(keys []ed25519.PublicKey) string {
	ids := make([]string, len(keys))
	for i, k := range keys {
		ids[i] = auth.KeyID(k)
	}
	return strings.Join(ids, ",")
}

// servingCert is the TLS listener's certificate and the files it comes
// from (--tls-cert, --tls-key). Each handshake takes the one loaded last:
// a renewed certificate serves new connections from its reload on, and
// connections already open keep the session they have.
type servingCert struct {
	certFile, keyFile string
	cert              atomic.Pointer[tls.Certificate]
	log               *slog.Logger
}

func loadServingCert(certFile, keyFile string, log *slog.Logger) (*servingCert, error) {
	c := &servingCert{certFile: certFile, keyFile: keyFile, log: log}
	cert, err := c.read()
	if err != nil {
		return nil, err
	}
	c.cert.Store(cert)
	return c, nil
}

func (c *servingCert) read() (*tls.Certificate, error) {
	cert, err := tls.LoadX509KeyPair(c.certFile, c.keyFile)
	if err != nil {
		return nil, err
	}
	return &cert, nil
}

// get is the listener's tls.Config.GetCertificate.
func (c *servingCert) get(*tls.ClientHelloInfo) (*tls.Certificate, error) { return c.cert.Load(), nil }

// reload reads the certificate and key again; a pair that does not load
// (missing, unreadable, or a key that does not match) keeps the old one.
func (c *servingCert) reload() error {
	cert, err := c.read()
	if err != nil {
		c.log.Error("could not reload the TLS certificate; the one before stays", "cert", c.certFile, "key", c.keyFile, "err", err)
		return err
	}
	c.cert.Store(cert)
	attrs := []any{"cert", c.certFile}
	if leaf, err := x509.ParseCertificate(cert.Certificate[0]); err == nil {
		attrs = append(attrs, "subject", leaf.Subject.String(), "not_after", leaf.NotAfter)
	}
	c.log.Info("TLS certificate reloaded", attrs...)
	return nil
}
