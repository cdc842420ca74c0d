package main

import (
	"context"
	"crypto/ed25519"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/felixbroker/felix/auth"
)

// trustedKeys is a broker's token verifier and the --auth-keys files its
// keys come from. SIGHUP reloads them (watchKeyReloads): a key added to the
// files is trusted from then on; a key removed is trusted no more, and
// each connection whose token it signed is refused (unauthenticated, the
// connection closes) at its next request.
type trustedKeys struct {
	files []string
	v     *auth.Verifier
	log   *slog.Logger
}

// reload reads the key files again and trusts exactly the keys they hold
// now. On any error (a file missing or unreadable, no key at all) it keeps
// the keys it had, logs why, and returns the error.
func (k *trustedKeys) reload() error {
	keys, err := auth.LoadPublicKeys(k.files...)
	if err == nil {
		err = k.v.SetKeys(keys)
	}
	if err != nil {
		k.log.Error("could not reload the trusted keys; the ones before stay trusted", "files", strings.Join(k.files, ","), "err", err)
		return err
	}
	k.log.Info("trusted keys reloaded", "keys", keyIDs(keys))
	return nil
}

// watchKeyReloads reloads k on each SIGHUP until ctx is done. A nil k
// (auth off) watches nothing.
func watchKeyReloads(ctx context.Context, k *trustedKeys) {
	if k == nil {
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
				k.reload()
			}
		}
	}()
}

func keyIDs(keys []ed25519.PublicKey) string {
	ids := make([]string, len(keys))
	for i, k := range keys {
		ids[i] = auth.KeyID(k)
	}
	return strings.Join(ids, ",")
}
